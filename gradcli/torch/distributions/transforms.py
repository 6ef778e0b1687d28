"""torch.distributions.transforms: the bijections TransformedDistribution pushes samples
through (exp, affine, sigmoid, tanh and their composition), with the log-Jacobians its
log_prob subtracts, computed with the same ops as PyTorch's."""

from __future__ import annotations

import math

import gradcli.torch as torch
import gradcli.torch.nn.functional as F

from . import constraints

__all__ = ["AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform",
           "PowerTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform", "Transform",
           "identity_transform"]


class Transform:
    """An invertible map with its domain, codomain and log|det J|."""

    domain = constraints.real
    codomain = constraints.real
    bijective = True
    sign = 1

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None

    @property
    def event_dim(self) -> int:
        return self.domain.event_dim

    @property
    def inv(self):
        return _InverseTransform(self)

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def inv(self):
        return self._inv

    @property
    def sign(self):
        return self._inv.sign

    def __call__(self, x):
        return self._inv._inv_call(x)

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inv!r})"


class ExpTransform(Transform):
    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    codomain = constraints.positive

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class SigmoidTransform(Transform):
    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    codomain = constraints.unit_interval

    def _call(self, x):
        finfo = torch.finfo(x.dtype)
        return torch.clamp(torch.sigmoid(x), min=finfo.tiny, max=1.0 - finfo.eps)

    def _inverse(self, y):
        finfo = torch.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class TanhTransform(Transform):
    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return torch.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AffineTransform(Transform):
    """y = loc + scale * x (event_dim trailing dims taken as one event)."""

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for mine, theirs in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(mine, (int, float)) and isinstance(theirs, (int, float)):
                if mine != theirs:
                    return False
            elif not (mine == theirs).all().item():
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, (int, float)):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    @property
    def domain(self):
        if self._event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self._event_dim)

    @property
    def codomain(self):
        return self.domain

    def _call(self, x):
        return self.loc + self.scale * x

    def forward_shape(self, shape):
        # (a tensor loc or scale broadcasts the samples it moves)
        return torch.broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                      getattr(self.scale, "shape", ()))

    inverse_shape = forward_shape

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        scale = self.scale
        if isinstance(scale, (int, float)):
            result = torch.full_like(x, math.log(abs(scale)))
        else:
            result = torch.abs(scale).log()
        if self._event_dim:
            result_size = result.size()[:-self._event_dim] + (-1,)
            result = result.view(result_size).sum(-1)
            shape = shape[:-self._event_dim]
        return result.expand(shape)


class ComposeTransform(Transform):
    """Several transforms applied in order."""

    def __init__(self, parts, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        return self.parts[0].domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        return self.parts[-1].codomain

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)"


class AbsTransform(Transform):
    """y = |x|: not a bijection (HalfNormal and HalfCauchy fold their base over zero); its
    inverse gives the non-negative root."""

    codomain = constraints.positive
    bijective = False

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals (Weibull's shape)."""

    domain = constraints.positive
    codomain = constraints.positive

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        from .simple import _broadcast_all

        (self.exponent,) = _broadcast_all(exponent)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        return self.exponent.eq(other.exponent).all().item()

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return torch.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    def inverse_shape(self, shape):
        return torch.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)), inverted as x = log(expm1(y)) (computed as PyTorch does, through
    -y and its expm1, so large y keep their precision)."""

    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


identity_transform = ComposeTransform([])

for _cls in (Transform, _InverseTransform, ExpTransform, SigmoidTransform, TanhTransform,
             AffineTransform, ComposeTransform, AbsTransform, PowerTransform,
             SoftplusTransform):
    _cls.__module__ = "torch.distributions.transforms"
del _cls

