"""Sparse COO tensors: Tensor.to_sparse / to_dense / indices / values / coalesce / _nnz,
torch.sparse_coo_tensor, torch.sparse.mm / addmm / sum, with PyTorch's grad_fn names
and its sparse gradients.

Representation. A sparse tensor is a `SparseCOO`, a subclass of Tensor with no slots of
its own, whose `_data` is the dense equivalent (the values scattered, duplicates
added); its indices (sparse_dim x nnz, int64), values (nnz x dense dims) and whether it
is coalesced are kept beside it in `_PATTERNS`, by id, dropped when the tensor dies. So
the dense engine never looks at a layout: nothing on the ordinary path costs anything,
and the autograd engine moves dense gradients through a sparse tensor's node like any
other. PyTorch's gradient into a sparse tensor is sparse, with the tensor's (coalesced)
pattern: every backward formula here masks the dense gradient to that pattern, and a
sparse leaf's `.grad` is read back as a sparse tensor of its pattern.

Functions of a sparse tensor. A Tensor method is found through `SparseCOO.__getattribute__`
(which only sparse tensors pay for): the names of `_SPARSE_ATTRS` are this class's own, those
in `SPARSE_METHODS` (filled by ops/sparse_functions.py) give PyTorch's sparse result or its
refusal, any other public method is refused as not supported by gradcli. The torch.*
functions with a sparse answer are routed there too (sparse_functions.install). Indices
must lie inside the size (PyTorch without invariant checks keeps them and fails later).
CSR is sparse_csr.py's; CSC / BSR / BSC layouts are not represented.
"""

from __future__ import annotations

import math
import weakref
from types import MethodType

import numpy as np

from ..tensor import ONLY_FLOAT_GRAD_FACTORY, Tensor, _type_word, make
from ..warn_site import warn_once
from .registry import PUBLIC, defop, public, run_op
from .tensor_extras import layout, strided

sparse_coo = layout("sparse_coo")
PUBLIC["torch.sparse_coo"] = sparse_coo

#: id(sparse tensor) -> (indices, values, coalesced)
_PATTERNS: dict[int, tuple] = {}
#: id(sparse tensor) -> "sparse" or "dense": the layout of the gradient PyTorch would give
#: it, by the ops it was given to (the sparse ops' formulas give sparse gradients; mm's a
#: dense one, which wins when both meet); read when a sparse leaf's .grad is read
_GRAD_LAYOUTS: dict[int, str] = {}


def _forget(key: int) -> None:
    _PATTERNS.pop(key, None)
    _GRAD_LAYOUTS.pop(key, None)


def _note_grad_layout(t, layout_name: str) -> None:
    """("zero": an op whose derivative is zero, whose sparse gradient has no entries;
    any other consumer's layout wins over it)"""
    have = _GRAD_LAYOUTS.get(id(t))
    if have != "dense" and (layout_name != "zero" or have is None):
        _GRAD_LAYOUTS[id(t)] = layout_name


def _pattern(t):
    return _PATTERNS[id(t)]


def _plus_zero(dense: np.ndarray) -> np.ndarray:
    """`dense` (a new array) as PyTorch's to_dense gives it, which adds the values into
    zeros: a stored -0.0 reads +0.0."""
    if dense.dtype.kind in "fc" and dense.size:
        dense[dense == 0] = 0
    return dense


def _densify(indices: np.ndarray, values: np.ndarray, shape: tuple) -> np.ndarray:
    if indices.shape[0] == 0:  # (no sparse dims: every entry adds to the one dense block)
        return _plus_zero(np.array(values.sum(axis=0).reshape(shape), values.dtype))
    dense = np.zeros(shape, values.dtype)
    if indices.shape[1]:
        with np.errstate(all="ignore"):  # (inf + -inf duplicates: nan, silently)
            np.add.at(dense, tuple(indices), values)
    return dense


def _coalesced(indices: np.ndarray, values: np.ndarray, shape: tuple):
    """Indices sorted (row-major over the sparse dims) and unique, duplicates' values added."""
    sparse_dim = indices.shape[0]
    if indices.shape[1] == 0:
        return indices.copy(), values.copy()
    flat = np.ravel_multi_index(tuple(indices), shape[:sparse_dim]) if sparse_dim else \
        np.zeros(indices.shape[1], np.int64)
    unique, inverse = np.unique(flat, return_inverse=True)
    summed = np.zeros((len(unique),) + values.shape[1:], values.dtype)
    with np.errstate(all="ignore"):  # (inf + -inf duplicates: nan, silently)
        np.add.at(summed, inverse.reshape(-1), values)
    new_indices = np.array(np.unravel_index(unique, shape[:sparse_dim]), dtype=np.int64) \
        .reshape(sparse_dim, len(unique))
    return new_indices, summed


def _attach(t: Tensor, indices: np.ndarray, values: np.ndarray, coalesced: bool,
            cls=None) -> Tensor:
    """Make `t` (a fresh tensor over the dense equivalent) the sparse tensor of this
    pattern (of class `cls`: SparseCOO, or sparse_csr.py's SparseCSR)."""
    t.__class__ = cls or SparseCOO
    _PATTERNS[id(t)] = (indices, values, coalesced)
    weakref.finalize(t, _forget, id(t))
    return t


def _mask(t) -> np.ndarray:
    """Where the sparse tensor `t` stores values (its coalesced pattern), as a dense bool
    array broadcasting over its dense dims."""
    indices, _, _ = _pattern(t)
    shape = t._data.shape
    sparse_dim = indices.shape[0]
    mask = np.zeros(shape[:sparse_dim], bool)
    if indices.shape[1]:
        mask[tuple(indices)] = True
    return mask.reshape(mask.shape + (1,) * (len(shape) - sparse_dim))


def _masked(grad: Tensor, mask: np.ndarray) -> Tensor:
    """grad with zeros off the pattern (an inf or nan there too), recorded so that a
    gradient of the gradient reaches it, for double backward."""
    mask = np.broadcast_to(mask, grad._data.shape)
    return PUBLIC["torch.where"](make(mask), grad, make(np.zeros((), grad._data.dtype)))


def _dense_of(t: Tensor) -> Tensor:
    """A sparse tensor's dense equivalent inside a backward formula (recorded, so a
    create_graph gradient reaches the sparse tensor); a dense one as it is."""
    return run_op(TO_DENSE, (t,), (_mask(t),)) if isinstance(t, SparseCOO) else t


# ------------------------------------------------------------------ dense -> sparse


def _pattern_of_dense(data: np.ndarray, sparse_dim: int):
    """The indices and values to_sparse(sparse_dim) stores: every index of the first
    sparse_dim dims whose slice holds a nonzero."""
    if data.ndim == 0:  # (a 0-d zero, -0.0 too, stores nothing)
        n = int(data != 0)
        return np.zeros((0, n), np.int64), data.reshape(1)[:n].copy()
    if sparse_dim == data.ndim:
        nonzero = data != 0
    else:
        nonzero = np.any(data.reshape(data.shape[:sparse_dim] + (-1,)) != 0, axis=-1)
    indices = np.array(np.nonzero(nonzero), dtype=np.int64).reshape(sparse_dim, -1)
    return indices, data[tuple(indices)].copy()


def _copy_forward(x, *meta):
    return x.copy()


def _dense_equivalent(x, *meta):
    """to_sparse's result as a dense array: the input with its zeros +0.0 (off the pattern
    nothing is stored; a -0.0 inside a stored row of a hybrid tensor reads +0.0 too)."""
    return _plus_zero(x.copy())


def _pass_masked(ctx, grad):
    return (_masked(grad, ctx.meta[-1]),)


def _pass(ctx, grad):
    """to_sparse's formula: the gradient as it comes (masked already where the sparse
    tensor's consumer gives sparse gradients; mm's stays whole, as in PyTorch)."""
    return (grad,)


TO_SPARSE = defop("to_sparse", "ToSparseBackward1", _dense_equivalent, _pass,
                  torch_call="a.to_sparse().to_dense()")
TO_SPARSE_DIM = defop("to_sparse_dim", "ToSparseBackward0", _dense_equivalent, _pass,
                      torch_call="a.to_sparse(min(a.dim(), 1)).to_dense()")
TO_DENSE = defop("to_dense", "ToDenseBackward0", _copy_forward, _pass_masked,
                 torch_call="a.to_sparse().to_dense() * 2")
COALESCE = defop("coalesce", "CoalesceBackward0", _copy_forward, _pass_masked,
                 torch_call="torch.sparse_coo_tensor(torch.zeros(1, a.numel(), dtype=torch.long), "
                            "a.reshape(-1)).coalesce().to_dense()")


def _run_masked(op, x, mask, indices, values, coalesced):
    if isinstance(x, SparseCOO):
        _note_grad_layout(x, "sparse")
    return _attach(run_op(op, (x,), (mask,)), indices, values, coalesced)


_NO_DIM = object()


@public("Tensor.to_sparse")
def to_sparse(self, sparse_dim=_NO_DIM, *, layout=None, blocksize=None, dense_dim=None):
    """A dense tensor's sparse COO copy (ToSparseBackward1; with sparse_dim,
    ToSparseBackward0); a sparse tensor's own (itself)."""
    if sparse_dim is None:  # (PyTorch's parser takes no None there: its own error follows)
        raise TypeError("to_sparse(): argument 'sparse_dim' must be int, not NoneType")
    if sparse_dim is _NO_DIM:
        sparse_dim = None
    if layout is strided and not isinstance(self, SparseCOO):
        return self
    if layout not in (None, sparse_coo) or blocksize is not None or dense_dim is not None:
        raise NotImplementedError("to_sparse: only the sparse COO layout is supported by gradcli")
    if isinstance(self, SparseCOO):
        if sparse_dim is not None and sparse_dim != _pattern(self)[0].shape[0]:
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim "
                               "argument !=self.sparse_dim() is not supported")
        return self
    data = self._data
    if sparse_dim is None:
        op, dims = TO_SPARSE, data.ndim
    else:
        dims = int(sparse_dim)
        if dims == 0 and data.ndim > 0:
            raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when "
                               "self.dim()>0")
        if not 0 <= dims <= data.ndim:
            raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,"
                               f"{data.ndim}] range, but {dims} is given")
        op = TO_SPARSE_DIM
    indices, values = _pattern_of_dense(data, dims)
    return _attach(run_op(op, (self,)), indices, values, True)


@public("Tensor.to_dense")
def to_dense(self, dtype=None, *, masked_grad=None):
    """A sparse tensor's dense equivalent (ToDenseBackward0: the gradient comes back to the
    sparse tensor masked to its pattern); a dense tensor itself."""
    if not isinstance(self, SparseCOO):
        return self if dtype is None or dtype == self.dtype else self.to(dtype)
    if dtype is not None:
        raise RuntimeError("dtype argument is not supported by sparse_to_dense")
    _note_grad_layout(self, "sparse")
    return run_op(TO_DENSE, (self,), (_mask(self),))


# ------------------------------------------------------------------ parts


def _values_forward(x, indices, values, shape):
    return values.copy()


def _values_backward(ctx, grad):
    indices, _, shape = ctx.meta
    if indices.shape[0] == 0:
        return (grad.sum(0).reshape(shape),)
    zeros = PUBLIC["torch.zeros"](shape, dtype=grad.dtype)
    return (zeros.index_put(tuple(make(i) for i in indices), grad, accumulate=True),)


VALUES = defop("values", "ValuesBackward0", _values_forward, _values_backward,
               torch_call="a.to_sparse().values()")


def _need_sparse(self, name: str, what: str = "sparse coordinate tensor"):
    if not isinstance(self, SparseCOO) or (what == "sparse coordinate tensor"
                                           and self.layout is not sparse_coo):
        got = "Strided" if not isinstance(self, SparseCOO) else "SparseCsr"
        raise RuntimeError(f"{name} expected {what} layout but got {got}")


@public("Tensor.indices")
def indices(self):
    """The (sparse_dim x nnz) int64 indices of a coalesced sparse tensor (no gradient)."""
    _need_sparse(self, "indices")
    idx, _, coalesced = _pattern(self)
    if not coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                           ".coalesce() first")
    return make(idx.copy())


@public("Tensor.values")
def values(self):
    """The (nnz x dense dims) values of a coalesced sparse tensor (ValuesBackward0)."""
    _need_sparse(self, "values", "sparse tensor")
    idx, vals, coalesced = _pattern(self)
    if not coalesced:  # (a CSR tensor's pattern is always coalesced)
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                           ".coalesce() first")
    _note_grad_layout(self, "sparse")
    return run_op(VALUES, (self,), (idx, vals, self._data.shape))


@public("Tensor._indices")
def _indices(self):
    _need_sparse(self, "_indices")
    return make(_pattern(self)[0].copy())


@public("Tensor._values")
def _values(self):
    _need_sparse(self, "_values", "sparse tensor")
    idx, vals, _ = _pattern(self)
    return make(vals.copy())


@public("Tensor.coalesce")
def coalesce(self):
    """Sorted unique indices, duplicates added (CoalesceBackward0); a coalesced tensor
    is returned as it is."""
    _need_sparse(self, "coalesce")
    idx, vals, coalesced = _pattern(self)
    if coalesced:
        return self
    new_idx, new_vals = _coalesced(idx, vals, self._data.shape)
    return _run_masked(COALESCE, self, _mask(self), new_idx, new_vals, True)


@public("Tensor.is_coalesced")
def is_coalesced(self) -> bool:
    _need_sparse(self, "is_coalesced")
    return _pattern(self)[2]


@public("Tensor._nnz")
def _nnz(self) -> int:
    """The number of stored entries (duplicates of an uncoalesced tensor counted)."""
    if not isinstance(self, SparseCOO):
        raise NotImplementedError("Could not run 'aten::_nnz' with arguments from the 'CPU' "
                                  "backend.")
    return int(_pattern(self)[0].shape[1])


@public("Tensor.sparse_dim")
def sparse_dim(self) -> int:
    return int(_pattern(self)[0].shape[0]) if isinstance(self, SparseCOO) else 0


@public("Tensor.dense_dim")
def dense_dim(self) -> int:
    if isinstance(self, SparseCOO):
        return self._data.ndim - int(_pattern(self)[0].shape[0])
    return self._data.ndim


# ------------------------------------------------------------------ construction


def _construct_forward(values, indices, shape):
    return _densify(indices, values, shape)


def _construct_backward(ctx, grad):
    indices, shape = ctx.meta
    if indices.shape[0] == 0:
        return (grad.expand((indices.shape[1],) + tuple(shape)).clone(),)
    return (grad[tuple(make(i) for i in indices)],)


SPARSE_COO_TENSOR = defop("sparse_coo_tensor", "SparseCooTensorWithDimsAndTensorsBackward0",
                          _construct_forward, _construct_backward,
                          out_size=lambda arrays, meta: math.prod(meta[1]),
                          torch_call="torch.sparse_coo_tensor(torch.zeros(1, a.numel(), "
                                     "dtype=torch.long), a.reshape(-1), (2,)).to_dense()")


#: PyTorch's TORCH_WARN_ONCE on the first sparse_coo_tensor call that did not say whether
#: to check its invariants (gradcli always checks the indices against the size)
_INVARIANTS_WARNING = (
    "Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will "
    "occur when operating on a sparse tensor which violates the invariants, but checks incur "
    "performance overhead. To silence this warning, explicitly opt in or out. See "
    "`torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.  (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/Context.cpp:816.)")


def _as_array(obj, dtype=None):
    if isinstance(obj, Tensor):
        return obj
    return PUBLIC["torch.tensor"](obj, dtype=dtype)


@public("torch.sparse_coo_tensor")
def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor of these indices and values (a leaf, or
    SparseCooTensorWithDimsAndTensorsBackward0 when the values require grad)."""
    if check_invariants is None:
        warn_once("sparse_invariants", _INVARIANTS_WARNING)
    idx_t = _as_array(indices)
    vals_t = _as_array(values, dtype)
    if dtype is not None and vals_t.dtype != dtype:
        vals_t = vals_t.to(dtype)
    idx = np.asarray(idx_t._data)
    if idx.dtype.kind != "i" and idx.size:
        idx = idx.astype(np.int64)
    idx = idx.astype(np.int64)
    vals = vals_t._data
    if idx.ndim != 2:
        if size is not None and idx.ndim == 1 and len(size) != idx.shape[0] + vals.ndim - 1:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(size)}, sparse_dim = {idx.shape[0]}, "
                               f"dense_dim = {vals.ndim - 1}")
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    sparse_dim, nnz = idx.shape
    if vals.ndim == 0 or vals.shape[0] != nnz:
        got = vals.shape[0] if vals.ndim else 1
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {got}")
    if size is None:
        lead = tuple(int(m) + 1 for m in idx.max(axis=1)) if nnz else (0,) * sparse_dim
        shape = lead + tuple(vals.shape[1:])
    else:
        shape = tuple(int(s) for s in size)
        if len(shape) != sparse_dim + vals.ndim - 1:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(shape)}, sparse_dim = {sparse_dim}, "
                               f"dense_dim = {vals.ndim - 1}")
        if tuple(vals.shape[1:]) != shape[sparse_dim:]:
            raise RuntimeError(f"values has incorrect size, expected {list(shape[:0]) + [nnz] + list(shape[sparse_dim:])}, "
                               f"got {list(vals.shape)}")
    if any(n < 0 for n in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    if requires_grad and vals.dtype.kind not in "fcV":
        raise RuntimeError(ONLY_FLOAT_GRAD_FACTORY)
    for d in range(sparse_dim):
        if nnz and idx[d].min() < 0:
            raise RuntimeError(f"found negative index {int(idx[d].min())} for dim {d}")
        if nnz and idx[d].max() >= shape[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{shape[d]} but found index {int(idx[d].max())}")
    coalesced = bool(is_coalesced) if is_coalesced is not None else nnz < 2
    if coalesced and nnz >= 2:  # (the caller's word, as PyTorch takes it: checked here)
        coalesced = bool(np.array_equal(_coalesced(idx, vals, shape)[0], idx))
    out = run_op(SPARSE_COO_TENSOR, (vals_t,), (idx, shape))
    if requires_grad:
        if out._grad_fn is not None:
            raise RuntimeError("requires_grad can only be set on leaf tensors")
        out._requires_grad_(True)
    return _attach(out, idx.copy(), vals.copy(), coalesced)


# ------------------------------------------------------------------ products and sums


def _stored_product(left, right, mask, sparse_left: bool = True) -> np.ndarray:
    """left @ right where one side is a sparse matrix's dense equivalent: only its stored
    entries (where `mask`) take part, as in PyTorch's sparse kernels, so an inf or nan of
    the dense side meets no unstored zero (0 * inf would be nan)."""
    from scipy import sparse as sp  # (on first use: not at start-up)

    side = left if sparse_left else right
    rows, cols = np.nonzero(np.broadcast_to(mask, side.shape))
    matrix = sp.csr_matrix((side[rows, cols], (rows, cols)), shape=side.shape)
    with np.errstate(all="ignore"):
        out = matrix @ right if sparse_left else (matrix.T @ left.T).T
    return np.ascontiguousarray(out, dtype=np.result_type(left, right))


def _addmm_forward(m, s, d, beta, alpha, mask):
    prod = _stored_product(s, d, mask)
    if m is None:
        return prod
    out = prod * np.asarray(alpha, prod.dtype) if alpha != 1 else prod
    if beta == 0:
        return out
    return out + (m * np.asarray(beta, m.dtype) if beta != 1 else m)


def _addmm_backward(ctx, grad):
    m, s, d = ctx.saved
    beta, alpha, mask = ctx.meta
    gs = _masked(grad.mm(d.t()) * alpha, mask)
    gd = _dense_of(s).t().mm(grad) * alpha
    gm = None if m is None else grad * beta
    return (gm, gs, gd)


SPARSE_ADDMM = defop("sparse_addmm", "SparseAddmmBackward0", _addmm_forward, _addmm_backward,
                     save="inputs", out_size=lambda arrays, meta: arrays[1].shape[0]
                     * arrays[2].shape[-1],
                     torch_call="torch.sparse.mm(a.reshape(-1, 1).to_sparse(), b.reshape(1, -1))")


def _mm_forward(s, d, mask, sparse_left):
    return _stored_product(s, d, mask, sparse_left)


def _mm_backward(ctx, grad):
    """PyTorch's mm formula: dense gradients, a sparse side's not masked."""
    a, b = ctx.saved
    return (grad.mm(_dense_of(b).t()), _dense_of(a).t().mm(grad))


MM = defop("sparse_dense_mm", "MmBackward0", _mm_forward, _mm_backward, save="inputs",
           out_size=lambda arrays, meta: arrays[0].shape[0] * arrays[1].shape[-1],
           torch_call="a.reshape(-1, 1).to_sparse() @ b.reshape(1, -1)")


def _scalar_type(dtype) -> str:
    try:
        return _type_word(dtype)
    except KeyError:  # (the small integer types: c10's own names)
        return {"int8": "Char", "uint8": "Byte", "int16": "Short"}.get(dtype.name, str(dtype))


def _check_mm(s, d, name="addmm"):
    if s._data.ndim != 2 or d._data.ndim != 2:
        raise RuntimeError(f"{name}: matrices expected, got {s._data.ndim}D, {d._data.ndim}D "
                           f"tensors")
    if s._data.shape[1] != d._data.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size "
                           f"{s._data.shape[1]}, got {d._data.shape[0]}")
    if s._data.dtype != d._data.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_type(s.dtype)} but found "
                           f"{_scalar_type(d.dtype)}")


def _sparse_mm(self, other):
    """sparse @ dense or dense @ sparse as Tensor.mm / @ records it (MmBackward0), the
    sparse side's gradient masked to its pattern."""
    if isinstance(other, SparseCOO) and isinstance(self, SparseCOO):
        raise NotImplementedError("sparse @ sparse is not supported by gradcli")
    if not isinstance(other, Tensor):
        raise TypeError(f"mm(): argument 'mat2' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    _check_mm(self, other, "mm")
    for t in (self, other):
        if isinstance(t, SparseCOO):
            _note_grad_layout(t, "dense")
    sparse_left = isinstance(self, SparseCOO)
    return run_op(MM, (self, other), (_mask(self if sparse_left else other), sparse_left))


@public("torch.sparse.addmm")
def sparse_addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (sparse mat1 @ dense mat2) (SparseAddmmBackward0)."""
    if not isinstance(mat1, SparseCOO):
        return PUBLIC["torch.addmm"](mat, mat1, mat2, beta=beta, alpha=alpha)
    _check_mm(mat1, mat2)
    _note_grad_layout(mat1, "sparse")
    return run_op(SPARSE_ADDMM, (mat, mat1, mat2), (beta, alpha, _mask(mat1)))


#: torch.sparse.mm(csr, dense, reduce): sparse_csr.mm_reduce, set when that module loads
MM_REDUCE_HOOK: list = [None]


@public("torch.sparse.mm")
def sparse_mm(mat1, mat2, reduce=None):
    """sparse @ dense (SparseAddmmBackward0); dense @ dense as torch.mm."""
    if reduce is not None:  # (CSR only: sparse_csr.py, above this module, fills the slot)
        return MM_REDUCE_HOOK[0](mat1, mat2, reduce)
    if not isinstance(mat1, SparseCOO):
        if isinstance(mat2, SparseCOO):
            return _sparse_mm(mat1, mat2)
        return PUBLIC["torch.mm"](mat1, mat2)
    if isinstance(mat2, SparseCOO):
        raise NotImplementedError("sparse @ sparse is not supported by gradcli")
    _check_mm(mat1, mat2)
    _note_grad_layout(mat1, "sparse")
    return run_op(SPARSE_ADDMM, (None, mat1, mat2), (0.0, 1.0, _mask(mat1)))


def _sum_forward(x, dims, mask):
    return np.asarray(x.sum(axis=dims))


def _sum_backward(ctx, grad):
    dims, mask = ctx.meta
    kept = tuple(1 if d in dims else n for d, n in enumerate(mask.shape))
    return (_masked(grad.reshape(kept).expand(mask.shape), mask),)


def _sum_dim_backward(ctx, grad):
    """Tensor.sum(dim) of a sparse tensor: PyTorch's formula expands the (sparse)
    gradient, which sparse tensors refuse."""
    raise RuntimeError("expand is unsupported for Sparse tensors")


_sum_dim_backward.no_derivative = True

SUM_ALL = defop("sparse_sum_all", "SumBackward0", _sum_forward, _sum_backward,
                torch_call="torch.sparse.sum(a.to_sparse())")
SUM_DIM = defop("sparse_sum_dim", "SumBackward1", _sum_forward, _sum_dim_backward,
                torch_call="a.reshape(-1, 1).to_sparse().sum(0).to_dense()")
SPARSE_SUM = defop("sparse_sum", "SparseSumBackward0", _sum_forward, _sum_backward,
                   torch_call="torch.sparse.sum(a.reshape(-1, 1).to_sparse(), 1).to_dense()")


def _sum(self, dims, op):
    _note_grad_layout(self, "sparse")
    ndim = self._data.ndim
    mask = np.broadcast_to(_mask(self), self._data.shape)
    if dims is None:
        return run_op(op, (self,), (tuple(range(ndim)), mask))
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    wrapped = []
    for d in dims:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {d})")
        wrapped.append(d % max(ndim, 1))
    dims = tuple(sorted(set(wrapped)))
    if not dims:
        return self
    out = run_op(op, (self,), (dims, mask))
    idx, vals, _ = _pattern(self)
    sparse_dim = idx.shape[0]
    kept_sparse = [d for d in range(sparse_dim) if d not in dims]
    if not kept_sparse:
        return out
    kept = idx[kept_sparse]
    new_shape = tuple(s for d, s in enumerate(self._data.shape) if d not in dims)
    rows = np.unique(kept.T, axis=0).T.astype(np.int64) if kept.shape[1] else kept
    rows = rows.reshape(len(kept_sparse), -1)
    new_values = out._data[tuple(rows)].copy()
    return _attach(out, rows, new_values.reshape((rows.shape[1],) + new_shape[len(kept_sparse):]),
                   True)


@public("torch.sparse.sum")
def sparse_sum(input, dim=None, dtype=None):
    """The sum of a sparse tensor's values: over every dim a dense 0-d tensor
    (SumBackward0, or SparseSumBackward0 when dims are named), over some sparse dims a
    sparse tensor (SparseSumBackward0); gradients come back masked to its pattern."""
    if not isinstance(input, SparseCOO) or input.layout is not sparse_coo:
        _need_sparse(input, "coalesce")
    if dtype is not None:
        input = _converted(input, dtype)
    if dim is None:
        return _sum(input, None, SUM_ALL)
    return _sum(input, dim, SPARSE_SUM)


def _converted(t, dtype):
    idx, vals, coalesced = _pattern(t)
    out = t.to_dense().to(dtype).to_sparse(idx.shape[0])
    return out


# ------------------------------------------------------------------ the sparse tensor


_NOT_SUPPORTED = "{} of a sparse tensor is not supported by gradcli"

#: public names a sparse tensor answers (every other public one is refused)
_SPARSE_ATTRS = frozenset("""
shape size dim ndim ndimension numel nelement dtype device is_cuda is_cpu layout is_sparse
is_sparse_csr is_quantized is_meta is_mkldnn is_nested is_complex is_floating_point
requires_grad requires_grad_ grad grad_fn is_leaf backward retain_grad retains_grad
register_hook detach to_dense crow_indices col_indices to_sparse indices values coalesce is_coalesced sparse_dim
dense_dim mm matmul sum is_contiguous stride data output_nr element_size itemsize cpu
numpy tolist reshape view item is_inference
""".split())


def _as_gradient_of(t, g):
    """Dense gradient `g` (changed in place) as the sparse gradient PyTorch gives sparse
    tensor `t`: masked to t's coalesced pattern, of t's layout."""
    idx, vals, coalesced = _pattern(t)
    if _GRAD_LAYOUTS.get(id(t)) == "zero":  # (no entries: zeros_like of a sparse gradient)
        g._data = np.zeros_like(g._data)
        return _attach(g, idx[:, :0].copy(), np.zeros((0,) + vals.shape[1:], g._data.dtype),
                       True, type(t))
    mask = _mask(t)
    data = _plus_zero(np.where(mask, g._data, np.zeros((), g._data.dtype)))
    if not coalesced:
        idx, vals = _coalesced(idx, vals, t._data.shape)
    g._data = data
    return _attach(g, idx, data[tuple(idx)].copy(), True, type(t))


def sparse_gradients(inputs, grads: tuple) -> tuple:
    """torch.autograd.grad's results with the sparse layout PyTorch gives a sparse input's
    gradient (where the ops it went through give sparse gradients: sparse.mm's, to_dense's,
    values'...; mm's stays dense)."""
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    out = list(grads)
    for k, (t, g) in enumerate(zip(ins, grads, strict=False)):
        if isinstance(t, SparseCOO) and g is not None and not isinstance(g, SparseCOO) \
                and _GRAD_LAYOUTS.get(id(t)) in ("sparse", "zero"):
            # (a gradient with a graph, create_graph, keeps it through a recorded mask)
            g = _masked(g, _mask(t)) if g._grad_fn is not None else \
                make(g._data.copy(), g._requires_grad)
            out[k] = _as_gradient_of(t, g)
    return tuple(out)


#: Tensor method name -> its function for a COO tensor (PyTorch's sparse kernel or its
#: refusal), filled by ops/sparse_functions.py
SPARSE_METHODS: dict = {}


class SparseCOO(Tensor):
    """A sparse COO tensor: its dense equivalent in `_data`, its pattern in _PATTERNS."""

    __slots__ = ()
    __module__ = "torch"

    def __getattribute__(self, name):
        if name[0] == "_" or name in _SPARSE_ATTRS:
            return object.__getattribute__(self, name)
        fn = SPARSE_METHODS.get(name)
        if fn is not None and object.__getattribute__(self, "__class__") is SparseCOO:
            return MethodType(fn, self)
        if hasattr(Tensor, name):
            raise NotImplementedError(_NOT_SUPPORTED.format(f"torch.Tensor.{name}"))
        return object.__getattribute__(self, name)

    @property
    def layout(self):
        return sparse_coo

    @property
    def is_sparse(self) -> bool:
        return True

    @property
    def grad(self):
        """A sparse leaf's gradient, as PyTorch gives it: sparse, of the leaf's coalesced
        pattern (the engine accumulates it densely)."""
        g = Tensor.grad.__get__(self)
        if g is None or _GRAD_LAYOUTS.get(id(self)) not in ("sparse", "zero"):
            return g
        if isinstance(g, SparseCOO) and _pattern(g)[1].shape[0] == _pattern(g)[0].shape[1] \
                and np.array_equal(_densify(*_pattern(g)[:2], g._data.shape), g._data):
            return g  # (already read as sparse, unchanged since)
        return _as_gradient_of(self, g)

    @grad.setter
    def grad(self, value):
        Tensor.grad.__set__(self, value)

    @grad.deleter
    def grad(self):
        Tensor.grad.__delete__(self)

    @property
    def data(self):
        return self.detach()

    def detach(self):
        out = make(self._data, False, None)
        out._vc = self._vc
        idx, vals, coalesced = _pattern(self)
        return _attach(out, idx, vals, coalesced)

    def __repr__(self) -> str:
        from ..sparse_printing import sparse_repr

        idx, vals, _ = _pattern(self)
        fn = self._grad_fn
        return sparse_repr(idx, vals, self._data.shape,
                           requires_grad=self._requires_grad,
                           grad_fn_name=None if fn is None else type(fn).__name__)

    __str__ = __repr__

    def __format__(self, spec):
        return self.__repr__() if not spec else format(self.__repr__(), spec)

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def reshape(self, *shape):
        raise RuntimeError("reshape is not implemented for sparse tensors")

    def view(self, *shape):
        raise NotImplementedError("Could not run 'aten::view' with arguments from the "
                                  "'SparseCPU' backend.")

    def is_contiguous(self, memory_format=None) -> bool:
        return False

    def stride(self, dim=None):
        """PyTorch's answer for a sparse tensor: a zero per dim."""
        zeros = (0,) * self._data.ndim
        return zeros if dim is None else zeros[dim]

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               f"to Scalar")
        return self._data.item()

    def sum(self, dim=None, keepdim=False, *, dtype=None):
        if keepdim:
            raise NotImplementedError(_NOT_SUPPORTED.format("sum(keepdim=True)"))
        source = self if dtype is None else _converted(self, dtype)
        return _sum(source, dim, SUM_ALL if dim is None else SUM_DIM)

    def mm(self, mat2):
        return _sparse_mm(self, mat2)

    def matmul(self, other):
        return _sparse_mm(self, other)

    def __matmul__(self, other):
        return _sparse_mm(self, other)

    def __rmatmul__(self, other):
        return _sparse_mm(other, self)

    def __add__(self, other):
        if not isinstance(other, SparseCOO):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        raise NotImplementedError(_NOT_SUPPORTED.format("sparse + sparse"))

    __hash__ = Tensor.__hash__


def _refused_operator(name):
    def refuse(self, *args):
        raise NotImplementedError(_NOT_SUPPORTED.format(f"torch.Tensor.{name}"))
    refuse.__name__ = name
    return refuse


for _op in ("__radd__ __iadd__ __sub__ __rsub__ __isub__ __mul__ __rmul__ __imul__ "
            "__truediv__ __rtruediv__ __itruediv__ __floordiv__ __rfloordiv__ __ifloordiv__ "
            "__mod__ __rmod__ __pow__ __rpow__ __ipow__ __neg__ __pos__ __abs__ __invert__ "
            "__eq__ __ne__ __lt__ __le__ __gt__ __ge__ __and__ __rand__ __or__ __ror__ "
            "__xor__ __rxor__ __lshift__ __rshift__ __getitem__ __setitem__ __imatmul__ "
            "__iter__ __array__").split():
    setattr(SparseCOO, _op, _refused_operator(_op))

SparseCOO.__name__ = SparseCOO.__qualname__ = "Tensor"

