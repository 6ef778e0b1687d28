"""Cauchy, HalfCauchy, HalfNormal, Gumbel, Pareto, Weibull, Chi2, StudentT and Poisson, each
as PyTorch defines it.

Most are other families pushed through transforms (HalfNormal is |Normal|, Gumbel is
-log(-log(Uniform)), Pareto is exp(Exponential), Weibull a power of Exponential(1)), Chi2 is
a Gamma and StudentT a Normal over a Chi2, so they sample through the same calls PyTorch's
make (cauchy_, normal_, rand, exponential_, torch._standard_gamma, torch.poisson) and a
seeded sample is PyTorch's, and their gradients come from the ops they are written with."""

from __future__ import annotations

import math
from numbers import Number

import gradcli.torch as torch
import gradcli.torch.nn.functional as F

from . import constraints
from .distribution import _AT_LOC, _EMPTY, Distribution, ExponentialFamily
from .families import Exponential, Gamma, _batch, _ProbsOrLogits
from .simple import Normal, Uniform, _broadcast_all
from .transformed import TransformedDistribution
from .transforms import AbsTransform, AffineTransform, ExpTransform, PowerTransform

__all__ = ["Cauchy", "Chi2", "FisherSnedecor", "Gumbel", "HalfCauchy", "HalfNormal",
           "InverseGamma", "Kumaraswamy", "NegativeBinomial", "Pareto", "Poisson", "StudentT",
           "Weibull"]

EULER = 0.57721566490153286060


class Cauchy(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        self._params = {"loc": self.loc, "scale": self.scale}
        super().__init__(_batch(loc, scale) or self.loc.size(), validate_args=validate_args)

    @property
    def mean(self):
        return torch.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    mode = _AT_LOC

    @property
    def variance(self):
        return torch.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        eps = torch.empty(shape, dtype=self.loc.dtype).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return torch.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return torch.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class _Folded(TransformedDistribution):
    """|X| for a base X symmetric about zero with a `scale` (HalfNormal, HalfCauchy)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _unshown = ("scale",)

    def _fold(self, base, validate_args):
        self._params = {"scale": base.scale}
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return torch.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    def __init__(self, scale, validate_args=None):
        self._fold(Normal(0, scale, validate_args=False), validate_args)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    def __init__(self, scale, validate_args=None):
        self._fold(Cauchy(0, scale, validate_args=False), validate_args)

    @property
    def mean(self):
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = torch.as_tensor(value, dtype=self.base_dist.scale.dtype)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, log_prob, -math.inf)


class Gumbel(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        self._params = {"loc": self.loc, "scale": self.scale}
        finfo = torch.finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            base = Uniform(torch.full_like(self.loc, finfo.tiny),
                           torch.full_like(self.loc, 1 - finfo.eps), validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-torch.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * EULER

    mode = _AT_LOC

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + EULER)


class Pareto(TransformedDistribution):
    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = _broadcast_all(scale, alpha)
        self._params = {"alpha": self.alpha, "scale": self.scale}
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @property
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Weibull(TransformedDistribution):
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = _broadcast_all(scale, concentration)
        self._params = {"scale": self.scale, "concentration": self.concentration}
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(torch.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    @property
    def mean(self):
        return self.scale * torch.exp(torch.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        return (self.scale * ((self.concentration - 1) / self.concentration)
                ** self.concentration.reciprocal())

    @property
    def variance(self):
        return self.scale.pow(2) * (
            torch.exp(torch.lgamma(1 + 2 * self.concentration_reciprocal))
            - torch.exp(2 * torch.lgamma(1 + self.concentration_reciprocal)))

    def entropy(self):
        return (EULER * (1 - self.concentration_reciprocal)
                + torch.log(self.scale * self.concentration_reciprocal) + 1)


class Chi2(Gamma):
    """Gamma(df / 2, 1 / 2); PyTorch checks and names only `df` (so it prints as `Chi2()`)."""

    arg_constraints = {"df": constraints.positive}
    _unshown = ("df",)
    _expanded_too = ("concentration", "rate")

    def __init__(self, df, validate_args=None):
        concentration = 0.5 * df
        self.concentration, self.rate = _broadcast_all(concentration, 0.5)
        self._params = {"df": self.concentration * 2}
        Distribution.__init__(self, _batch(concentration, 0.5) or self.concentration.size(),
                              validate_args=validate_args)

    @property
    def df(self):
        return self.concentration * 2


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = _broadcast_all(df, loc, scale)
        self._params = {"df": self.df, "loc": self.loc, "scale": self.scale}
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    @property
    def mean(self):
        m = self.loc.clone(memory_format=torch.contiguous_format)
        m[self.df <= 1] = math.nan
        return m

    mode = _AT_LOC

    @property
    def variance(self):
        m = self.df.clone(memory_format=torch.contiguous_format)
        big = self.df > 2
        m[big] = self.scale[big].pow(2) * self.df[big] / (self.df[big] - 2)
        m[(self.df <= 2) & (self.df > 1)] = math.inf
        m[self.df <= 1] = math.nan
        return m

    def rsample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        x = torch.empty(shape, dtype=self.df.dtype).normal_()
        z = self._chi2.rsample(sample_shape)
        y = x * torch.rsqrt(z / self.df)
        return self.loc + self.scale * y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + torch.lgamma(0.5 * self.df) - torch.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * torch.log1p(y ** 2.0 / self.df) - z

    def entropy(self):
        lbeta = (torch.lgamma(0.5 * self.df) + math.lgamma(0.5)
                 - torch.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log()
                + 0.5 * (self.df + 1)
                * (torch.digamma(0.5 * (self.df + 1)) - torch.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)


class Poisson(ExponentialFamily):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _broadcast_all(rate)
        self._params = {"rate": self.rate}
        super().__init__(_batch(rate) or self.rate.size(), validate_args=validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = _broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (torch.log(self.rate),)

    def _log_normalizer(self, x):
        return torch.exp(x)


class InverseGamma(TransformedDistribution):
    """1 / Gamma(concentration, rate); PyTorch checks both parameters and prints neither."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _unshown = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        self._params = {"concentration": base.concentration, "rate": base.rate}
        neg_one = -torch.ones((), dtype=base.rate.dtype)
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        result = self.rate / (self.concentration - 1)
        return torch.where(self.concentration > 1, result, math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        result = self.rate.square() / ((self.concentration - 1).square()
                                       * (self.concentration - 2))
        return torch.where(self.concentration > 2, result, math.inf)

    def entropy(self):
        return (self.concentration + self.rate.log() + self.concentration.lgamma()
                - (1 + self.concentration) * self.concentration.digamma())


class FisherSnedecor(Distribution):
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = _broadcast_all(df1, df2)
        self._params = {"df1": self.df1, "df2": self.df2}
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(_batch(df1, df2) or self.df1.size(), validate_args=validate_args)

    @property
    def mean(self):
        df2 = self.df2.clone(memory_format=torch.contiguous_format)
        df2[df2 <= 2] = math.nan
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        mode[self.df1 <= 2] = math.nan
        return mode

    @property
    def variance(self):
        df2 = self.df2.clone(memory_format=torch.contiguous_format)
        df2[df2 <= 4] = math.nan
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = torch.finfo(x2.dtype).tiny
        x2.clamp_(min=tiny)
        y = x1 / x2
        y.clamp_(min=tiny)
        return y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * torch.log(value)
        t3 = (ct1 + ct2) * torch.log1p(ct3 * value)
        return t1 + t2 - t3


class NegativeBinomial(_ProbsOrLogits):
    """Failures before `total_count` successes; probs or logits (the other made on first
    read), sampled as PyTorch does: a Gamma rate, then a Poisson count."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = "probs" if probs is not None else "logits"
        count, param = _broadcast_all(total_count, probs if probs is not None else logits)
        self.total_count = count.type_as(param)
        self.__dict__[given] = param
        self._param = param
        self._params = {"total_count": self.total_count, given: param}
        super().__init__(param.size(), validate_args=validate_args)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return self.total_count * torch.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / torch.sigmoid(-self.logits)

    def sample(self, sample_shape=_EMPTY):
        with torch.no_grad():
            gamma = Gamma(concentration=self.total_count, rate=torch.exp(-self.logits),
                          validate_args=False)
            return torch.poisson(gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * F.logsigmoid(-self.logits)
                                 + value * F.logsigmoid(self.logits))
        log_normalization = (-torch.lgamma(self.total_count + value)
                             + torch.lgamma(1.0 + value) + torch.lgamma(self.total_count))
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization


def _kumaraswamy_moment(a, b, n):
    arg1 = 1 + n / a
    return b * torch.exp(torch.lgamma(arg1) + torch.lgamma(b) - torch.lgamma(arg1 + b))


class Kumaraswamy(TransformedDistribution):
    """(1 - U ** (1 / concentration0)) ** (1 / concentration1) for U uniform on [0, 1)."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = _broadcast_all(concentration1, concentration0)
        self._params = {"concentration1": self.concentration1,
                        "concentration0": self.concentration0}
        base = Uniform(torch.full_like(self.concentration0, 0),
                       torch.full_like(self.concentration0, 1), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    @property
    def mean(self):
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        log_mode = (self.concentration0.reciprocal() * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        log_mode[(self.concentration0 < 1) | (self.concentration1 < 1)] = math.nan
        return log_mode.exp()

    @property
    def variance(self):
        return (_kumaraswamy_moment(self.concentration1, self.concentration0, 2)
                - torch.pow(self.mean, 2))

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = torch.digamma(self.concentration0 + 1) + EULER
        return t0 + t1 * h0 - torch.log(self.concentration1) - torch.log(self.concentration0)


for _cls in (Cauchy, HalfCauchy, HalfNormal, Gumbel, Pareto, Weibull, Chi2, StudentT, Poisson,
             InverseGamma, FisherSnedecor, NegativeBinomial, Kumaraswamy):
    _cls.__module__ = "torch.distributions." + {
        "HalfCauchy": "half_cauchy", "HalfNormal": "half_normal", "InverseGamma": "inverse_gamma",
        "FisherSnedecor": "fishersnedecor", "NegativeBinomial": "negative_binomial"}.get(
        _cls.__name__, _cls.__name__[0].lower() + _cls.__name__[1:])
del _cls
