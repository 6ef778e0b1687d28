"""MultivariateNormal: a Gaussian over vectors, given by its covariance, precision or
lower-Cholesky scale; samples are loc + L eps with eps drawn as PyTorch draws it."""

from __future__ import annotations

import math

import gradcli.torch as torch

from . import constraints
from .distribution import _AT_LOC, _EMPTY, Distribution

__all__ = ["MultivariateNormal"]


class MultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(name, m) for name, m in (("scale_tril", scale_tril),
                                           ("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix))
                 if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril "
                             "may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading "
                             "batch dimensions")
        batch = torch.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        expanded = matrix.expand(tuple(batch) + (-1, -1))
        setattr(self, name, expanded)
        self.loc = loc.expand(tuple(batch) + (-1,))
        self._params = {"loc": self.loc, name: expanded}
        super().__init__(batch, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._scale = matrix
        elif name == "covariance_matrix":
            self._scale = torch.linalg.cholesky(matrix)
        else:  # L of the covariance from the precision P: flip, factor, invert, flip back
            flipped = torch.linalg.cholesky(torch.flip(matrix, (-2, -1)))
            inverse_t = torch.linalg.solve_triangular(
                torch.transpose(torch.flip(flipped, (-2, -1)), -2, -1),
                torch.eye(matrix.shape[-1], dtype=matrix.dtype), upper=False)
            self._scale = inverse_t

    def __getattr__(self, name):
        scale = self.__dict__.get("_scale")
        if scale is None or name not in ("scale_tril", "covariance_matrix", "precision_matrix"):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        shape = tuple(self._batch_shape) + tuple(self._event_shape) * 2
        if name == "scale_tril":
            value = scale.expand(shape)
        elif name == "covariance_matrix":
            value = torch.matmul(scale, scale.mT).expand(shape)
        else:
            value = torch.cholesky_inverse(scale).expand(shape)
        self.__dict__[name] = value
        self._params[name] = value  # (shown by repr from now on, as PyTorch's lazy values)
        return value

    mean = mode = _AT_LOC

    @property
    def variance(self):
        return self._scale.pow(2).sum(-1).expand(tuple(self._batch_shape)
                                                  + tuple(self._event_shape))

    def rsample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        eps = torch.empty(shape, dtype=self.loc.dtype).normal_()
        return self.loc + torch.matmul(self._scale, eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._scale.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        n = self._event_shape[0]
        shape = diff.shape[:-1]
        scale = self._scale.expand(tuple(shape) + (n, n))
        solved = torch.linalg.solve_triangular(scale, diff.unsqueeze(-1), upper=False)
        mahalanobis = solved.squeeze(-1).pow(2).sum(-1)
        return -0.5 * (n * math.log(2 * math.pi) + mahalanobis) - self._half_log_det()

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)


MultivariateNormal.__module__ = "torch.distributions.multivariate_normal"
