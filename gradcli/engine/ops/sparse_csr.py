"""Sparse CSR matrices, as far as PyTorch's OpInfos and the CSR-only torch.sparse functions
need them: Tensor.to_sparse_csr, torch.sparse_csr_tensor, crow_indices / col_indices /
values / to_dense, torch.sparse.mm(csr, dense, reduce) and torch.sparse.sampled_addmm.

A CSR matrix is a 2-d sparse tensor whose entries are stored row by row; its pattern is
the same as a coalesced COO matrix's (row-major order), so `SparseCSR` is a SparseCOO (the
dense equivalent in `_data`, the COO pattern beside it) that prints, names its layout and
answers crow_indices / col_indices as PyTorch's CSR tensors do. Batched and hybrid CSR,
CSC, BSR and BSC are not represented.
"""

from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor, make
from .registry import PUBLIC, defop, public, run_op
from .sparse_coo import (
    MM_REDUCE_HOOK,
    SparseCOO,
    _attach,
    _dense_equivalent,
    _dense_of,
    _mask,
    _masked,
    _note_grad_layout,
    _pattern,
    _plus_zero,
    _scalar_type,
)
from .tensor_extras import layout

sparse_csr = layout("sparse_csr")
PUBLIC["torch.sparse_csr"] = sparse_csr


class SparseCSR(SparseCOO):
    """A sparse CSR matrix (see the module's docstring)."""

    __slots__ = ()
    __module__ = "torch"

    @property
    def layout(self):
        return sparse_csr

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def is_sparse_csr(self) -> bool:
        return True

    def __repr__(self) -> str:
        from ..sparse_printing import compressed_repr

        idx, vals, _ = _pattern(self)
        fn = self._grad_fn
        return compressed_repr(_crow(idx, self._data.shape[0]), idx[1], vals, self._data.shape,
                               requires_grad=self._requires_grad,
                               grad_fn_name=None if fn is None else type(fn).__name__)

    __str__ = __repr__

    def detach(self):
        out = SparseCOO.detach(self)
        out.__class__ = SparseCSR
        return out


SparseCSR.__name__ = SparseCSR.__qualname__ = "Tensor"


def _crow(indices: np.ndarray, rows: int) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(np.bincount(indices[0], minlength=rows))]) \
        .astype(np.int64)


def _pass(ctx, grad):
    return (grad,)


TO_SPARSE_CSR = defop("to_sparse_csr", "ToSparseCsrBackward0", _dense_equivalent, _pass,
                      torch_call="a.reshape(-1, 1).to_sparse_csr().to_dense()")


@public("Tensor.to_sparse_csr")
def to_sparse_csr(self, dense_dim=None):
    """A dense matrix's CSR copy (ToSparseCsrBackward0)."""
    if isinstance(self, SparseCSR):
        return self
    if isinstance(self, SparseCOO) or dense_dim is not None:
        raise NotImplementedError("to_sparse_csr of a sparse or hybrid tensor is not "
                                  "supported by gradcli")
    data = self._data
    if data.ndim != 2:
        raise RuntimeError(f"to_sparse_csr: expected a 2-d tensor, got {data.ndim}-d "
                           "(batched CSR is not supported by gradcli)")
    indices = np.array(np.nonzero(data != 0), dtype=np.int64).reshape(2, -1)
    return _attach(run_op(TO_SPARSE_CSR, (self,)), indices, data[tuple(indices)].copy(), True,
                   SparseCSR)


def _need_csr(self, name: str):
    if not isinstance(self, SparseCSR):
        got = "Strided" if not isinstance(self, SparseCOO) else "Sparse"
        raise RuntimeError(f"{name} expected sparse row compressed tensor layout but got {got}")


@public("Tensor.crow_indices")
def crow_indices(self):
    _need_csr(self, "crow_indices")
    return make(_crow(_pattern(self)[0], self._data.shape[0]))


@public("Tensor.col_indices")
def col_indices(self):
    _need_csr(self, "col_indices")
    return make(_pattern(self)[0][1].copy())


def _construct_forward(values, indices, shape):
    dense = np.zeros(shape, values.dtype)
    dense[tuple(indices)] = values
    return _plus_zero(dense)


def _construct_backward(ctx, grad):
    indices = ctx.meta[0]
    return (grad[tuple(make(i) for i in indices)],)


SPARSE_CSR_TENSOR = defop(
    "sparse_csr_tensor", "SparseCompressedTensorBackward0", _construct_forward,
    _construct_backward, out_size=lambda arrays, meta: math.prod(meta[1]),
    torch_call="torch.sparse_csr_tensor(torch.tensor([0, a.numel()]), torch.arange(a.numel()), "
               "a.reshape(-1), (1, a.numel())).to_dense()")


def _ints(obj) -> np.ndarray:
    data = obj._data if isinstance(obj, Tensor) else np.asarray(obj)
    return np.asarray(data).astype(np.int64).reshape(-1)


@public("torch.sparse_csr_tensor")
def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    """A CSR matrix of these compressed rows, columns and values (a leaf, or
    SparseCompressedTensorBackward0 when the values require grad)."""
    crow, col = _ints(crow_indices), _ints(col_indices)
    vals_t = values if isinstance(values, Tensor) else PUBLIC["torch.tensor"](values, dtype=dtype)
    if dtype is not None and vals_t.dtype != dtype:
        vals_t = vals_t.to(dtype)
    vals = vals_t._data
    if vals.ndim != 1 or len(crow) < 1 or len(col) != vals.shape[0] or crow[-1] != len(col) \
            or crow[0] != 0 or np.any(np.diff(crow) < 0):
        raise RuntimeError("sparse_csr_tensor: gradcli takes 2-d CSR matrices with "
                           "crow_indices starting at 0, non-decreasing, ending at nnz")
    rows = np.repeat(np.arange(len(crow) - 1), np.diff(crow)).astype(np.int64)
    if size is None:
        shape = (len(crow) - 1, int(col.max()) + 1 if len(col) else 0)
    else:
        shape = tuple(int(n) for n in size)
    if len(shape) != 2 or shape[0] != len(crow) - 1:
        raise RuntimeError(f"sparse_csr_tensor: crow_indices of {len(crow)} entries do not "
                           f"fit size {shape}")
    if len(col) and (col.min() < 0 or col.max() >= shape[1]):
        raise RuntimeError(f"size is inconsistent with indices: for dim 1, size is {shape[1]} "
                           f"but found index {int(col.max() if col.max() >= shape[1] else col.min())}")
    indices = np.stack([rows, col]).reshape(2, -1)
    order = np.lexsort((col, rows))
    if len(col) and (np.any(order != np.arange(len(col)))
                     or np.any((np.diff(rows) == 0) & (np.diff(col) == 0))):
        raise RuntimeError("sparse_csr_tensor: col_indices must be sorted and unique in each row")
    out = run_op(SPARSE_CSR_TENSOR, (vals_t,), (indices, shape))
    if requires_grad:
        out._requires_grad_(True)
    return _attach(out, indices, vals.copy(), True, SparseCSR)


# ------------------------------------------------------------------ mm with a reduction


def _product_size(arrays, meta) -> int:
    """A matrix product's element count (checked against --max-elements first)."""
    return arrays[0].shape[0] * arrays[1].shape[-1]


def _reduce_weights(indices, vals, dense, reduce: str, rows: int):
    """(nnz, k) weights W with out[r, j] = sum over the row's entries e of W[e, j] * v_e *
    dense[c_e, j]: 1 for sum, 1/count for mean, the winning entry for amax/amin."""
    r, c = indices
    nnz, k = len(r), dense.shape[1]
    if reduce == "sum":
        return np.ones((nnz, k), dense.dtype)
    if reduce == "mean":
        counts = np.bincount(r, minlength=rows).astype(dense.dtype)
        return np.repeat((1.0 / np.maximum(counts, 1))[r][:, None], k, axis=1)
    products = vals[:, None] * dense[c]
    weights = np.zeros((nnz, k), dense.dtype)
    best = {}
    for e in range(nnz):  # (row-major: the first of equal products wins, as the kernel scans)
        for j in range(k):
            key = (r[e], j)
            p = products[e, j]
            if key not in best or (p > products[best[key], j] if reduce == "amax"
                                   else p < products[best[key], j]):
                best[key] = e
    for (_, j), e in best.items():
        weights[e, j] = 1.0
    return weights


def _mm_reduce_forward(s, d, indices, vals, reduce, weights):
    r, c = indices
    out = np.zeros((s.shape[0], d.shape[1]), d.dtype)
    np.add.at(out, r, weights * vals[:, None] * d[c])
    return out


def _mm_reduce_backward(ctx, grad):
    s, d = ctx.saved
    indices, _, _, weights = ctx.meta
    rows, cols = (make(i) for i in indices)
    w = make(weights)
    g_rows = grad[rows] * w  # (nnz, k)
    values = _dense_of(s)[rows, cols]
    g_vals = (g_rows * d[cols]).sum(-1)
    gs = PUBLIC["torch.zeros"](tuple(s.shape), dtype=grad.dtype).index_put(
        (rows, cols), g_vals, accumulate=True)
    gd = PUBLIC["torch.zeros"](tuple(d.shape), dtype=grad.dtype).index_put(
        (cols,), values[:, None] * g_rows, accumulate=True)
    return (gs, gd)


MM_REDUCE = defop("sparse_mm_reduce", "SparseMmReduceImplBackward0", _mm_reduce_forward,
                  _mm_reduce_backward, save="inputs", out_size=_product_size,
                  torch_call="torch.sparse.mm(a.reshape(-1, 1).to_sparse_csr(), "
                             "b.reshape(1, -1), 'sum')")


def mm_reduce(mat1, mat2, reduce: str):
    """torch.sparse.mm(csr, dense, reduce): each row's products reduced by sum, mean, amax
    or amin (SparseMmReduceImplBackward0); an empty row gives zeros."""
    if not isinstance(mat1, SparseCSR):
        backend = "SparseCPU" if isinstance(mat1, SparseCOO) else "CPU"
        raise NotImplementedError(f"Could not run 'aten::_sparse_mm_reduce_impl' with arguments "
                                  f"from the '{backend}' backend.")
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # (PyTorch's spellings)
    if reduce not in ("sum", "mean", "amax", "amin"):
        raise NotImplementedError(f"torch.sparse.mm(reduce={reduce!r}) is not supported by "
                                  "gradcli (sum, mean, amax, amin)")
    if not isinstance(mat2, Tensor):
        raise TypeError(f"_sparse_mm_reduce_impl(): argument 'other' (position 2) must be "
                        f"Tensor, not {type(mat2).__name__}")
    rows = mat1._data.shape[1]
    if mat2._data.ndim != 2 or mat2._data.shape[0] != rows:
        raise RuntimeError(f"Expected a tensor of dimension 2 and tensor.size[0] == {rows} but "
                           f"got: dimension {mat2._data.ndim} and tensor.size[0] = "
                           f"{mat2._data.shape[0] if mat2._data.ndim else 1}")
    if mat1._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_type(mat1.dtype)} but found "
                           f"{_scalar_type(mat2.dtype)}")
    indices, vals, _ = _pattern(mat1)
    weights = _reduce_weights(indices, vals, mat2._data, reduce, mat1._data.shape[0])
    _note_grad_layout(mat1, "sparse")
    return run_op(MM_REDUCE, (mat1, mat2), (indices, vals, reduce, weights))


# ------------------------------------------------------------------ sampled_addmm


def _sampled_forward(s, m1, m2, beta, alpha, mask):
    prod = m1 @ m2
    out = s * np.asarray(beta, s.dtype) + prod * np.asarray(alpha, prod.dtype)
    return np.where(mask, out, np.zeros((), out.dtype))


def _sampled_backward(ctx, grad):
    s, m1, m2 = ctx.saved
    beta, alpha, mask = ctx.meta
    g = _masked(grad, mask)  # (input's own gradient is the whole incoming one, as PyTorch's)
    return (grad * beta, g.mm(m2.t()) * alpha, m1.t().mm(g) * alpha)


SAMPLED_ADDMM = defop("sparse_sampled_addmm", "SparseSampledAddmmBackward0", _sampled_forward,
                      _sampled_backward, save="inputs",
                      torch_call="torch.sparse.sampled_addmm(torch.ones(a.numel(), 1)"
                                 ".to(a.dtype).to_sparse_csr(), a.reshape(-1, 1), "
                                 "torch.ones(1, 1, dtype=a.dtype)).to_dense()")


@public("torch.sparse.sampled_addmm")
def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """beta * input + alpha * (mat1 @ mat2) at input's CSR pattern only (a CSR result,
    SparseSampledAddmmBackward0)."""
    if out is not None:
        raise NotImplementedError("torch.sparse.sampled_addmm(out=) is not supported by gradcli")
    if not isinstance(input, SparseCSR):
        backend = "SparseCPU" if isinstance(input, SparseCOO) else "CPU"
        raise NotImplementedError(f"Could not run 'aten::sparse_sampled_addmm' with arguments "
                                  f"from the '{backend}' backend.")
    for m in (mat1, mat2):
        if not isinstance(m, Tensor) or isinstance(m, SparseCOO) or m._data.ndim != 2:
            raise RuntimeError("sampled_addmm: Expected mat1 and mat2 to be strided 2-d tensors")
    if mat1._data.shape[1] != mat2._data.shape[0] or \
            (mat1._data.shape[0], mat2._data.shape[1]) != input._data.shape:
        raise RuntimeError(f"sampled_addmm: mat1 {tuple(mat1.shape)} @ mat2 "
                           f"{tuple(mat2.shape)} does not give input's size "
                           f"{tuple(input.shape)}")
    indices, _, _ = _pattern(input)
    _note_grad_layout(input, "sparse")
    res = run_op(SAMPLED_ADDMM, (input, mat1, mat2), (beta, alpha, _mask(input)))
    return _attach(res, indices, res._data[tuple(indices)].copy(), True, SparseCSR)


MM_REDUCE_HOOK[0] = mm_reduce
