"""torch.backends.cudnn: the flags scripts set stay settable; cuDNN is never there."""

from __future__ import annotations

__all__ = ["is_available", "enabled", "deterministic", "benchmark", "version"]

enabled = True
deterministic = False
benchmark = False


def is_available() -> bool:
    return False


def version():
    return None


def _reset_flags() -> None:
    """The flags as a fresh program finds them (gradcli's session resets them per run)."""
    global enabled, deterministic, benchmark
    enabled, deterministic, benchmark = True, False, False
