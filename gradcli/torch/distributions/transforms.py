"""torch.distributions.transforms: the bijections TransformedDistribution pushes samples
through (exp, affine, sigmoid, tanh and their composition), with the log-Jacobians its
log_prob subtracts, computed with the same ops as PyTorch's."""

from __future__ import annotations

import math

import gradcli.torch as torch
import gradcli.torch.nn.functional as F

from . import constraints

__all__ = ["AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StickBreakingTransform", "TanhTransform", "Transform",
           "identity_transform", "CatTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "StackTransform"]


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

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

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

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

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

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def _inverse(self, y):
        for part in reversed(self.parts):
            y = part.inv(y)
        return y

    def _inv_call(self, y):
        return self._inverse(y)

    def log_abs_det_jacobian(self, x, y):
        """Each part's log-Jacobian at its own input, summed over the dims that are event
        dims of the whole but batch dims of the part."""
        if not self.parts:
            return torch.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total = 0
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            term = part.log_abs_det_jacobian(a, b)
            n = event_dim - part.domain.event_dim
            if n > 0:
                term = term.reshape(term.shape[:term.dim() - n] + (-1,)).sum(-1)
            total = total + term
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

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


def _needs_a_dim(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")


class SoftmaxTransform(Transform):
    """Real vectors onto the simplex by softmax (not a bijection: the inverse is the log,
    one of the many preimages), what transform_to(simplex) gives."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        shifted = (x - x.max(-1, True)[0]).exp()
        return shifted / shifted.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        _needs_a_dim(shape)
        return shape

    inverse_shape = forward_shape


class StickBreakingTransform(Transform):
    """Real vectors of length n onto the simplex of n + 1 entries, breaking a stick at
    sigmoid-ed fractions (offset so that zeros map to the uniform point): the bijection
    biject_to(simplex) gives."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _offset(x, n):
        return n - x.new_ones(x.shape[-1]).cumsum(-1)

    def _call(self, x):
        z = SigmoidTransform._call(self, x - self._offset(x, x.shape[-1] + 1).log())
        rest = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(rest, [1, 0], value=1)

    def _inverse(self, y):
        head = y[..., :-1]
        left = torch.clamp(1 - head.cumsum(-1), min=torch.finfo(y.dtype).tiny)
        return head.log() - left.log() + (y.shape[-1] - y.new_ones(head.shape[-1]).cumsum(-1)).log()

    def log_abs_det_jacobian(self, x, y):
        x = x - self._offset(x, x.shape[-1] + 1).log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _needs_a_dim(shape)
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        _needs_a_dim(shape)
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices onto lower-triangular ones with a positive diagonal: the strict
    lower triangle kept, the diagonal exponentiated."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Square matrices onto positive-definite ones: L L^T of their lower-Cholesky image."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(torch.linalg.cholesky(y))


class IndependentTransform(Transform):
    """A transform whose rightmost `reinterpreted_batch_ndims` dims form one event: its
    log-Jacobian summed over them."""

    def __init__(self, base_transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        result = self.base_transform.log_abs_det_jacobian(x, y)
        n = self.reinterpreted_batch_ndims
        return result.reshape(result.shape[:result.dim() - n] + (-1,)).sum(-1) if n else result

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """The rightmost dims of in_shape reshaped to out_shape (a volume-preserving
    bijection: log-Jacobian zero)."""

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        self.in_shape = torch.Size(in_shape)
        self.out_shape = torch.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        return x.reshape(x.shape[:x.dim() - len(self.in_shape)] + self.out_shape)

    def _inverse(self, y):
        return y.reshape(y.shape[:y.dim() - len(self.out_shape)] + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(x.shape[:x.dim() - len(self.in_shape)])

    @staticmethod
    def _swap(shape, old, new):
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return torch.Size(tuple(shape[:cut]) + tuple(new))

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape)


def _sum_rightmost(value, dim: int):
    return value.reshape(value.shape[:value.dim() - dim] + (-1,)).sum(-1) if dim > 0 else value


class CorrCholeskyTransform(Transform):
    """Real vectors of length D(D-1)/2 onto Cholesky factors of D x D correlation matrices:
    tanh into (-1, 1), laid out row by row below the diagonal, then each row scaled by a
    signed stick-breaking so that it has unit length (the diagonal takes what is left)."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky

    def _call(self, x):
        from .utils import vec_to_tril_matrix

        x = torch.tanh(x)
        eps = torch.finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        z = r ** 2
        z1m_cumprod_sqrt = (1 - z).sqrt().cumprod(-1)
        r = r + torch.eye(r.shape[-1], dtype=r.dtype)
        return r * F.pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        from .utils import tril_matrix_to_vec

        y_cumsum = 1 - torch.cumsum(y * y, dim=-1)
        y_cumsum_shifted = F.pad(y_cumsum[..., :-1], [1, 0], value=1)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        """Of x and the flattened strict lower triangle of y (the spaces differ in size):
        the stick-breaking's half log of the remaining lengths plus tanh's term."""
        from .utils import tril_matrix_to_vec

        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        y1m_cumsum_tril = tril_matrix_to_vec(y1m_cumsum, diag=-2)
        stick_breaking_logdet = 0.5 * y1m_cumsum_tril.log().sum(-1)
        tanh_logdet = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return shape[:-2] + (d * (d - 1) // 2,)


def _transforms_of(tseq, cache_size):
    if not all(isinstance(t, Transform) for t in tseq):
        raise AssertionError("All elements of tseq must be Transform instances")
    return [t.with_cache(cache_size) for t in tseq] if cache_size else list(tseq)


def _check_dim(dim, t, name, what="tensor"):
    if not (-t.dim() <= dim < t.dim()):
        raise AssertionError(f"dim {dim} out of range for {what} with {t.dim()} dimensions")


class CatTransform(Transform):
    """One transform per consecutive slice of `dim` (lengths[i] entries each), the results
    joined by torch.cat."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        tseq = _transforms_of(tseq, cache_size)
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.lengths = list([1] * len(self.transforms) if lengths is None else lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _check(self, t, name, what="tensor"):
        _check_dim(self.dim, t, name, what)
        if t.size(self.dim) != self.length:
            raise AssertionError(f"{name}.size({self.dim}) = {t.size(self.dim)} must equal "
                                 f"length {self.length}")

    def _map(self, t, inverse):
        out, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            piece = t.narrow(self.dim, start, length)
            out.append(trans.inv(piece) if inverse else trans(piece))
            start = start + length
        return torch.cat(out, dim=self.dim)

    def _call(self, x):
        self._check(x, "x")
        return self._map(x, False)

    def _inverse(self, y):
        self._check(y, "y")
        return self._map(y, True)

    def log_abs_det_jacobian(self, x, y):
        self._check(x, "x", "x")
        self._check(y, "y", "y")
        terms, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            term = trans.log_abs_det_jacobian(x.narrow(self.dim, start, length),
                                              y.narrow(self.dim, start, length))
            if trans.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - trans.event_dim)
            terms.append(term)
            start = start + length
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        if dim < 0:
            return torch.cat(terms, dim=dim)
        return sum(terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """One transform per index of `dim`, the results joined by torch.stack."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        tseq = _transforms_of(tseq, cache_size)
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _check(self, t, name, what="tensor"):
        _check_dim(self.dim, t, name, what)
        if t.size(self.dim) != len(self.transforms):
            raise AssertionError(f"{name}.size({self.dim}) = {t.size(self.dim)} must equal "
                                 f"len(transforms) {len(self.transforms)}")

    def _call(self, x):
        self._check(x, "x")
        return torch.stack([t(s) for s, t in zip(self._slice(x), self.transforms)],
                           dim=self.dim)

    def _inverse(self, y):
        self._check(y, "y")
        return torch.stack([t.inv(s) for s, t in zip(self._slice(y), self.transforms)],
                           dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x, "x", "x")
        self._check(y, "y", "y")
        return torch.stack([t.log_abs_det_jacobian(a, b) for a, b, t
                            in zip(self._slice(x), self._slice(y), self.transforms)],
                           dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """x -> distribution.cdf(x) onto (0, 1), inverted by its icdf; log|det J| is the
    distribution's log density (how a Gaussian copula is built)."""

    codomain = constraints.unit_interval

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)


identity_transform = ComposeTransform([])

for _cls in (Transform, _InverseTransform, ExpTransform, SigmoidTransform, TanhTransform,
             AffineTransform, ComposeTransform, AbsTransform, PowerTransform,
             SoftplusTransform, SoftmaxTransform, StickBreakingTransform, LowerCholeskyTransform,
             PositiveDefiniteTransform, IndependentTransform, ReshapeTransform,
             CorrCholeskyTransform, CatTransform, StackTransform, CumulativeDistributionTransform):
    _cls.__module__ = "torch.distributions.transforms"
del _cls

