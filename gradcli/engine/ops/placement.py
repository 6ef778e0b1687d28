"""Where tensors live: only on the CPU. Tensor.cpu/cuda/to(device) and
torch.set_default_device/get_default_device answer as a CPU-only PyTorch does."""

from __future__ import annotations

from .. import devices
from ..size import CPU, device
from ..tensor import Tensor
from .registry import public
from .shape import to as _to


def _is_device_arg(a) -> bool:
    return isinstance(a, (str, device)) or (isinstance(a, int) and not isinstance(a, bool))


@public("Tensor.to")
def to(self: Tensor, *args, **kwargs) -> Tensor:
    """Tensor.to(dtype), .to(device), .to(tensor), .to(device, dtype): a device other than
    the CPU raises PyTorch's error."""
    rest = []
    for a in args:
        if _is_device_arg(a):
            devices.check(a)
        else:
            rest.append(a)
    if "device" in kwargs:
        devices.check(kwargs.pop("device"))
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    return _to(self, *rest, **kwargs)


@public("Tensor.cpu")
def cpu(self: Tensor, memory_format=None) -> Tensor:
    return self


@public("Tensor.cuda")
def cuda(self: Tensor, device=None, non_blocking=False, memory_format=None) -> Tensor:
    raise AssertionError(devices.NOT_COMPILED)


_DEFAULT = [CPU]


@public("torch.set_default_device")
def set_default_device(device_spec) -> None:
    """Accepted for any known device, as PyTorch accepts it; tensors are then made as
    before (a CUDA default fails at the first tensor made, with PyTorch's message)."""
    if device_spec is None:
        _DEFAULT[0] = CPU
        return
    _DEFAULT[0] = device(device_spec) if not isinstance(device_spec, device) else device_spec


@public("torch.get_default_device")
def get_default_device() -> device:
    return _DEFAULT[0] if _DEFAULT[0].type != "cpu" else CPU
