"""torch.backends.openmp: OpenMP is part of PyTorch's CPU build (environment cells print this)."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    return True
