"""torch.backends.mkldnn: oneDNN is part of PyTorch's CPU build, so it is available; the
flags reproducibility boilerplate sets stay settable (gradcli's kernels do not read them;
a new program finds them as PyTorch starts them)."""

from __future__ import annotations

__all__ = ["is_available", "enabled", "deterministic"]

enabled = True
deterministic = False


def is_available() -> bool:
    return True


def _reset_flags() -> None:
    """The flags as a fresh program finds them (gradcli's session resets them per run)."""
    global enabled, deterministic
    enabled, deterministic = True, False
