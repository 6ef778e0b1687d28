"""Tensor.view(dtype): the same bytes read as another dtype (PyTorch's view_dtype).

Same element size: same shape. A different size scales the last dimension, under
PyTorch's conditions and error texts (not 0-d, last stride 1, and for a larger element
the last size, the storage offset and the other strides divisible by the ratio). The
result shares the memory and the version counter of the tensor it views, so in-place
writes to either show in the other; like PyTorch's (its derivative is not defined) it
never requires grad and records no node."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..tensor import Tensor, make
from .registry import PUBLIC


def _word(d: dtypes.dtype) -> str:
    return d._legacy[:-len("Tensor")]  # FloatTensor -> Float, as ATen's ScalarType names


def view_as_dtype(x: Tensor, target) -> Tensor:
    if target is float or target is int or target is bool:  # (torch.float64, int64, bool)
        target = dtypes.to_dtype(target)
    if not isinstance(target, dtypes.dtype):
        return PUBLIC["Tensor.to"](x, target)  # (what view did with anything else before)
    d = x._data
    source = dtypes.of_array(d)
    if target is source:
        res = make(d.view())
    else:
        old, new = source.itemsize, target.itemsize
        if old != new:
            words = f"view {_word(source)} as {_word(target)} (different element sizes)"
            if d.ndim == 0:
                raise RuntimeError(f"self.dim() cannot be 0 to {words}")
            strides = x.stride()  # (PyTorch's, in elements: numpy's differ for empty tensors)
            last_stride = strides[-1]
            if last_stride != 1:
                raise RuntimeError(f"self.stride(-1) must be 1 to {words}, but got {last_stride}")
            if new > old:
                ratio = new // old
                if d.shape[-1] % ratio:
                    raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to {words}, "
                                       f"but got {d.shape[-1]}")
                offset = x.storage_offset()
                if offset % ratio:
                    raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} to "
                                       f"{words}, but got {offset}")
                for i in range(d.ndim - 1):
                    stride = strides[i]
                    if stride % ratio:
                        raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} to "
                                           f"{words}, but got {stride}")
        if d.shape and d.shape[-1] == 0 or d.size == 0:
            shape = d.shape[:-1] + (d.shape[-1] * old // new,) if d.ndim else ()
            res = make(np.empty(shape, target.np))
        else:
            res = make(_reinterpret(d, target.np))
    res._vc = x._vc  # (one storage: in-place writes bump one version counter)
    return res


def _reinterpret(d: np.ndarray, npdt: np.dtype) -> np.ndarray:
    """d's bytes as npdt, sharing its memory (numpy's view, which needs the last axis
    packed: it is, or the checks above refused)."""
    if d.ndim and d.strides[-1] != d.itemsize and d.shape[-1] == 1:  # (a lone last element: any stride)
        d = np.lib.stride_tricks.as_strided(d, d.shape, d.strides[:-1] + (d.itemsize,))
    return d.view(npdt)
