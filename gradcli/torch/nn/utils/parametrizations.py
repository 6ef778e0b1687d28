"""torch.nn.utils.parametrizations: orthogonal, spectral_norm and weight_norm as
parametrizations (see parametrize.py), with PyTorch's modules, buffers and random draws.

The QR factorisations the orthogonal parametrization starts from are computed with numpy
(the R factor's diagonal made positive, which makes Q unique), not with LAPACK's geqrf as
PyTorch exposes it: the values agree to rounding.
"""

from __future__ import annotations

from enum import Enum, auto

import numpy as np

from gradcli.engine.grad_mode import no_grad
from gradcli.engine.tensor import Tensor, make

from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _torch():
    import gradcli.torch as torch

    return torch


def _functional():
    import gradcli.torch.nn.functional as F

    return F


def _as_tensor(array: np.ndarray, like: Tensor) -> Tensor:
    return make(np.ascontiguousarray(array, dtype=like._data.dtype))


def _is_orthogonal(Q: Tensor) -> bool:
    torch = _torch()
    n, k = Q.size(-2), Q.size(-1)
    eye = torch.eye(k, dtype=Q.dtype)
    eps = 10.0 * n * torch.finfo(Q.dtype).eps
    return bool(torch.allclose(Q.mH @ Q, eye, atol=eps))


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of A's QR factorisation whose R has a non-negative diagonal (batched)."""
    a = A._data.astype(np.float64)
    q, r = np.linalg.qr(a)
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    signs[signs == 0] = 1.0  # (sgn(0) is 0 in PyTorch: a rank-deficient A keeps its column)
    return _as_tensor(q * signs[..., None, :], A)


def _geqrf(A: Tensor):
    """LAPACK geqrf's packed result (R above the diagonal, the reflectors below) and tau."""
    a = A._data.astype(np.float64)
    batch = a.shape[:-2]
    flat = a.reshape((-1,) + a.shape[-2:])
    packed = np.empty_like(flat)
    taus = np.empty((flat.shape[0], min(a.shape[-2:])))
    for i, m in enumerate(flat):
        h, tau = np.linalg.qr(m, mode="raw")
        packed[i] = h.T
        taus[i] = tau
    return _as_tensor(packed.reshape(a.shape), A), _as_tensor(taus.reshape(batch + (-1,)), A)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """Maps a matrix to an orthogonal one (through its lower triangle); with
    use_trivialization the result is multiplied by a fixed orthogonal `base`."""

    __module__ = "torch.nn.utils.parametrizations"

    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization=True) -> None:
        super().__init__()
        if weight.dtype.is_complex and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        torch = _torch()
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = torch.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = torch.matrix_exp(A)
            else:
                eye = torch.eye(n, dtype=A.dtype)
                Q = torch.linalg.solve(torch.add(eye, A, alpha=-0.5),
                                       torch.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = torch.linalg.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        torch = _torch()
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        given = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False.")
            A, tau = _geqrf(Q)
            diag = A.diagonal(dim1=-2, dim2=-1)
            diag.sign_()
            diag[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            extra = torch.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(torch.cat([Q, extra], dim=-1))
        self.base = Q
        neg_eye = torch.zeros_like(given)
        neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_eye


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain ``module.<name>`` (a matrix or a batch of them) to be orthogonal."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.dtype.is_complex else "householder"
    kind = getattr(_OrthMaps, orthogonal_map, None)
    if kind is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    step = _Orthogonal(weight, kind, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, step, unsafe=True)
    return module


class _WeightNorm(Module):
    """(g, v) -> g * v / |v| (the norm over every dim but `dim`; dim=None: all of them)."""

    __module__ = "torch.nn.utils.parametrizations"

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _torch()._weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _torch().norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0):
    """Split ``module.<name>`` into a magnitude (original0) and a direction (original1)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    """W -> W / sigma(W), sigma estimated by power iteration on buffers _u and _v (one
    step per forward in training mode)."""

    __module__ = "torch.nn.utils.parametrizations"

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            F = _functional()
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        torch, F = _torch(), _functional()
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(torch.mv(weight_mat, self._v), dim=0, eps=self.eps,
                                      out=self._u)
                self._v = F.normalize(torch.mv(weight_mat.H, self._u), dim=0, eps=self.eps,
                                      out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        torch = _torch()
        if weight.ndim == 1:
            return _functional().normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone(memory_format=torch.contiguous_format)
        v = self._v.clone(memory_format=torch.contiguous_format)
        sigma = torch.vdot(u, torch.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def _transposed_conv_types() -> tuple:
    nn = _torch().nn
    return tuple(t for t in (getattr(nn, n, None) for n in
                             ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"))
                 if isinstance(t, type))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm (estimated by power iteration)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, _transposed_conv_types()) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


