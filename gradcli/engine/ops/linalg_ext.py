"""torch.linalg and the torch.* linear-algebra forms (inv, det, solve, cholesky, qr, eigh,
svd, pinv, norms, matrix_exp, cross, lu, triangular solves, addmv/addr/addbmm/baddbmm...).

Forwards run on numpy.linalg (scipy.linalg where numpy has no routine, imported on first
use), at float64 and cast back for float32: PyTorch's LAPACK sums in another order, so only
values within torch.testing's tolerances are promised, never bits. Backwards follow the
formulas PyTorch's derivatives.yaml names (FunctionsManual.cpp's linalg_*_backward),
written with Tensor ops so that create_graph=True differentiates them again. Ops with
several outputs (slogdet, qr, eigh, svd, lu_factor...) record one node whose outputs carry
output numbers, as PyTorch's multi-output nodes do (`_run_multi`).
"""

from __future__ import annotations

import math

import numpy as np

from .. import autocast_state as _autocast
from .. import dtypes
from ..grad_mode import GRAD_MODE
from ..kernels import batched
from ..node import keep_given
from ..tensor import Tensor, _type_word, _wrap_dim, make
from ..warn_site import warn_once
from . import linalg as _linalg
from . import registry as _registry
from .linalg import _product_tangent
from .registry import _record, defop, public, run_op

# ------------------------------------------------------------------ plumbing


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: PyTorch raises it (class name `_LinAlgError`) when a
    factorization fails on a singular or non positive-definite input."""


_LinAlgError.__module__ = "torch._C"
public("torch.linalg.LinAlgError")(_LinAlgError)

_F64 = np.float64


class _ReturnTuple(tuple):
    """Base of the torch.return_types classes made here: a class of the engine, so the
    language's sandbox gives programs their public names (the fields) and nothing else."""

    __slots__ = ()


def _rtype(name: str, fields: tuple):
    """A torch.return_types.NAME class: a tuple with named fields and PyTorch's repr."""

    def __new__(cls, *values):
        return tuple.__new__(cls, values)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self, strict=True))
        return f"torch.return_types.{name}(\n{body})"

    ns = {"__slots__": (), "__new__": __new__, "__repr__": __repr__, "__str__": __repr__,
          "__module__": "torch.return_types", "n_fields": len(fields),
          "n_sequence_fields": len(fields), "n_unnamed_fields": 0}
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: self[i])
    return type(name, (_ReturnTuple,), ns)


RT = {name: _rtype(name, fields) for name, fields in (
    ("linalg_inv_ex", ("inverse", "info")),
    ("linalg_slogdet", ("sign", "logabsdet")),
    ("slogdet", ("sign", "logabsdet")),
    ("linalg_solve_ex", ("result", "info")),
    ("linalg_cholesky_ex", ("L", "info")),
    ("linalg_qr", ("Q", "R")),
    ("qr", ("Q", "R")),
    ("linalg_eigh", ("eigenvalues", "eigenvectors")),
    ("linalg_svd", ("U", "S", "Vh")),
    ("svd", ("U", "S", "V")),
    ("linalg_lstsq", ("solution", "residuals", "rank", "singular_values")),
    ("linalg_lu", ("P", "L", "U")),
    ("linalg_lu_factor", ("LU", "pivots")),
    ("linalg_lu_factor_ex", ("LU", "pivots", "info")),
    ("triangular_solve", ("solution", "cloned_coefficient")),
)}


def _outs(c) -> list:
    """The saved outputs of multi-output node `c` as Tensors: under grad mode (a
    create_graph backward) they hang off `c`, so their use is differentiated again."""
    arrays = c.meta[-1]
    if not GRAD_MODE.enabled:
        return [make(a) for a in arrays]
    outs = []
    for i, a in enumerate(arrays):
        t = make(a, a.dtype.kind in "fV", c if a.dtype.kind in "fV" else None)
        t._output_nr = i
        outs.append(t)
    return outs


def _needs_graph(inputs) -> bool:
    return GRAD_MODE.enabled and any(isinstance(x, Tensor) and x.requires_grad for x in inputs)


def _run_multi(op, inputs: tuple, meta: tuple, arrays: list, differentiable: tuple) -> list:
    """Record one node for an op whose forward gave `arrays` (one per output); outputs
    flagged in `differentiable` get it as grad_fn with their output number."""
    outs = [make(a if a.flags.c_contiguous else a.copy()) for a in map(np.asarray, arrays)]
    if _needs_graph(inputs):
        node = _record(op, inputs, meta + (tuple(o._data for o in outs),), None)
        for i, (o, diff) in enumerate(zip(outs, differentiable, strict=True)):
            if diff:
                o._requires_grad = True
                o._grad_fn = node
                o._output_nr = i
    if _registry.FORWARD_AD_MULTI is not None:
        _registry.FORWARD_AD_MULTI.multi(op, inputs, meta + (tuple(o._data for o in outs),), outs)
    return outs


def _grads(grads, n: int) -> list:
    grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
    return grads + [None] * (n - len(grads))


def _float_cast(out, like_dtype):
    return np.asarray(out).astype(like_dtype, copy=False)


def _batched_count(batch_a: tuple, batch_b: tuple, rows: int, cols: int) -> int:
    """Elements of a batched matrix result (the solves, cdist): the broadcast batch times
    rows x cols, for --max-elements; 0 when the batches cannot broadcast (the forward
    raises PyTorch's error). The default broadcast count of `broadcast=True` is wrong for
    these: their inputs do not broadcast elementwise."""
    try:
        batch = np.broadcast_shapes(batch_a, batch_b)
    except ValueError:
        return 0
    return math.prod(batch) * rows * cols


def _solve_count(arrays, meta) -> int:
    """linalg.solve's result size; meta is (left, vector): a vector B has no column dim."""
    a, b = arrays
    if meta[1]:
        return _batched_count(a.shape[:-2], b.shape[:-1], b.shape[-1], 1)
    return _batched_count(a.shape[:-2], b.shape[:-2], b.shape[-2], b.shape[-1])


def _rhs_count(a_index: int, b_index: int):
    """The result size of a solve whose right-hand side B is arrays[b_index] and whose
    (factored) matrix is arrays[a_index]: B's shape with the batches broadcast."""
    def count(arrays, meta) -> int:
        a, b = arrays[a_index], arrays[b_index]
        return _batched_count(a.shape[:-2], b.shape[:-2], b.shape[-2], b.shape[-1])
    return count


def _colmajor(x):
    """x laid out as LAPACK leaves PyTorch's results: each matrix stored column by column
    (strides (..., 1, rows)), so stride(), is_contiguous() and what a later reshape records
    (ReshapeAliasBackward0, a copy) are PyTorch's."""
    x = np.asarray(x)
    if x.ndim < 2:
        return x
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)


def _mT(x: Tensor) -> Tensor:
    return x.transpose(-2, -1)


def _eye(n: int, dtype) -> Tensor:
    return make(np.eye(n, dtype=dtype))


def _mask(x: Tensor, k: int, lower: bool) -> Tensor:
    """tril(x, k) / triu(x, k) as a product with a constant 0/1 mask (differentiable)."""
    n, m = x._data.shape[-2:]
    keep = np.tril(np.ones((n, m)), k) if lower else np.triu(np.ones((n, m)), k)
    return x * make(keep.astype(x._data.dtype))


def _diag(x: Tensor) -> Tensor:
    """The diagonal of square matrices x (..., n, n) -> (..., n)."""
    return (x * _eye(x._data.shape[-1], x._data.dtype)).sum(-1)


def _diag_embed(v: Tensor) -> Tensor:
    return v.unsqueeze(-1) * _eye(v._data.shape[-1], v._data.dtype)


def _shape_text(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _check_tensor(name: str, arg: str, x, position: int = 1) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(x).__name__}")


def _check_float(fname: str, x: Tensor) -> None:
    if x._data.dtype.kind not in "fV":
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. "
                           f"Got {_type_word(x.dtype)}")


def _check_matrix(fname: str, x: Tensor, square: bool = True, floating: bool = True) -> None:
    if x._data.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if square and x._data.shape[-1] != x._data.shape[-2]:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are "
                           f"{x._data.shape[-2]} by {x._data.shape[-1]} matrices")
    if floating:
        _check_float(fname, x)


def _batch_prefix(shape, index: int) -> str:
    return f"(Batch element {index}): " if len(shape) > 2 else ""


def _singular_element(a) -> tuple:
    """(batch index, 1-based diagonal position) where LU with partial pivoting of the
    first singular matrix in a meets an exact zero pivot, as LAPACK's getrf reports it."""
    flat = a.reshape((-1,) + a.shape[-2:]).astype(_F64)
    with np.errstate(all="ignore"):  # (nan/inf entries give nan, silently, as in LAPACK)
        for b, mat in enumerate(flat):
            u = mat.copy()
            n = len(u)
            for k in range(n):
                p = k + int(np.argmax(np.abs(u[k:, k])))
                if u[p, k] == 0:
                    return b, k + 1
                u[[k, p]] = u[[p, k]]
                u[k + 1:, k:] -= np.outer(u[k + 1:, k] / u[k, k], u[k, k:])
    return None


def _inverse_array(a, fname: str = "linalg.inv", check: bool = True):
    """inv of (..., n, n) at float64 precision; PyTorch's error for an exactly singular one."""
    where = _singular_element(a) if check else None
    if where is not None:
        b, k = where
        raise _LinAlgError(f"{fname}: {_batch_prefix(a.shape, b)}The diagonal element {k} is "
                           "zero, the inversion could not be completed because the input "
                           "matrix is singular.")
    with np.errstate(all="ignore"):
        try:
            return _float_cast(np.linalg.inv(a.astype(_F64)), a.dtype)
        except np.linalg.LinAlgError:
            return np.full(a.shape, np.nan, a.dtype)


def _info_array(a, where) -> np.ndarray:
    info = np.zeros(a.shape[:-2], np.int32)
    if where is not None:
        info.reshape(-1)[where[0]] = where[1]
    return info


# ---------------------------------------------------------------- inv, det

def _inv_backward(c, g):
    x = c.result
    xt = _mT(x)
    return (-(xt @ g @ xt),)


INV = defop("linalg_inv_ex", "LinalgInvExBackward0",
            lambda a: _colmajor(_inverse_array(a, check=False)), _inv_backward,
            "d inv(A) = -A^{-1} dA A^{-1}: gA = -X^T G X^T", save="result",
            torch_call="torch.linalg.inv(a.reshape(-1, 1) * a.reshape(1, -1).cos() "
                       "+ torch.eye(a.numel(), dtype=a.dtype) * 3)")


def _inv_common(A: Tensor, fname: str, check_errors: bool):
    _check_tensor(fname.replace("linalg.", "linalg_"), "A", A)
    _check_matrix(fname, A)
    a = A._data
    where = _singular_element(a) if a.size else None
    if where is not None and check_errors:
        _inverse_array(a, fname)  # raises
    return run_op(INV, (A,)), _info_array(a, where)


@public("torch.linalg.inv")
def inv(A: Tensor, *, out=None) -> Tensor:
    return _inv_common(A, "linalg.inv", True)[0]


@public("torch.inverse", "Tensor.inverse")
def inverse(input: Tensor, *, out=None) -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(inverse, input, out=out)
    return _inv_common(input, "linalg.inv", True)[0]


@public("torch.linalg.inv_ex")
def inv_ex(A: Tensor, *, check_errors: bool = False, out=None):
    inverse_, info = _inv_common(A, "linalg.inv", check_errors)
    return RT["linalg_inv_ex"](inverse_, make(info))


def _det_array(a):
    with np.errstate(all="ignore"):
        return _float_cast(np.linalg.det(a.astype(_F64)), a.dtype)


def _adjugate_t(a):
    """The transposed adjugate of square matrices (a constant), from the SVD: it is
    det(A) A^{-T} where A is invertible and stays finite where it is not."""
    u, s, vh = np.linalg.svd(a.astype(_F64))
    n = s.shape[-1]
    prods = np.empty_like(s)
    for i in range(n):
        prods[..., i] = np.prod(np.delete(s, i, axis=-1), axis=-1)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return (u * (prods * sign[..., None])[..., None, :]) @ vh


def _det_backward(c, g):
    A, = c.saved
    det = c.result
    a = A._data
    eps = dtypes.finfo(a.dtype).eps
    if a.size == 0:
        return (A * 0,)
    if not GRAD_MODE.enabled:
        # PyTorch solves A^T G = det * g * I on A's LU with its zero pivots nudged to eps: an
        # exactly singular A (det 0) gets a zero gradient there
        with np.errstate(all="ignore"):
            # (a non-finite A: a nan gradient, as PyTorch's LU solve gives)
            finite = np.isfinite(a).all(axis=(-2, -1))[..., None, None]
            safe = np.where(finite, a, 0).astype(_F64)
            inv_t = np.where(finite, np.swapaxes(np.linalg.pinv(safe), -1, -2), np.nan)
        scale = (g._data * det._data)[..., None, None]
        out = np.where(scale == 0, 0.0, scale * inv_t)
        return (make(_float_cast(out, a.dtype)),)
    if np.all(np.abs(det._data) >= 100 * eps):
        return ((g * det).unsqueeze(-1).unsqueeze(-1) * _mT(inv(A)),)
    # (a create_graph backward of a nearly singular A: the adjugate, from the SVD)
    adj = make(_float_cast(_adjugate_t(a), a.dtype))
    return (g.unsqueeze(-1).unsqueeze(-1) * adj,)


# (the generic tests' matrix for det, slogdet and pinv: 3I plus a rank-one term that cannot
# cancel it, condition number under 5, built from exact float operations, so float32
# results compare at torch.testing's tolerance on any CPU; an ill-conditioned float32
# matrix puts PyTorch's own LAPACK rounding above it)
DET = defop("linalg_det", "LinalgDetBackward0", _det_array, _det_backward,
            "d det(A)/dA = det(A) A^{-T}", save="inputs result",
            torch_call="torch.linalg.det(a.reshape(-1, 1) * (a.reshape(1, -1) * 0.5 - 0.3) "
                       "+ torch.eye(a.numel(), dtype=a.dtype) * 3)")


@public("torch.linalg.det")
def det(A: Tensor, *, out=None) -> Tensor:
    _check_tensor("linalg_det", "A", A)
    _check_matrix("linalg.det", A)
    return run_op(DET, (A,))


@public("torch.det", "Tensor.det")
def torch_det(input: Tensor) -> Tensor:
    _check_tensor("det", "input", input)
    _check_matrix("linalg.det", input)
    return run_op(DET, (input,))


def _slogdet_backward(c, grads):
    A, = c.saved
    _, g = _grads(grads, 2)
    if g is None:
        return (None,)
    return (g.unsqueeze(-1).unsqueeze(-1) * _mT(inv(A)),)


SLOGDET = defop("linalg_slogdet", "LinalgSlogdetBackward0", None, _slogdet_backward,
                "d log|det A|/dA = A^{-T} (the sign has no gradient)", save="inputs meta",
                multi=True,
                torch_call="torch.linalg.slogdet(a.reshape(-1, 1) * (a.reshape(1, -1) * 0.5 - 0.3) "
                           "+ torch.eye(a.numel(), dtype=a.dtype) * 3)[1]")


def _slogdet(A: Tensor, fname: str, kind: str):
    _check_matrix(fname, A)
    a = A._data
    with np.errstate(all="ignore"):  # (nan entries: nan results, silently)
        sign, logabs = np.linalg.slogdet(a.astype(_F64))
    return RT[kind](*_run_multi(SLOGDET, (A,), (), [_float_cast(sign, a.dtype),
                                                    _float_cast(logabs, a.dtype)],
                                (True, True)))


@public("torch.linalg.slogdet")
def slogdet(A: Tensor, *, out=None):
    _check_tensor("linalg_slogdet", "A", A)
    return _slogdet(A, "linalg.slogdet", "linalg_slogdet")


@public("torch.slogdet", "Tensor.slogdet")
def torch_slogdet(input: Tensor):
    _check_tensor("slogdet", "input", input)
    return _slogdet(input, "linalg.slogdet", "slogdet")


@public("torch.logdet", "Tensor.logdet")
def logdet(input: Tensor) -> Tensor:
    """log det A: log|det A| where det A >= 0, nan where it is negative (a where over slogdet,
    as PyTorch composes it)."""
    from .elementwise import where

    _check_tensor("logdet", "input", input)
    _check_matrix("logdet", input, floating=False)
    _check_float("logdet", input)
    sign, logabs = slogdet(input)
    nan = make(np.array(np.nan, input._data.dtype))
    return where(sign == -1, nan, logabs)


# ---------------------------------------------------------------- solve

def _is_vector_rhs(a_shape, b_shape) -> bool:
    """PyTorch's linalg_solve_is_vector_rhs: B is a (batch of) vector(s)."""
    return len(b_shape) == 1 or (len(a_shape) - 1 == len(b_shape)
                                 and tuple(b_shape) == tuple(a_shape[:-1]))


def _solve_arrays(a, b, left: bool, vector: bool):
    with np.errstate(all="ignore"):
        a64, b64 = a.astype(_F64), b.astype(_F64)
        if vector:
            b64 = b64[..., None]
        if not left:
            a64, b64 = np.swapaxes(a64, -1, -2), np.swapaxes(b64, -1, -2)
        try:
            x = np.linalg.solve(a64, b64)
        except np.linalg.LinAlgError:
            x = np.full(np.broadcast_shapes(a64.shape[:-2], b64.shape[:-2]) + b64.shape[-2:], np.nan)
        if not left:
            x = np.swapaxes(x, -1, -2)
        if vector:
            return _float_cast(x[..., 0], a.dtype)
    return _colmajor(_float_cast(x, a.dtype))


def _solve_backward(c, g):
    A, B = c.saved
    left, vector = c.meta
    X = c.result
    gB = solve(_mT(A), g, left=left)
    gA = None
    if c.needs(0):
        if vector:
            gA = -(gB.unsqueeze(-1) @ X.unsqueeze(-2))
        else:
            gA = -(gB @ _mT(X)) if left else -(_mT(X) @ gB)
    return gA, gB if c.needs(1) else None


SOLVE = defop("linalg_solve", "LinalgSolveExBackward0", _solve_arrays, _solve_backward,
              "X = A^{-1}B: gB = A^{-T}G, gA = -gB X^T", save="inputs result", broadcast=True,
              out_size=_solve_count,
              torch_call="torch.linalg.solve(a.reshape(-1, 1) * a.reshape(1, -1).cos() "
                         "+ torch.eye(a.numel(), dtype=a.dtype) * 3, a.reshape(-1).sin())")


def _solve(A: Tensor, B: Tensor, left: bool, check_errors: bool, fname: str = "linalg.solve"):
    _check_matrix(fname, A)
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"{fname}: Expected A and B to have the same dtype, but found A of "
                           f"type {_type_word(A.dtype)} and B of type {_type_word(B.dtype)} "
                           "instead")
    a, b = A._data, B._data
    vector = _is_vector_rhs(a.shape, b.shape)
    bm = b[..., None] if vector else b
    n = a.shape[-1]
    rows = bm.shape[-2] if left else (bm.shape[-1] if bm.ndim >= 1 else 0)
    if bm.ndim < 2 or rows != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{fname}: Incompatible shapes of A and B for the equation {eq} "
                           f"({a.shape[-2]}x{a.shape[-1]} and {bm.shape[-2]}x{bm.shape[-1]})")
    try:
        np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    except ValueError:
        from .registry import broadcast_error

        broadcast_error(a.shape[:-2], bm.shape[:-2])
    where = _singular_element(a) if a.size else None
    if where is not None and check_errors:
        raise _LinAlgError("torch.linalg.solve: The solver failed because the input matrix "
                           "is singular.")
    return run_op(SOLVE, (A, B), (left, vector)), _info_array(a, where)


@public("torch.linalg.solve")
def solve(A: Tensor, B: Tensor, *, left: bool = True, out=None) -> Tensor:
    _check_tensor("linalg_solve", "A", A)
    _check_tensor("linalg_solve", "B", B, 2)
    return _solve(A, B, left, True)[0]


@public("torch.linalg.solve_ex")
def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False, out=None):
    _check_tensor("linalg_solve_ex", "A", A)
    _check_tensor("linalg_solve_ex", "B", B, 2)
    x, info = _solve(A, B, left, check_errors)
    return RT["linalg_solve_ex"](x, make(info))


# ---------------------------------------------------------------- cholesky

def _not_pd_order(a):
    """(batch index, order of the first leading minor that is not positive-definite)."""
    flat = a.reshape((-1,) + a.shape[-2:]).astype(_F64)
    for b, mat in enumerate(flat):
        low = np.tril(mat)
        sym = low + np.tril(low, -1).T
        if not np.isfinite(sym).all():
            k = _first_failing_pivot(sym)
            if k:
                return b, k
            continue
        for k in range(1, len(sym) + 1):
            try:
                np.linalg.cholesky(sym[:k, :k])
            except np.linalg.LinAlgError:
                return b, k
    return None


def _first_failing_pivot(sym):
    """LAPACK potrf's test column by column, nan included (numpy's factorisation lets an
    inf/nan through): the order of the first pivot that is not > 0, or 0."""
    n = len(sym)
    low = np.zeros_like(sym)
    with np.errstate(all="ignore"):
        for j in range(n):
            pivot = sym[j, j] - low[j, :j] @ low[j, :j]
            if not pivot > 0:
                return j + 1
            low[j, j] = np.sqrt(pivot)
            low[j + 1:, j] = (sym[j + 1:, j] - low[j + 1:, :j] @ low[j, :j]) / low[j, j]
    return 0


def _cholesky_array(a, upper: bool):
    low = np.tril(a.astype(_F64))
    sym = low + np.swapaxes(np.tril(low, -1), -1, -2)
    with np.errstate(all="ignore"):
        try:
            lower = np.linalg.cholesky(sym)
        except np.linalg.LinAlgError:
            lower = np.full(sym.shape, np.nan)
    out = np.swapaxes(lower, -1, -2) if upper else lower
    return _colmajor(_float_cast(out, a.dtype))


def _cholesky_backward(c, g):
    """PyTorch's cholesky_backward: gA = L^{-H} phi(L^H gL) L^{-1}, phi symmetrizing the
    lower triangle (diagonal once)."""
    upper, = c.meta
    L = c.result
    if upper:
        L, g = _mT(L), _mT(g)
    gA = _mask(_mT(L) @ g, 0, True)
    gA = (gA + _mT(_mask(gA, -1, True))) * 0.5
    gA = solve_triangular(_mT(L), gA, upper=True, left=True)
    gA = solve_triangular(L, gA, upper=False, left=False)
    return (gA,)


CHOLESKY = defop("linalg_cholesky_ex", "LinalgCholeskyExBackward0", _cholesky_array,
                 _cholesky_backward, "A = LL^T: gA = L^{-T} sym(tril(L^T gL)) L^{-1}",
                 save="result",
                 torch_call="torch.linalg.cholesky(a.reshape(-1, 1) * a.reshape(1, -1) "
                            "+ torch.eye(a.numel(), dtype=a.dtype) * 2)")
CHOLESKY_LEGACY = defop("cholesky", "CholeskyBackward0", _cholesky_array, _cholesky_backward,
                        "A = LL^T: gA = L^{-T} sym(tril(L^T gL)) L^{-1}", save="result",
                        torch_call="torch.cholesky(a.reshape(-1, 1) * a.reshape(1, -1) "
                                   "+ torch.eye(a.numel(), dtype=a.dtype) * 2)")


def _cholesky(A: Tensor, upper: bool, check_errors: bool, op=CHOLESKY, fname="linalg.cholesky"):
    _check_matrix(fname, A)
    a = A._data
    where = _not_pd_order(a) if a.size else None
    if where is not None and check_errors:
        raise _LinAlgError(f"{fname}: {_batch_prefix(a.shape, where[0])}The factorization could "
                           "not be completed because the input is not positive-definite (the "
                           f"leading minor of order {where[1]} is not positive-definite).")
    return run_op(op, (A,), (upper,)), _info_array(a, where)


@public("torch.linalg.cholesky")
def cholesky(A: Tensor, *, upper: bool = False, out=None) -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(cholesky, A, upper=upper, out=out)
    _check_tensor("linalg_cholesky", "A", A)
    return _cholesky(A, upper, True)[0]


@public("torch.linalg.cholesky_ex")
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out=None):
    _check_tensor("linalg_cholesky_ex", "A", A)
    L, info = _cholesky(A, upper, check_errors)
    return RT["linalg_cholesky_ex"](L, make(info))


@public("torch.cholesky", "Tensor.cholesky")
def torch_cholesky(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    _check_tensor("cholesky", "input", input)
    warn_once(
        "cholesky", "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in "
        "a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
        "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
        "replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
        "equivalent results for all valid (symmetric positive definite) inputs. "
        "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
        "BatchLinearAlgebra.cpp:1765.)")
    return _cholesky(input, upper, True, CHOLESKY_LEGACY, "cholesky")[0]


# ---------------------------------------------------------------- triangular solves

def _triangle(a, upper: bool, unit: bool):
    t = np.triu(a) if upper else np.tril(a)
    if unit:
        t = t.copy()
        idx = np.arange(a.shape[-1])
        t[..., idx, idx] = 1
    return t


def _solve_triangular_array(a, b, upper, left, unit):
    with np.errstate(all="ignore"):
        t = _triangle(a.astype(_F64), upper, unit)
        b64 = b.astype(_F64)
        if not left:
            t, b64 = np.swapaxes(t, -1, -2), np.swapaxes(b64, -1, -2)
        try:
            x = np.linalg.solve(t, b64)
        except np.linalg.LinAlgError:
            x = _substitute(t, b64, upper != (not left))
        if not left:
            x = np.swapaxes(x, -1, -2)
    return _colmajor(_float_cast(x, a.dtype))


def _substitute(t, b, upper: bool):
    """Back / forward substitution (a singular triangle gives inf and nan, as LAPACK's trtrs)."""
    shape = np.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    t = np.broadcast_to(t, shape + t.shape[-2:])
    x = np.array(np.broadcast_to(b, shape + b.shape[-2:]), dtype=_F64)
    n = t.shape[-1]
    order = range(n - 1, -1, -1) if upper else range(n)
    done = []
    for i in order:
        acc = x[..., i, :]
        for j in done:
            acc = acc - t[..., i, j][..., None] * x[..., j, :]
        x[..., i, :] = acc / t[..., i, i][..., None]
        done.append(i)
    return x


def _solve_triangular_backward(c, g):
    A, _ = c.saved
    upper, left, unit = c.meta
    X = c.result
    gB = solve_triangular(_mT(A), g, upper=not upper, left=left, unitriangular=unit)
    gA = None
    if c.needs(0):
        gA = -(gB @ _mT(X)) if left else -(_mT(X) @ gB)
        gA = _mask(gA, 1 if unit else 0, False) if upper else _mask(gA, -1 if unit else 0, True)
    return gA, gB if c.needs(1) else None


SOLVE_TRIANGULAR = defop(
    "linalg_solve_triangular", "LinalgSolveTriangularBackward0", _solve_triangular_array,
    _solve_triangular_backward, "X = A^{-1}B, A triangular: gB = A^{-T}G, gA = tri(-gB X^T)",
    save="inputs result", broadcast=True, out_size=_rhs_count(0, 1),
    torch_call="torch.linalg.solve_triangular(a.reshape(-1, 1) * a.reshape(1, -1).cos() "
               "+ torch.eye(a.numel(), dtype=a.dtype) * 3, a.reshape(-1, 1).sin(), upper=True)")


def _check_same_dtype(fname: str, A: Tensor, B: Tensor) -> None:
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"{fname}: Expected A and B to have the same dtype, but found A of "
                           f"type {_type_word(A.dtype)} and B of type {_type_word(B.dtype)} "
                           "instead")


@public("torch.linalg.solve_triangular")
def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out=None) -> Tensor:
    _check_tensor("linalg_solve_triangular", "input", A)
    _check_tensor("linalg_solve_triangular", "B", B, 2)
    fname = "linalg.solve_triangular"
    _check_matrix(fname, A, floating=False)
    if B._data.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor B must have at least 2 dimensions.")
    _check_float(fname, A)
    _check_same_dtype(fname, A, B)
    a, b = A._data, B._data
    if (b.shape[-2] if left else b.shape[-1]) != a.shape[-1]:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{fname}: Incompatible shapes of A and B for the equation {eq} "
                           f"({a.shape[-2]}x{a.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})")
    return run_op(SOLVE_TRIANGULAR, (A, B), (upper, left, unitriangular))


def _triangular_solve_backward(c, grads):
    B, A = c.saved
    upper, transpose, unit = c.meta[:3]
    X, _ = _outs(c)
    gX, gM = _grads(grads, 2)
    gB = gA = None
    if gX is not None:
        gB = triangular_solve(gX, A, upper, not transpose, unit)[0]
        if c.needs(1):
            gA = -(X @ _mT(gB)) if transpose else -(gB @ _mT(X))
            gA = _mask(gA, 1 if unit else 0, False) if upper else _mask(gA, -1 if unit else 0, True)
    if gM is not None and c.needs(1):
        gA = gM if gA is None else gA + gM
    return gB, gA


TRIANGULAR_SOLVE = defop(
    "triangular_solve", "TriangularSolveBackward0", None, _triangular_solve_backward,
    "X = A^{-1}B (A triangular): gB = A^{-T}G, gA = tri(-gB X^T)", save="inputs meta",
    multi=True,
    torch_call="torch.triangular_solve(a.reshape(-1, 1).sin(), a.reshape(-1, 1) * "
               "a.reshape(1, -1).cos() + torch.eye(a.numel(), dtype=a.dtype) * 3)[0]")


@public("torch.triangular_solve", "Tensor.triangular_solve")
def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False, *, out=None):
    _check_tensor("triangular_solve", "input", input)
    _check_tensor("triangular_solve", "A", A, 2)
    if GRAD_MODE.enabled is not None:
        warn_once(
            "triangular_solve", "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular"
            "and will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular "
            "has its arguments reversed and does not return a copy of one of the inputs.\n"
            "X = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
            "X = torch.linalg.solve_triangular(A, B). (Triggered internally at /__w/pytorch/"
            "pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2273.)")
    b, a = input._data, A._data
    if b.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, "
                           f"but it has {b.ndim} dimensions instead")
    if a.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, "
                           f"but it has {a.ndim} dimensions instead")
    if b.dtype != a.dtype:
        raise RuntimeError(f"triangular_solve: Expected b and A to have the same dtype, but "
                           f"found b of type {_type_word(input.dtype)} and A of type "
                           f"{_type_word(A.dtype)} instead.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"triangular_solve: A must be batches of square matrices, but they "
                           f"are {a.shape[-2]} by {a.shape[-1]} matrices")
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is "
                           f"{a.shape[-1]} by {a.shape[-1]} but each b matrix is {b.shape[-2]} "
                           f"by {b.shape[-1]}")
    coeff = np.swapaxes(a, -1, -2) if transpose else a
    x = _solve_triangular_array(coeff, b, upper != transpose, True, unitriangular)
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    x = _colmajor(np.broadcast_to(x, shape + x.shape[-2:]))
    m = _colmajor(np.broadcast_to(a, shape + a.shape[-2:]))
    return RT["triangular_solve"](*_run_multi(TRIANGULAR_SOLVE, (input, A),
                                              (upper, transpose, unitriangular), [x, m],
                                              (True, True)))


def _cholesky_solve_array(b, l, upper):
    l = np.triu(l) if upper else np.tril(l)  # (only the factor's triangle is read)
    a = np.swapaxes(l, -1, -2) @ l if upper else l @ np.swapaxes(l, -1, -2)
    return _colmajor(_solve_arrays(a.astype(_F64), b.astype(_F64), True, False).astype(b.dtype))


def _cholesky_solve_backward(c, g):
    B, L = c.saved
    upper, = c.meta
    X = c.result
    gB = cholesky_solve(g, L, upper)
    gL = None
    if c.needs(1):
        common = gB @ _mT(X)
        common = common + _mT(common)
        gL = -(L @ common) if upper else -(common @ L)
    return gB if c.needs(0) else None, gL


CHOLESKY_SOLVE = defop(
    "cholesky_solve", "CholeskySolveBackward0", _cholesky_solve_array, _cholesky_solve_backward,
    "X = (LL^T)^{-1}B: gB = (LL^T)^{-1}G, gL = -(gB X^T + X gB^T) L", save="inputs result",
    broadcast=True, out_size=_rhs_count(1, 0),
    torch_call="torch.cholesky_solve(a.reshape(-1, 1).sin(), (a.reshape(-1, 1) * "
               "a.reshape(1, -1).cos() + torch.eye(a.numel(), dtype=a.dtype) * 3) * "
               "(torch.arange(a.numel()).reshape(-1, 1) >= torch.arange(a.numel())))")


@public("torch.cholesky_solve", "Tensor.cholesky_solve")
def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False, *, out=None) -> Tensor:
    _check_tensor("cholesky_solve", "input", input)
    _check_tensor("cholesky_solve", "input2", input2, 2)
    b, l = input._data, input2._data
    if b.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {b.ndim} dimensions "
                           "instead")
    if l.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {l.ndim} dimensions "
                           "instead")
    if b.dtype != l.dtype:
        raise RuntimeError(f"cholesky_solve: Expected b and A to have the same dtype, but "
                           f"found b of type {_type_word(input.dtype)} and A of type "
                           f"{_type_word(input2.dtype)} instead.")
    return run_op(CHOLESKY_SOLVE, (input, input2), (upper,))


def _cholesky_inverse_array(l, upper):
    l = np.triu(l) if upper else np.tril(l)  # (only the factor's triangle is read)
    a = np.swapaxes(l, -1, -2) @ l if upper else l @ np.swapaxes(l, -1, -2)
    with np.errstate(all="ignore"):
        return _colmajor(_float_cast(np.linalg.inv(a.astype(_F64)), l.dtype))


def _cholesky_inverse_backward(c, g):
    """X = (L L^T)^{-1}: gL = -(X (G + G^T) X) L (for upper, L^T... on the other side)."""
    L, = c.saved
    upper, = c.meta
    X = c.result
    common = X @ (g + _mT(g)) @ X
    return (-(L @ common) if upper else -(common @ L),)


CHOLESKY_INVERSE = defop(
    "cholesky_inverse", "CholeskyInverseBackward0", _cholesky_inverse_array,
    _cholesky_inverse_backward, "X = (LL^T)^{-1}: gL = -X(G + G^T)X L", save="inputs result",
    torch_call="torch.cholesky_inverse((a.reshape(-1, 1) * a.reshape(1, -1).cos() "
               "+ torch.eye(a.numel(), dtype=a.dtype) * 3) * "
               "(torch.arange(a.numel()).reshape(-1, 1) >= torch.arange(a.numel())))")


@public("torch.cholesky_inverse", "Tensor.cholesky_inverse")
def cholesky_inverse(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    _check_tensor("cholesky_inverse", "input", input)
    _check_matrix("cholesky_inverse", input)
    return run_op(CHOLESKY_INVERSE, (input,), (upper,))


# ---------------------------------------------------------------- qr, eigh, svd

def _qr_backward(c, grads):
    A, = c.saved
    mode, = c.meta[:1]
    Q, R = _outs(c)
    gQ, gR = _grads(grads, 2)
    m, n = Q._data.shape[-2], R._data.shape[-1]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    if gQ is None and gR is None:
        return (None,)
    if gQ is not None:
        gA = (gR @ _mT(R) - _mT(Q) @ gQ) if gR is not None else -(_mT(Q) @ gQ)
    else:
        gA = gR @ _mT(R)
    if m >= n:
        up = _mask(gA, 0, False)
        sym = up + _mT(up)
        sym = sym - _diag_embed(_diag(sym)) * 0.5
        gA = Q @ sym
        if gQ is not None:
            gA = gA + gQ
        return (solve_triangular(_mT(R), gA, upper=False, left=False),)
    skew = -gA - _mT(-gA)
    gA = Q @ _mask(skew, 0, True)
    gA = solve_triangular(_mT(R[..., :, :m]), gA, upper=False, left=False)
    from .shape import cat

    zeros = make(np.zeros(gA._data.shape[:-1] + (n - m,), gA._data.dtype))
    gA = cat([gA, zeros], -1)
    if gR is not None:
        gA = gA + Q @ gR
    return (gA,)


QR = defop("linalg_qr", "LinalgQrBackward0", None, _qr_backward,
           "A = QR: gA = (gQ + Q copyltu(M)) R^{-T}, M = R gR^T - gQ^T Q", save="inputs meta",
           multi=True,
           torch_call="torch.linalg.qr(a.reshape(-1, 1) * a.reshape(1, -1).cos() "
                      "+ torch.eye(a.numel(), dtype=a.dtype) * 3)[1]")


def _qr(A: Tensor, mode: str, kind: str):
    if mode not in ("reduced", "r", "complete"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    _check_matrix("linalg.qr", A, square=False)
    a = A._data
    m, n = a.shape[-2:]
    np_mode = "complete" if mode == "complete" else "reduced"
    if a.size:
        q, r = np.linalg.qr(a.astype(_F64), mode=np_mode)
    else:
        k = m if mode == "complete" else min(m, n)
        q = np.zeros(a.shape[:-2] + (m, k))
        if mode == "complete":
            q[...] = np.eye(m)
        r = np.zeros(a.shape[:-2] + (k, n))
    q, r = _colmajor(_float_cast(q, a.dtype)), _colmajor(_float_cast(r, a.dtype))
    if mode == "r":
        q = np.zeros((0,), a.dtype)
    outs = _run_multi(QR, (A,), (mode,), [q, r], (mode != "r", True))
    return RT[kind](*outs)


@public("torch.linalg.qr")
def qr(A: Tensor, mode: str = "reduced", *, out=None):
    _check_tensor("linalg_qr", "A", A)
    return _qr(A, mode, "linalg_qr")


@public("torch.qr", "Tensor.qr")
def torch_qr(input: Tensor, some: bool = True, *, out=None):
    _check_tensor("qr", "input", input)
    warn_once(
        "qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
        "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\n"
        "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete') (Triggered internally at "
        "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2505.)")
    return _qr(input, "reduced" if some else "complete", "qr")


def _eigh_backward(c, grads):
    L, V = _outs(c)
    gL, gV = _grads(grads, 2)
    if gL is None and gV is None:
        return (None,)
    if gV is None:
        return ((V * gL.unsqueeze(-2)) @ _mT(V),)
    vhgv = _mT(V) @ gV
    vhgv = (vhgv - _mT(vhgv)) * 0.5
    n = L._data.shape[-1]
    gap = L.unsqueeze(-2) - L.unsqueeze(-1)
    off = make(1.0 - np.eye(n, dtype=L._data.dtype))
    gap = gap + _eye(n, L._data.dtype)  # 1 on the diagonal: 0 / 1 there
    inner = vhgv / gap * off
    if gL is not None:
        inner = inner + _diag_embed(gL)
    return (V @ (inner @ _mT(V)),)


EIGH = defop("linalg_eigh", "LinalgEighBackward0", None, _eigh_backward,
             "A = V diag(L) V^T: gA = V (diag(gL) + skew(V^T gV)/E) V^T", save="meta",
             multi=True,
             torch_call="torch.linalg.eigvalsh(a.reshape(-1, 1) * a.reshape(1, -1) + "
                        "torch.eye(a.numel(), dtype=a.dtype) * 2)")


def _eigh_arrays(A: Tensor, UPLO: str, fname: str):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _check_matrix(fname, A)
    a = A._data
    with np.errstate(all="ignore"):
        w, v = np.linalg.eigh(a.astype(_F64), UPLO=UPLO)
    return _float_cast(w, a.dtype), _colmajor(_float_cast(v, a.dtype))


@public("torch.linalg.eigh")
def eigh(A: Tensor, UPLO: str = "L", *, out=None):
    _check_tensor("linalg_eigh", "A", A)
    w, v = _eigh_arrays(A, UPLO, "linalg.eigh")
    return RT["linalg_eigh"](*_run_multi(EIGH, (A,), (UPLO,), [w, v], (True, True)))


@public("torch.linalg.eigvalsh")
def eigvalsh(A: Tensor, UPLO: str = "L", *, out=None) -> Tensor:
    _check_tensor("linalg_eigvalsh", "A", A)
    w, v = _eigh_arrays(A, UPLO, "linalg.eigvalsh")
    return _run_multi(EIGH, (A,), (UPLO,), [w, v], (True, True))[0]


def _svd_backward(c, grads):
    full, = c.meta[:1]
    U, S, Vh = _outs(c)
    gU, gS, gVh = _grads(grads, 3)
    if gU is None and gS is None and gVh is None:
        return (None,)
    m, n = U._data.shape[-2], Vh._data.shape[-1]
    k = S._data.shape[-1]
    if full:
        U, Vh = U[..., :, :k], Vh[..., :k, :]
        gU = gU[..., :, :k] if gU is not None else None
        gVh = gVh[..., :k, :] if gVh is not None else None
    if gU is None and gVh is None:
        return ((U @ (gS.unsqueeze(-1) * Vh)) if m >= n else ((U * gS.unsqueeze(-2)) @ Vh),)
    dt = S._data.dtype
    s2 = S * S
    E = s2.unsqueeze(-2) - s2.unsqueeze(-1) + _eye(k, dt)
    uhgu = _mT(U) @ gU if gU is not None else None
    vhgv = Vh @ _mT(gVh) if gVh is not None else None
    if uhgu is not None:
        uhgu = uhgu - _mT(uhgu)
    if vhgv is not None:
        vhgv = vhgv - _mT(vhgv)
    if uhgu is not None and vhgv is not None:
        ret = (uhgu * S.unsqueeze(-2) + S.unsqueeze(-1) * vhgv) / E
    elif uhgu is not None:
        ret = (uhgu / E) * S.unsqueeze(-2)
    else:
        ret = S.unsqueeze(-1) * (vhgv / E)
    if gS is not None:
        ret = ret + _diag_embed(gS)
    if m > n and gU is not None:
        gA = U @ ret
        gus = gU / S.unsqueeze(-2)
        gA = gA + gus - U @ (_mT(U) @ gus)
        return (gA @ Vh,)
    if m < n and gVh is not None:
        gA = ret @ Vh
        sgv = gVh / S.unsqueeze(-1)
        gA = gA + sgv - (sgv @ _mT(Vh)) @ Vh
        return (U @ gA,)
    return ((U @ (ret @ Vh)) if m >= n else ((U @ ret) @ Vh),)


SVD = defop("linalg_svd", "LinalgSvdBackward0", None, _svd_backward,
            "A = U diag(S) Vh: gA = U [skew(U^T gU)/E S + S skew(V^T gV)/E + diag(gS)] Vh + ...",
            save="meta", multi=True,
            torch_call="torch.linalg.svdvals(a.reshape(-1, 1) * a.reshape(1, -1).cos() "
                       "+ torch.eye(a.numel(), dtype=a.dtype) * torch.arange(3., 3 * a.numel() "
                       "+ 3, 3, dtype=a.dtype))")


def _svd_arrays(a, full: bool):
    m, n = a.shape[-2:]
    if a.size == 0:
        k = min(m, n)
        ku, kv = (m, n) if full else (k, k)
        u = np.zeros(a.shape[:-2] + (m, ku))
        vh = np.zeros(a.shape[:-2] + (kv, n))
        if full:
            u[...] = np.eye(m)
            vh[...] = np.eye(n)
        s = np.zeros(a.shape[:-2] + (k,))
    else:
        if not np.isfinite(a).all():  # (numpy's words would be 'SVD did not converge')
            raise _LinAlgError("linalg.svd: The algorithm failed to converge because the input "
                               "matrix contained non-finite values.")
        with np.errstate(all="ignore"):
            u, s, vh = np.linalg.svd(a.astype(_F64), full_matrices=full)
    return [_colmajor(_float_cast(x, a.dtype)) for x in (u, s, vh)]


def _svd(A: Tensor, full: bool) -> list:
    _check_matrix("linalg.svd", A, square=False)
    return _run_multi(SVD, (A,), (full,), _svd_arrays(A._data, full), (True, True, True))


@public("torch.linalg.svd")
def svd(A: Tensor, full_matrices: bool = True, *, driver=None, out=None):
    _check_tensor("linalg_svd", "A", A)
    return RT["linalg_svd"](*_svd(A, full_matrices))


@public("torch.linalg.svdvals")
def svdvals(A: Tensor, *, driver=None, out=None) -> Tensor:
    _check_tensor("linalg_svdvals", "A", A)
    return _svd(A, False)[1]


@public("torch.svd", "Tensor.svd")
def torch_svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out=None):
    """torch.svd: linalg.svd with V (Vh transposed: TransposeBackward0), not Vh; without
    compute_uv, U and V are zeros."""
    _check_tensor("svd", "input", input)
    U, S, Vh = _svd(input, not some)
    if not compute_uv:
        m, n = input._data.shape[-2:]
        ku, kv = (min(m, n),) * 2 if some else (m, n)
        batch = input._data.shape[:-2]
        return RT["svd"](make(np.zeros(batch + (m, ku), input._data.dtype)), S.detach(),
                         make(np.zeros(batch + (n, kv), input._data.dtype)))
    return RT["svd"](U, S, _mT(Vh))


# ---------------------------------------------------------------- pinv, lstsq

def _pinv_array(a, atol, rtol, hermitian):
    a64 = a.astype(_F64)
    m, n = a.shape[-2:]
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (n, m), a.dtype)
    if not hermitian and not np.isfinite(a).all():
        raise _LinAlgError("linalg.svd: The algorithm failed to converge because the input "
                           "matrix contained non-finite values.")
    with np.errstate(all="ignore"):
        if hermitian:
            w, v = np.linalg.eigh(a64)
            s = np.abs(w)
        else:
            u, s, vh = np.linalg.svd(a64, full_matrices=False)
        smax = s.max(axis=-1, keepdims=True)
        tol = np.maximum(np.asarray(atol, _F64)[..., None] if atol is not None else 0.0,
                         (np.asarray(rtol, _F64)[..., None] if rtol is not None else 0.0) * smax)
        keep = s > tol
        inv_s = np.where(keep, 1.0 / np.where(keep, s if not hermitian else w, 1.0), 0.0)
        if hermitian:
            out = (v * inv_s[..., None, :]) @ np.swapaxes(v, -1, -2)
        else:
            out = np.swapaxes(vh, -1, -2) @ (inv_s[..., :, None] * np.swapaxes(u, -1, -2))
    return _float_cast(out, a.dtype)


def _pinv_backward_tensors(g, P, A):
    m, n = A._data.shape[-2:]
    ph = _mT(P)
    gh = _mT(g)
    if m <= n:
        K = gh @ P
        kph = K @ ph
        return -_mT(P @ K) + kph - (A @ P) @ kph + (ph @ P) @ (gh - K @ A)
    K = P @ gh
    phk = ph @ K
    return -_mT(K @ P) + (gh - A @ K) @ P @ ph + phk - phk @ P @ A


def _pinv_backward(c, g):
    A, = c.saved
    return (_pinv_backward_tensors(g, c.result, A),)


PINV = defop("linalg_pinv", "LinalgPinvBackward0",
             lambda a, atol, rtol, herm: _pinv_array(a, atol, rtol, herm), _pinv_backward,
             "the pseudo-inverse's derivative (Golub & Pereyra)", save="inputs result",
             torch_call="torch.linalg.pinv(a.reshape(-1, 1) * (a.reshape(1, -1) * 0.5 - 0.3) "
                        "+ torch.eye(a.numel(), dtype=a.dtype) * 3)")


def _tol_array(x):
    if x is None:
        return None
    return x._data if isinstance(x, Tensor) else np.asarray(float(x))


@public("torch.linalg.pinv")
def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False, out=None) -> Tensor:
    _check_tensor("linalg_pinv", "A", A)
    a = A._data
    if a.ndim < 2 or a.dtype.kind not in "fV":
        raise RuntimeError(f"linalg.pinv({_type_word(A.dtype)}{{{_shape_text(a.shape)}}}): expected "
                           "a tensor with 2 or more dimensions of float, double, cfloat or "
                           "cdouble types")
    atol_a, rtol_a = _tol_array(atol), _tol_array(rtol)
    if rtol_a is None:
        rtol_a = (np.asarray(0.0) if atol_a is not None and np.any(atol_a > 0) else
                  np.asarray(dtypes.finfo(a.dtype).eps * max(a.shape[-2:])))
    return run_op(PINV, (A,), (atol_a, rtol_a, hermitian))


@public("torch.pinverse", "Tensor.pinverse")
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(pinverse, input, rcond)
    _check_tensor("pinverse", "input", input)
    a = input._data
    if a.ndim < 2 or a.dtype.kind not in "fV":
        raise RuntimeError(f"linalg.pinv({_type_word(input.dtype)}{{{_shape_text(a.shape)}}}): "
                           "expected a tensor with 2 or more dimensions of float, double, "
                           "cfloat or cdouble types")
    return run_op(PINV, (input,), (np.asarray(0.0), np.asarray(float(rcond)), False))


def _lstsq_backward(c, grads):
    A, B = c.saved
    vector, = c.meta[:1]
    X, residuals = _outs(c)[:2]
    gX, gL = _grads(grads, 2)[:2]
    Bm = B.unsqueeze(-1) if vector else B
    gA = gB = None
    if gX is not None:
        gXm = gX.unsqueeze(-1) if vector else gX
        P = pinv(A)
        if c.needs(0):
            gA = _pinv_backward_tensors(gXm @ _mT(Bm), P, A)
        if c.needs(1):
            gB = _mT(P) @ gXm
            gB = gB.squeeze(-1) if vector else gB
    if gL is not None and gL._data.size:
        Xm = X.unsqueeze(-1) if vector else X
        r = A @ Xm - Bm
        gl = gL.unsqueeze(-2)
        if c.needs(0):
            extra = 2 * (gl * r) @ _mT(Xm)
            gA = extra if gA is None else gA + extra
        if c.needs(1):
            extra = -2 * gl * r
            extra = extra.squeeze(-1) if vector else extra
            gB = extra if gB is None else gB + extra
    return gA, gB


LSTSQ = defop("linalg_lstsq", "LinalgLstsqBackward0", None, _lstsq_backward,
              "X = pinv(A) B: gradients through pinv's", save="inputs meta", multi=True,
              torch_call="torch.linalg.lstsq(a.reshape(-1, 1) * a.reshape(1, -1).cos() "
                         "+ torch.eye(a.numel(), dtype=a.dtype) * 3, a.reshape(-1, 1).sin())[0]")


@public("torch.linalg.lstsq")
def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None):
    """Least squares with the CPU default driver 'gelsy': residuals are returned only for a
    tall A of full rank under the 'gelsd'/'gelss'/'gels' drivers (empty for gelsy), rank and
    singular values as PyTorch fills them per driver."""
    _check_tensor("linalg_lstsq", "self", A)
    _check_tensor("linalg_lstsq", "b", B, 2)
    a, b = A._data, B._data
    if a.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    vector = b.ndim == a.ndim - 1
    bm = b[..., None] if vector else b
    if bm.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() "
                           "and (input.dim() - other.dim()) <= 1")
    if a.shape[-2] != bm.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-1)"
                           if vector else
                           "torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    if a.dtype != b.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {_type_word(A.dtype)} and other's "
                           f"dtype {_type_word(B.dtype)}")
    m, n = a.shape[-2:]
    a64, b64 = a.astype(_F64), bm.astype(_F64)
    if rcond is None:
        rcond = dtypes.finfo(a.dtype).eps * max(m, n)
    u, s, vh = np.linalg.svd(a64, full_matrices=False) if a.size else (None, np.zeros(a.shape[:-2] + (0,)), None)
    if a.size:
        keep = s > rcond * s.max(axis=-1, keepdims=True)
        inv_s = np.where(keep, 1 / np.where(keep, s, 1), 0)
        x = np.swapaxes(vh, -1, -2) @ (inv_s[..., :, None] * (np.swapaxes(u, -1, -2) @ b64))
        rank = keep.sum(-1).astype(np.int64)
    else:
        x = np.zeros(np.broadcast_shapes(a.shape[:-2], bm.shape[:-2]) + (n, bm.shape[-1]))
        rank = np.zeros(a.shape[:-2], np.int64)
    full_rank = bool(np.all(rank == n))
    if m > n and driver != "gelsy" and full_rank:
        r = a64 @ x - b64
        residuals = (r * r).sum(-2)
        if vector:
            residuals = residuals[..., 0]
    else:
        residuals = np.zeros((0,))
    x = _float_cast(x[..., 0], a.dtype) if vector else _colmajor(_float_cast(x, a.dtype))
    residuals = _float_cast(residuals, a.dtype)
    rank_out = rank if driver != "gels" else np.zeros((0,), np.int64)
    sv = (_float_cast(s, a.dtype) if driver in ("gelsd", "gelss")
          else np.zeros((0,), a.dtype))
    outs = _run_multi(LSTSQ, (A, B), (vector,), [x, residuals, rank_out, sv],
                      (True, True, False, False))
    return RT["linalg_lstsq"](*outs)


# ---------------------------------------------------------------- norms

def _norm_dims(x: Tensor, dim, default_all: bool = True) -> tuple:
    nd = x._data.ndim
    if dim is None:
        return tuple(range(nd)) if default_all else ()
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = tuple(_wrap_dim(d, nd) for d in dims)
    for d in out:
        if out.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


def _vector_norm_array(x, ord_, dims, keepdim, out_dtype):
    a = np.abs(x.astype(_F64)) if x.dtype != _F64 else np.abs(x)
    axis = dims if dims and x.ndim else None
    with np.errstate(all="ignore"):
        if ord_ == 2:
            r = np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdim))
        elif ord_ == 1:
            r = np.sum(a, axis=axis, keepdims=keepdim)
        elif ord_ == math.inf:
            r = np.max(a, axis=axis, keepdims=keepdim, initial=0.0) if a.size else (
                np.zeros(np.sum(a, axis=axis, keepdims=keepdim).shape))
        elif ord_ == -math.inf:
            r = np.min(a, axis=axis, keepdims=keepdim)
        elif ord_ == 0:
            r = np.sum(a != 0, axis=axis, keepdims=keepdim).astype(_F64)
        else:
            r = np.sum(a ** ord_, axis=axis, keepdims=keepdim) ** (1.0 / ord_)
    return _float_cast(r, out_dtype)


def _vector_norm_backward(c, g):
    x, = c.saved
    ord_, dims, keepdim, _ = c.meta
    norm = c.result
    nd = x._data.ndim
    if not keepdim and nd:
        for d in sorted(dims if dims else range(nd)):
            g = g.unsqueeze(d)
            norm = norm.unsqueeze(d)
    from .elementwise import where

    xd = x.to(g.dtype) if x._data.dtype != g._data.dtype else x
    zero = make(np.array(0.0, g._data.dtype))
    if ord_ == 0:
        return (xd * 0,)
    if ord_ == 1:
        return (xd.sign() * g,)
    if ord_ == 2:
        return (g * where(norm == 0, zero, xd / norm),)
    if math.isinf(ord_):
        ax = xd.abs()
        mask = ((ax == norm) | ax.isnan()).to(g.dtype)
        count = mask.sum(list(dims) if dims else None, keepdim=True)
        return (xd.sign() * ((g / count) * mask),)
    if ord_ < 1:
        scaled = xd.sign() * where(xd == 0, zero, xd.abs() ** (ord_ - 1))
        return (scaled * g * norm ** (1 - ord_),)
    if ord_ < 2:
        scaled = xd.sign() * xd.abs() ** (ord_ - 1)
        return (scaled * where(norm == 0, zero, g / norm ** (ord_ - 1)),)
    scaled = xd * xd.abs() ** (ord_ - 2)
    return (scaled * where(norm == 0, zero, g / norm ** (ord_ - 1)),)


VECTOR_NORM = defop("linalg_vector_norm", "LinalgVectorNormBackward0", _vector_norm_array,
                    _vector_norm_backward, "d ||x||_p/dx = sign(x)|x|^{p-1} / ||x||^{p-1}",
                    save="inputs result", torch_call="torch.linalg.vector_norm(a, 3)")


@public("torch.linalg.vector_norm")
def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None,
                out=None) -> Tensor:  # noqa: A002
    _check_tensor("linalg_vector_norm", "input", x)
    if x._data.dtype.kind not in "fV":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_type_word(x.dtype)}")
    ord_ = float(ord)
    dims = _norm_dims(x, dim, default_all=False)
    if x._data.size == 0 and ord_ < 0 or (x._data.size == 0 and math.isinf(ord_) and ord_ > 0
                                          and (not dims or any(x._data.shape[d] == 0 for d in dims))):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {_ord_text(ord)} norm on an "
                           "empty tensor because the operation does not have an identity")
    out_dtype = dtypes.to_dtype(dtype).np if dtype is not None else x._data.dtype
    return keep_given(run_op(VECTOR_NORM, (x,), (ord_, dims, keepdim, out_dtype)), VECTOR_NORM, ord, dim)


def _ord_text(ord_) -> str:
    if isinstance(ord_, float) and math.isinf(ord_):
        return "inf" if ord_ > 0 else "-inf"
    return str(ord_)


@public("torch.linalg.matrix_norm")
def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None,
                out=None) -> Tensor:  # noqa: A002
    from .reductions import amax, amin

    _check_tensor("linalg_matrix_norm", "input", A)
    fname = "linalg.matrix_norm"
    nd = A._data.ndim
    if nd < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    dims = tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"{fname}: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
    d0, d1 = _wrap_dim(dims[0], nd), _wrap_dim(dims[1], nd)
    if d0 == d1:
        raise RuntimeError(f"{fname}: dims must be different. Got ({dims[0]}, {dims[1]})")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"{fname}: Order {ord} not supported.")
        _check_float(fname, A)
        if ord == "fro":
            return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
        x = A if dtype is None else A.to(dtype)
        moved = _move_to_end(x, d0, d1)
        out = svdvals(moved).sum(-1)
        return _restore_dims(out, d0, d1, keepdim)
    ord_ = float(ord)
    if abs(ord_) not in (1.0, 2.0, math.inf):
        raise RuntimeError(f"{fname}: Order {ord} not supported.")
    _check_float(fname, A)
    x = A if dtype is None else A.to(dtype)
    if abs(ord_) == 2.0:
        moved = _move_to_end(x, d0, d1)
        s = svdvals(moved)
        out = amax(s, -1) if ord_ > 0 else amin(s, -1)
        return _restore_dims(out, d0, d1, keepdim)
    if math.isinf(ord_):
        d0, d1 = d1, d0
    summed = x.abs().sum(d0, keepdim=keepdim)
    if not keepdim and d0 < d1:
        d1 -= 1
    return amax(summed, d1, keepdim=keepdim) if ord_ > 0 else amin(summed, d1, keepdim=keepdim)


def _move_to_end(x: Tensor, d0: int, d1: int) -> Tensor:
    nd = x._data.ndim
    if (d0, d1) == (nd - 2, nd - 1):
        return x
    order = [d for d in range(nd) if d not in (d0, d1)] + [d0, d1]
    return x.permute(*order)


def _restore_dims(out: Tensor, d0: int, d1: int, keepdim: bool) -> Tensor:
    """keepdim: the two reduced dims put back as PyTorch does (unsqueezed at the end, then
    permuted back where they were: PermuteBackward0)."""
    if not keepdim:
        return out
    nd = out._data.ndim + 2
    order = [d for d in range(nd) if d not in (d0, d1)] + [d0, d1]
    reverse = [order.index(i) for i in range(nd)]
    return out.unsqueeze(-1).unsqueeze(-1).permute(*reverse)


@public("torch.linalg.norm")
def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, out=None, dtype=None):  # noqa: A002
    _check_tensor("linalg_norm", "input", A)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {_shape_text(dims)}")
    else:
        dims = None
    if ord is not None:
        if dims is None:
            if isinstance(ord, str) or A._data.ndim == 2:
                return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
            if A._data.ndim != 1:
                raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input "
                                   f"must be 1D or 2D. Got {A._data.ndim}D.")
            return vector_norm(A, ord, None, keepdim, dtype=dtype)
        if len(dims) == 2:
            return matrix_norm(A, ord, dims, keepdim, dtype=dtype)
        return vector_norm(A, ord, dims, keepdim, dtype=dtype)
    return vector_norm(A, 2.0, dims, keepdim, dtype=dtype)  # (PyTorch's default ord here is a float)


@public("torch.linalg.cond")
def cond(A: Tensor, p=None, *, out=None) -> Tensor:
    _check_tensor("linalg_cond", "input", A)
    fname = "linalg.cond"
    if A._data.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if p is None or (not isinstance(p, str) and abs(float(p)) == 2.0):
        _check_float(fname, A)
        if A._data.shape[-1] == 0 or A._data.shape[-2] == 0:  # (PyTorch: 0, and no node)
            return make(np.zeros(A._data.shape[:-2], A._data.dtype))
        s = svdvals(A)
        k = s._data.shape[-1]
        first, last = s.narrow(-1, 0, 1), s.narrow(-1, k - 1, 1)
        ratio = first / last if p is None or float(p) > 0 else last / first
        return ratio.squeeze(-1)
    _check_matrix(fname, A)
    inverse_ = inv_ex(A)[0]
    prod = matrix_norm(A, p) * matrix_norm(inverse_, p)
    # PyTorch 2.13 then writes into the inverse in place (its cond kernel reuses the
    # buffer), so a backward through it fails with the saved-tensor version error: the same
    # here, by the same version bump.
    inverse_._vc[0] += 1
    return run_op(NAN_TO_NUM, (prod,))


def _nan_to_num_array(x):
    big = dtypes.finfo(x.dtype).max
    return np.nan_to_num(x, nan=0.0, posinf=big, neginf=-big)


# cond's last step for the norms it computes from inv(A) (a singular A gives inf)
NAN_TO_NUM = defop("cond_nan_to_num", "NanToNumBackward0", _nan_to_num_array,
                   lambda c, g: (g * make(np.isfinite(c.saved[0]._data).astype(g._data.dtype)),),
                   "d nan_to_num(x)/dx = 1 where x is finite", save="inputs")


@public("torch.linalg.matrix_rank")
def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None,
                out=None) -> Tensor:
    _check_tensor("linalg_matrix_rank", "input", A)
    a = A._data
    if a.ndim < 2:
        raise RuntimeError("linalg.matrix_rank: The input tensor input must have at least 2 "
                           "dimensions.")
    if a.dtype.kind not in "fV":
        raise RuntimeError("This function doesn't handle types other than float and double")
    a64 = a.astype(_F64)
    if a.size == 0:
        return make(np.zeros(a.shape[:-2], np.int64))
    s = np.abs(np.linalg.eigvalsh(a64)) if hermitian else np.linalg.svd(a64, compute_uv=False)
    smax = s.max(axis=-1, keepdims=True)
    if tol is not None:
        atol = tol
        rtol = 0.0
    atol_a, rtol_a = _tol_array(atol), _tol_array(rtol)
    if rtol_a is None:
        rtol_a = (np.asarray(0.0) if atol_a is not None and np.any(atol_a > 0)
                  else np.asarray(dtypes.finfo(a.dtype).eps * max(a.shape[-2:])))
    if atol_a is None:
        atol_a = np.asarray(0.0)
    thresh = np.maximum(np.asarray(atol_a, _F64)[..., None], np.asarray(rtol_a, _F64)[..., None] * smax)
    return make((s > thresh).sum(-1).astype(np.int64))


# ---------------------------------------------------------------- matrix functions

@public("torch.linalg.matrix_power", "torch.matrix_power", "Tensor.matrix_power")
def matrix_power(A: Tensor, n: int) -> Tensor:
    from .linalg import matmul

    name = "linalg_matrix_power"
    _check_tensor(name, "input", A)
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{name}(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    _check_matrix("linalg.matrix_power", A, floating=False)
    if n == 0:
        eye = np.broadcast_to(np.eye(A._data.shape[-1], dtype=A._data.dtype), A._data.shape).copy()
        if A.requires_grad and GRAD_MODE.enabled:
            return _zero_grad_copy(A, eye)
        return make(eye)
    if n < 0:
        A = inv(A)
        n = -n
        if n == 1:
            return A
    if n == 1:
        return A.clone()
    if n == 2:
        return matmul(A, A)
    if n == 3:
        return matmul(matmul(A, A), A)
    z = result = None
    while n > 0:
        z = A if z is None else matmul(z, z)
        if n & 1:
            result = z if result is None else matmul(result, z)
        n >>= 1
    return result


def _zero_grad_copy(A: Tensor, eye) -> Tensor:
    """matrix_power(A, 0) when A needs a gradient: PyTorch copies the identity into a tensor
    made from A (CopyBackwards, A's gradient zero)."""
    from .views import COPY

    return run_op(COPY, (A, make(eye)))


def _expm_array(a):
    from scipy.linalg import expm

    a64 = a.astype(_F64)
    if a.size == 0:
        return a.copy()
    flat = a64.reshape((-1,) + a.shape[-2:])
    out = np.stack([expm(m) for m in flat]).reshape(a.shape)
    return _float_cast(out, a.dtype)


def _expm_backward(c, g):
    """The adjoint differential of exp: the top-right block of exp([[A^T, G], [0, A^T]])."""
    from .shape import cat

    A, = c.saved
    at = _mT(A)
    n = A._data.shape[-1]
    zeros = make(np.zeros(A._data.shape, g._data.dtype))
    big = cat([cat([at, g], -1), cat([zeros, at], -1)], -2)
    return (run_op(MATRIX_EXP, (big,))[..., :n, n:],)


MATRIX_EXP = defop("linalg_matrix_exp", "LinalgMatrixExpBackward0", _expm_array, _expm_backward,
                   "gA = [exp([[A^T, G], [0, A^T]])]_{12}", save="inputs",
                   torch_call="torch.linalg.matrix_exp(a.reshape(-1, 1) * a.reshape(1, -1).cos())")


@public("torch.linalg.matrix_exp", "torch.matrix_exp", "Tensor.matrix_exp")
def matrix_exp(input: Tensor) -> Tensor:
    _check_tensor("linalg_matrix_exp", "input", input)
    _check_matrix("linalg.matrix_exp", input, floating=False)
    if input._data.dtype.kind not in "fV":
        raise RuntimeError(f"\"linalg_matrix_exp\" not implemented for '{_type_word(input.dtype)}'")
    return run_op(MATRIX_EXP, (input,))


# ---------------------------------------------------------------- products

def _cross_array(a, b, dim):
    return np.cross(a, b, axis=dim)


def _cross_backward(c, g):
    a, b = c.saved
    dim, = c.meta
    ga = run_op(CROSS, (b, g), (dim,)) if c.needs(0) else None
    gb = run_op(CROSS, (g, a), (dim,)) if c.needs(1) else None
    return ga, gb


CROSS = defop("linalg_cross", "LinalgCrossBackward0", _cross_array, _cross_backward,
              "d (a x b): ga = b x g, gb = g x a", save="inputs", broadcast=True,
              torch_call="torch.linalg.cross(a.reshape(-1)[:1].expand(3) * "
                         "torch.tensor([1., 2., 3.], dtype=a.dtype), a.reshape(-1)[-1:].expand(3).cos())")


def _cross(input: Tensor, other: Tensor, dim: int, name: str):
    from .registry import broadcast_error

    a, b = input._data, other._data
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    nd = a.ndim
    d = _wrap_dim(dim, nd)
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[d]} and {b.shape[d]}")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        broadcast_error(a.shape, b.shape)
    if a.dtype != b.dtype:
        common = dtypes.promote(input.dtype, other.dtype)
        input, other = input.to(common), other.to(common)
    return keep_given(run_op(CROSS, (input, other), (d,)), CROSS, dim)


@public("torch.linalg.cross")
def cross(input: Tensor, other: Tensor, *, dim: int = -1, out=None) -> Tensor:
    _check_tensor("linalg_cross", "input", input)
    _check_tensor("linalg_cross", "other", other, 2)
    return _cross(input, other, dim, "linalg_cross")


@public("torch.cross", "Tensor.cross")
def torch_cross(input: Tensor, other: Tensor, dim=None, *, out=None) -> Tensor:
    _check_tensor("cross", "input", input)
    _check_tensor("cross", "other", other, 2)
    if dim is None:
        warn_once(
            "cross_dim", "Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
            "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of "
            "dim will change to agree with that of linalg.cross in a future release. (Triggered "
            "internally at /__w/pytorch/pytorch/aten/src/ATen/native/Cross.cpp:63.)")
        shape = np.broadcast_shapes(input._data.shape, other._data.shape)
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return _cross(input, other, dim, "cross")


def _vdot_backward(c, g):
    a, b = c.saved
    return (g * b if c.needs(0) else None, g * a if c.needs(1) else None)


VDOT = defop("vdot", "VdotBackward0", lambda a, b: np.asarray(np.dot(a, b) + a.dtype.type(0)),
             _vdot_backward,
             "d(a.b)/da = b, d(a.b)/db = a", save="inputs",
             torch_call="torch.vdot(a.reshape(-1), a.reshape(-1).cos())")


@public("torch.vdot", "Tensor.vdot")
def vdot(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    _check_tensor("vdot", "input", input)
    _check_tensor("vdot", "other", other, 2)
    a, b = input._data, other._data
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_type_word(input.dtype)} and {_type_word(other.dtype)}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] "
            "to have the same number of elements, but got "
            f"{a.shape[0]} and {b.shape[0]} elements respectively")
    return run_op(VDOT, (input, other))


@public("torch.linalg.vecdot")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out=None) -> Tensor:
    _check_tensor("linalg_vecdot", "x", x)
    _check_tensor("linalg_vecdot", "y", y, 2)
    if x._data.ndim == 1 and y._data.ndim == 1:
        return vdot(x, y)
    if x._data.dtype != y._data.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {_type_word(x.dtype)} and y of type "
                           f"{_type_word(y.dtype)} instead")
    return (x * y).sum(dim)


def _mm_chain_order(shapes):
    """The cheapest parenthesisation of a matrix chain (dynamic programming, as PyTorch's
    multi_dot): split[i][j] says where the product of matrices i..j splits."""
    n = len(shapes)
    p = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(mats, split, i, j):
    from .linalg import mm

    if i == j:
        return mats[i]
    k = split[i][j]
    return mm(_chain(mats, split, i, k), _chain(mats, split, k + 1, j))


def _multi_dot(tensors, fname: str) -> Tensor:
    from .linalg import mm

    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"{fname}(): expected at least 2 tensors but got {n}")
    first, last = tensors[0]._data.ndim, tensors[-1]._data.ndim
    if first not in (1, 2):
        raise RuntimeError(f"{fname}(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"{fname}(): the last tensor must be 1D or 2D but got {last}D")
    for i in range(1, n - 1):
        if tensors[i]._data.ndim != 2:
            raise RuntimeError(f"{fname}(): tensor {i} must be 2D but got "
                               f"{tensors[i]._data.ndim}D")
    dtype = tensors[0]._data.dtype
    for i, t in enumerate(tensors):
        if t._data.dtype != dtype:
            raise RuntimeError(f"{fname}(): all tensors must have be the same dtype but tensor 0 "
                               f"is {_type_word(tensors[0].dtype)} and tensor {i} "
                               f"{_type_word(t.dtype)}")
    mats = list(tensors)
    out_shape = []
    if first == 1:
        mats[0] = mats[0].unsqueeze(0)
    else:
        out_shape.append(mats[0]._data.shape[0])
    if last == 1:
        mats[-1] = mats[-1].unsqueeze(-1)
    else:
        out_shape.append(mats[-1]._data.shape[1])
    for i in range(n - 1):
        if mats[i]._data.shape[1] != mats[i + 1]._data.shape[0]:
            raise RuntimeError(f"{fname}(): tensors {i} and {i + 1} with shapes "
                               f"{_shape_text(tensors[i]._data.shape)} and "
                               f"{_shape_text(tensors[i + 1]._data.shape)} cannot be multiplied")
    if n == 2:
        out = mm(mats[0], mats[1])
    elif n == 3:
        a, b = mats[0]._data.shape
        c_, d = mats[2]._data.shape
        cost_1 = (a * c_) * (b + d)
        cost_2 = (b * d) * (a + c_)
        out = mm(mm(mats[0], mats[1]), mats[2]) if cost_1 < cost_2 else mm(mats[0], mm(mats[1], mats[2]))
    else:
        split = _mm_chain_order([m._data.shape for m in mats])
        out = _chain(mats, split, 0, n - 1)
    return out.view(tuple(out_shape))


@public("torch.linalg.multi_dot")
def multi_dot(tensors, *, out=None) -> Tensor:
    return _multi_dot(tensors, "multi_dot")


@public("torch.chain_matmul")
def chain_matmul(*matrices, out=None) -> Tensor:
    warn_once(
        "chain_matmul", "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
        "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather "
        "than multiple parameters. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/"
        "native/LinearAlgebra.cpp:1102.)", inside=True)
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for _i, m in enumerate(matrices):
        if m._data.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m._data.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    return _multi_dot(matrices, "multi_dot")


# addmv / addr / addbmm / baddbmm: beta*input + alpha*(product)

def _scaled(x: Tensor, k):
    return x if k == 1 else x * k


def _addmv_backward(c, g):
    bias, mat, vec = c.saved
    beta, alpha = c.meta
    gb = _scaled(g, beta) if c.needs(0) else None
    gm = _scaled(g.unsqueeze(-1) * vec.unsqueeze(-2), alpha) if c.needs(1) else None
    gv = _scaled(_mT(mat) @ g, alpha) if c.needs(2) else None
    return gb, gm, gv


def _addmv_fwd(bias, mat, vec, beta, alpha):
    prod = mat.astype(_F64) @ vec.astype(_F64) if alpha != 0 else np.zeros(mat.shape[0])
    out = alpha * prod
    if beta != 0:
        out = out + beta * bias.astype(_F64)
    return _float_cast(np.broadcast_to(out, (mat.shape[0],)), mat.dtype)


ADDMV = defop("addmv", "AddmvBackward0", _addmv_fwd, _addmv_backward,
              "beta*b + alpha*M v: gb = beta g, gM = alpha g v^T, gv = alpha M^T g",
              save="inputs", broadcast=True, out_size=lambda arrays, meta: arrays[1].shape[0],
              torch_call="torch.addmv(a.reshape(-1)[:1], a.reshape(-1, 1) * a.reshape(1, -1), "
                         "a.reshape(-1).cos(), beta=0.5, alpha=2)",
              jvp=lambda inputs, meta, res, tangents: _product_tangent(
                  res, tangents[0], meta[0], meta[1], _linalg.mv, inputs[1], inputs[2],
                  tangents[1], tangents[2]))


def _expand_error(bias: Tensor, size: tuple) -> None:
    """PyTorch's expand errors for `input` of addr/addbmm/baddbmm (dims checked last first)."""
    from .linalg import _bias_expands

    have = bias._data.shape
    lead = len(size) - len(have)
    if lead >= 0:
        for i in range(len(have) - 1, -1, -1):
            if have[i] != 1 and have[i] != size[lead + i]:
                raise RuntimeError(
                    f"The expanded size of the tensor ({size[lead + i]}) must match the existing "
                    f"size ({have[i]}) at non-singleton dimension {lead + i}.  Target sizes: "
                    f"{_shape_text(size)}.  Tensor sizes: {_shape_text(have)}")
    _bias_expands(bias, size)


def _integral_scalars(input: Tensor, beta, alpha):
    """(beta, alpha) as PyTorch's integer kernels of addmv/addbmm/baddbmm read them: a
    float factor is truncated to an integer (0.6 -> 0)."""
    if input._data.dtype.kind in "iu":
        if isinstance(beta, float):
            beta = math.trunc(beta)
        if isinstance(alpha, float):
            alpha = math.trunc(alpha)
    return beta, alpha


@public("torch.addmv", "Tensor.addmv")
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1, out=None) -> Tensor:
    for i, (n, x) in enumerate((("input", input), ("mat", mat), ("vec", vec))):
        _check_tensor("addmv", n, x, i + 1)
    m, v = mat._data, vec._data
    if m.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, "
                           f"{m.ndim}, {v.ndim}")
    if m.shape[1] != v.shape[0] or input._data.ndim > 1 or (
            input._data.ndim == 1 and input._data.shape[0] not in (1, m.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({input._data.shape[0] if input._data.ndim else 1}), "
                           f"mat ({m.shape[0]}x{m.shape[1]}), vec ({v.shape[0]})")
    if not (input._data.dtype == m.dtype == v.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_type_word(input.dtype)}, {_type_word(mat.dtype)}, and "
                           f"{_type_word(vec.dtype)}")
    return run_op(ADDMV, (input, mat, vec), _integral_scalars(input, beta, alpha))


def _addr_fwd(bias, v1, v2, beta, alpha):
    out = alpha * np.outer(v1.astype(_F64), v2.astype(_F64))
    if beta != 0:
        out = out + beta * bias.astype(_F64)
    return _float_cast(out, np.result_type(v1, v2))


def _addr_backward(c, g):
    bias, v1, v2 = c.saved
    beta, alpha = c.meta
    gb = _scaled(g, beta) if c.needs(0) else None
    g1 = _scaled(g @ v2, alpha) if c.needs(1) else None
    g2 = _scaled(_mT(g) @ v1, alpha) if c.needs(2) else None
    return gb, g1, g2


ADDR = defop("addr", "AddrBackward0", _addr_fwd, _addr_backward,
             "beta*M + alpha*u v^T: gM = beta g, gu = alpha g v, gv = alpha g^T u",
             save="inputs", broadcast=True,
             torch_call="torch.addr(a.reshape(-1, 1) * a.reshape(1, -1), a.reshape(-1), "
                        "a.reshape(-1).cos(), beta=0.5, alpha=2)")


@public("torch.addr", "Tensor.addr")
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1, out=None) -> Tensor:
    for i, (n, x) in enumerate((("input", input), ("vec1", vec1), ("vec2", vec2))):
        _check_tensor("addr", n, x, i + 1)
    if vec1._data.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1._data.ndim}-D")
    if vec2._data.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {vec2._data.ndim}-D")
    _expand_error(input, (vec1._data.shape[0], vec2._data.shape[0]))
    if input._data.dtype.kind in "iu":  # (addr refuses float factors there)
        for name, value in (("beta", beta), ("alpha", alpha)):
            if isinstance(value, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                                   "floating point number.")
    return run_op(ADDR, (input, vec1, vec2), (beta, alpha))


def _addbmm_fwd(bias, b1, b2, beta, alpha):
    prod = np.einsum("bij,bjk->ik", b1.astype(_F64), b2.astype(_F64))
    out = alpha * prod
    if beta != 0:
        out = out + beta * bias.astype(_F64)
    return _float_cast(out, b1.dtype)


def _addbmm_backward(c, g):
    bias, b1, b2 = c.saved
    beta, alpha = c.meta
    batch = b1._data.shape[0]
    gb = _scaled(g, beta) if c.needs(0) else None
    ge = g.unsqueeze(0).expand(batch, *g._data.shape)
    g1 = _scaled(ge.bmm(b2.transpose(1, 2)), alpha) if c.needs(1) else None
    g2 = _scaled(b1.transpose(1, 2).bmm(ge), alpha) if c.needs(2) else None
    return gb, g1, g2


ADDBMM = defop("addbmm", "AddbmmBackward0", _addbmm_fwd, _addbmm_backward,
               "beta*M + alpha*sum_b B1_b B2_b", save="inputs", broadcast=True,
               out_size=lambda arrays, meta: arrays[1].shape[-2] * arrays[2].shape[-1],
               torch_call="torch.addbmm(a.reshape(-1, 1) * a.reshape(1, -1), "
                          "(a.reshape(-1, 1) * a.reshape(1, -1)).expand(2, -1, -1), "
                          "a.reshape(-1, 1).cos().expand(2, -1, a.numel()), beta=0.5, alpha=2)")


def _bmm_checks(name: str, input: Tensor, b1: Tensor, b2: Tensor, batch_out: bool):
    for i, (n, x) in enumerate((("input", input), ("batch1", b1), ("batch2", b2))):
        _check_tensor(name, n, x, i + 1)
    s1, s2 = b1._data.shape, b2._data.shape
    if len(s1) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(s2) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if s1[0] != s2[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {s1[0]} "
                           f"and {s2[0]}")
    if s1[2] != s2[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({s1[1]}x{s1[2]} and "
                           f"{s2[1]}x{s2[2]})")
    size = (s1[0], s1[1], s2[2]) if batch_out else (s1[1], s2[2])
    _expand_error(input, size)
    if not (input._data.dtype == b1._data.dtype == b2._data.dtype):
        raise RuntimeError(f"expected scalar type {_type_word(b1.dtype)} but found "
                           f"{_type_word(input.dtype if input._data.dtype != b1._data.dtype else b2.dtype)}")


@public("torch.addbmm", "Tensor.addbmm")
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1,
           out=None) -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's lower-precision list)
        return _autocast.lower(addbmm, input, batch1, batch2, beta=beta, alpha=alpha, out=out)
    _bmm_checks("addbmm", input, batch1, batch2, False)
    return run_op(ADDBMM, (input, batch1, batch2), _integral_scalars(input, beta, alpha))


def _baddbmm_fwd(bias, b1, b2, beta, alpha):
    if bias.dtype == b1.dtype and batched.applies(b1, b2):  # (ATen's small loop, its order)
        return batched.added(bias, b1, b2, beta, alpha)
    out = alpha * (b1.astype(_F64) @ b2.astype(_F64))
    if beta != 0:
        out = out + beta * bias.astype(_F64)
    return _float_cast(out, b1.dtype)


def _baddbmm_backward(c, g):
    bias, b1, b2 = c.saved
    beta, alpha = c.meta
    gb = _scaled(g, beta) if c.needs(0) else None
    g1 = _scaled(g.bmm(b2.transpose(1, 2)), alpha) if c.needs(1) else None
    g2 = _scaled(b1.transpose(1, 2).bmm(g), alpha) if c.needs(2) else None
    return gb, g1, g2


BADDBMM = defop("baddbmm", "BaddbmmBackward0", _baddbmm_fwd, _baddbmm_backward,
                "beta*M + alpha*B1 B2 per batch", save="inputs", broadcast=True,
                torch_call="torch.baddbmm(a.reshape(-1, 1) * a.reshape(1, -1), "
                           "(a.reshape(-1, 1) * a.reshape(1, -1)).expand(2, -1, -1), "
                           "a.reshape(-1, 1).cos().expand(2, -1, a.numel()), beta=0.5, alpha=2)",
                jvp=lambda inputs, meta, res, tangents: _product_tangent(
                    res, tangents[0], meta[0], meta[1], _linalg.bmm, inputs[1], inputs[2],
                    tangents[1], tangents[2]))


@public("torch.baddbmm", "Tensor.baddbmm")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1,
            out=None) -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's lower-precision list)
        return _autocast.lower(baddbmm, input, batch1, batch2, beta=beta, alpha=alpha, out=out)
    _bmm_checks("baddbmm", input, batch1, batch2, True)
    return run_op(BADDBMM, (input, batch1, batch2), _integral_scalars(input, beta, alpha))


# ---------------------------------------------------------------- tensorinv / tensorsolve

@public("torch.linalg.tensorinv")
def tensorinv(A: Tensor, ind: int = 2, *, out=None) -> Tensor:
    _check_tensor("linalg_tensorinv", "input", A)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = A._data.shape
    lead, rest = math.prod(shape[:ind]), math.prod(shape[ind:])
    if lead != rest:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {rest} != {lead}")
    out = inv(A.reshape(lead, rest))
    return out.reshape(tuple(shape[ind:]) + tuple(shape[:ind]))


@public("torch.linalg.tensorsolve")
def tensorsolve(A: Tensor, B: Tensor, dims=None, *, out=None) -> Tensor:
    _check_tensor("linalg_tensorsolve", "input", A)
    _check_tensor("linalg_tensorsolve", "other", B, 2)
    nd = A._data.ndim
    if dims is not None:
        dims = [_wrap_dim(d, nd) for d in dims]
        order = [d for d in range(nd) if d not in dims] + list(dims)
        A = A.permute(*order)
    bshape = B._data.shape
    rest = A._data.shape[B._data.ndim:]
    lead = math.prod(bshape)
    if lead != math.prod(rest):
        raise RuntimeError("Expected self to satisfy the requirement "
                           "prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but "
                           f"got {math.prod(rest)} != {lead}")
    x = solve(A.reshape(lead, lead), B.reshape(lead))
    return x.view(tuple(rest))


# ---------------------------------------------------------------- LU

def _lu_arrays(a):
    """Partial-pivoting LU of (..., m, n) as LAPACK's getrf does it (the first largest
    pivot of each column): (L (m x k, unit lower), U (k x n), pivots (1-based, int32),
    perm (the row each result row came from), info)."""
    a64 = a.astype(_F64)
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    flat = a64.reshape((int(np.prod(batch)), m, n)).copy()  # (-1 cannot size an empty m x n)
    pivots = np.zeros((len(flat), k), np.int32)
    perms = np.tile(np.arange(m), (len(flat), 1))
    info = np.zeros(len(flat), np.int32)
    with np.errstate(all="ignore"):
        for b, u in enumerate(flat):
            for j in range(k):
                p = j + int(np.argmax(np.abs(u[j:, j])))
                pivots[b, j] = p + 1
                if p != j:
                    u[[j, p]] = u[[p, j]]
                    perms[b, [j, p]] = perms[b, [p, j]]
                if u[j, j] == 0:
                    if info[b] == 0:
                        info[b] = j + 1
                    continue
                u[j + 1:, j] /= u[j, j]
                u[j + 1:, j + 1:] -= np.outer(u[j + 1:, j], u[j, j + 1:])
    lu = flat.reshape(a.shape)
    return (lu, pivots.reshape(batch + (k,)), perms.reshape(batch + (m,)),
            info.reshape(batch))


def _unpack(lu, k):
    m, n = lu.shape[-2:]
    low = np.tril(lu[..., :, :k], -1) + np.eye(m, k)
    up = np.triu(lu[..., :k, :])
    return low, up


def _perm_matrix(perms, dtype):
    """P with A = P L U: column j of P is the unit vector of the row perm[j] came from."""
    m = perms.shape[-1]
    eye = np.eye(m, dtype=dtype)
    return np.swapaxes(eye[perms], -1, -2)


def _lu_grad(gL, gU, P, L, U):
    """PyTorch's linalg_lu_backward (A = P L U), square, wide and tall."""
    from .shape import cat

    m, n = L._data.shape[-2], U._data.shape[-1]
    k = min(m, n)
    dt = L._data.dtype

    def zeros_like(x):
        return make(np.zeros(x._data.shape, dt))

    def square(gl, gu, l_, u_):
        inner = _mask(_mT(l_) @ gl, -1, True) + _mask(gu @ _mT(u_), 0, False)
        inner = solve_triangular(_mT(u_), inner, upper=False, left=False)
        return solve_triangular(_mT(l_), inner, upper=True, left=True, unitriangular=True)

    gL = gL if gL is not None else zeros_like(L)
    gU = gU if gU is not None else zeros_like(U)
    if m == n:
        gA = square(gL, gU, L, U)
    elif m < n:
        u1, u2 = U[..., :, :k], U[..., :, k:]
        gu1, gu2 = gU[..., :, :k], gU[..., :, k:]
        gl = gL - solve_triangular(_mT(L), gu2 @ _mT(u2), upper=True, unitriangular=True)
        ga2 = solve_triangular(_mT(L), gu2, upper=True, unitriangular=True)
        gA = cat([square(gl, gu1, L, u1), ga2], -1)
    else:
        l1, l2 = L[..., :k, :], L[..., k:, :]
        gl1, gl2 = gL[..., :k, :], gL[..., k:, :]
        gu = gU - solve_triangular(_mT(U), _mT(l2) @ gl2, upper=False, left=False)
        ga2 = solve_triangular(_mT(U), gl2, upper=False, left=False)
        gA = cat([square(gl1, gu, l1, U), ga2], -2)
    return P @ gA


def _lu_backward(c, grads):
    _, gL, gU = _grads(grads, 3)
    if gL is None and gU is None:
        return (None,)
    P, L, U = _outs(c)
    return (_lu_grad(gL, gU, P.detach(), L, U),)


def _lu_factor_backward(c, grads):
    g = _grads(grads, 3)[0]
    if g is None:
        return (None,)
    LU, _ = _outs(c)[:2]
    perms = c.meta[-2]
    m, n = LU._data.shape[-2:]
    k = min(m, n)
    dt = LU._data.dtype
    strict = make(np.tril(np.ones((m, k)), -1).astype(dt))
    L = LU[..., :, :k] * strict + make(np.eye(m, k, dtype=dt))
    U = _mask(LU[..., :k, :], 0, False)
    P = make(_perm_matrix(perms, dt))
    return (_lu_grad(_mask(g[..., :, :k], -1, True), _mask(g[..., :k, :], 0, False), P, L, U),)


LU = defop("linalg_lu", "LinalgLuBackward0", None, _lu_backward,
           "A = PLU: gA = P L^{-T} [tril(L^T gL, -1) + triu(gU U^T)] U^{-T}", save="meta",
           multi=True,
           torch_call="torch.linalg.lu(a.reshape(-1, 1) * a.reshape(1, -1).cos() "
                      "+ torch.eye(a.numel(), dtype=a.dtype) * 3)[2]")
LU_FACTOR = defop("linalg_lu_factor_ex", "LinalgLuFactorExBackward0", None, _lu_factor_backward,
                  "LU = L + U - I: as linalg.lu's, on the unpacked factors", save="meta",
                  multi=True,
                  torch_call="torch.linalg.lu_factor(a.reshape(-1, 1) * a.reshape(1, -1).cos() "
                             "+ torch.eye(a.numel(), dtype=a.dtype) * 3)[0]")


def _lu_checks(A: Tensor, fname: str, pivot: bool) -> None:
    if A._data.ndim < 2:
        raise RuntimeError(f"{fname}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{_shape_text(A._data.shape)} instead")
    if A._data.dtype.kind not in "fV":
        raise RuntimeError(f"linalg.lu_factor: Expected a floating point or complex tensor as "
                           f"input. Got {_type_word(A.dtype)}")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _lu_factor(A: Tensor, pivot: bool, check_errors: bool, fname: str):
    _lu_checks(A, fname, pivot)
    a = A._data
    lu, pivots, perms, info = _lu_arrays(a)
    if check_errors and np.any(info > 0):
        b = int(np.argmax(info.reshape(-1) > 0))
        raise _LinAlgError(f"torch.linalg.lu_factor: {_batch_prefix(a.shape, b)}U[{info.reshape(-1)[b]},"
                           f"{info.reshape(-1)[b]}] is zero, singular U.")
    outs = _run_multi(LU_FACTOR, (A,), (perms,),
                      [_colmajor(_float_cast(lu, a.dtype)), pivots, info], (True, False, False))
    return outs


@public("torch.linalg.lu_factor")
def lu_factor(A: Tensor, *, pivot: bool = True, out=None):
    _check_tensor("linalg_lu_factor", "A", A)
    LU_, piv, _ = _lu_factor(A, pivot, True, "torch.lu_factor")
    return RT["linalg_lu_factor"](LU_, piv)


@public("torch.linalg.lu_factor_ex")
def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False, out=None):
    _check_tensor("linalg_lu_factor_ex", "A", A)
    return RT["linalg_lu_factor_ex"](*_lu_factor(A, pivot, check_errors, "torch.lu_factor"))


@public("torch.linalg.lu")
def lu(A: Tensor, *, pivot: bool = True, out=None):
    _check_tensor("linalg_lu", "A", A)
    if A._data.ndim < 2:
        raise RuntimeError("linalg.lu: Expected tensor with 2 or more dimensions. Got size: "
                           f"{_shape_text(A._data.shape)} instead")
    _check_float("linalg.lu", A)
    a = A._data
    lu_, _, perms, _ = _lu_arrays(a)
    k = min(a.shape[-2:])
    low, up = _unpack(lu_, k)
    if pivot:
        P = _perm_matrix(perms, a.dtype)
    else:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    outs = _run_multi(LU, (A,), (perms,), [P, _float_cast(low, a.dtype), _float_cast(up, a.dtype)],
                      (False, True, True))
    return RT["linalg_lu"](*outs)


def _lu_solve_array(lu_, perms, b, left, adjoint):
    k = lu_.shape[-1]
    low, up = _unpack(lu_.astype(_F64), k)
    A = _perm_matrix(perms, _F64) @ low @ up
    if adjoint:
        A = np.swapaxes(A, -1, -2)
    return _solve_arrays(A, b.astype(_F64), left, False).astype(b.dtype)


def _lu_solve_backward(c, g):
    LU_, _, B = c.saved
    perms, left, adjoint = c.meta[:3]
    X = c.result
    gB = gLU = None
    piv = c.meta[3]
    if c.needs(2):
        gB = lu_solve(LU_, piv, g, left=left, adjoint=not adjoint)
    if c.needs(0):
        n = LU_._data.shape[-1]
        dt = LU_._data.dtype
        L = LU_ * make(np.tril(np.ones((n, n)), -1).astype(dt)) + _eye(n, dt)
        U = _mask(LU_, 0, False)
        P = make(_perm_matrix(perms, dt))
        if left != adjoint:
            gR = solve_triangular(_mT(U), -((g if left else _mT(g)) @ (_mT(X) if left else X)),
                                  upper=False)
            gL = _mask(solve_triangular(_mT(L), gR @ _mT(U), upper=True, left=True,
                                        unitriangular=True), -1, True)
            gLU = gL + _mask(gR, 0, False)
        else:
            gR = -(_mT(P) @ (X if left else _mT(X)) @ (_mT(g) if left else g) @ P)
            gR = solve_triangular(_mT(L), gR, upper=True, left=False, unitriangular=True)
            gU = _mask(solve_triangular(_mT(U), _mT(L) @ gR, upper=False, left=False), 0, False)
            gLU = _mask(gR, -1, True) + gU
    return gLU, None, gB


LU_SOLVE = defop("linalg_lu_solve", "LinalgLuSolveBackward0",
                 lambda lu_, piv, b, perms, left, adjoint, pivots: _colmajor(
                     _lu_solve_array(lu_, perms, b, left, adjoint)),
                 _lu_solve_backward, "X = (PLU)^{-1}B: gB = (PLU)^{-T}G, gLU from gL and gU",
                 save="inputs result", broadcast=True,
                 out_size=_rhs_count(0, 2),
                 torch_call="torch.linalg.lu_solve(*torch.linalg.lu_factor(a.reshape(-1, 1) * "
                            "a.reshape(1, -1).cos() + torch.eye(a.numel(), dtype=a.dtype) * 3), "
                            "a.reshape(-1, 1).sin())")


@public("torch.linalg.lu_solve")
def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False,
             out=None) -> Tensor:
    _check_tensor("linalg_lu_solve", "LU", LU)
    _check_tensor("linalg_lu_solve", "pivots", pivots, 2)
    _check_tensor("linalg_lu_solve", "B", B, 3)
    fname = "linalg.lu_solve"
    lu_, b, piv = LU._data, B._data, pivots._data
    if lu_.ndim < 2:
        raise RuntimeError(f"torch.{fname}: Expected LU to have at least 2 dimensions, but it "
                           f"has {lu_.ndim} dimensions instead")
    if b.ndim < 2:
        raise RuntimeError(f"torch.{fname}: Expected B to have at least 2 dimensions, but it "
                           f"has {b.ndim} dimensions instead")
    if lu_.shape[-1] != lu_.shape[-2]:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are "
                           f"{lu_.shape[-2]} by {lu_.shape[-1]} matrices")
    if (b.shape[-2] if left else b.shape[-1]) != lu_.shape[-1]:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{fname}: Incompatible shapes of A and B for the equation {eq} "
                           f"({lu_.shape[-2]}x{lu_.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})")
    if piv.dtype != np.int32:
        raise RuntimeError(f"{fname}: Expected pivots to be integers. Got {_type_word(pivots.dtype)}")
    if lu_.dtype != b.dtype:
        raise RuntimeError(f"{fname}: Expected LU and B to have the same dtype, but found LU of "
                           f"type {_type_word(LU.dtype)} and B of type {_type_word(B.dtype)} "
                           "instead")
    m = lu_.shape[-1]
    perms = np.tile(np.arange(m), piv.shape[:-1] + (1,))
    flat_p = perms.reshape(-1, m) if m else perms.reshape(0, 0)
    flat_v = piv.reshape(len(flat_p), -1) if piv.size else np.zeros((len(flat_p), 0), np.int32)
    for row, pv in zip(flat_p, flat_v, strict=True):
        for j, p in enumerate(pv):
            row[[j, p - 1]] = row[[p - 1, j]]
    return run_op(LU_SOLVE, (LU, pivots, B), (perms, left, adjoint, pivots))


# ---------------------------------------------------------------- householder_product

def _reflector_vectors(v: Tensor, k: int):
    """The Householder vectors v_i (column i of V below the diagonal, 1 on it, 0 above) as
    Tensors (differentiable in V)."""
    m, n = v._data.shape[-2:]
    dt = v._data.dtype
    below = v * make(np.tril(np.ones((m, n)), -1).astype(dt)) + make(np.eye(m, n, dtype=dt))
    return [below[..., :, i:i + 1] for i in range(k)]


def _householder_array(v, tau):
    m, n = v.shape[-2:]
    k = tau.shape[-1]
    v64 = np.tril(v.astype(_F64), -1) + np.eye(m, n)
    q = np.broadcast_to(np.eye(m), v.shape[:-2] + (m, m)).copy()
    for i in range(k - 1, -1, -1):
        col = v64[..., :, i:i + 1]
        t = tau.astype(_F64)[..., i, None, None]
        q = q - t * col @ (np.swapaxes(col, -1, -2) @ q)
    return _colmajor(_float_cast(q[..., :, :n], v.dtype))


def _householder_backward(c, g):
    """Q = H_0 ... H_{k-1} (first n columns), H_i = I - tau_i v_i v_i^T: the gradient of
    each H_i is (H_0..H_{i-1})^T [G 0] (H_{i+1}..H_{k-1})^T, which gives tau_i's
    (-v^T G_i v) and v_i's (-tau_i (G_i + G_i^T) v_i, below the diagonal)."""
    from .shape import cat

    V, tau = c.saved
    m, n = V._data.shape[-2:]
    k = tau._data.shape[-1]
    if V._data.size == 0 or k == 0:  # (PyTorch's backward leaves both gradients undefined)
        return None, None
    dt = V._data.dtype
    vs = _reflector_vectors(V, k)
    eye = _eye(m, dt)
    H = [eye - tau[..., i:i + 1].unsqueeze(-1) * (vs[i] @ _mT(vs[i])) for i in range(k)]
    gfull = cat([g, make(np.zeros(g._data.shape[:-1] + (m - n,), dt))], -1) if m > n else g
    prefix = [eye]
    for i in range(k - 1):
        prefix.append(prefix[-1] @ H[i])
    suffix = [eye] * k
    for i in range(k - 2, -1, -1):
        suffix[i] = H[i + 1] @ suffix[i + 1]
    gv_cols, gtau = [], []
    for i in range(k):
        gi = _mT(prefix[i]) @ gfull @ _mT(suffix[i])
        v = vs[i]
        gtau.append(-(_mT(v) @ gi @ v)[..., 0, :])
        t = tau[..., i:i + 1].unsqueeze(-1)
        gv_cols.append(-t * ((gi + _mT(gi)) @ v))
    gV = cat(gv_cols + ([make(np.zeros(V._data.shape[:-1] + (n - k,), dt))] if n > k else []), -1)
    gV = gV * make(np.tril(np.ones((m, n)), -1).astype(dt))
    return gV if c.needs(0) else None, cat(gtau, -1) if c.needs(1) else None


HOUSEHOLDER = defop("linalg_householder_product", "LinalgHouseholderProductBackward0",
                    _householder_array, _householder_backward,
                    "Q = prod(I - tau_i v_i v_i^T): per-reflector gradients", save="inputs",
                    torch_call="torch.linalg.householder_product(a.reshape(-1, 1) * "
                               "a.reshape(1, -1).cos(), a.reshape(-1)[:1].sin())")


@public("torch.linalg.householder_product", "torch.orgqr", "Tensor.orgqr")
def householder_product(A: Tensor, tau: Tensor, *, out=None) -> Tensor:
    _check_tensor("linalg_householder_product", "input", A)
    _check_tensor("linalg_householder_product", "tau", tau, 2)
    fname = "torch.linalg.householder_product"
    a, t = A._data, tau._data
    if a.ndim < 2:
        raise RuntimeError(f"{fname}: input must have at least 2 dimensions.")
    if a.shape[-2] < a.shape[-1]:
        raise RuntimeError(f"{fname}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if a.shape[-1] < t.shape[-1]:
        raise RuntimeError(f"{fname}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if a.ndim - t.ndim != 1:
        raise RuntimeError(f"{fname}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {t.ndim} and input.ndim is equal to {a.ndim}")
    if a.dtype != t.dtype:
        raise RuntimeError(f"{fname}: tau dtype {_type_word(tau.dtype)} does not match input "
                           f"dtype {_type_word(A.dtype)}")
    return run_op(HOUSEHOLDER, (A, tau))


# ---------------------------------------------------------------- more spellings

def _inplace_product(fn):
    def method(self, *args, **kwargs):
        return self._apply_inplace(lambda old: fn(old, *args, **kwargs))

    method.__name__ = fn.__name__ + "_"
    return method


addmv_ = public("torch.addmv_", "Tensor.addmv_")(_inplace_product(addmv))
addr_ = public("Tensor.addr_")(_inplace_product(addr))
addbmm_ = public("Tensor.addbmm_")(_inplace_product(addbmm))
baddbmm_ = public("Tensor.baddbmm_")(_inplace_product(baddbmm))


@public("torch.lu", "Tensor.lu")
def torch_lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out=None):
    """torch.lu (deprecated): linalg.lu_factor(_ex)'s results as a plain tuple."""
    warn_once(
        "lu", "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n"
        "should be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
        "compute_pivots) (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
        "BatchLinearAlgebra.cpp:2073.)", inside=True)
    LU_, piv, info = _lu_factor(A, pivot, not get_infos, "torch.lu_factor")
    return (LU_, piv, info) if get_infos else (LU_, piv)


@public("torch.lu_solve", "Tensor.lu_solve")
def torch_lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out=None) -> Tensor:
    warn_once(
        "lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
        "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
        "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
        "X = torch.linalg.lu_solve(LU, pivots, B) (Triggered internally at /__w/pytorch/pytorch/"
        "aten/src/ATen/native/BatchLinearAlgebra.cpp:2230.)")
    return lu_solve(LU_data, LU_pivots, b)


_REMOVED = {
    "lstsq": (
        "This function was deprecated since version 1.9 and is now removed. `torch.lstsq` is "
        "deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed "
        "arguments and does not return the QR decomposition in the returned tuple (although it "
        "returns other information about the problem).\n\nTo get the QR decomposition consider "
        "using `torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the residuals "
        "of the solution in the last m - n columns of the returned value whenever m > n. In "
        "torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned named "
        "tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution"
        "[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution"),
    "solve": (
        "This function was deprecated since version 1.9 and is now removed. `torch.solve` is "
        "deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments "
        "reversed and does not return the LU factorization.\n\nTo get the LU factorization see "
        "`torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\n"
        "X = torch.solve(B, A).solution should be replaced with:\nX = torch.linalg.solve(A, B)"),
    "matrix_rank": (
        "This function was deprecated since version 1.9 and is now removed.\nPlease use the "
        "`torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in "
        "`torch.linalg.matrix_rank()` to 'hermitian'."),
    "eig": (
        "This function was deprecated since version 1.9 and is now removed. `torch.linalg.eig` "
        "returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
        "mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\n"
        "L_complex = torch.linalg.eigvals(A)\n\nand\n\n"
        "L, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)"),
    "symeig": (
        "This function was deprecated since version 1.9 and is now removed. The default "
        "behavior has changed from using the upper triangular portion of the matrix by default "
        "to using the lower triangular portion.\n\n"
        "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
        "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
        "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"),
}


def _removed(name: str):
    def removed(*args, **kwargs):
        raise RuntimeError(_REMOVED[name])

    removed.__name__ = name
    return removed


public("torch.lstsq", "Tensor.lstsq")(_removed("lstsq"))
public("torch.solve", "Tensor.solve")(_removed("solve"))
public("torch.matrix_rank")(_removed("matrix_rank"))
public("torch.eig", "Tensor.eig")(_removed("eig"))
public("torch.symeig", "Tensor.symeig")(_removed("symeig"))


# Which inputs each product saves, as PyTorch: only those a needed gradient reads (so an
# in-place change of the others is no error). Written out rather than through defop's
# save_for, whose compiled form costs an eval per op at start-up.
def _saved_pair(x, e):
    return (x[0] if e[1][0] is not None else None, x[1] if e[0][0] is not None else None)


def _saved_product(x, e):
    return (None, x[1] if e[2][0] is not None else None, x[2] if e[1][0] is not None else None)


CROSS.save_for = VDOT.save_for = _saved_pair
ADDMV.save_for = ADDR.save_for = ADDBMM.save_for = BADDBMM.save_for = _saved_product
