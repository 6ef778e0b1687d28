"""torch.ormqr: the product of a matrix with the orthogonal Q of a QR factorization given
as Householder reflectors (geqrf's output), as one OrmqrBackward0 node.

Q is householder_product over the reflectors completed to a square matrix (the missing
reflectors with tau 0 are identities), so the forward is that product in numpy precision
and the backward differentiates the same composition (gradcli's householder_product and
matmul nodes), recording it when a graph is being built: second derivatives follow."""

from __future__ import annotations

from .. import dtypes
from ..tensor import Tensor, _type_word, make
from .registry import PUBLIC, defop, public, run_op


def _full_q(reflectors: Tensor, tau: Tensor) -> Tensor:
    """The m x m orthogonal matrix of the reflectors (..., m, n) and tau (..., k)."""
    cat, zeros = PUBLIC["torch.cat"], PUBLIC["torch.zeros"]
    m, n = reflectors.shape[-2], reflectors.shape[-1]
    batch = tuple(reflectors.shape[:-2])
    square = reflectors[..., :m] if n >= m else cat(
        [reflectors, zeros(batch + (m, m - n), dtype=reflectors.dtype)], -1)
    k = tau.shape[-1]
    if k < m:
        tau = cat([tau, zeros(batch + (m - k,), dtype=tau.dtype)], -1)
    return PUBLIC["torch.linalg.householder_product"](square, tau)


def _ormqr_tensors(reflectors, tau, other, left, transpose):
    q = _full_q(reflectors, tau)
    if transpose:
        q = q.mT
    return q @ other if left else other @ q


def _ormqr_fwd(a, tau, c, left, transpose):
    from ..grad_mode import no_grad

    with no_grad():
        return _ormqr_tensors(make(a), make(tau), make(c), left, transpose)._data


def _ormqr_backward(c, g):
    from ..autograd import grad as _grad
    from ..grad_mode import GRAD_MODE, enable_grad

    graph = GRAD_MODE.enabled
    leaves = [t if graph and c.needs(i) else t.detach()._requires_grad_()
              for i, t in enumerate(c.saved)]
    left, transpose = c.meta
    with enable_grad():
        out = _ormqr_tensors(*leaves, left, transpose)
        grads = _grad(out, leaves, g, create_graph=graph, allow_unused=True)
    zeros_like = PUBLIC["torch.zeros_like"]
    return tuple((gi if gi is not None else zeros_like(t)) if c.needs(i) else None
                 for i, (gi, t) in enumerate(zip(grads, leaves, strict=True)))


ORMQR = defop("ormqr", "OrmqrBackward0", _ormqr_fwd, _ormqr_backward,
              "op(Q) C or C op(Q), Q the reflectors' householder_product: gradients through "
              "that composition", save="inputs")


@public("torch.ormqr", "Tensor.ormqr")
def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True,
          transpose: bool = False) -> Tensor:
    a, tau, other = input, input2, input3
    ad, td, od = a._data, tau._data, other._data
    if ad.ndim < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if od.ndim < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    cond = -2 if left else -1
    if od.shape[cond] != ad.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{cond}] must be equal to "
                           f"input.shape[-2]")
    if td.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if min(od.shape[cond], ad.shape[-1]) != td.shape[-1]:
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to "
                           f"min(other.shape[{cond}], input.shape[-1])")
    if ad.ndim - td.ndim != 1:
        raise RuntimeError(f"torch.ormqr: Expected tau to have one dimension less than input, "
                           f"but got tau.ndim equal to {td.ndim} and input.ndim is equal to "
                           f"{ad.ndim}")
    if ad.ndim != od.ndim:
        raise RuntimeError(f"torch.ormqr: Expected other to have the same number of "
                           f"dimensions as input, but got other.ndim equal to {od.ndim} and "
                           f"input.ndim is equal to {ad.ndim}")
    if ad.ndim > 2:
        if td.shape[:-1] != ad.shape[:-2]:
            raise RuntimeError(f"torch.ormqr: Expected batch dimensions of tau to be equal to "
                               f"input.shape[:-2], but got {list(td.shape[:-1])}")
        if od.shape[:-2] != ad.shape[:-2]:
            raise RuntimeError(f"torch.ormqr: Expected batch dimensions of other to be equal "
                               f"to input.shape[:-2], but got {list(od.shape[:-2])}")
    for name, t in (("tau", tau), ("other", other)):
        if t._data.dtype != ad.dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {name} to have the same dtype, "
                               f"but input has dtype{_type_word(a.dtype)} and {name} has dtype "
                               f"{_type_word(t.dtype)}")
    if ad.dtype.kind != "f":
        raise NotImplementedError(f"\"ormqr_cpu\" not implemented for '{_type_word(a.dtype)}'")
    return run_op(ORMQR, (a, tau, other), (bool(left), bool(transpose)))


# ----------------------------------------------------------------- svd_lowrank, pca_lowrank


def _floating(A: Tensor):
    return A.dtype if A._data.dtype.kind == "f" else dtypes.float32


def _range_basis(A: Tensor, q: int, niter: int, M) -> Tensor:
    """An orthonormal basis of (about) A's range (Halko et al. 2009, algorithm 4.4): A
    times a Gaussian test matrix drawn from the generator as PyTorch draws it (one
    randn(n, q)), then `niter` power iterations, each step re-orthonormalized by QR."""
    matmul, qr = PUBLIC["torch.matmul"], PUBLIC["torch.linalg.qr"]

    def shifted(X, right, adjoint=False):
        # (A - M) times `right` without forming A - M, as PyTorch composes it
        out = matmul(A.mH if adjoint else A, right)
        return out if M is None else out - matmul(M.mH if adjoint else M, right)

    test = PUBLIC["torch.randn"](A.shape[-1], q, dtype=_floating(A))
    Q = qr(shifted(None, test)).Q
    for _ in range(niter):
        Q = qr(shifted(None, Q, adjoint=True)).Q
        Q = qr(shifted(None, Q)).Q
    return Q


def _lowrank_svd(A: Tensor, q: int, niter: int, M) -> tuple:
    """Algorithm 5.1 of Halko et al.: project onto the range basis, take the small SVD,
    lift U back (for a wide A, the same on its adjoint with U and V swapped)."""
    matmul = PUBLIC["torch.matmul"]
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.broadcast_to(A.size())
    wide = m < n
    if wide:
        A = A.mH
        M = None if M is None else M.mH
    Q = _range_basis(A, q, niter, M)
    B = matmul(Q.mH, A)
    if M is not None:
        B = B - matmul(Q.mH, M)
    U, S, Vh = PUBLIC["torch.linalg.svd"](B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    return (V, S, U) if wide else (U, S, V)


@public("torch.svd_lowrank")
def svd_lowrank(A: Tensor, q=6, niter=2, M=None) -> tuple:
    return _lowrank_svd(A, 6 if q is None else q, 2 if niter is None else niter, M)


@public("torch.pca_lowrank")
def pca_lowrank(A: Tensor, q=None, center: bool = True, niter: int = 2) -> tuple:
    m, n = A.shape[-2], A.shape[-1]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _lowrank_svd(A, q, niter, None)
    return _lowrank_svd(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)
