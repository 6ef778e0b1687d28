# ruff: noqa: F822  (__all__ names are made when the module loads or on first use)
"""torch.accelerator on a machine without one, as a CPU-only PyTorch answers it.

The "Learning PyTorch with Examples" pages open with
`torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"`:
`is_available()` is False, `current_accelerator()` None, `device_count()` 0, and anything
that would touch a device fails with PyTorch's own RuntimeError.
"""

from __future__ import annotations

# PyTorch 2.13's torch.accelerator.__all__
__all__ = [
    "Graph", "current_accelerator", "current_device_idx", "current_device_index",
    "get_device_capability", "current_stream", "device_count", "device_index", "empty_cache",
    "empty_host_cache", "get_memory_info", "is_available", "max_memory_allocated",
    "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
    "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
    "set_device_index", "set_stream", "synchronize",
]

NONE_AVAILABLE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False):
    """The accelerator's device type, or None: there is none (checked or not)."""
    return None


def device_count() -> int:
    return 0


def _needs_a_device(name: str):
    def needs_a_device(*args, **kwargs):
        raise RuntimeError(NONE_AVAILABLE)

    needs_a_device.__name__ = needs_a_device.__qualname__ = name
    return needs_a_device


for _name in __all__:
    if _name not in globals():
        globals()[_name] = _needs_a_device(_name)
del _name


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"torch.accelerator.{name} is not supported by gradcli")
