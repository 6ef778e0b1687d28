"""Normal, Bernoulli, Categorical and Uniform, each as PyTorch defines it."""

from __future__ import annotations

import math
from numbers import Number

import gradcli.torch as torch
import gradcli.torch.nn.functional as F

from . import constraints
from .distribution import _AT_LOC, _EMPTY, Distribution, ExponentialFamily

__all__ = ["Bernoulli", "Categorical", "Normal", "Uniform"]


def _broadcast_all(*values):
    """Python numbers become tensors (the first tensor's dtype, else the default dtype),
    then all are broadcast together (PyTorch's broadcast_all)."""
    for v in values:
        if not isinstance(v, (torch.Tensor, Number)):
            raise ValueError("Input arguments must all be instances of Number, torch.Tensor or "
                             "objects implementing __torch_function__.")
    if all(isinstance(v, torch.Tensor) for v in values):
        return torch.broadcast_tensors(*values)
    dtype = next((v.dtype for v in values if isinstance(v, torch.Tensor)),
                 torch.get_default_dtype())
    return torch.broadcast_tensors(*[v if isinstance(v, torch.Tensor)
                                     else torch.tensor(v, dtype=dtype) for v in values])


def _clamp_probs(probs):
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def _probs_to_logits(probs, is_binary=False):
    clamped = _clamp_probs(probs)
    if is_binary:
        return torch.log(clamped) - torch.log1p(-clamped)
    return torch.log(clamped)


def _logits_to_probs(logits, is_binary=False):
    return torch.sigmoid(logits) if is_binary else F.softmax(logits, dim=-1)


def _one_of(probs, logits) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class Normal(ExponentialFamily):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        self._params = {"loc": self.loc, "scale": self.scale}
        batch = _EMPTY if isinstance(loc, Number) and isinstance(scale, Number) \
            else self.loc.size()
        super().__init__(batch, validate_args=validate_args)

    mean = mode = _AT_LOC

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        eps = torch.empty(shape, dtype=self.loc.dtype).normal_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = math.log(self.scale) if isinstance(self.scale, Number) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + torch.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * torch.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + torch.log(self.scale)

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * torch.log(-math.pi / y)


class Bernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = _broadcast_all(probs)
            self._params = {"probs": self.probs}
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = _broadcast_all(logits)
            self._params = {"logits": self.logits}
        param = self.probs if probs is not None else self.logits
        super().__init__(_EMPTY if is_scalar else param.size(), validate_args=validate_args)

    def __getattr__(self, name):
        # probs from logits and logits from probs, made on first read and kept (lazy_property)
        if name == "probs" and "logits" in self.__dict__:
            value = _logits_to_probs(self.logits, is_binary=True)
        elif name == "logits" and "probs" in self.__dict__:
            value = _probs_to_logits(self.probs, is_binary=True)
        else:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        self.__dict__[name] = value
        self._params[name] = value
        return value

    @property
    def param_shape(self):
        return self._params.get("probs", self._params.get("logits")).size()

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = float("nan")
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = _broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (torch.logit(self.probs),)

    def _log_normalizer(self, x):
        return torch.log1p(torch.exp(x))


class Categorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self._params = {"probs": self.probs}
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            self._params = {"logits": self.logits}
        param = self.probs if probs is not None else self.logits
        self._num_events = param.size()[-1]
        batch = param.size()[:-1] if param.ndimension() > 1 else _EMPTY
        super().__init__(batch, validate_args=validate_args)

    __getattr__ = None  # (set below: the lazy probs/logits pair, as Bernoulli's)

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self):
        return self._params.get("probs", self._params.get("logits")).size()

    @property
    def mean(self):
        return torch.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return torch.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape=_EMPTY):
        if not isinstance(sample_shape, torch.Size):
            sample_shape = torch.Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        with torch.no_grad():
            samples_2d = torch.multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = torch.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = torch.finfo(self.logits.dtype).min
        logits = torch.clamp(self.logits, min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = torch.arange(self._num_events, dtype=torch.long)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


def _categorical_lazy(self, name):
    if name == "probs" and "logits" in self.__dict__:
        value = _logits_to_probs(self.logits)
    elif name == "logits" and "probs" in self.__dict__:
        value = _probs_to_logits(self.probs)
    else:
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
    self.__dict__[name] = value
    self._params[name] = value
    return value


Categorical.__getattr__ = _categorical_lazy


class Uniform(Distribution):
    arg_constraints = {"low": constraints.real, "high": constraints.real}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _broadcast_all(low, high)
        self._params = {"low": self.low, "high": self.high}
        batch = _EMPTY if isinstance(low, Number) and isinstance(high, Number) \
            else self.low.size()
        super().__init__(batch, validate_args=validate_args)
        if self._validate_args and not bool(torch.all(self.low < self.high)):
            raise ValueError(
                f"Expected parameter low ({type(self.low).__name__} of shape "
                f"{tuple(self.low.shape)}) of distribution {self!r} to satisfy the constraint "
                f"LessThan(upper_bound={self.high}), but found invalid values:\n{self.low}")

    @property
    def support(self):
        return constraints.half_open_interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return float("nan") * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        rand = torch.rand(shape, dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return torch.log(lb.mul(ub)) - torch.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return torch.log(self.high - self.low)


for _cls in (Normal, Bernoulli, Categorical, Uniform):
    _cls.__module__ = "torch.distributions." + _cls.__name__.lower()
del _cls
