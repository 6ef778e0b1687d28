"""torch.cuda on a machine without CUDA: the queries tutorials make on their first lines
answer as a CPU-only PyTorch does (`is_available()` is False), and everything that would
need a GPU fails with PyTorch's "Torch not compiled with CUDA enabled"."""

from __future__ import annotations

from gradcli.engine.devices import NOT_COMPILED
from gradcli.engine.ops.amp_training import cuda_amp as amp  # noqa: F401  (GPU scripts' AMP lines)

__all__ = ["is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all",
           "synchronize", "empty_cache", "current_device", "get_device_name", "set_device",
           "is_bf16_supported"]


def _no_cuda():
    raise AssertionError(NOT_COMPILED)


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def manual_seed(seed) -> None:
    """Seeding CUDA's generators is silently skipped without CUDA, as in PyTorch."""


def manual_seed_all(seed) -> None:
    """As manual_seed: nothing to seed."""


def empty_cache() -> None:
    """Nothing is cached without CUDA."""


def synchronize(device=None) -> None:
    _no_cuda()


def current_device() -> int:
    _no_cuda()


def get_device_name(device=None) -> str:
    _no_cuda()


def set_device(device) -> None:
    _no_cuda()


def check_device(dev) -> None:
    """Raise as PyTorch does when a tensor or module is moved to `dev` on a CPU-only build
    (a CPU device passes)."""
    from gradcli.engine.devices import check

    check(dev)
