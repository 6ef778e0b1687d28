"""Memory formats: `torch.contiguous_format`, `torch.channels_last`, `channels_last_3d`
and `preserve_format`, and the layouts they ask of a tensor.

A gradcli tensor's strides are its numpy array's, so a channels_last tensor is an array
laid out with PyTorch's channels_last strides (for N, C, H, W: H*W*C, 1, W*C, C): printing and values do not change, `stride()` and `is_contiguous()` do, and numpy's
elementwise kernels keep the layout as PyTorch's TensorIterator does. The functions that
take `memory_format=` (contiguous, clone, to, the *_like factories) call `apply` or
`laid_out` here; `Tensor.is_contiguous(memory_format=)` is declared here.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .registry import public


class memory_format:  # noqa: N801  (PyTorch's class name: torch.memory_format)
    """One of PyTorch's four memory formats: compared by identity, printed as its name."""

    __module__ = "torch"
    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):  # (the four below are all there are, as PyTorch's)
        raise TypeError("cannot create 'torch.memory_format' instances")

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self):  # pickling and deepcopy give the same object back
        return (_named, (self._name,))


def _format(name: str) -> memory_format:
    fmt = object.__new__(memory_format)
    fmt._name = name
    return fmt


contiguous_format = _format("contiguous_format")
channels_last = _format("channels_last")
channels_last_3d = _format("channels_last_3d")
preserve_format = _format("preserve_format")



def _named(name: str) -> memory_format:
    return _FORMATS[name]


_FORMATS = {f._name: f for f in (contiguous_format, channels_last, channels_last_3d,
                                 preserve_format)}
public("torch.memory_format")(memory_format)
for _fmt in (contiguous_format, channels_last, channels_last_3d, preserve_format):
    public(f"torch.{_fmt._name}")(_fmt)
del _fmt

#: the rank each channels-last format needs, and the order its dims go innermost first
_CHANNELS_LAST = {channels_last: 4, channels_last_3d: 5}


def check_format(fname: str, value) -> memory_format:
    """PyTorch's argument error when memory_format= is not a memory format."""
    if not isinstance(value, memory_format):
        raise TypeError(f"{fname}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(value).__name__}")
    return value


def format_strides(shape: tuple, fmt: memory_format) -> tuple:
    """PyTorch's strides (in elements) for a dense tensor of `shape` in `fmt`: C order,
    or channels last (the channel dim innermost, then W, H(, D), N), size-1 dims included."""
    rank = _CHANNELS_LAST.get(fmt)
    if rank is None:
        order = range(len(shape) - 1, -1, -1)
    else:
        if len(shape) != rank:
            raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")
        order = [1] + list(range(rank - 1, 1, -1)) + [0]
    strides, step = [0] * len(shape), 1
    for d in order:
        strides[d] = step
        step *= max(int(shape[d]), 1)
    return tuple(strides)


def laid_out(values: np.ndarray, fmt: memory_format, npdt=None) -> np.ndarray:
    """A new array holding `values` (cast to npdt) with `fmt`'s strides."""
    npdt = np.dtype(npdt if npdt is not None else values.dtype)
    strides = format_strides(values.shape, fmt)
    buf = np.empty(max(values.size, 1), dtype=npdt)
    arr = np.lib.stride_tricks.as_strided(
        buf, values.shape, tuple(s * npdt.itemsize for s in strides), writeable=True)
    arr[...] = values
    return arr


def _element_strides(arr: np.ndarray) -> list:
    return [s // arr.itemsize for s in arr.strides]


def is_contiguous_as(arr: np.ndarray, fmt: memory_format) -> bool:
    """PyTorch's is_contiguous(memory_format): the strides are `fmt`'s, size-1 dims
    excepted (their strides are never checked). preserve_format checks C order."""
    rank = _CHANNELS_LAST.get(fmt)
    if rank is None:
        return bool(arr.flags.c_contiguous)
    if arr.ndim != rank:
        return False
    if arr.size == 0:
        return True
    expected = 1
    strides = _element_strides(arr)
    for d in [1] + list(range(rank - 1, 1, -1)) + [0]:
        size = arr.shape[d]
        if size != 1:
            if strides[d] != expected:
                return False
            expected *= size
    return True


def _non_overlapping_and_dense(arr: np.ndarray) -> bool:
    """Every element of the memory span is used exactly once (PyTorch's test)."""
    if arr.size <= 1:
        return True
    dims = sorted((d for d in range(arr.ndim) if arr.shape[d] != 1),
                  key=lambda d: abs(arr.strides[d]))
    expected = arr.itemsize
    for d in dims:
        if arr.strides[d] != expected:
            return False
        expected *= arr.shape[d]
    return True


def suggested(arr: np.ndarray) -> memory_format:
    """PyTorch's suggest_memory_format: channels last when the strides already rank the
    channel dim innermost (and the tensor is not also plainly C-contiguous)."""
    rank = _CHANNELS_LAST.get(channels_last if arr.ndim == 4 else channels_last_3d)
    if rank != arr.ndim or arr.flags.c_contiguous:
        return contiguous_format
    fmt = channels_last if arr.ndim == 4 else channels_last_3d
    strides = _element_strides(arr)
    order = [1] + list(range(rank - 1, 1, -1)) + [0]
    last = 0
    for d in order:
        if arr.shape[d] == 1:
            continue
        if strides[d] < last:
            return contiguous_format
        last = strides[d]
    return fmt


def preserved(values: np.ndarray, proto: np.ndarray, npdt=None) -> np.ndarray:
    """preserve_format: a copy of `values` with proto's strides when proto is dense and
    non-overlapping, else laid out in the format its strides suggest."""
    npdt = np.dtype(npdt if npdt is not None else values.dtype)
    if _non_overlapping_and_dense(proto) and not proto.flags.c_contiguous and proto.size:
        buf = np.empty(proto.size, dtype=npdt)
        strides = tuple(s // proto.itemsize * npdt.itemsize for s in proto.strides)
        arr = np.lib.stride_tricks.as_strided(buf, proto.shape, strides, writeable=True)
        arr[...] = values
        return arr
    return laid_out(values, suggested(proto), npdt)


def layout(values: np.ndarray, proto: np.ndarray, fmt: memory_format, npdt=None) -> np.ndarray:
    """`values` (cast to npdt) in `fmt`, preserve_format meaning proto's layout."""
    if fmt is preserve_format:
        return preserved(values, proto, npdt)
    return laid_out(values, fmt, npdt)


# ------------------------------------------------------------------ the entry points


@public("Tensor.is_contiguous")
def is_contiguous(self: Tensor, *, memory_format=contiguous_format) -> bool:
    return is_contiguous_as(self._data, check_format("is_contiguous", memory_format))


def contiguous(x: Tensor, fmt) -> Tensor:
    """Tensor.contiguous(memory_format=fmt): x itself when already so laid out, else a copy
    in that layout (CloneBackward0)."""
    from .registry import OPS, run_op

    fmt = check_format("contiguous", fmt)
    if is_contiguous_as(x._data, fmt):
        return x
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    arr = laid_out(x._data, fmt)  # (checks the rank first, as PyTorch)
    out = run_op(OPS["clone"], (x,))
    out._data = arr
    return out


def clone(x: Tensor, fmt) -> Tensor:
    """clone(memory_format=fmt): CloneBackward0, the copy laid out as asked."""
    from .registry import OPS, run_op

    fmt = check_format("clone", fmt)
    arr = layout(x._data, x._data, fmt)
    out = run_op(OPS["clone"], (x,))
    out._data = arr
    return out


def relaid(x: Tensor, result: Tensor, fmt) -> Tensor:
    """Tensor.to(..., memory_format=fmt) after its dtype conversion made `result`: the
    same tensor when nothing changed and x already has the layout, else a copy laid out
    so (ToCopyBackward0 when a new copy must be made from x)."""
    from .registry import OPS, run_op

    fmt = check_format("to", fmt)
    if fmt is preserve_format:
        return result
    if result is x:
        if is_contiguous_as(x._data, fmt):
            return x
        arr = laid_out(x._data, fmt)
        out = run_op(OPS["to_copy"], (x,), (x._data.dtype, x._data.dtype))
        out._data = arr
        return out
    result._data = laid_out(result._data, fmt)
    return result


def like(values: np.ndarray, proto: np.ndarray, fmt) -> np.ndarray:
    """The *_like factories' memory_format=: `values` laid out as asked of `proto`."""
    fmt = check_format("empty_like", fmt)
    return layout(values, proto, fmt)


def obey_layout(grad: np.ndarray, leaf: np.ndarray) -> np.ndarray:
    """AccumulateGrad's layout contract: a leaf's first .grad has the leaf's strides when
    the leaf is dense and non-overlapping, C order otherwise (grad itself when it already
    complies)."""
    if leaf.flags.c_contiguous:
        return grad if grad.flags.c_contiguous else np.ascontiguousarray(grad)
    if _non_overlapping_and_dense(leaf):
        if grad.strides == leaf.strides and grad.dtype == leaf.dtype:
            return grad
        return preserved(grad, leaf)
    return grad if grad.flags.c_contiguous else np.ascontiguousarray(grad)


@public("torch.empty_strided")
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False) -> Tensor:
    """A tensor with exactly the strides asked (overlapping ones too: stride 0 repeats an
    element). PyTorch leaves the memory uninitialised; here it holds zeros."""
    from .. import dtypes
    from ..limits import check_elements
    from ..tensor import make

    size, stride = [int(s) for s in size], [int(s) for s in stride]
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    for n in size:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {size}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={size} and "
                           f"strides={stride}")
    check_elements(tuple(size))
    d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    span = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    check_elements((span,))
    buf = np.zeros(max(span, 1), dtype=d.np)
    arr = np.lib.stride_tricks.as_strided(
        buf, tuple(size), tuple(s * d.np.itemsize for s in stride), writeable=True)
    out = make(arr)
    if requires_grad:
        out._requires_grad_(True)
    return out
