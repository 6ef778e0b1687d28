"""LowRankMultivariateNormal: covariance W W^T + diag(D), with log_prob and entropy through
the m x m capacitance matrix I + W^T D^-1 W (Woodbury and the matrix determinant lemma),
as PyTorch computes them, and samples drawn as W eps_W + sqrt(D) eps_D in PyTorch's order."""

from __future__ import annotations

import math

import gradcli.torch as torch

from . import constraints
from .distribution import _AT_LOC, _EMPTY, Distribution

__all__ = ["LowRankMultivariateNormal"]


def _mv(matrix, vector):
    return torch.matmul(matrix, vector.unsqueeze(-1)).squeeze(-1)


def _mahalanobis(lower, x):
    """|L^-1 x|^2 for a batch of lower-triangular L broadcast against x."""
    n = lower.shape[-1]
    shape = torch.broadcast_shapes(lower.shape[:-2], x.shape[:-1])
    solved = torch.linalg.solve_triangular(lower.expand(tuple(shape) + (n, n)),
                                           x.expand(tuple(shape) + (n,)).unsqueeze(-1),
                                           upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _capacitance_tril(W, D):
    m = W.size(-1)
    K = torch.matmul(W.mT / D.unsqueeze(-2), W) + torch.eye(m, dtype=W.dtype)
    return torch.linalg.cholesky(K)


def _lowrank_logdet(D, capacitance):
    return 2 * capacitance.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


class LowRankMultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, diag_ = torch.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from None
        self.loc = loc_[..., 0]
        self.cov_diag = diag_[..., 0]
        self._params = {"loc": self.loc, "cov_factor": self.cov_factor,
                        "cov_diag": self.cov_diag}
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    mean = mode = _AT_LOC

    def _square(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag) \
            .expand(self._batch_shape + self._event_shape)

    @property
    def scale_tril(self):
        n = self._event_shape[0]
        root = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / root
        K = torch.matmul(scaled, scaled.mT) + torch.eye(n, dtype=scaled.dtype)
        return (root * torch.linalg.cholesky(K)).expand(self._square())

    @property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        return (torch.matmul(W, W.mT) + torch.diag_embed(self._unbroadcasted_cov_diag)) \
            .expand(self._square())

    @property
    def precision_matrix(self):
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = torch.linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        return (torch.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - A.mT @ A) \
            .expand(self._square())

    def rsample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        w_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_w = torch.empty(w_shape, dtype=self.loc.dtype).normal_()
        eps_d = torch.empty(shape, dtype=self.loc.dtype).normal_()
        return self.loc + _mv(self._unbroadcasted_cov_factor, eps_w) \
            + self._unbroadcasted_cov_diag.sqrt() * eps_d

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.mT / D.unsqueeze(-2)
        M = (diff.pow(2) / D).sum(-1) - _mahalanobis(self._capacitance_tril, _mv(Wt_Dinv, diff))
        log_det = _lowrank_logdet(D, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self):
        log_det = _lowrank_logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)


LowRankMultivariateNormal.__module__ = "torch.distributions.lowrank_multivariate_normal"
