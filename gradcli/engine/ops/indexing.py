"""Indexing ops: masked_fill, and the gather/scatter/index_* family.

Each op is one `defop` entry plus its entry point declared `@public` under PyTorch's
names; the Tensor methods, in-place variants and facade names follow from that.
"""

from __future__ import annotations

import numpy as np

from ..node import keep_index_inputs, packs_index_first
from ..tensor import Tensor, _c_name, _wrap_dim, make
from .registry import defop, public, run_op


def _masked_fill_grads(c, g):
    mask = c.meta_tensor(0) if c.meta else None
    if len(c.next_functions) == 1:
        return (g.masked_fill(mask, 0.0),)
    return (g.masked_fill(mask, 0.0) if c.needs(0) else None,
            g.masked_fill(mask.logical_not(), 0.0) if c.needs(1) else None)


MASKED_FILL = defop("masked_fill", "MaskedFillBackward0",
                    lambda a, mask, value: np.where(mask, value, a).astype(a.dtype, copy=False),
                    _masked_fill_grads, "d masked_fill(a, m, v)/da = 1 where not m", save="meta",
                    broadcast=True, torch_call="a.masked_fill(a > 0, 2.5)")
MASKED_FILL_TENSOR = defop(
    "masked_fill_tensor", "MaskedFillBackward1",
    lambda a, value, mask: np.where(mask, value, a).astype(a.dtype, copy=False),
    _masked_fill_grads, "d masked_fill(a, m, v)/da = 1 where not m, d/dv = sum where m",
    save="meta", broadcast=True, torch_call="torch.masked_fill(a, a > 0, b.sum())")


def _check_mask(mask) -> None:
    if mask._data.dtype != np.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_c_name(mask.dtype)}")


def _broadcast_check(mask, a) -> None:
    try:
        np.broadcast_shapes(mask._data.shape, a._data.shape)
    except ValueError:
        from .registry import broadcast_error

        broadcast_error(mask._data.shape, a._data.shape)


@public("torch.masked_fill", "Tensor.masked_fill")
def masked_fill(input, mask, value):
    """masked_fill.Scalar (MaskedFillBackward0) or masked_fill.Tensor (a 0-d value tensor,
    MaskedFillBackward1, whose gradient is the sum over the mask); the mask may broadcast
    the input, whose gradient is then summed back."""
    from .elementwise import _checked_int

    if not isinstance(value, (Tensor, int, float, bool, complex)):
        got = type(value).__name__
        raise TypeError(
            f"masked_fill() received an invalid combination of arguments - got (Tensor, {got}), "
            "but expected one of:\n * (Tensor mask, Tensor value)\n      didn't match because "
            f"some of the arguments have invalid types: (Tensor, !{got}!)\n * (Tensor mask, "
            "Number value)\n      didn't match because some of the arguments have invalid "
            f"types: (Tensor, !{got}!)\n")
    _check_mask(mask)
    _broadcast_check(mask, input)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        return keep_index_inputs(run_op(MASKED_FILL_TENSOR, (input, value), (mask._data,),
                                        arrays=(input._data, value._data)), mask)
    v = _checked_int(value, input.dtype)
    return keep_index_inputs(run_op(MASKED_FILL, (input,), (mask._data, v)), mask)


@public("Tensor.masked_fill_")
def masked_fill_(input, mask, value):
    """In place; allowed on an expanded tensor (one value per location), with PyTorch's warning."""
    from ..tensor import has_internal_overlap

    if has_internal_overlap(input._data):
        from ..warn_site import warn_at_caller

        warn_at_caller(
            "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor "
            "before performing this operation. This also applies to advanced indexing e.g. "
            "tensor[mask] = scalar (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/"
            "native/TensorAdvancedIndexing.cpp:2450.)")
    return input._apply_inplace(lambda old: masked_fill(old, mask, value), overlap_ok=True)



# ------------------------------------------------------------------ gather / scatter


def _along(idx: np.ndarray, dim: int) -> tuple:
    """numpy's index tuple for 'position i of idx, with idx's value along dim'."""
    grid = list(np.indices(idx.shape, sparse=True))
    grid[dim] = idx
    return tuple(grid)


def _gather_fwd(a, idx, dim):
    if idx.size == 0:  # (an empty index of any rank: an empty result of its shape)
        return np.zeros(idx.shape, a.dtype)
    if a.ndim == 0:
        return a[()] * np.ones(idx.shape, a.dtype) if idx.size else np.zeros(idx.shape, a.dtype)
    return a[_along(idx, dim)]


def _scatter_fwd(a, src, idx, dim, reduce):
    out = a.copy()
    if idx.size == 0:
        return out
    if out.ndim == 0:
        out = out.reshape(1)
        idx = idx.reshape(-1)
        dim = 0
        squeeze = True
    else:
        squeeze = False
    where = _along(idx, dim)
    values = src[tuple(slice(0, n) for n in idx.shape)] if np.ndim(src) else src
    if reduce == "add":
        np.add.at(out, where, values)
    elif reduce == "multiply":
        np.multiply.at(out, where, values)
    else:
        out[where] = values
    return out.reshape(()) if squeeze else out


GATHER = defop("gather_public", "GatherBackward0",
               lambda a, idx, dim: _gather_fwd(a, idx, dim),
               lambda c, g: (scatter_add(make(np.zeros(c.saved[0]._data.shape, g._data.dtype)),
                                         c.meta[1], make(c.meta[0]), g),),
               "d gather(a, dim, i)/da: the gradient added back at the indices", save="inputs",
               torch_call="torch.gather(a.reshape(-1), 0, torch.tensor([0, 0]))")


def _scatter_src_grads(c, g):
    idx, dim = c.meta[0], c.meta[1]
    i = make(idx)
    return (g.scatter(dim, i, 0.0) if c.needs(0) else None,
            g.gather(dim, i) if c.needs(1) else None)


SCATTER_SRC = defop("scatter_src", "ScatterBackward0",
                    lambda a, src, idx, dim: _scatter_fwd(a, src, idx, dim, None),
                    _scatter_src_grads, "d scatter(a, i, src)/da: 0 where written; d/dsrc: gather",
                    save="meta", broadcast=False,
                    torch_call="torch.scatter(a.reshape(-1), 0, torch.tensor([0]), "
                               "a.reshape(-1)[:1] * b.sum())")
SCATTER_VALUE = defop("scatter_value", "ScatterBackward1",
                      lambda a, idx, dim, value: _scatter_fwd(a, value, idx, dim, None),
                      lambda c, g: (g.scatter(c.meta[1], make(c.meta[0]), 0.0),),
                      "d scatter(a, i, v)/da: 0 where written", save="meta",
                      torch_call="torch.scatter(a.reshape(-1), 0, torch.tensor([0]), 2.5)")
SCATTER_ADD = defop("scatter_add", "ScatterAddBackward0",
                    lambda a, src, idx, dim: _scatter_fwd(a, src, idx, dim, "add"),
                    lambda c, g: (g if c.needs(0) else None,
                                  g.gather(c.meta[1], make(c.meta[0])) if c.needs(1) else None),
                    "d scatter_add(a, i, src)/da = 1; d/dsrc: gather", save="meta",
                    torch_call="torch.scatter_add(a.reshape(-1), 0, torch.tensor([0, 0]), "
                               "a.reshape(-1).repeat(2)[:2] * b.sum())")


def _index_arg(fname: str, index, arg="index", pos=3):
    if not isinstance(index, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, "
                        f"not {type(index).__name__}")
    if index._data.dtype.kind not in "iu":
        raise RuntimeError(f"{fname}(): Expected dtype int64 for index")
    return index._data.astype(np.int64, copy=False)


def _check_gather_shapes(fname, a, idx, dim, src=None):
    nd = max(a.ndim, 1)
    if idx.ndim != a.ndim and idx.size and not (idx.ndim <= 1 and a.ndim <= 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as "
                           f"{'input' if fname == 'gather' else 'self'} tensor")
    if fname != "gather" and idx.size and a.ndim:
        # scatter's shape check (self's dims but dim, then src's) comes before the bounds
        wrong = any(d != dim and idx.shape[d] > a.shape[d] for d in range(nd))
        if not wrong and src is not None and src.ndim:
            wrong = any(idx.shape[d] > src.shape[d] for d in range(src.ndim))
        if wrong:
            tail = "" if src is None else f" and to be no larger size than src {list(src.shape)}"
            raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self "
                               f"{list(a.shape)} apart from dimension {dim}{tail}")
    if idx.size and a.ndim:
        for d in range(nd):
            if d != dim and idx.shape[d] > a.shape[d]:
                what = "input" if fname == "gather" else "self"
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index {list(idx.shape)} to "
                    f"be no larger than {what} {list(a.shape)} apart from dimension {dim}")
        bound = a.shape[dim]
        if (idx < -bound).any() or (idx >= bound).any():
            bad = idx[(idx < -bound) | (idx >= bound)].flat[0]
            raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size "
                               f"{bound}")
    if src is not None and src.ndim and idx.size:
        for d in range(src.ndim):
            if idx.shape[d] > src.shape[d]:
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index {list(idx.shape)} to "
                    f"be no larger than self {list(a.shape)} apart from dimension {dim} and to "
                    f"be no larger size than src {list(src.shape)}")


@public("torch.gather", "Tensor.gather")
def gather(input, dim, index, *, sparse_grad=False):
    idx = _index_arg("gather", index)
    d = input._data
    dim = _wrap_dim(dim, max(d.ndim, 1))
    _check_gather_shapes("gather", d, idx, dim)
    idx = np.where(idx < 0, idx + (d.shape[dim] if d.ndim else 1), idx)
    return keep_index_inputs(
        run_op(GATHER, (input,), (idx.reshape(idx.shape) if d.ndim else idx, dim)), index)


@public("torch.take_along_dim", "Tensor.take_along_dim")
def take_along_dim(input, indices, dim=None):
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    d = input._data
    dim = _wrap_dim(dim, max(d.ndim, 1))
    shape = list(np.broadcast_shapes(
        tuple(1 if i == dim else n for i, n in enumerate(d.shape)),
        tuple(1 if i == dim else n for i, n in enumerate(indices._data.shape))))
    in_shape = list(shape)
    in_shape[dim] = d.shape[dim]
    idx_shape = list(shape)
    idx_shape[dim] = indices._data.shape[dim]
    return gather(input.expand(*in_shape), dim, indices.expand(*idx_shape))


def _scatter_common(fname, input, dim, index, src):
    idx = _index_arg(fname, index)
    d = input._data
    dim = _wrap_dim(dim, max(d.ndim, 1))
    _check_gather_shapes(fname, d, idx, dim, None if src is None else src)
    if d.ndim:
        idx = np.where(idx < 0, idx + d.shape[dim], idx)
    return idx, dim


@public("torch.scatter", "Tensor.scatter")
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    if src is None and value is not None:
        src = value
    if isinstance(src, Tensor):
        idx, dim = _scatter_common("scatter", input, dim, index, src._data)
        if src.dtype is not input.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        if reduce is not None:
            raise RuntimeError("scatter() with reduce= is not supported by gradcli")
        return keep_index_inputs(run_op(SCATTER_SRC, (input, src), (idx, dim)), index)
    idx, dim = _scatter_common("scatter", input, dim, index, None)
    return keep_index_inputs(run_op(SCATTER_VALUE, (input,), (idx, dim, src)), index)


@public("Tensor.scatter_")
def scatter_(input, dim, index, src=None, *, value=None, reduce=None):
    return input._apply_inplace(lambda old: scatter(old, dim, index, src, value=value,
                                                    reduce=reduce))


@public("torch.scatter_add", "Tensor.scatter_add")
def scatter_add(input, dim, index, src):
    idx, dim = _scatter_common("scatter_add", input, dim, index, src._data)
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter_add(): Expected self.dtype to be equal to src.dtype")
    # (input's gradient is the gradient itself: only src's reads the index, as PyTorch's)
    out = run_op(SCATTER_ADD, (input, src), (idx, dim))
    return keep_index_inputs(out, index if src._requires_grad else None)


@public("Tensor.scatter_add_")
def scatter_add_(input, dim, index, src):
    return input._apply_inplace(lambda old: scatter_add(old, dim, index, src))


# ------------------------------------------------------------------ index_* along a dim


def _index_vector(fname, index, pos=3):
    idx = _index_arg(fname, index, "index", pos) if isinstance(index, Tensor) else None
    if idx is None:
        raise TypeError(f"{fname}(): argument 'index' (position {pos}) must be Tensor, "
                        f"not {type(index).__name__}")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    return idx.reshape(-1)


INDEX_SELECT = defop(
    "index_select", "IndexSelectBackward0",
    lambda a, idx, dim, shape: np.take(a, idx, axis=dim) if a.ndim else a.reshape(1)[
        idx].reshape(idx.shape if idx.ndim else ()),
    lambda c, g: (index_add(make(np.zeros(c.meta[2], g._data.dtype)), c.meta[1],
                            make(c.meta[0]), g),),
    "d index_select(a, dim, i)/da: the gradient added back at the indices", save="meta",
    torch_call="torch.index_select(a.reshape(-1), 0, torch.tensor([0, 0]))")


@public("torch.index_select", "Tensor.index_select")
def index_select(input, dim, index):
    d = input._data
    idx = _index_vector("index_select", index)
    dim = _wrap_dim(dim, max(d.ndim, 1))
    size = d.shape[dim] if d.ndim else 1
    if idx.size and ((idx < -size).any() or (idx >= size).any()):
        raise IndexError("index out of range in self")
    idx = np.where(idx < 0, idx + size, idx)
    if d.ndim == 0:
        idx = idx.reshape(())
    return keep_index_inputs(run_op(INDEX_SELECT, (input,), (idx, dim, d.shape)), index)


def _index_add_fwd(a, src, idx, dim, alpha, src_shape):
    out = a.copy()
    if out.ndim == 0:  # (in a's dtype: bool + bool stays bool, as PyTorch's)
        return (out + (src * alpha).sum()).astype(a.dtype) if idx.size else out
    where = [slice(None)] * out.ndim
    where[dim] = idx
    moved = np.moveaxis(out, dim, 0)
    np.add.at(moved, idx, np.moveaxis(np.asarray(src * alpha, a.dtype)
                                      if np.ndim(src) else src * alpha, dim, 0)
              if np.ndim(src) else src * alpha)
    return out


INDEX_ADD = defop("index_add", "IndexAddBackward0", _index_add_fwd,
                  lambda c, g: (g if c.needs(0) else None,
                                _index_select_like(g, c.meta[1], c.meta[0], c.meta[2],
                                                   c.meta[3]) if c.needs(1) else None),
                  "d index_add(a, dim, i, s)/da = 1, d/ds = alpha * g[i]", save="meta",
                  torch_call="torch.index_add(a.reshape(-1), 0, torch.tensor([0, 0]), "
                             "b.reshape(-1)[:2] if b.dim() else b.reshape(1).expand(2))")


def _index_select_like(g, dim, idx, alpha, src_shape):
    picked = index_select(g, dim, make(idx)) if g.dim() else g.reshape(1).expand(len(idx))
    if alpha != 1:
        picked = picked * alpha
    if tuple(picked.shape) != tuple(src_shape):
        picked = picked.reshape(src_shape)
    return picked


def _index_source_check(fname, d, idx, dim, s):
    if s.ndim and d.ndim and s.ndim != d.ndim:
        raise IndexError(f"{fname}_(): Source/destination tensor must have same slice shapes. "
                         f"Destination slice shape: {tuple(d.shape)} at dimension {dim} and "
                         f"source slice shape: {tuple(s.shape)} at dimension 0.")
    count = s.shape[dim] if s.ndim else 1
    if idx.size != count:
        raise IndexError(f"{fname}_(): Number of indices ({idx.size}) should be equal to "
                         f"source.size(dim) ({count})")


@public("torch.index_add", "Tensor.index_add")
def index_add(input, dim, index, source, *, alpha=1):
    d = input._data
    idx = _index_vector("index_add", index)
    dim = _wrap_dim(dim, max(d.ndim, 1))
    _index_source_check("index_add", d, idx, dim, source._data)
    size = d.shape[dim] if d.ndim else 1
    if idx.size and ((idx < -size).any() or (idx >= size).any()):
        raise IndexError("index out of range in self")
    if source.dtype is not input.dtype:
        raise RuntimeError("index_add_(): self (" + str(input.dtype).replace("torch.", "").title()
                           + ") and source (" + str(source.dtype).replace("torch.", "").title()
                           + ") must have the same scalar type")
    # (input's gradient is the gradient itself: only source's reads the index, as PyTorch's)
    out = run_op(INDEX_ADD, (input, source), (idx, dim, alpha, source._data.shape))
    return keep_index_inputs(out, *((index, source) if source._requires_grad else ()))


@public("Tensor.index_add_")
def index_add_(input, dim, index, source, *, alpha=1):
    return input._apply_inplace(lambda old: index_add(old, dim, index, source, alpha=alpha))


def _index_copy_fwd(a, src, idx, dim, src_shape):
    out = a.copy()
    if out.ndim == 0:
        return np.asarray(src, a.dtype).reshape(()).copy() if idx.size else out
    moved = np.moveaxis(out, dim, 0)
    moved[idx] = np.moveaxis(src, dim, 0) if src.ndim else src
    return out


INDEX_COPY = defop("index_copy", "IndexCopyBackward0", _index_copy_fwd,
                   lambda c, g: (g.index_fill(c.meta[1], make(c.meta[0]), 0.0)
                                 if c.needs(0) else None,
                                 _index_select_like(g, c.meta[1], c.meta[0], 1, c.meta[2])
                                 if c.needs(1) else None),
                   "d index_copy(a, dim, i, s)/da = 0 where copied, d/ds = g[i]", save="meta",
                   torch_call="torch.index_copy(a.reshape(-1), 0, torch.tensor([1, 0]), "
                              "b.reshape(-1)[:2] if b.numel() > 1 else b.reshape(1).expand(2))")


def _restride_check(d, dim, count):
    """PyTorch's index_copy/index_fill view self with the index's length along dim and
    stride 0 there before anything else; for an empty self that view needs storage it
    has not, and the error is the storage check's."""
    if d.size or not count or d.ndim == 0:
        return
    strides, step = [], 1
    for size in reversed(d.shape):
        strides.insert(0, step)
        step *= max(size, 1)
    sizes = list(d.shape)
    sizes[dim], strides[dim] = count, 0
    if min(sizes) == 0:
        return
    need = d.itemsize * (1 + sum((n - 1) * st for n, st in zip(sizes, strides, strict=True)))
    raise RuntimeError(f"setStorage: sizes {sizes}, strides {strides}, storage offset 0, and "
                       f"itemsize {d.itemsize} requiring a storage size of {need} are out of "
                       "bounds for storage of size 0")


@public("torch.index_copy", "Tensor.index_copy")
def index_copy(input, dim, index, source):
    d = input._data
    idx = _index_vector("index_copy", index)
    dim = _wrap_dim(dim, max(d.ndim, 1))
    _restride_check(d, dim, idx.size)
    _index_source_check("index_copy", d, idx, dim, source._data)
    size = d.shape[dim] if d.ndim else 1
    if idx.size and ((idx < 0).any() or (idx >= size).any()):
        bad = idx[(idx < 0) | (idx >= size)][0]
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {dim} "
                         f"with size {size}")
    return keep_index_inputs(run_op(INDEX_COPY, (input, source), (idx, dim, source._data.shape)),
                             index, source if source._requires_grad else None)


@public("Tensor.index_copy_")
def index_copy_(input, dim, index, source):
    return input._apply_inplace(lambda old: index_copy(old, dim, index, source))


def _index_fill_fwd(a, *rest):
    if len(rest) == 4:  # value tensor first
        value, idx, dim, _ = rest
        value = value[()]
    else:
        idx, dim, value = rest
    out = a.copy()
    if out.ndim == 0:
        if idx.size:
            out[()] = value
        return out
    moved = np.moveaxis(out, dim, 0)
    moved[idx] = value
    return out


INDEX_FILL = defop("index_fill", "IndexFillBackward0", _index_fill_fwd,
                   lambda c, g: (g.index_fill(c.meta[1], make(c.meta[0]), 0.0),),
                   "d index_fill(a, dim, i, v)/da = 0 where filled", save="meta",
                   torch_call="torch.index_fill(a.reshape(-1), 0, torch.tensor([1]), 2.5)")
INDEX_FILL_TENSOR = defop(
    "index_fill_tensor", "IndexFillBackward1", _index_fill_fwd,
    lambda c, g: (g.index_fill(c.meta[1], make(c.meta[0]), 0.0) if c.needs(0) else None,
                  index_select(g, c.meta[1], make(np.unique(c.meta[0]))).sum()
                  if c.needs(1) else None),
    "d index_fill(a, dim, i, v)/da = 0 where filled, d/dv = sum there", save="meta",
    torch_call="torch.index_fill(a.reshape(-1), 0, torch.tensor([1]), b.sum())")


@public("torch.index_fill", "Tensor.index_fill")
def index_fill(input, dim, index, value):
    d = input._data
    idx = _index_vector("index_fill", index)
    dim = _wrap_dim(dim, max(d.ndim, 1))
    _restride_check(d, dim, idx.size)
    size = d.shape[dim] if d.ndim else 1
    if idx.size and ((idx < -size).any() or (idx >= size).any()):
        bad = idx[(idx < -size) | (idx >= size)][0]
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    idx = np.where(idx < 0, idx + size, idx)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        return keep_index_inputs(run_op(INDEX_FILL_TENSOR, (input, value), (idx, dim, None),
                                        arrays=(d, value._data)), index)
    return keep_index_inputs(run_op(INDEX_FILL, (input,), (idx, dim, value)), index)


@public("Tensor.index_fill_")
def index_fill_(input, dim, index, value):
    return input._apply_inplace(lambda old: index_fill(old, dim, index, value))


# ------------------------------------------------------------------ take, put, masked_*

TAKE = defop("take", "TakeBackward0", lambda a, idx, shape: a.reshape(-1)[idx],
             lambda c, g: (put(make(np.zeros(c.meta[1], g._data.dtype)), make(c.meta[0]), g,
                               accumulate=True),),
             "d take(a, i)/da: the gradient added back at the flat indices", save="meta",
             torch_call="torch.take(a, torch.tensor([0, 0]))")


def _flat_index(fname, input, index, source=None):
    """take's and put_'s index as flat non-negative positions, after PyTorch's checks in
    its order: a long index, put_'s source of self's dtype and size, an empty self, the
    range."""
    if not isinstance(index, Tensor):
        _index_arg(fname, index)
    label = "take()" if fname == "take" else "put_()"
    if index._data.dtype != np.int64:
        raise RuntimeError(f"{label}: Expected a long tensor for index, but got "
                           f"{_scalar_name(index)}")
    idx = index._data
    if source is not None:
        if source.dtype is not input.dtype:
            raise RuntimeError(f"put_(): self and source expected to have the same dtype, but "
                               f"got self.dtype = {_scalar_name(input)} and source.dtype = "
                               f"{_scalar_name(source)}")
        if idx.size != source._data.size:
            raise IndexError(f"put_(): Expected source and index to have the same number of "
                             f"elements, but got source.numel() = {source._data.size}, "
                             f"index.numel() = {idx.size}")
    n = input._data.size
    if idx.size and n == 0:  # (PyTorch's own words for an empty source or target)
        if fname == "take":
            raise IndexError("take(): tried to take from an empty tensor")
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    if idx.size and ((idx < -n).any() or (idx >= n).any()):
        bad = idx[(idx < -n) | (idx >= n)].flat[0]
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.")
    return np.where(idx < 0, idx + n, idx)


def _scalar_name(t: Tensor) -> str:
    """PyTorch's ScalarType name in its messages (Float, Long, Bool...)."""
    return t.dtype._legacy.replace("Tensor", "")


@public("torch.take", "Tensor.take")
def take(input, index):
    idx = _flat_index("take", input, index)
    return keep_index_inputs(run_op(TAKE, (input,), (idx, input._data.shape)), index, input)


def _put_fwd(a, src, idx, accumulate, src_shape):
    out = a.copy()
    flat = out.reshape(-1)
    if accumulate:
        np.add.at(flat, idx.reshape(-1), src.reshape(-1))
    else:
        flat[idx.reshape(-1)] = src.reshape(-1)
    return flat.reshape(a.shape)


PUT = defop("put", "PutBackward0", _put_fwd,
            lambda c, g: (g if c.meta[1] else g.put(make(c.meta[0]), make(
                np.zeros(c.meta[0].shape, g._data.dtype))) if c.needs(0) else None,
                take(g, make(c.meta[0])).reshape(c.meta[2]) if c.needs(1) else None),
            "d put(a, i, s)/da = 1 (0 where replaced), d/ds = g[i]", save="meta",
            torch_call="torch.put(a, torch.tensor([0]), b.reshape(-1)[:1])")


@public("torch.put", "Tensor.put")
def put(input, index, source, accumulate=False):
    idx = _flat_index("put", input, index, source)
    return keep_index_inputs(
        run_op(PUT, (input, source), (idx, bool(accumulate), source._data.shape)), index,
        source if source._requires_grad else None)


@public("Tensor.put_")
def put_(input, index, source, accumulate=False):
    return input._apply_inplace(lambda old: put(old, index, source, accumulate))


def _masked_select_grad(c, g):
    mask, shape = c.meta
    full = np.broadcast_shapes(mask.shape, shape)
    zeros = make(np.zeros(full, g._data.dtype))
    return (masked_scatter(zeros, make(np.broadcast_to(mask, full).copy()), g),)


MASKED_SELECT = defop("masked_select", "MaskedSelectBackward0",
                      lambda a, mask, shape: np.broadcast_to(
                          a, np.broadcast_shapes(a.shape, mask.shape))[
                          np.broadcast_to(mask, np.broadcast_shapes(a.shape, mask.shape))],
                      _masked_select_grad, "d masked_select(a, m)/da: the gradient where m",
                      save="meta", broadcast=True, torch_call="torch.masked_select(a, a > 0)")


@public("torch.masked_select", "Tensor.masked_select")
def masked_select(input, mask):
    if mask._data.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    _broadcast_check(mask, input)
    return keep_index_inputs(run_op(MASKED_SELECT, (input,), (mask._data, input._data.shape)),
                             mask, input)


def _masked_scatter_fwd(a, src, mask, src_shape):
    shape = np.broadcast_shapes(a.shape, mask.shape)
    out = np.broadcast_to(a, shape).copy()
    m = np.broadcast_to(mask, shape)
    count = int(m.sum())
    out[m] = src.reshape(-1)[:count]
    return out


def _masked_scatter_grads(c, g):
    mask, src_shape = c.meta
    ga = g.masked_fill(make(mask), 0.0) if c.needs(0) else None
    gs = None
    if c.needs(1):
        picked = masked_select(g, make(mask))
        n = int(np.prod(src_shape))
        if picked._data.size < n:
            from .shape import cat

            picked = cat([picked, make(np.zeros(n - picked._data.size, g._data.dtype))])
        gs = picked.reshape(src_shape)
    return ga, gs


MASKED_SCATTER = defop("masked_scatter", "MaskedScatterBackward0", _masked_scatter_fwd,
                       _masked_scatter_grads,
                       "d masked_scatter(a, m, s)/da = 1 where not m, d/ds: g where m",
                       save="meta", broadcast=True,
                       torch_call="torch.masked_scatter(a, a > 0, (a * b.sum()).reshape(-1))",
                       out_size=lambda arrays, meta: int(np.prod(np.broadcast_shapes(
                           arrays[0].shape, meta[0].shape), dtype=np.float64)))


@public("torch.masked_scatter", "Tensor.masked_scatter")
def masked_scatter(input, mask, source):
    if mask._data.dtype != np.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_c_name(mask.dtype)}")
    _broadcast_check(mask, input)
    count = int(np.broadcast_to(mask._data, np.broadcast_shapes(
        mask._data.shape, input._data.shape)).sum())
    if source._data.size < count:
        raise RuntimeError("masked_scatter: expected source to have at least as many elements "
                           "as ones in mask")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter_: expected self and source to have same dtypes but "
                           f"got {_c_name(input.dtype).title()} and "
                           f"{_c_name(source.dtype).title()}")
    return keep_index_inputs(
        run_op(MASKED_SCATTER, (input, source), (mask._data, source._data.shape)), mask)


@public("Tensor.masked_scatter_")
def masked_scatter_(input, mask, source):
    return input._apply_inplace(lambda old: masked_scatter(old, mask, source))


# ------------------------------------------------------------------ scatter_reduce

_UFUNCS = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum,
           "mean": np.add}


def _scatter_reduce_fwd(a, src, idx, dim, reduce, include_self):
    out = a.copy()
    if idx.size == 0:
        return out
    if a.ndim == 0:  # (0-d tensors reduce as 1-element vectors)
        return _scatter_reduce_fwd(a.reshape(1), np.reshape(src, -1), idx.reshape(-1), 0,
                                   reduce, include_self).reshape(())
    where = _along(idx, dim)
    values = src[tuple(slice(0, n) for n in idx.shape)]
    if not include_self:
        touched = np.zeros(out.shape, bool)
        touched[where] = True
        out[touched] = _reduce_identity(reduce, out.dtype)
    _UFUNCS[reduce].at(out, where, values)
    if reduce == "mean":
        count = np.zeros(out.shape, out.dtype)
        np.add.at(count, where, 1)
        if include_self:
            count += 1
        count = np.where(count == 0, 1, count)
        out = out / count if out.dtype.kind in "fV" else out // count
    return out.astype(a.dtype, copy=False)


def _reduce_identity(reduce: str, dtype):
    """The value a reduction starts from where the input's own value takes no part: the
    dtype's extremes for amax/amin (integers have no infinities), 1 for prod, else 0."""
    if reduce in ("amax", "amin"):
        if dtype.kind in "fV":
            return -np.inf if reduce == "amax" else np.inf
        if dtype.kind == "b":
            return reduce == "amin"
        info = np.iinfo(dtype)
        return info.min if reduce == "amax" else info.max
    return 1 if reduce == "prod" else 0


def _scatter_prod_grads(a, src, idx, dim, include_self, g, result):
    """scatter_reduce prod's gradients: a value's is the product of the others reduced
    with it, computed without dividing by it where it is 0; a src position sharing its
    target with another zero gets 0 and no second derivative (PyTorch's Error node)."""
    from .elementwise import where

    masked_self = a.masked_fill(a == 0, 1)
    ga = g * scatter_reduce(masked_self, dim, idx, src, "prod",
                            include_self=include_self) / masked_self
    src_zero = src == 0
    zeros_at = scatter_add(make(np.zeros(a._data.shape, a._data.dtype)), dim, idx,
                           src_zero.to(a.dtype)).gather(dim, idx)
    single_zero = src_zero & (zeros_at == 1)
    others = scatter_reduce(a, dim, idx, src.masked_fill(single_zero, 1), "prod",
                            include_self=include_self)
    gs = where(single_zero, (g * others).gather(dim, idx),
               (g * result).gather(dim, idx) / src.masked_fill(src_zero, 1))
    if bool((zeros_at._data > 1).any()):
        from .delayed_error import delayed_error

        gs = delayed_error(gs, "scatter_reduce(): Double backward is unsupported for src when "
                               ">1 zeros in src are scattered to the same position in self")
    return ga, gs


def _scatter_reduce_grads(c, g):
    a, src = c.saved[0], c.saved[1]
    idx_np, dim, reduce, include_self = c.meta
    idx = make(idx_np)
    src_part = src if tuple(src.shape) == idx_np.shape else src[tuple(
        slice(0, n) for n in idx_np.shape)]
    result = c.result
    ga = gs = None
    if reduce == "sum":
        ga = g
        gs = g.gather(dim, idx)
    elif reduce == "mean":
        count = scatter_add(make(np.zeros(a._data.shape, g._data.dtype)), dim, idx,
                            make(np.ones(idx_np.shape, g._data.dtype)))
        if include_self:
            count = count + 1
        count = count.masked_fill(count == 0, 1.0)
        ga = g / count
        gs = (g / count).gather(dim, idx)
    elif reduce == "prod":  # (zeros: the product of the others, as PyTorch's formula)
        ga, gs = _scatter_prod_grads(a, src_part, idx, dim, include_self, g, result)
    else:  # amax / amin: shared evenly by every value equal to the result
        picked = result.gather(dim, idx)
        self_hit = (a == result).to(g.dtype)
        src_hit = (src_part == picked).to(g.dtype)
        count = scatter_add(self_hit if include_self else self_hit * 0, dim, idx, src_hit)
        share = g / count.masked_fill(count == 0, 1.0)
        ga = share * self_hit
        gs = share.gather(dim, idx) * src_hit
    if not include_self:  # the input's own values there took no part (ScatterBackward1)
        ga = scatter(ga, dim, idx, value=0.0)
    if gs is not None and tuple(gs.shape) != tuple(src.shape):
        full = make(np.zeros(src._data.shape, g._data.dtype))
        gs = scatter(full, dim, make(np.indices(idx_np.shape)[dim]), gs) if src.dim() else gs
    return (ga if c.needs(0) else None, gs if c.needs(1) else None)


SCATTER_REDUCE = defop("scatter_reduce", "ScatterReduceBackward0",
                       lambda a, src, idx, dim, reduce, include_self: _scatter_reduce_fwd(
                           a, src, idx, dim, reduce, include_self),
                       _scatter_reduce_grads,
                       "d scatter_reduce(a, i, src, r)/da, /dsrc: by the reduction's rule",
                       save="inputs,result",
                       torch_call="torch.scatter_reduce(a.reshape(-1), 0, torch.tensor([0]), "
                                  "a.reshape(-1)[:1] * b.sum(), 'sum')")


@public("torch.scatter_reduce", "Tensor.scatter_reduce")
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    if reduce not in _UFUNCS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    idx, dim = _scatter_common("scatter_reduce", input, dim, index, src._data)
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter_reduce(): Expected self.dtype to be equal to src.dtype")
    return keep_index_inputs(
        run_op(SCATTER_REDUCE, (input, src), (idx, dim, reduce, bool(include_self))), index)


@public("Tensor.scatter_reduce_")
def scatter_reduce_(input, dim, index, src, reduce, *, include_self=True):
    return input._apply_inplace(lambda old: scatter_reduce(old, dim, index, src, reduce,
                                                           include_self=include_self))


# (PyTorch's nodes of these save the index, mask or condition first)
packs_index_first(MASKED_FILL, MASKED_FILL_TENSOR, GATHER, SCATTER_SRC, SCATTER_VALUE, SCATTER_ADD,
                  INDEX_SELECT, INDEX_ADD, INDEX_COPY, INDEX_FILL, INDEX_FILL_TENSOR, TAKE, PUT,
                  MASKED_SELECT, MASKED_SCATTER, SCATTER_REDUCE)
