"""torch.backends.cuda: a CPU-only build."""

from __future__ import annotations

__all__ = ["is_built"]


def is_built() -> bool:
    return False
