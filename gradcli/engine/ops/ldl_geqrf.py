"""geqrf and the LDL^T factorization (linalg.ldl_factor, ldl_factor_ex, ldl_solve) over
LAPACK through scipy (loaded on first use), in LAPACK's own packed formats as PyTorch
returns them: geqrf's reflectors below the diagonal with R on and above it and the tau
scalars; sytrf's L and D packed in the lower triangle (upper zeroed) with its 1-based
pivots (negative for 2 x 2 blocks), which ldl_solve reads back.

PyTorch declares no derivative for any of them: their nodes raise on backward with
PyTorch's texts (GeqrfBackward0, NotImplemented).
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .linalg_ext import _run_multi
from .registry import defop, no_derivative, public
from .sorting import _pair_type

GEQRF = defop("geqrf", "GeqrfBackward0", None,
              no_derivative("geqrf", "the derivative for 'geqrf' is not implemented."),
              "PyTorch declares no derivative for geqrf (backward raises)", multi=True)
LDL_FACTOR = defop("linalg_ldl_factor_ex", "NotImplemented", None,
                   no_derivative("linalg_ldl_factor_ex"),
                   "PyTorch declares no derivative for ldl_factor (backward raises)", multi=True)
LDL_SOLVE = defop("linalg_ldl_solve", "NotImplemented", None,
                  no_derivative("linalg_ldl_solve"),
                  "PyTorch declares no derivative for ldl_solve (backward raises)", multi=True)

GEQRF_T = _pair_type("geqrf", "a", "tau")
LDL_T = _pair_type("linalg_ldl_factor", "LD", "pivots")


class _LdlEx(tuple):
    __slots__ = ()
    __module__ = "torch.return_types"

    LD = property(lambda self: self[0])
    pivots = property(lambda self: self[1])
    info = property(lambda self: self[2])

    def __repr__(self) -> str:
        return (f"torch.return_types.linalg_ldl_factor_ex(\nLD={self[0]!r},\n"
                f"pivots={self[1]!r},\ninfo={self[2]!r})")

    __str__ = __repr__


_LdlEx.__name__ = _LdlEx.__qualname__ = "linalg_ldl_factor_ex"


def _batches(a: np.ndarray):
    return a.reshape((int(np.prod(a.shape[:-2])),) + a.shape[-2:])


@public("torch.geqrf", "Tensor.geqrf")
def geqrf(input: Tensor, *, out=None):
    """LAPACK's QR in its raw form: Householder reflectors under the diagonal, R on and above
    it, and the reflectors' scalars tau (what ormqr / householder_product take)."""
    a = input._data
    if a.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if a.dtype.kind != "f":
        raise RuntimeError(f"torch.geqrf: Expected a floating point or complex tensor as input. "
                           f"Got {input.dtype._legacy if hasattr(input.dtype, '_legacy') else input.dtype}")
    m, n = a.shape[-2:]
    packed = np.empty(a.shape, a.dtype)
    taus = np.empty(a.shape[:-2] + (min(m, n),), a.dtype)
    flat_p, flat_t = _batches(packed), taus.reshape(int(np.prod(a.shape[:-2])), min(m, n))
    for i, matrix in enumerate(_batches(a)):
        if m and n:
            h, tau = np.linalg.qr(matrix.astype(np.float64), mode="raw")
            flat_p[i] = h.T
            flat_t[i] = tau
    outs = _run_multi(GEQRF, (input,), (), [packed, taus], (True, True))
    return GEQRF_T(outs)


def _lapack(name: str, dtype):
    from scipy.linalg import lapack

    return getattr(lapack, ("s" if dtype == np.float32 else "d") + name)


def _ldl(A: Tensor, hermitian: bool, fname: str):
    a = A._data
    if a.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    if a.dtype.kind != "f":
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype}")
    n = a.shape[-1]
    packed = np.zeros(a.shape, a.dtype)
    pivots = np.zeros(a.shape[:-1], np.int32)
    infos = np.zeros(a.shape[:-2], np.int32)
    sytrf = _lapack("sytrf", a.dtype) if n else None
    count = int(np.prod(a.shape[:-2]))
    flat_p, flat_v, flat_i = _batches(packed), pivots.reshape(count, n), infos.reshape(count)
    for i, matrix in enumerate(_batches(a)):
        if n:
            ldu, ipiv, info = sytrf(matrix, lower=1)
            flat_p[i] = np.tril(ldu)
            flat_v[i] = ipiv
            flat_i[i] = info
    return packed, pivots, infos


@public("torch.linalg.ldl_factor_ex")
def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False, out=None):
    """A = L D L^T (Bunch-Kaufman pivoting) in LAPACK's packed form, with LAPACK's info."""
    packed, pivots, infos = _ldl(A, hermitian, "torch.linalg.ldl_factor_ex")
    if check_errors and infos.any():
        raise RuntimeError(f"torch.linalg.ldl_factor_ex: LAPACK's sytrf failed with info "
                           f"{int(infos.reshape(-1)[np.nonzero(infos.reshape(-1))[0][0]])}")
    outs = _run_multi(LDL_FACTOR, (A,), (), [packed, pivots, infos], (True, False, False))
    return tuple.__new__(_LdlEx, outs)


@public("torch.linalg.ldl_factor")
def ldl_factor(A: Tensor, *, hermitian: bool = False, out=None):
    """A = L D L^T in LAPACK's packed form (LD, pivots); a singular D raises as PyTorch's."""
    packed, pivots, infos = _ldl(A, hermitian, "torch.linalg.ldl_factor_ex")
    flat = infos.reshape(-1)
    bad = np.nonzero(flat)[0]
    if bad.size:
        where = f"(Batch element {bad[0]}): " if infos.ndim else ""
        raise RuntimeError(f"torch.linalg.ldl_factor: {where}The factorization could not be "
                           f"completed because the input is not invertible.")
    outs = _run_multi(LDL_FACTOR, (A,), (), [packed, pivots], (True, False))
    return LDL_T(outs)


@public("torch.linalg.ldl_solve")
def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False, out=None):
    """X with A X = B, A given by ldl_factor's (LD, pivots) (LAPACK's sytrs)."""
    ld, piv, b = LD._data, pivots._data, B._data
    if ld.ndim < 2:
        raise RuntimeError("torch.linalg.ldl_solve: LD should have at least 2 dimensions, but it "
                           f"has {ld.ndim} dimensions instead")
    if b.ndim < 2:
        raise RuntimeError("torch.linalg.ldl_solve: B should have at least 2 dimensions, but it "
                           f"has {b.ndim} dimensions instead")
    n = ld.shape[-1]
    if ld.shape[-2] != n:
        raise RuntimeError("torch.linalg.ldl_solve: A must be batches of square matrices, but "
                           f"they are {ld.shape[-2]} by {n} matrices")
    if b.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A "
                           f"matrix is {n} by {n} but each b matrix is {b.shape[-2]} by "
                           f"{b.shape[-1]}")
    if piv.dtype != np.int32:
        raise RuntimeError("torch.linalg.ldl_solve: Expected pivots to be integers. Got "
                           f"{pivots.dtype}")
    if ld.dtype != b.dtype:
        raise RuntimeError("torch.linalg.ldl_solve: Expected LD and B to have the same dtype, "
                           f"but LD has {LD.dtype} and B has {B.dtype}")
    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    lds = np.broadcast_to(ld, batch + ld.shape[-2:]).reshape((-1, n, n))
    pivs = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape((-1, n))
    bs = np.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    result = np.empty(batch + b.shape[-2:], b.dtype)
    flat = result.reshape((-1,) + b.shape[-2:])
    sytrs = _lapack("sytrs", b.dtype) if n and b.shape[-1] else None
    for i in range(bs.shape[0]):
        if sytrs is None:
            flat[i] = bs[i]
            continue
        x, info = sytrs(lds[i], pivs[i], bs[i], lower=1)
        flat[i] = x
    outs = _run_multi(LDL_SOLVE, (LD, B), (), [result], (True,))
    return outs[0]
