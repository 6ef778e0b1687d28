"""Names the public tutorials reach for that no other module declares.

The narrow dtypes (torch.float16/half, torch.int8, torch.int16/short) with their cast
methods: the Zero-to-Mastery fundamentals tour casts a tensor to each and prints it."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from . import shape as S
from .registry import PUBLIC, public

for _name, _value in (("torch.float16", dtypes.float16), ("torch.half", dtypes.float16),
                      ("torch.int8", dtypes.int8), ("torch.int16", dtypes.int16),
                      ("torch.short", dtypes.int16)):
    PUBLIC[_name] = _value


def _cast_method(target: dtypes.dtype, name: str):
    def method(self, memory_format=None):
        return S.to(self, target)

    method.__name__ = name
    return method


for _method, _target in (("half", dtypes.float16), ("short", dtypes.int16),
                         ("char", dtypes.int8), ("byte", dtypes.uint8)):
    if f"Tensor.{_method}" not in PUBLIC:
        public(f"Tensor.{_method}")(_cast_method(_target, _method))


class finfo:  # noqa: N801 - torch's name
    """torch.finfo(dtype): the limits of a floating dtype (eps is what RL tutorials add to
    a standard deviation), as Python floats, printed as PyTorch prints them."""

    __module__ = "torch"
    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):  # noqa: A002 - torch's parameter name
        d = dtypes.get_default_dtype() if type is None else type
        if not isinstance(d, dtypes.dtype) or not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo "
                            "to handle 'torch.finfo'")
        info = np.finfo(d.np)
        self.bits = int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # (numpy rounds it to the dtype)
        self.dtype = d.name

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")

    __str__ = __repr__


class iinfo:  # noqa: N801 - torch's name
    """torch.iinfo(dtype): the range of an integer dtype, printed as PyTorch prints it."""

    __module__ = "torch"
    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):  # noqa: A002 - torch's parameter name
        if not isinstance(type, dtypes.dtype) or type.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        if type is dtypes.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        info = np.iinfo(type.np)
        self.bits, self.min, self.max = int(info.bits), int(info.min), int(info.max)
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

    __str__ = __repr__


PUBLIC["torch.finfo"] = finfo
PUBLIC["torch.iinfo"] = iinfo
