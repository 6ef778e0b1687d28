"""Shape ops that copy: clone, contiguous, to(dtype), repeat, cat, stack, split,
chunk, unbind, flip; and PyTorch's broadcasting error text."""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..grad_mode import GRAD_MODE
from ..node import keep_given
from ..tensor import VIEW_MULTI, Tensor, _wrap_dim, make
from . import registry as _registry
from .registry import broadcast_error, defop, edge_of, run_op  # noqa: F401 (shape.broadcast_error)

CLONE = defop("clone", "CloneBackward0", lambda a: np.array(a, copy=True), lambda c, g: (g,),
              "d clone(a)/da = 1", torch_call="a.clone()")
TO_COPY = defop("to_copy", "ToCopyBackward0", lambda a, npdt, src: dtypes.cast(a, npdt),
                lambda c, g: (g.to(dtypes.FROM_NP[c.meta[1]]),), "d a.to(dtype)/da = 1 (cast back)",
                torch_call="a.to(torch.float64, copy=True)")


def _repeat_fwd(a, repeats):
    lead = len(repeats) - a.ndim
    return np.tile(a.reshape((1,) * lead + a.shape), repeats)


def _repeat_backward(c, g):
    repeats, in_shape = c.meta
    lead = len(repeats) - len(in_shape)
    full = (1,) * lead + tuple(in_shape)
    split_shape = []
    for r, s in zip(repeats, full, strict=False):
        split_shape += [r, s]
    summed = g.reshape(split_shape).sum(tuple(range(0, 2 * len(full), 2)))
    return (summed.reshape(in_shape),)


def _total_count(arrays, meta) -> int:
    """Elements of cat/stack's result: all of the inputs' (for --max-elements)."""
    return sum(a.size for a in arrays)


REPEAT = defop("repeat", "RepeatBackward0", lambda a, repeats, in_shape: _repeat_fwd(a, repeats),
               _repeat_backward, "d repeat(a)/da: sum the gradient over the copies",
               torch_call="a.repeat(2, *([1] * a.dim()))",
               out_size=lambda arrays, meta: arrays[0].size * math.prod(meta[0]))


def _cat_backward(c, g):
    dim, sizes = c.meta
    out = []
    start = 0
    for i, size in enumerate(sizes):
        if type(size) is not int:  # a skipped [0] input: an empty gradient of its dtype
            out.append(make(np.zeros(0, size)) if c.needs(i) else None)
            continue
        out.append(g.narrow(dim, start, size) if c.needs(i) else None)
        start += size
    return tuple(out)


CAT = defop("cat", "CatBackward0", lambda *arrays_and_meta: np.concatenate(arrays_and_meta[:-2], axis=arrays_and_meta[-2]),
            _cat_backward, "d cat(a, b)/da: the gradient's slice for a", torch_call="torch.cat([a, a])",
            out_size=_total_count)
STACK = defop("stack", "StackBackward0", lambda *arrays_and_meta: np.stack(arrays_and_meta[:-1], axis=arrays_and_meta[-1]),
              lambda c, g: tuple(g.select(c.meta[0], i) if c.needs(i) else None
                                 for i in range(len(c.next_functions))),
              "d stack(a, b)/da: the gradient's slice for a", torch_call="torch.stack([a, a])",
              out_size=_total_count)
FLIP = defop("flip", "FlipBackward0", lambda a, dims: np.flip(a, dims).copy(),
             lambda c, g: (g.flip(c.meta[0]),), "d flip(a)/da: flip the gradient back",
             torch_call="a.flip(0)")


def _pieces_backward(c, grads):
    """split/chunk/unbind: missing output gradients are zeros, then join."""
    kind, dim, sizes, in_shape, dtype = c.meta
    parts = []
    for i, size in enumerate(sizes):
        g = grads[i] if i < len(grads) else None
        if g is None:
            shape = list(in_shape)
            if kind == "unbind":
                shape.pop(dim)
            else:
                shape[dim] = size
            g = make(np.zeros(shape, dtype=dtype))
        parts.append(g)
    if kind == "unbind":
        return (stack(parts, dim),)
    return (cat(parts, dim),)


SPLIT = defop("split", "SplitBackward0", None, _pieces_backward, "d split(a)/da: join the pieces' gradients",
              multi=True, torch_call="a.split(1)[-1] * a.split(1)[0]")
SPLIT_WITH_SIZES = defop("split_with_sizes", "SplitWithSizesBackward0", None, _pieces_backward,
                         "d split(a)/da: join the pieces' gradients", multi=True,
                         torch_call="a.split([1, len(a) - 1])[1]")
UNBIND = defop("unbind", "UnbindBackward0", None, _pieces_backward,
               "d unbind(a)/da: stack the pieces' gradients", multi=True,
               torch_call="a.unbind(0)[0] * a.unbind(-1)[-1]")


def _run_pieces(op, x: Tensor, arrays: list, meta: tuple, steps: list) -> tuple:
    """Run a multi-output op (split/chunk/unbind): views with output numbers 0..n-1."""
    outs = [make(a) for a in arrays]
    chain = x._view_fn if x._base is not None else ()
    for o, step in zip(outs, steps, strict=False):
        o._vc = x._vc
        o._attr_version = x._vc[0]
        o._base = x if x._base is None else x._base
        o._view_fn = chain + (step,)
        o._creation = VIEW_MULTI  # never written in place (PyTorch), even without history
    if not GRAD_MODE.enabled:
        from .views import mark_no_grad_view

        for o in outs:
            mark_no_grad_view(o, x)
    elif x._requires_grad and x._data.dtype.kind in "fV":
        node = op.node_class()(op, (edge_of(x),), None, None, None, meta, None)
        for i, o in enumerate(outs):
            o._requires_grad = True
            o._grad_fn = node
            o._output_nr = i
    if _registry.FORWARD_AD_MULTI is not None:
        _registry.FORWARD_AD_MULTI.pieces(x, outs, op, meta)
    return tuple(outs)


# ------------------------------------------------------------ entry points


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    if memory_format is not None:
        from . import memory_formats as formats

        return formats.clone(input, memory_format)
    return run_op(CLONE, (input,))


def contiguous(x: Tensor, memory_format=None) -> Tensor:
    if memory_format is not None:
        from . import memory_formats as formats

        return formats.contiguous(x, memory_format)
    if x._data.flags.c_contiguous:
        return x
    return run_op(CLONE, (x,), arrays=(np.ascontiguousarray(x._data),))


def _to_args(args: tuple, dtype, copy):
    """dtype and copy from Tensor.to's positional forms, PyTorch's three overloads:
    to(dtype, non_blocking, copy), to(device, dtype, non_blocking, copy) and
    to(other, non_blocking, copy)."""
    if not args:
        return dtype, copy
    first, rest = args[0], list(args[1:])
    if isinstance(first, Tensor):
        dtype = first.dtype
    elif isinstance(first, dtypes.dtype) or first in (float, int, bool):
        dtype = first
    else:  # a device: its dtype comes next
        if rest:
            dtype = rest.pop(0)
    if len(rest) > 2:
        raise TypeError("to() received an invalid combination of arguments")
    if len(rest) == 2:
        copy = rest[1]
    return dtype, copy


def to(x: Tensor, *args, dtype=None, copy=False, device=None, non_blocking=False,
       memory_format=None) -> Tensor:
    dtype, copy = _to_args(args, dtype, copy)
    if dtype is None:
        return run_op(TO_COPY, (x,), (x._data.dtype, x._data.dtype)) if copy else x
    target = dtypes.to_dtype(dtype)
    if target.np == x._data.dtype and not copy:
        return x
    return run_op(TO_COPY, (x,), (target.np, x._data.dtype))


def type_as(x: Tensor, other: Tensor) -> Tensor:
    return to(x, other.dtype)


def repeat(x: Tensor, *repeats) -> Tensor:
    if len(repeats) == 1 and isinstance(repeats[0], (tuple, list)):
        repeats = tuple(repeats[0])
    repeats = tuple(int(r) for r in repeats)
    if len(repeats) < x._data.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    return run_op(REPEAT, (x,), (repeats, x._data.shape))


def _tensor_list(tensors, name: str) -> list:
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    tensors = list(tensors)
    if not tensors:
        if name == "stack":
            raise RuntimeError("stack expects a non-empty TensorList")
        raise ValueError(f"{name}(): expected a non-empty list of Tensors")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {tensors.index(t)} in argument 0, but got {type(t).__name__}")
    return tensors


def cat(tensors, dim: int = 0) -> Tensor:
    tensors = _tensor_list(tensors, "torch.cat")
    for i, t in enumerate(tensors):  # (PyTorch checks them all before anything else)
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    result = dtypes.result_type(*tensors)
    kept = [t for t in tensors if not (t._data.ndim == 1 and t._data.shape[0] == 0)] or tensors[:1]
    ref = kept[0]._data
    ax = _wrap_dim(dim, ref.ndim)
    for i, t in enumerate(kept):
        d = t._data
        if d.ndim != ref.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ref.ndim} and {d.ndim}")
        for k in range(ref.ndim):
            if k != ax and d.shape[k] != ref.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {ax}. Expected size "
                    f"{ref.shape[k]} but got size {d.shape[k]} for tensor number {i} in the list.")
    arrays = [t._data if t._data.dtype == result.np else t._data.astype(result.np) for t in kept]
    if len(kept) == len(tensors):
        sizes = tuple(t._data.shape[ax] for t in kept)
        return keep_given(run_op(CAT, tuple(kept), (ax, sizes), arrays=tuple(arrays)), CAT, dim)
    # skipped [0] inputs stay inputs (PyTorch gives them an empty gradient): the forward
    # sees only the kept arrays, the sizes mark the skipped ones by their dtype
    kept_ids = {id(t) for t in kept}
    sizes = tuple(t._data.shape[ax] if id(t) in kept_ids else t._data.dtype for t in tensors)
    return keep_given(run_op(CAT, tuple(tensors), (ax, sizes), arrays=tuple(arrays)), CAT, dim)


concat = cat
concatenate = cat


def stack(tensors, dim: int = 0) -> Tensor:
    tensors = _tensor_list(tensors, "stack")
    shape = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got [{', '.join(map(str, shape))}] "
                f"at entry 0 and [{', '.join(map(str, t._data.shape))}] at entry {i}")
    result = dtypes.result_type(*tensors)
    ax = _wrap_dim(dim, len(shape) + 1)
    arrays = [t._data if t._data.dtype == result.np else t._data.astype(result.np) for t in tensors]
    return keep_given(run_op(STACK, tuple(tensors), (ax,), arrays=tuple(arrays)), STACK, dim)


def hstack(tensors):
    tensors = list(tensors)
    return cat(tensors, 0 if tensors[0]._data.ndim == 1 else 1)


def vstack(tensors):
    return cat([t.reshape(1, -1) if t._data.ndim == 1 else t for t in tensors], 0)


def _int_like(v, allow_bool: bool) -> bool:
    if isinstance(v, bool):
        return allow_bool
    if isinstance(v, (int, np.integer)):
        return True
    return isinstance(v, Tensor) and v._data.ndim == 0 and v._data.dtype.kind in "iu"


def _split_sizes(value, position: int) -> list:
    """PyTorch's parsing of split_with_sizes' `split_sizes` (a tuple of ints), with its
    TypeErrors (only the first element is checked strictly: a later bool passes)."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position {position}) must be "
                        f"tuple of ints, not {type(value).__name__}")
    for i, v in enumerate(value):
        if not _int_like(v, allow_bool=i > 0):
            if i == 0:
                raise TypeError(
                    f"split_with_sizes(): argument 'split_sizes' (position {position}) must be "
                    f"tuple of ints, but found element of type {type(v).__name__} at pos 0")
            raise TypeError(
                f"split_with_sizes(): argument 'split_sizes' failed to unpack the object at pos "
                f"{i + 1} with error \"type must be tuple of ints,but got {type(v).__name__}\"")
    return [int(v) for v in value]


def _split_overload_error(size, dim) -> TypeError:
    """split(Tensor, int, int) with a bool size or a non-int dim: no overload matches."""
    st, dt = type(size).__name__, type(dim).__name__
    first = f"!{st}!, !{dt}!" if isinstance(size, bool) else f"int, !{dt}!"
    return TypeError(
        f"split() received an invalid combination of arguments - got (Tensor, {st}, {dt}), but "
        "expected one of:\n"
        " * (Tensor input, int split_size, int dim = 0)\n"
        f"      didn't match because some of the arguments have invalid types: (Tensor, {first})\n"
        " * (Tensor input, tuple of ints split_size, int dim = 0)\n"
        f"      didn't match because some of the arguments have invalid types: (Tensor, !{st}!, !{dt}!)\n")


def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Tensor.split: an int gives split (equal pieces, the last smaller), a sequence
    split_with_sizes; argument checks in PyTorch's order and words."""
    size = split_size_or_sections
    if isinstance(size, Tensor):  # as PyTorch: a one-element tensor is read as an int
        try:
            size = int(size)
        except ValueError:
            pass
    return split_with_sizes(tensor, size, dim, 2) if not isinstance(size, (int, np.integer)) \
        else _split_equal(tensor, size, dim)


def _split_equal(x: Tensor, size, dim) -> tuple:
    if isinstance(size, bool) or not _int_like(dim, allow_bool=False):
        raise _split_overload_error(size, dim)
    d = x._data
    if d.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    size = int(size)
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    ax = _wrap_dim(int(dim), d.ndim)
    n = d.shape[ax]
    if size == 0 and n:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    sizes = [min(size, n - s) for s in range(0, n, size)] if size and n else [0]
    return _split_pieces(SPLIT, x, ax, sizes)


def split_with_sizes(x: Tensor, split_sizes, dim: int = 0, _position: int = 2) -> tuple:
    """torch.split_with_sizes (`_position`: where split_sizes is in the messages; Tensor's
    method counts from 1, torch's function and Tensor.split from 2)."""
    sizes = _split_sizes(split_sizes, _position)
    if not _int_like(dim, allow_bool=False):
        raise TypeError(f"split_with_sizes(): argument 'dim' (position {_position + 1}) must be int, "
                        f"not {type(dim).__name__}")
    d = x._data
    if d.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    ax = _wrap_dim(int(dim), d.ndim)
    shown = ", ".join(map(str, sizes))
    if any(s < 0 for s in sizes):
        raise RuntimeError(
            f"split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=[{shown}]")
    n = d.shape[ax]
    if sum(sizes) != n:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
            f"dimension {int(dim)}), but got split_sizes=[{shown}]")
    return _split_pieces(SPLIT_WITH_SIZES, x, ax, sizes)


def _split_pieces(op, x: Tensor, ax: int, sizes: list) -> tuple:
    d = x._data
    from .views import SLICE

    arrays, steps = [], []
    start = 0
    for s in sizes:
        meta = (ax, start, start + s, 1, d.shape)
        arrays.append(SLICE.forward(d, *meta))
        steps.append((SLICE.forward, meta))
        start += s
    return _run_pieces(op, x, arrays, ("split", ax, tuple(sizes), d.shape, d.dtype), steps)


def tensor_split_with_sizes(x: Tensor, split_sizes, dim: int = 0) -> tuple:
    """Tensor.split_with_sizes (its messages count arguments from split_sizes)."""
    return split_with_sizes(x, split_sizes, dim, 1)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    for name, pos, v in (("chunks", 1, chunks), ("dim", 2, dim)):
        if not _int_like(v, allow_bool=False):  # (Tensor.chunk's argument positions)
            raise TypeError(f"chunk(): argument '{name}' (position {pos}) must be int, not {type(v).__name__}")
    chunks, dim = int(chunks), int(dim)
    if input._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = input._data.shape[_wrap_dim(dim, input._data.ndim)]
    if n == 0:  # PyTorch: `chunks` empty pieces
        d = input._data
        ax = _wrap_dim(dim, d.ndim)
        from .views import SLICE

        meta = (ax, 0, 0, 1, d.shape)
        steps = [(SLICE.forward, meta)] * chunks
        arrays = [SLICE.forward(d, *meta) for _ in range(chunks)]
        return _run_pieces(SPLIT, input, arrays, ("split", ax, (0,) * chunks, d.shape, d.dtype), steps)
    size = -(-n // chunks)
    return split(input, size, dim)


def unbind(x: Tensor, dim: int = 0) -> tuple:
    d = x._data
    if d.ndim == 0:
        _wrap_dim(dim, 0)
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    ax = _wrap_dim(dim, d.ndim)
    from .views import SELECT

    steps = [(SELECT.forward, (ax, i, d.shape)) for i in range(d.shape[ax])]
    arrays = [fwd(d, *meta) for fwd, meta in steps]
    sizes = (1,) * d.shape[ax]
    return _run_pieces(UNBIND, x, arrays, ("unbind", ax, sizes, d.shape, d.dtype), steps)


def flip(input: Tensor, dims) -> Tensor:
    if isinstance(dims, int):
        dims = (dims,)
    n = input._data.ndim
    dims = tuple(_wrap_dim(int(d), n) for d in dims)
    if len(set(dims)) != len(dims):  # (numpy would say "repeated axis")
        seen = set()
        for d in dims:
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
    return run_op(FLIP, (input,), (dims if n else (),))


def nonzero(x: Tensor, *, as_tuple=False):
    d = x._data
    if d.ndim == 0:  # PyTorch: one (index-less) row per nonzero value
        count = int(bool(d))
        if as_tuple:
            return (make(np.zeros(count, np.int64)),)
        return make(np.zeros((count, 0), np.int64))
    idx = np.nonzero(d)
    if as_tuple:
        return tuple(make(np.asarray(i, dtype=np.int64)) for i in idx)
    return make(np.stack(idx, axis=1).astype(np.int64) if idx else np.zeros((1, 0), np.int64))
