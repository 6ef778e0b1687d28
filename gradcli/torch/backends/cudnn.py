"""torch.backends.cudnn: the flags scripts set stay settable; cuDNN is never there."""

from __future__ import annotations

__all__ = ["is_available", "enabled", "deterministic", "benchmark", "allow_tf32", "version"]

enabled = True
deterministic = False
benchmark = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version():
    return None


def _reset_flags() -> None:
    """The flags as a fresh program finds them (gradcli's session resets them per run)."""
    global enabled, deterministic, benchmark, allow_tf32
    enabled, deterministic, benchmark, allow_tf32 = True, False, False, True
