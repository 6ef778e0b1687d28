"""Tensor methods pasted scripts call that gradcli lacked: the in-place twins of existing
ops (addmm_, cumsum_, logical_and_ ...), diagflat, fill_diagonal_, the storage and layout
queries (layout, itemsize, nbytes, is_cpu, get_device, dim_order, the is_* flags of the
kinds of tensor gradcli never makes), new_empty, apply_/map_/map2_, nonzero_static and the
deprecated out-of-place resize.

The in-place forms go through Tensor._apply_inplace, so they bump the version counter,
refuse a leaf that requires grad and rewrite a view's base as every in-place op does.
"""

from __future__ import annotations

import numpy as np

from ..tensor import make
from ..warn_site import warn_at_caller
from .registry import PUBLIC, public


class layout:  # noqa: N801 - named as torch names it
    """torch.layout: gradcli's tensors are all strided (dense)."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self):
        return (_layout_named, (self._name,))


strided = layout("strided")


def _layout_named(name: str):
    return strided


PUBLIC["torch.layout"] = layout
PUBLIC["torch.strided"] = strided


# ------------------------------------------------------------------ in-place twins


@public("Tensor.addmm")
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    return PUBLIC["torch.addmm"](self, mat1, mat2, beta=beta, alpha=alpha)


@public("Tensor.addmm_")
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    return self._apply_inplace(
        lambda old: PUBLIC["torch.addmm"](old, mat1, mat2, beta=beta, alpha=alpha))


def _inplace_of(torch_name: str, method: str):
    def method_(self, *args, **kwargs):
        from ..tensor import Tensor

        if method.startswith("logical_") and method != "logical_not_" and args and \
                not isinstance(args[0], Tensor):
            raise TypeError(f"{method}(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(args[0]).__name__}")
        return self._apply_inplace(lambda old: PUBLIC[torch_name](old, *args, **kwargs))

    method_.__name__ = method
    method_.__doc__ = f"{torch_name} written into self."
    return method_


for _method, _torch_name in (("bitwise_not_", "torch.bitwise_not"),
                             ("cumsum_", "torch.cumsum"), ("cumprod_", "torch.cumprod"),
                             ("floor_divide_", "torch.floor_divide"),
                             ("logical_and_", "torch.logical_and"),
                             ("logical_or_", "torch.logical_or"),
                             ("logical_xor_", "torch.logical_xor"),
                             ("logical_not_", "torch.logical_not"),
                             ("ldexp_", "torch.ldexp")):
    public(f"Tensor.{_method}")(_inplace_of(_torch_name, _method))
public("torch.ldexp_")(PUBLIC["Tensor.ldexp_"])


# ------------------------------------------------------------------ diagonals


@public("Tensor.diagflat")
def diagflat(self, offset=0):
    """torch.diagflat as a method."""
    return PUBLIC["torch.diagflat"](self, offset)


@public("Tensor.fill_diagonal_")
def fill_diagonal_(self, fill_value, wrap=False):
    """Write fill_value on the main diagonal (all sizes equal beyond 2-D; a tall matrix
    restarts the diagonal every ncols + 1 rows when wrap): through diagonal views, so the
    graph is PyTorch's CopySlices."""
    nd = self.dim()
    if nd < 2:
        raise RuntimeError("dimensions must larger than 1")
    if nd > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if nd > 2:
        size = self.shape[0]
        self.as_strided((size,), (sum(self.stride()),), self.storage_offset()).fill_(fill_value)
        return self
    rows, cols = self.shape
    self.diagonal().fill_(fill_value)
    if wrap and rows > cols + 1:
        start = cols + 1
        while start < rows:
            self[start:].diagonal().fill_(fill_value)
            start += cols + 1
    return self


# ------------------------------------------------------------------ queries


def _flag(value):
    return property(lambda self: value)


for _name in ("is_quantized", "is_sparse", "is_meta", "is_mkldnn", "is_nested", "is_sparse_csr",
              "is_mps", "is_xpu", "is_xla", "is_ipu", "is_vulkan", "is_maia", "is_mtia"):
    public(f"Tensor.{_name}")(_flag(False))
public("Tensor.is_cpu")(_flag(True))
public("Tensor.layout")(_flag(strided))
public("Tensor.itemsize")(property(lambda self: self._data.itemsize))
public("Tensor.nbytes")(property(lambda self: self._data.size * self._data.itemsize))


def _need_tensor(name, value):
    from ..tensor import Tensor

    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(value).__name__}")


@public("Tensor.get_device")
def get_device(self) -> int:
    """-1: the CPU (PyTorch's answer for a CPU tensor)."""
    return -1


@public("torch.get_device")
def torch_get_device(input) -> int:
    _need_tensor("get_device", input)
    return -1


@public("Tensor.is_conj", "torch.is_conj")
def is_conj(input) -> bool:
    _need_tensor("is_conj", input)
    return False


@public("Tensor.is_neg", "torch.is_neg")
def is_neg(input) -> bool:
    _need_tensor("is_neg", input)
    return False


@public("Tensor.is_pinned")
def is_pinned(self, device=None) -> bool:
    if device is not None:
        from ..size import device as parse_device

        if isinstance(device, str):
            parse_device(device)
        elif not isinstance(device, parse_device):
            raise TypeError("is_pinned(): argument 'device' (position 1) must be torch.device, "
                            f"not {type(device).__name__}")
    return False


@public("Tensor.pin_memory")
def pin_memory(self, device=None):
    raise RuntimeError("Cannot access accelerator device when none is available.")


@public("Tensor.share_memory_")
def share_memory_(self):
    """Marks the tensor shared (one process: nothing to move)."""
    _SHARED.add(id(self._data.base if self._data.base is not None else self._data))
    return self


_SHARED: set = set()


@public("Tensor.is_shared")
def is_shared(self) -> bool:
    data = self._data.base if self._data.base is not None else self._data
    return id(data) in _SHARED


@public("Tensor.dim_order")
def dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost in memory (larger stride first; ties keep
    the dims' order)."""
    strides = self.stride()
    return tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))


# ------------------------------------------------------------------ constructors


def _sizes(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


@public("Tensor.new_empty")
def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False):
    """Uninitialized in PyTorch; zeros here (any value is a valid uninitialized one)."""
    return PUBLIC["torch.zeros"](*_sizes(size), dtype=dtype or self.dtype,
                                 requires_grad=requires_grad)


@public("Tensor.new_empty_strided")
def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                      layout=None, pin_memory=False):
    return PUBLIC["torch.empty_strided"](size, stride, dtype=dtype or self.dtype,
                                         requires_grad=requires_grad)


# ------------------------------------------------------------------ Python callables


def _callable_inplace(self, name: str, fn, others: tuple):
    """Each element replaced by fn(element, *others' elements) as Python numbers, in
    place; refused on a tensor that requires grad, as PyTorch's CPU-only methods do."""
    if not callable(fn):
        raise TypeError(f"'{type(fn).__name__}' object is not callable")
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")
    arrays = [np.broadcast_to(o._data, self._data.shape) for o in others]
    flat = self._data.reshape(-1) if self._data.flags.c_contiguous else None
    values = self._data.reshape(-1).tolist()
    columns = [a.reshape(-1).tolist() for a in arrays]
    results = [fn(v, *(c[i] for c in columns)) for i, v in enumerate(values)]
    new = np.asarray(results, dtype=self._data.dtype).reshape(self._data.shape)
    if flat is not None:
        flat[...] = new.reshape(-1)
    else:
        self._data[...] = new
    # (no version bump: PyTorch's apply_/map_ write the storage behind autograd's back)
    return self


@public("Tensor.apply_")
def apply_(self, *args, **kwargs):
    """(a C method: one positional argument, no keywords, as PyTorch's)"""
    from ..tensor import Tensor

    # PyTorch's error names the class Tensor when the call went through its Python
    # dispatch (several arguments, or a tensor among them), TensorBase otherwise
    owner = "Tensor" if len(args) > 1 or any(isinstance(a, Tensor) for a in args) \
        else "TensorBase"
    if kwargs:
        raise TypeError(f"{owner}.apply_() takes no keyword arguments")
    if len(args) != 1:
        raise TypeError(f"{owner}.apply_() takes exactly one argument ({len(args)} given)")
    return _callable_inplace(self, "apply_", args[0], ())


@public("Tensor.map_")
def map_(self, tensor, callable):  # noqa: A002
    return _callable_inplace(self, "map_", callable, (tensor,))


@public("Tensor.map2_")
def map2_(self, x, y, callable):  # noqa: A002
    return _callable_inplace(self, "map2_", callable, (x, y))


# ------------------------------------------------------------------ the rest


@public("torch.nonzero_static", "Tensor.nonzero_static")
def nonzero_static(input, *, size, fill_value=-1):
    """nonzero's rows cut or padded (with fill_value) to exactly `size` rows."""
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = np.argwhere(input._data)
    rows = np.full((size, input._data.ndim), fill_value,
                   dtype=np.int64)
    count = min(size, len(found))
    rows[:count] = found[:count]
    return make(rows)


@public("Tensor.resize")
def resize(self, *sizes):
    """Deprecated: a reshaped copy that must keep the element count (autograd's Resize).
    The sizes are multiplied as given (a tuple is not unpacked), as PyTorch's Python does."""
    warn_at_caller("non-inplace resize is deprecated")
    want = 1
    for size in sizes:
        want = want * size
    have = self._data.size
    if want != have:
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, sizes))} ({want} elements in total), but "
            f"the given tensor has a size of {'x'.join(map(str, self.shape))} ({have} "
            "elements). autograd's resize can only change the shape of a given tensor, while "
            "preserving the number of elements. ")
    return _resize_function().apply(self, sizes)


_RESIZE = []


def _resize_function():
    """autograd's Resize, a custom Function as in PyTorch (its node: ResizeBackward)."""
    if not _RESIZE:
        from gradcli.torch.autograd import Function

        class Resize(Function):
            @staticmethod
            def forward(ctx, tensor, sizes):
                ctx.input_sizes = tuple(tensor.shape)
                return tensor.reshape(sizes).clone()

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output.reshape(ctx.input_sizes), None

        _RESIZE.append(Resize)
    return _RESIZE[0]

