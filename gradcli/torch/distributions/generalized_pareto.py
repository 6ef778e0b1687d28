"""GeneralizedPareto (loc, scale, concentration): PyTorch's formulas, with the
concentration == 0 limit (the exponential) taken where torch.isclose says so, samples by
inverse cdf on the same torch.rand draw, and the support an interval that depends on the
parameters."""

from __future__ import annotations

import math
from numbers import Number

import gradcli.torch as torch

from . import constraints
from .distribution import _AT_LOC, _EMPTY, Distribution
from .simple import _broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = _broadcast_all(loc, scale, concentration)
        self._params = {"loc": self.loc, "scale": self.scale,
                        "concentration": self.concentration}
        scalar = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(_EMPTY if scalar else self.loc.size(), validate_args=validate_args)

    def _safe_concentration(self):
        eq_zero = torch.isclose(self.concentration, torch.tensor(0.0))
        return eq_zero, torch.where(eq_zero, torch.ones_like(self.concentration),
                                    self.concentration)

    def rsample(self, sample_shape=_EMPTY):
        u = torch.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe = self._safe_concentration()
        y = 1 / safe + torch.ones_like(z)
        nonzero = torch.where(y == 0, y, y * torch.log1p(safe * z))
        return -self.scale.log() - torch.where(eq_zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe = self._safe_concentration()
        return torch.where(eq_zero, -z, -torch.log1p(safe * z) / safe)

    def log_cdf(self, value):
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        conc = self.concentration
        eq_zero = torch.isclose(conc, torch.zeros_like(conc))
        safe = torch.where(eq_zero, torch.ones_like(conc), conc)
        logu = torch.log1p(-value)
        nonzero = self.loc + self.scale / safe * torch.expm1(-safe * logu)
        return torch.where(eq_zero, self.loc - self.scale * logu, nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        safe = torch.where(valid, self.concentration, 0.5)
        return torch.where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe = torch.where(valid, self.concentration, 0.25)
        return torch.where(valid, self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def entropy(self):
        return torch.broadcast_to(torch.log(self.scale) + self.concentration + 1,
                                  self._batch_shape)

    mode = _AT_LOC

    @property
    def support(self):
        upper = torch.where(self.concentration < 0,
                            self.loc - self.scale / self.concentration, math.inf)
        return constraints.interval(self.loc, upper)


GeneralizedPareto.__module__ = "torch.distributions.generalized_pareto"
