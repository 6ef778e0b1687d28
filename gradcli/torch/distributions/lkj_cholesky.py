"""LKJCholesky: Cholesky factors L of correlation matrices whose L L^T has density
proportional to det^(concentration - 1); sampled by the onion method with the same Beta,
randn and norm calls as PyTorch, so seeded samples are PyTorch's."""

from __future__ import annotations

import math

import gradcli.torch as torch

from . import constraints
from .distribution import _EMPTY, Distribution
from .families import Beta
from .simple import _broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = _broadcast_all(concentration)
        self._params = {"concentration": self.concentration}
        # the Beta of each row's squared length (the onion method's radii), vectorized
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = torch.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = torch.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(self.concentration.size(), torch.Size((dim, dim)), validate_args)

    def sample(self, sample_shape=_EMPTY):
        """Each row: a direction uniform on the sphere of the entries left of the diagonal,
        scaled by the root of its Beta draw; the diagonal entry makes the row unit-length."""
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = torch.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        u_hypersphere[..., 0, :].fill_(0.0)  # (the first row divided 0 by 0)
        w = torch.sqrt(y) * u_hypersphere
        eps = torch.finfo(w.dtype).tiny
        diag_elems = torch.clamp(1 - torch.sum(w ** 2, dim=-1), min=eps).sqrt()
        w += torch.diag_embed(diag_elems)
        return w

    def log_prob(self, value):
        """prod_i L_ii^(2 (concentration - 1) + D - i) (the density times the Jacobian of
        L -> L L^T), normalized as in Lewandowski, Kurowicka and Joe (2009)."""
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = torch.arange(2, self.dim + 1)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = torch.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = torch.lgamma(alpha) * dm1
        numerator = torch.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term


LKJCholesky.__module__ = "torch.distributions.lkj_cholesky"
