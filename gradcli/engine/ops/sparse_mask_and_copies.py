"""Tensor.to_sparse_coo, Tensor.sparse_mask with a COO mask, and the functional *_copy
forms of the sparse and complex views (values_copy, indices_copy, crow_indices_copy,
col_indices_copy, ccol_indices_copy, row_indices_copy, view_as_real_copy,
view_as_complex_copy), with PyTorch's grad_fn names and its refusals: PyTorch 2.13 has no
SparseCPU kernel for values_copy / indices_copy / crow_indices_copy & co of a COO tensor,
and view_as_complex_copy does not record a graph (its op is neither holomorphic nor in
complex.py's own formulas, so the engine gives PyTorch's message). out= is the generic
wrapper's (ops/out_variants.py), which each `out` parameter here asks for."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, make
from .complex import view_as_complex, view_as_real
from .registry import defop, public, run_op, run_unary
from .sparse_coo import (
    SPARSE_METHODS,
    SparseCOO,
    _attach,
    _pattern,
    _plus_zero,
    _values_backward,
    _values_forward,
    to_sparse,
)
from .sparse_csr import SparseCSR, _crow


def _no_kernel(name: str, backend: str):
    return NotImplementedError(f"Could not run 'aten::{name}' with arguments from the "
                               f"'{backend}' backend.")


def _layout_word(t) -> str:
    if isinstance(t, SparseCSR):
        return "SparseCsr"
    return "Sparse" if isinstance(t, SparseCOO) else "Strided"


# ------------------------------------------------------------------ to_sparse_coo


@public("Tensor.to_sparse_coo")
def to_sparse_coo(self):
    """to_sparse() (ToSparseBackward1); a COO tensor is its own."""
    return to_sparse(self)


SPARSE_METHODS["to_sparse_coo"] = lambda self: self


# ------------------------------------------------------------------ sparse_mask


def _mask_forward(x, counts):
    """The dense equivalent of the masked tensor: x where the mask stores an entry (times
    the number of times it does, for an uncoalesced mask), zero elsewhere."""
    kept = np.where(counts > 0, x * counts.astype(x.dtype), np.zeros((), x.dtype))
    return _plus_zero(np.array(kept, x.dtype))


def _mask_backward(ctx, grad):
    counts = ctx.meta[0]
    return (grad * make(np.broadcast_to(counts, grad._data.shape).astype(grad._data.dtype)),)


SPARSE_MASK = defop("sparse_mask", "SparseMaskBackward0", _mask_forward, _mask_backward,
                    "d sparse_mask(a)/da: the gradient where the mask stores entries",
                    save="meta", torch_call="a.sparse_mask(a.detach().to_sparse()).to_dense()")


@public("Tensor.sparse_mask")
def sparse_mask(self, mask):
    """A sparse COO tensor with the mask's indices (as they are, coalesced or not) and
    self's values there (SparseMaskBackward0: the gradient comes back where the mask
    stores entries)."""
    if not isinstance(mask, SparseCOO):
        raise _no_kernel("sparse_mask", "CPU")
    if isinstance(mask, SparseCSR):
        raise NotImplementedError("Tensor.sparse_mask with a sparse CSR mask is not supported "
                                  "by gradcli")
    shape, mask_shape = tuple(self._data.shape), tuple(mask._data.shape)
    if shape != mask_shape:
        raise RuntimeError("sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(shape)} but mask has size {list(mask_shape)}")
    indices, _, coalesced = _pattern(mask)
    sparse_dim = indices.shape[0]
    counts = np.zeros(shape[:sparse_dim], np.int64)
    if indices.shape[1]:
        np.add.at(counts, tuple(indices), 1)
    counts = counts.reshape(counts.shape + (1,) * (len(shape) - sparse_dim))
    values = self._data[tuple(indices)].copy() if sparse_dim else self._data[None].copy()
    values = values[:indices.shape[1]]
    out = run_op(SPARSE_MASK, (self,), (counts,))
    return _attach(out, indices.copy(), values, coalesced)


# ------------------------------------------------------------------ *_copy forms


VALUES_COPY = defop("values_copy", "ValuesBackward0_copy", _values_forward, _values_backward,
                    "d values_copy(a)/da: scattered back to the stored positions",
                    save="meta")


@public("torch.values_copy")
def values_copy(input, *, out=None):
    """A CSR tensor's values, as a new tensor (ValuesBackward0_copy)."""
    if isinstance(input, SparseCSR):
        idx, vals, _ = _pattern(input)
        return run_op(VALUES_COPY, (input,), (idx, vals, input._data.shape))
    if isinstance(input, SparseCOO):
        raise _no_kernel("values_copy", "SparseCPU")
    raise RuntimeError("values expected sparse tensor layout but got Strided")


@public("torch.indices_copy")
def indices_copy(input, *, out=None):
    if isinstance(input, SparseCOO) and not isinstance(input, SparseCSR):
        raise _no_kernel("indices_copy", "SparseCPU")
    raise RuntimeError("indices expected sparse coordinate tensor layout but got "
                       f"{_layout_word(input)}")


def _compressed_copy(name: str, row_compressed: bool):
    what = "sparse row compressed" if row_compressed else "sparse column compressed"

    def copy(input, *, out=None):
        if isinstance(input, SparseCSR) and row_compressed:
            idx = _pattern(input)[0]
            return make(_crow(idx, input._data.shape[0]) if name == "crow_indices"
                        else idx[1].copy())
        if isinstance(input, SparseCOO) and not isinstance(input, SparseCSR):
            raise _no_kernel(f"{name}_copy", "SparseCPU")
        raise RuntimeError(f"{name} expected {what} tensor layout but got {_layout_word(input)}")
    copy.__name__ = copy.__qualname__ = f"{name}_copy"
    copy.__doc__ = f"A CSR tensor's {name}, as a new int64 tensor."
    return public(f"torch.{name}_copy")(copy)


crow_indices_copy = _compressed_copy("crow_indices", True)
col_indices_copy = _compressed_copy("col_indices", True)
ccol_indices_copy = _compressed_copy("ccol_indices", False)
row_indices_copy = _compressed_copy("row_indices", False)


def _view_as_real_copy_forward(a):
    out = np.empty(a.shape + (2,), a.real.dtype)
    out[..., 0], out[..., 1] = a.real, a.imag
    return out


VIEW_AS_REAL_COPY = defop("view_as_real_copy", "ViewAsRealBackward0_copy",
                          _view_as_real_copy_forward,
                          lambda c, g: (view_as_complex(g.contiguous()),),
                          "d view_as_real_copy(z)/dz: the gradient's pairs as complex numbers",
                          torch_call="torch.view_as_real_copy(a.to(torch.complex128))",
                          # (forward mode: the view of the tangent, ViewAsRealBackward0 on it
                          # when it requires grad, as PyTorch's formula gives it)
                          jvp=lambda inputs, meta, res, tangents: view_as_real(
                              tangents[0].resolve_conj()))
VIEW_AS_COMPLEX_COPY = defop("view_as_complex_copy", "ViewAsComplexBackward0_copy",
                             lambda a: np.ascontiguousarray(a[..., 0] + 1j * a[..., 1]).astype(
                                 np.complex64 if a.dtype == np.float32 else np.complex128),
                             lambda c, g: (view_as_real(g.resolve_conj()),))


@public("torch.view_as_real_copy")
def view_as_real_copy(input, *, out=None):
    """view_as_real's values as a new tensor (a conjugated input is resolved first)."""
    if not isinstance(input, Tensor) or input._data.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return run_unary(VIEW_AS_REAL_COPY, input.resolve_conj())


@public("torch.view_as_complex_copy")
def view_as_complex_copy(input, *, out=None):
    """view_as_complex's checks and values, as a new tensor (no graph: PyTorch's refusal)."""
    view_as_complex(input.detach())  # (its checks and errors)
    return run_unary(VIEW_AS_COMPLEX_COPY, input)
