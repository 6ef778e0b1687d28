"""ContinuousBernoulli (an ExponentialFamily), with PyTorch's Taylor expansions
near probs = 0.5 where the closed forms lose precision."""

from __future__ import annotations

import math
from numbers import Number

import gradcli.torch as torch
import gradcli.torch.nn.functional as F

from . import constraints
from .distribution import _EMPTY, ExponentialFamily
from .simple import _broadcast_all, _clamp_probs, _logits_to_probs, _probs_to_logits

__all__ = ["ContinuousBernoulli", "ExponentialFamily"]


class ContinuousBernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (probs,) = _broadcast_all(probs)
            if validate_args is not None and \
                    not bool(self.arg_constraints["probs"].check(probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = _clamp_probs(probs)
            self._params = {"probs": self.probs}
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = _broadcast_all(logits)
            self._params = {"logits": self.logits}
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(_EMPTY if is_scalar else self._param.size(),
                         validate_args=validate_args)

    def __getattr__(self, name):
        # the other parameterization, made on first read and kept (lazy_property)
        if name == "probs" and "logits" in self.__dict__:
            value = _clamp_probs(_logits_to_probs(self.logits, is_binary=True))
        elif name == "logits" and "probs" in self.__dict__:
            value = _probs_to_logits(self.probs, is_binary=True)
        else:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        self.__dict__[name] = value
        self._params[name] = value
        return value

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._param = new.__dict__.get("logits", new.__dict__.get("probs"))
        return new

    @property
    def param_shape(self):
        return self._param.size()

    def _outside_unstable_region(self):
        return torch.max(torch.le(self.probs, self._lims[0]), torch.gt(self.probs, self._lims[1]))

    def _cut_probs(self):
        return torch.where(self._outside_unstable_region(), self.probs,
                           self._lims[0] * torch.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        cut = self._cut_probs()
        below = torch.where(torch.le(cut, 0.5), cut, torch.zeros_like(cut))
        above = torch.where(torch.ge(cut, 0.5), cut, torch.ones_like(cut))
        log_norm = torch.log(torch.abs(torch.log1p(-cut) - torch.log(cut))) - torch.where(
            torch.le(cut, 0.5), torch.log1p(-2.0 * below), torch.log(2.0 * above - 1.0))
        x = torch.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return torch.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (torch.log1p(-cut) - torch.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * torch.pow(x, 2)) * x
        return torch.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return torch.sqrt(self.variance)

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / torch.pow(1.0 - 2.0 * cut, 2) \
            + 1.0 / torch.pow(torch.log1p(-cut) - torch.log(cut), 2)
        x = torch.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return torch.where(self._outside_unstable_region(), variances, taylor)

    def sample(self, sample_shape=_EMPTY):
        u = torch.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        with torch.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=_EMPTY):
        u = torch.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = _broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") \
            + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (torch.pow(cut, value) * torch.pow(1.0 - cut, 1.0 - value) + cut - 1.0) \
            / (2.0 * cut - 1.0)
        unbounded = torch.where(self._outside_unstable_region(), cdfs, value)
        return torch.where(torch.le(value, 0.0), torch.zeros_like(value),
                           torch.where(torch.ge(value, 1.0), torch.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        return torch.where(
            self._outside_unstable_region(),
            (torch.log1p(-cut + value * (2.0 * cut - 1.0)) - torch.log1p(-cut))
            / (torch.log(cut) - torch.log1p(-cut)),
            value)

    def entropy(self):
        log_p0 = torch.log1p(-self.probs)
        log_p1 = torch.log(self.probs)
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        unstable_out = torch.max(torch.le(x, self._lims[0] - 0.5),
                                 torch.gt(x, self._lims[1] - 0.5))
        cut = torch.where(unstable_out, x, (self._lims[0] - 0.5) * torch.ones_like(x))
        log_norm = torch.log(torch.abs(torch.special.expm1(cut))) - torch.log(torch.abs(cut))
        taylor = 0.5 * x + torch.pow(x, 2) / 24.0 - torch.pow(x, 4) / 2880.0
        return torch.where(unstable_out, log_norm, taylor)


ContinuousBernoulli.__module__ = "torch.distributions.continuous_bernoulli"
