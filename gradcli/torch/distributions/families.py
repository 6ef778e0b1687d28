"""Exponential, Laplace, Geometric, OneHotCategorical, Gamma, Dirichlet, Beta and Binomial,
each as PyTorch defines it.

Sampling draws as PyTorch's CPU kernels draw: Exponential through exponential_, Laplace and
Geometric through uniform_, OneHotCategorical through Categorical's multinomial, and
Gamma/Dirichlet/Beta through the Marsaglia-Tsang rejection sampler PyTorch's serial gamma
kernel runs (torch._standard_gamma; gradcli.engine.gamma_binomial), so seeded samples
are PyTorch's, as are Binomial's (torch.binomial's inversion and BTRS samplers, replayed the
same way). One thing is refused with a message: the reparameterized gradient of the
Dirichlet sampler with respect to a concentration that requires grad (Beta and Dirichlet
rsample; PyTorch differentiates it with a table-driven approximation not reproduced here)."""

from __future__ import annotations

from numbers import Number

import numpy as np

import gradcli.torch as torch
import gradcli.torch.nn.functional as F

from . import constraints
from .distribution import _AT_LOC, _EMPTY, Distribution, ExponentialFamily
from .simple import Categorical, _broadcast_all, _logits_to_probs, _one_of, _probs_to_logits

__all__ = ["Beta", "Binomial", "Dirichlet", "Exponential", "Gamma", "Geometric", "Laplace",
           "OneHotCategorical", "OneHotCategoricalStraightThrough"]


def _batch(*params) -> tuple:
    return _EMPTY if all(isinstance(p, Number) for p in params) else None


class Exponential(ExponentialFamily):
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _broadcast_all(rate)
        self._params = {"rate": self.rate}
        super().__init__(_batch(rate) or self.rate.size(), validate_args=validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return torch.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        return torch.empty(shape, dtype=self.rate.dtype).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - torch.exp(-self.rate * value)

    def icdf(self, value):
        return -torch.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - torch.log(self.rate)

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -torch.log(-x)


class Laplace(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        self._params = {"loc": self.loc, "scale": self.scale}
        super().__init__(_batch(loc, scale) or self.loc.size(), validate_args=validate_args)

    mean = mode = _AT_LOC

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        eps = torch.finfo(self.loc.dtype).eps
        u = torch.empty(shape, dtype=self.loc.dtype).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * torch.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -torch.log(2 * self.scale) - torch.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * torch.expm1(
            -(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * torch.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + torch.log(2 * self.scale)


class _ProbsOrLogits(Distribution):
    """probs from logits and logits from probs, each made on first read and kept."""

    def __getattr__(self, name):
        if name == "probs" and "logits" in self.__dict__:
            value = _logits_to_probs(self.logits, is_binary=True)
        elif name == "logits" and "probs" in self.__dict__:
            value = _probs_to_logits(self.probs, is_binary=True)
        else:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        self.__dict__[name] = value
        self._params[name] = value
        return value


class Geometric(_ProbsOrLogits):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        given = probs if probs is not None else logits
        (value,) = _broadcast_all(given)
        if probs is not None:
            self.probs = value
            self._params = {"probs": value}
        else:
            self.logits = value
            self._params = {"logits": value}
        super().__init__(_batch(given) or value.size(), validate_args=validate_args)
        if self._validate_args and probs is not None:
            valid = self.probs > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(self.probs).__name__} of shape "
                    f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{self.probs.data[~valid]}")

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return torch.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        tiny = torch.finfo(self.probs.dtype).tiny
        with torch.no_grad():
            u = torch.empty(shape, dtype=self.probs.dtype).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = _broadcast_all(value, self.probs)
        probs = probs.clone(memory_format=torch.contiguous_format)
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                  reduction="none") / self.probs


class Binomial(_ProbsOrLogits):
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = _broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
            self._params = {"total_count": self.total_count, "probs": self.probs}
        else:
            self.total_count, self.logits = _broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
            self._params = {"total_count": self.total_count, "logits": self.logits}
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    @property
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=_EMPTY):
        from gradcli.engine.gamma_binomial import binomial_variates

        shape = self._extended_shape(sample_shape)
        counts = self.total_count.detach().expand(shape).contiguous().reshape(-1)
        probs = self.probs.detach().expand(shape).contiguous().reshape(-1)
        single = self.probs.dtype == torch.float32
        draws = binomial_variates(counts.tolist(), probs.tolist(), single)
        return torch.tensor(draws.reshape(tuple(shape)), dtype=self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = torch.lgamma(self.total_count + 1)
        log_factorial_k = torch.lgamma(value + 1)
        log_factorial_nmk = torch.lgamma(self.total_count - value + 1)
        logits = self.logits
        clamped = (logits.clamp(min=0) + logits - logits.clamp(max=0)) / 2
        normalize_term = (self.total_count * clamped
                          + self.total_count * torch.log1p(torch.exp(-torch.abs(logits)))
                          - log_factorial_n)
        return value * logits - log_factorial_k - log_factorial_nmk - normalize_term

    def enumerate_support(self, expand=True):
        total = int(self.total_count.max())
        if not self.total_count.min() == total:
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`.")
        values = torch.arange(1 + total, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    def entropy(self):
        total = int(self.total_count.max())
        if not self.total_count.min() == total:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(torch.exp(log_prob) * log_prob).sum(0)


class OneHotCategorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self._params = {}
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return F.one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=_EMPTY):
        probs = self._categorical.probs
        indices = self._categorical.sample(torch.Size(sample_shape))
        return F.one_hot(indices, self._categorical._num_events).to(probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = torch.eye(n, dtype=self.probs.dtype)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values


# ---------------------------------------------------------------- the gamma sampler
def _refuse_concentration_grad(concentration) -> None:
    if concentration.requires_grad and torch.is_grad_enabled():
        raise RuntimeError("the reparameterized gradient of torch._sample_dirichlet (rsample of "
                           "Beta or Dirichlet with a concentration that requires grad) is not "
                           "supported by gradcli")


def _sample_dirichlet(alpha):
    """torch._sample_dirichlet: double-precision gammas normalised over the last dim."""
    from gradcli.engine.gamma_binomial import gamma_variates

    flat = alpha.detach().contiguous().double().reshape(-1).tolist()
    gam = np.fmax(gamma_variates(flat, False), np.finfo(np.float64).tiny)  # (nan: tiny)
    gam = gam.reshape(tuple(alpha.shape))
    with np.errstate(all="ignore"):  # (inf / inf: nan, then tiny, silently as in PyTorch)
        ratio = gam / gam.sum(-1, keepdims=True)
    npdt = np.float32 if alpha.dtype == torch.float32 else np.float64
    info = np.finfo(npdt)
    out = np.fmin(np.fmax(ratio.astype(npdt), info.tiny), np.nextafter(npdt(1.0), npdt(0.0)))
    return torch.tensor(out, dtype=alpha.dtype)


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = _broadcast_all(concentration, rate)
        self._params = {"concentration": self.concentration, "rate": self.rate}
        super().__init__(_batch(concentration, rate) or self.concentration.size(),
                         validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        value = torch._standard_gamma(self.concentration.expand(shape)) / \
            self.rate.expand(shape)
        value.detach().clamp_(min=torch.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        value = torch.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration, self.rate)
                + torch.xlogy(self.concentration - 1, value)
                - self.rate * value - torch.lgamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return torch.special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        return (self.concentration - torch.log(self.rate) + torch.lgamma(self.concentration)
                + (1.0 - self.concentration) * torch.digamma(self.concentration))

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return torch.lgamma(x + 1) + (x + 1) * torch.log(-y.reciprocal())


class Dirichlet(ExponentialFamily):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        self._params = {"concentration": concentration}
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        _refuse_concentration_grad(self.concentration)
        return _sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration - 1.0, value).sum(-1)
                + torch.lgamma(self.concentration.sum(-1))
                - torch.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (torch.lgamma(self.concentration).sum(-1) - torch.lgamma(a0)
                - (k - a0) * torch.digamma(a0)
                - ((self.concentration - 1.0) * torch.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - torch.lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, Number) and isinstance(concentration0, Number):
            both = torch.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = _broadcast_all(concentration1, concentration0)
            both = torch.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        self._params = {}
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(torch.stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return torch.lgamma(x) + torch.lgamma(y) - torch.lgamma(x + y)


_MODULES = {"Exponential": "exponential", "Laplace": "laplace", "Geometric": "geometric",
            "Binomial": "binomial", "OneHotCategorical": "one_hot_categorical",
            "Gamma": "gamma", "Dirichlet": "dirichlet", "Beta": "beta"}
for _name, _mod in _MODULES.items():
    globals()[_name].__module__ = "torch.distributions." + _mod
del _name, _mod


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample passes gradients straight through: the one-hot sample
    plus probs - probs.detach() (zero in value, the identity in gradient)."""

    has_rsample = True

    def rsample(self, sample_shape=_EMPTY):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


OneHotCategoricalStraightThrough.__module__ = "torch.distributions.one_hot_categorical"
