"""Tensor methods that touch a tensor's storage or its autograd bookkeeping directly:
`resize_`, `set_` and the `_backward_hooks` attribute.

Kept apart from tensor.py so the Tensor class and its hot paths stay as they are: the
attribute is installed on the class when this module is imported (through the ops
package).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np

from ..grad_mode import GRAD_MODE
from ..limits import check_elements
from ..tensor import LEAF_INPLACE, Tensor, _c_name
from .registry import public


def _sizes(args) -> tuple:
    """resize_'s sizes: resize_(2, 3), resize_([2, 3]), resize_(torch.Size([2, 3]))."""
    if len(args) == 1 and isinstance(args[0], Sequence):
        args = tuple(args[0])
    for s in args:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"resize_(): argument 'size' must be tuple of ints, but found element "
                            f"of type {type(s).__name__}")
        if s < 0:  # (PyTorch's storage-size computation fails first)
            raise RuntimeError("numel: integer multiplication overflow")
    return tuple(int(s) for s in args)


@public("Tensor.resize_")
def resize_(self: Tensor, *sizes, memory_format=None) -> Tensor:
    """Give the tensor a new shape, keeping its first elements in memory order; elements
    past the old ones are new (PyTorch leaves them uninitialised; here they are 0)."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = _sizes(sizes)
    check_elements(shape)  # (a program's --max-elements)
    old = self._data
    if memory_format is not None:
        from . import memory_formats as formats

        formats.format_strides(shape, formats.check_format("resize_", memory_format))
    if shape == old.shape:  # (PyTorch: same sizes, no new version; the layout may change)
        if memory_format is not None and memory_format is not formats.preserve_format:
            self._data = formats.laid_out(old, memory_format)
        return self
    n = int(np.prod(shape, dtype=np.int64))
    flat = np.ascontiguousarray(old).reshape(-1)
    if n <= flat.size:
        new = flat[:n].copy().reshape(shape)
    else:
        new = np.zeros(n, old.dtype)
        new[:flat.size] = flat
        new = new.reshape(shape)
    if memory_format is not None and memory_format is not formats.preserve_format:
        new = formats.laid_out(new, memory_format)
    self._data = new
    self._vc[0] += 1
    return self


@public("Tensor.set_")
def set_(self: Tensor, source=None, storage_offset=None, size=None, stride=None) -> Tensor:
    """Make the tensor share `source`'s data (x.set_() empties it). A leaf that requires
    grad refuses it in grad mode; after it, the tensor reaches the graph through a new
    AccumulateGrad, so graphs recorded before no longer count it as used."""
    if GRAD_MODE.enabled and self._grad_fn is None and self.requires_grad:
        raise RuntimeError(LEAF_INPLACE)
    if source is None:
        data = np.empty((0,), self._data.dtype)
    elif isinstance(source, Tensor):
        if source._data.dtype != self._data.dtype:
            raise RuntimeError(f"Could not set tensor of type {_c_name(source.dtype)} to a "
                               f"tensor of type {_c_name(self.dtype)}")
        data = source._data
        if size is not None:
            data = np.ascontiguousarray(data).reshape(-1)
            start = int(storage_offset or 0)
            data = data[start:start + int(np.prod(size, dtype=np.int64))].reshape(tuple(size))
    else:
        raise TypeError(f"set_(): argument 'source' must be Tensor, not {type(source).__name__}")
    self._data = data
    self._vc[0] += 1
    if self._grad_fn is None:
        self._accumulator = None  # the old AccumulateGrad stays with the graphs that hold it
    return self


# --- _backward_hooks: PyTorch's dict of a tensor's hooks, here only what a program sets
_HOOK_DICTS: dict = {}  # id(tensor) -> (weakref to it, the dict it was given)


def _get_backward_hooks(self: Tensor):
    held = _HOOK_DICTS.get(id(self))
    if held is not None and held[0]() is self:
        return held[1]
    return None


def _set_backward_hooks(self: Tensor, hooks) -> None:
    """Setting the dict: a gradient reaching the tensor goes through each function in it
    (read when the gradient arrives, so later additions count), as PyTorch's does; a
    tensor that does not require grad never receives one, so its hooks never run."""
    key = id(self)
    fresh = key not in _HOOK_DICTS or _HOOK_DICTS[key][0]() is not self
    _HOOK_DICTS[key] = (weakref.ref(self, lambda _r, k=key: _HOOK_DICTS.pop(k, None)), hooks)
    if fresh and self.requires_grad:
        self.register_hook(lambda grad, k=key: _run_dict_hooks(k, grad))


def _run_dict_hooks(key, grad):
    held = _HOOK_DICTS.get(key)
    for hook in list((held[1] or {}).values()) if held is not None else ():
        out = hook(grad)
        if out is not None:
            grad = out
    return grad


def _refuse_delete(self: Tensor) -> None:
    raise RuntimeError("Deletion of _backwards_hooks not allowed!")  # (PyTorch's words)


# (No Tensor.__delattr__ for PyTorch's refusal of `del t._grad_fn`: defining one makes
# CPython route every attribute write of every tensor through Python, ~30% off the op loop.)
Tensor._backward_hooks = property(_get_backward_hooks, _set_backward_hooks, _refuse_delete)
