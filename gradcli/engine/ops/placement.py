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


# Tensor.to's three overloads as PyTorch's argument parser lists them: (name, kind) of the
# positional-or-keyword parameters (memory_format is keyword-only in each); a kind ending
# in "!" has no default
_TO_OVERLOADS = (
    (("device", "device"), ("dtype", "dtype"), ("non_blocking", "bool"), ("copy", "bool")),
    (("dtype", "dtype!"), ("non_blocking", "bool"), ("copy", "bool")),
    (("tensor", "Tensor!"), ("non_blocking", "bool"), ("copy", "bool")),
)
_TO_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n")


def _fits(kind: str, value) -> bool:
    from .. import dtypes

    kind = kind.rstrip("!")
    if kind == "bool":
        return type(value) is bool
    if kind == "Tensor":
        return isinstance(value, Tensor)
    if value is None:
        return True
    if kind == "device":
        return _is_device_arg(value) and type(value) is not bool
    # dtype: a torch dtype, a Python type PyTorch maps to one, or a bool/float scalar
    return isinstance(value, dtypes.dtype) or value in (float, int, bool, complex) or \
        type(value) in (bool, float)


def _matches(params, args: tuple, kwargs: dict) -> bool:
    if len(args) > len(params):
        return False
    bound = dict(zip((name for name, _ in params), args))
    kinds = dict(params)
    for key, value in kwargs.items():
        if key == "memory_format":
            continue
        if key not in kinds or key in bound:
            return False
        bound[key] = value
    for name, kind in params:
        if name not in bound:
            if kind.endswith("!"):
                return False
        elif not _fits(kind, bound[name]):
            return False
    return True


def _type_name(value) -> str:
    from .. import dtypes

    if isinstance(value, dtypes.dtype):
        return "torch.dtype"
    if isinstance(value, device):
        return "torch.device"
    return type(value).__name__


def _check_to_arguments(args: tuple, kwargs: dict) -> None:
    """PyTorch's TypeError when no overload of Tensor.to takes these arguments (an unknown
    keyword such as requires_grad=, a non-bool copy=, a fourth flag...). Its message lists
    the keywords last to first."""
    if any(_matches(params, args, kwargs) for params in _TO_OVERLOADS):
        return
    words = [f"{key}={_type_name(value)}" for key, value in reversed(kwargs.items())]
    if args:
        got = ", ".join([_type_name(a) for a in args] + words)
    else:
        got = "".join(word + ", " for word in words)
    raise TypeError(f"to() received an invalid combination of arguments - got ({got}), but "
                    f"expected one of:\n{_TO_SIGNATURES}")


@public("Tensor.to")
def to(self: Tensor, *args, **kwargs) -> Tensor:
    """Tensor.to(dtype), .to(device), .to(tensor), .to(device, dtype): a device other than
    the CPU raises PyTorch's error."""
    _check_to_arguments(args, kwargs)
    if "tensor" in kwargs:
        args = (kwargs.pop("tensor"),) + args
    if args and type(args[0]) in (bool, float):  # (PyTorch reads a bool or float as its type)
        args = (bool if type(args[0]) is bool else float,) + args[1:]
    rest = []
    for a in args:
        if _is_device_arg(a):
            devices.check(a)
        else:
            rest.append(a)
    if "device" in kwargs:
        devices.check(kwargs.pop("device"))
    kwargs.pop("non_blocking", None)
    fmt = kwargs.pop("memory_format", None)
    if fmt is not None:
        from . import memory_formats as formats

        return formats.relaid(self, _to(self, *rest, **kwargs), fmt)
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
    current = _DEFAULT[0]
    if current.type in ("cuda", "mps") and current.index is None:
        # PyTorch asks a tensor made there for its index: this build has no such device
        devices.check(current.type)
    return current if current.type != "cpu" else CPU


_ENTERED: list = []  # the default devices `with torch.device(...)` blocks replaced


def _device_enter(self):
    """`with torch.device(d):` makes d the default device inside the block, as PyTorch's."""
    _ENTERED.append(_DEFAULT[0])
    set_default_device(self)
    return self


def _device_exit(self, *exc) -> None:
    _DEFAULT[0] = _ENTERED.pop()


device.__enter__ = _device_enter
device.__exit__ = _device_exit
