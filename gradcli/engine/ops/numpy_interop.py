"""Tensor.numpy() and torch.from_numpy(): a tensor and a numpy array sharing one buffer."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .. import tensor as _tensor_mod
from ..grad_mode import GRAD_MODE
from ..tensor import Tensor, make
from .registry import public

_SUPPORTED = ("float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
              "uint64, uint32, uint16, uint8, and bool")


@public("Tensor.numpy")
def numpy(self: Tensor, *, force: bool = False):
    """The tensor's data as a numpy array sharing its memory (PyTorch refuses a tensor that
    requires grad unless ``force``, which then returns a copy of a detached tensor)."""
    if _tensor_mod.TRANSFORM_GUARD is not None:  # (a vmap's batched tensor has no storage)
        _tensor_mod.TRANSFORM_GUARD(self, "numpy")
    if self._data.dtype.kind == "V":  # bfloat16: numpy has no such type, so PyTorch refuses
        raise TypeError("Got unsupported ScalarType BFloat16")
    if self.requires_grad:
        if not force:
            if not GRAD_MODE.enabled:  # (under no_grad PyTorch shares the memory as for any tensor)
                return self._data
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return np.array(self._data, copy=True)
    return self._data


@public("torch.from_numpy")
def from_numpy(ndarray) -> Tensor:
    """A tensor sharing the array's memory."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    arr = np.asarray(ndarray)  # (a subclass's base ndarray view: the same memory)
    if arr.dtype not in dtypes.FROM_NP or arr.dtype.kind == "V":  # (ml_dtypes' bfloat16)
        module = "numpy" if arr.dtype.kind != "V" else arr.dtype.type.__module__
        raise TypeError(f"can't convert np.ndarray of type {module}.{arr.dtype.type.__name__}. "
                        f"The only supported types are: {_SUPPORTED}.")
    return make(arr)


@public("Tensor.data_ptr")
def data_ptr(self) -> int:
    """The address of the tensor's first element: views of one storage differ by their
    offset, as PyTorch's; an empty tensor has none (0)."""
    d = self._data
    return 0 if d.size == 0 else int(d.__array_interface__["data"][0])


def _tensor_array(self: Tensor, dtype=None, copy=None):
    """np.array(t) / np.asarray(t): the tensor's numpy() (so a tensor that requires grad
    is refused with PyTorch's error), cast to `dtype` when asked."""
    arr = numpy(self)
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    return arr.copy() if copy else arr


Tensor.__array__ = _tensor_array
