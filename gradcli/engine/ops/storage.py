"""A tensor's memory as PyTorch exposes it: `Tensor.untyped_storage()`, `Tensor.storage()`,
`storage_offset()` (data_ptr: ops/numpy_interop.py), `resize_as_`, and `unsafe_split_with_sizes`, whose pieces
share their input's memory without being autograd views of it.

A gradcli tensor's memory is its numpy array's; the storage is the array that owns the
memory (a view's base array, followed through numpy's bases), so two tensors over one
buffer report one storage, one data_ptr, and a view its offset in it.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from ..warn_site import warn_at_caller
from .registry import defop, public

_TYPED_STORAGE_WARNING = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
    "the only storage class. This should only matter to you if you are using storages "
    "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
    "tensor.storage()")
_WARNED = [False]  # (PyTorch warns once per process)


def _owner(t: Tensor) -> np.ndarray:
    """The array owning t's memory."""
    arr = t._base._data if t._base is not None else t._data
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def _address(arr: np.ndarray) -> int:
    return int(arr.__array_interface__["data"][0])


class UntypedStorage:
    """The bytes under a tensor: size() and nbytes() count bytes."""

    __module__ = "torch.storage"
    __slots__ = ("_array",)

    def __init__(self, array: np.ndarray):
        self._array = array

    def _bytes(self) -> np.ndarray:
        arr = self._array
        if arr.size == 0:
            return np.zeros(0, np.uint8)
        return np.ascontiguousarray(arr).reshape(-1).view(np.uint8)

    def size(self) -> int:
        return int(self._array.nbytes)

    nbytes = size

    def __len__(self) -> int:
        return self.size()

    def data_ptr(self) -> int:
        return _address(self._array)

    def element_size(self) -> int:
        return 1

    @property
    def device(self):
        from ..size import CPU

        return CPU

    def tolist(self) -> list:
        return [int(b) for b in self._bytes()]

    def __getitem__(self, index):
        return self.tolist()[index]

    def resize_(self, size):
        if int(size) == self.size():
            return self
        raise RuntimeError("resizing a storage is not supported by gradcli")

    def _heading(self) -> str:
        return f"torch.storage.UntypedStorage(device=cpu) of size {self.size()}"

    def __repr__(self) -> str:
        items = self.tolist()
        body = " " + "\n ".join(str(v) for v in items)
        return f"{body}\n[{self._heading()}]"

    __str__ = __repr__


class TypedStorage(UntypedStorage):
    """tensor.storage(): the same memory, counted in elements of the tensor's dtype."""

    __slots__ = ()

    @property
    def dtype(self):
        return dtypes.FROM_NP[self._array.dtype]

    def size(self) -> int:
        return int(self._array.size)

    def __len__(self) -> int:
        return self.size()

    def nbytes(self) -> int:
        return int(self._array.nbytes)

    def element_size(self) -> int:
        return int(self._array.itemsize)

    def untyped(self) -> UntypedStorage:
        return UntypedStorage(self._array)

    def tolist(self) -> list:
        arr = self._array
        return np.ascontiguousarray(arr).reshape(-1).tolist() if arr.size else []

    def resize_(self, size):
        if int(size) == self.size():
            return self
        raise RuntimeError("resizing a storage is not supported by gradcli")

    def _heading(self) -> str:
        return (f"torch.storage.TypedStorage(dtype=torch.{self.dtype.name}, device=cpu) of size "
                f"{self.size()}")


public("torch.UntypedStorage")(UntypedStorage)
public("torch.TypedStorage")(TypedStorage)


@public("Tensor.untyped_storage")
def untyped_storage(self: Tensor) -> UntypedStorage:
    return UntypedStorage(_owner(self))


@public("Tensor.storage")
def storage(self: Tensor) -> TypedStorage:
    """A Python method in PyTorch too: Python words its argument errors (Tensor.storage)."""
    if not _WARNED[0]:
        _WARNED[0] = True
        warn_at_caller(_TYPED_STORAGE_WARNING)
    return TypedStorage(_owner(self))


storage.__qualname__ = "Tensor.storage"


@public("Tensor.storage_offset")
def storage_offset(self: Tensor) -> int:
    """Where the first element sits in the storage, in elements."""
    if self._data.size == 0:
        return 0
    return (_address(self._data) - _address(_owner(self))) // self._data.itemsize


@public("Tensor.resize_as_", "torch.resize_as_")
def resize_as_(self: Tensor, the_template=None, *, memory_format=None) -> Tensor:
    """resize_ to the template's sizes (PyTorch's rules: a tensor that requires grad may
    not, a resize to the same sizes is no new version)."""
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, "
                        f"not {type(the_template).__name__}")
    return self.resize_(tuple(the_template.shape), memory_format=memory_format)


# ---------------------------------------------- unsafe_split_with_sizes: shared pieces


def _pieces_backward(c, grads):
    from .shape import _pieces_backward as join

    return join(c, grads)


UNSAFE_SPLIT_WITH_SIZES = defop(
    "unsafe_split_with_sizes", "UnsafeSplitWithSizesBackward0", None, _pieces_backward,
    "d unsafe_split_with_sizes(a)/da: join the pieces' gradients", multi=True,
    torch_call="torch.unsafe_split_with_sizes(a.reshape(-1), [1, a.numel() - 1])[1]")


@public("torch.unsafe_split_with_sizes", "Tensor.unsafe_split_with_sizes")
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """split_with_sizes whose pieces are not views: they share the input's memory (an
    in-place change shows in the input) but have no view bookkeeping, so they may be
    modified in place, which split's pieces may not."""
    from .composite import _as_copies

    return _as_copies(UNSAFE_SPLIT_WITH_SIZES, input.split_with_sizes(split_sizes, dim), input,
                      share=True)
