"""Legacy and constant names autograd code still uses: Tensor.new, torch.inf, torch.nan."""

from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor, make
from .registry import PUBLIC, public

PUBLIC["torch.inf"] = math.inf
PUBLIC["torch.nan"] = math.nan


@public("Tensor.new")
def new(self, *args, **kwargs):
    """Legacy constructor: a tensor of self's dtype (sizes give an uninitialized one,
    here zeros; data gives a copy; a tensor of the same dtype gives an alias)."""
    dtype = self._data.dtype
    if kwargs.get("dtype") is not None:
        dtype = kwargs["dtype"].np
    if not args:
        return make(np.zeros((0,), dtype))
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other._data.dtype != dtype:
            from ..dtypes import FROM_NP

            raise TypeError(
                f"expected TensorOptions(dtype={_c_name(FROM_NP[np.dtype(dtype)])}, device=cpu, "
                "layout=Strided, requires_grad=false (default), pinned_memory=false (default), "
                "memory_format=(nullopt)) (got TensorOptions(dtype="
                f"{_c_name(other.dtype)}, device=cpu, layout=Strided, requires_grad=false "
                "(default), pinned_memory=false (default), memory_format=(nullopt)))")
        return make(other._data, False, None)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return make(np.zeros(tuple(args), dtype))
    if len(args) == 1 and isinstance(args[0], tuple) and all(isinstance(a, int) for a in args[0]):
        return make(np.zeros(args[0], dtype))  # a torch.Size
    if len(args) == 1 and isinstance(args[0], (list, tuple, int, float, bool)):
        from .creation import _first_items_str

        _first_items_str(args[0])
        return make(np.array(args[0], dtype=dtype))
    if len(args) == 1 and args[0] is None:
        raise TypeError("new(): data must be a sequence (got NoneType)")
    if len(args) == 1 and isinstance(args[0], str):
        raise TypeError("new(): invalid data type 'str'")
    raise TypeError(f"new(): invalid arguments {tuple(type(a).__name__ for a in args)}")


def _c_name(dt) -> str:
    """The C++ scalar name PyTorch's TensorOptions print (float, double, long int, ...)."""
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "bool": "bool", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char"}.get(
                str(dt).replace("torch.", ""), str(dt))
