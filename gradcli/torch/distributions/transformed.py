"""Independent, TransformedDistribution and LogNormal (a Normal pushed through exp), each as
PyTorch defines it: samples are the base distribution's, transformed; log_prob subtracts
the transforms' log-Jacobians, summed over the event dims."""

from __future__ import annotations

import gradcli.torch as torch

from . import constraints
from .distribution import _EMPTY, Distribution
from .simple import Normal
from .transforms import ComposeTransform, ExpTransform, StickBreakingTransform, Transform

__all__ = ["Independent", "LogNormal", "TransformedDistribution"]


def _sum_rightmost(value, dim: int):
    if dim == 0:
        return value
    return value.reshape(value.shape[:value.dim() - dim] + (-1,)).sum(-1)


class Independent(Distribution):
    """The base distribution with its `reinterpreted_batch_ndims` right-most batch dims
    read as event dims (log_prob sums over them)."""

    arg_constraints: dict = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims: int, validate_args=None):
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self._params = {}
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=_EMPTY):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=_EMPTY):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"


class TransformedDistribution(Distribution):
    """A base distribution pushed through a list of transforms."""

    arg_constraints: dict = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError("base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {torch.Size(base_shape)}.")
        # a transform's tensor parameters broadcast the base (Normal(0., 1.) moved by a
        # vector loc is a batch of normals): the base is expanded to that batch
        expanded = tuple(transform.inverse_shape(transform.forward_shape(torch.Size(base_shape))))
        if expanded != base_shape:
            base_distribution = base_distribution.expand(expanded[:len(expanded) - base_event_dim])
            base_shape = expanded
        reinterpreted = transform.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        event_dim = max(transform.codomain.event_dim,
                        base_event_dim + transform.codomain.event_dim
                        - transform.domain.event_dim)
        shape = tuple(transform.forward_shape(torch.Size(base_shape)))
        cut = len(shape) - event_dim
        if not hasattr(self, "_params"):
            self._params = {}
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def _inner_batch(self, name, inner, batch_shape):
        if name != "base_dist":
            return super()._inner_batch(name, inner, batch_shape)
        shape = batch_shape + self.event_shape
        for transform in reversed(self.transforms):
            shape = transform.inverse_shape(shape)
        return shape[:len(shape) - len(inner.event_shape)]

    @property
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        result = self.transforms[-1].codomain
        if len(self.event_shape) > result.event_dim:
            result = constraints.independent(result, len(self.event_shape) - result.event_dim)
        return result

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=_EMPTY):
        with torch.no_grad():
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape=_EMPTY):
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(transform.log_abs_det_jacobian(x, y),
                                                 event_dim - transform.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y),
                                         event_dim - len(self.base_dist.event_shape))

    def cdf(self, value):
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def _monotonize_cdf(self, value):
        """Flip a cdf taken through decreasing transforms (Gumbel's negative scales), the
        sign being a tensor when a transform's scale or exponent is one."""
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def icdf(self, value):
        value = self._monotonize_cdf(value)
        value = self.base_dist.icdf(value)
        for transform in self.transforms:
            value = transform(value)
        return value


class LogNormal(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self._params = {}
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(),
                         validate_args=validate_args)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc


class LogisticNormal(TransformedDistribution):
    """A normal vector pushed onto the simplex by stick breaking (one more entry than the
    normal has); a scalar normal is taken as a vector of one."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self._params = {}
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale


LogisticNormal.__module__ = "torch.distributions.logistic_normal"
Independent.__module__ = "torch.distributions.independent"
TransformedDistribution.__module__ = "torch.distributions.transformed_distribution"
LogNormal.__module__ = "torch.distributions.log_normal"
