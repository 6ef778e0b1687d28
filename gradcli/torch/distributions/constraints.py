"""The parameter and support constraints the distributions here check, printed as PyTorch's."""

from __future__ import annotations

import gradcli.torch as torch

__all__ = ["Constraint", "boolean", "greater_than", "integer_interval", "interval", "lower_cholesky",
           "positive_definite",
           "less_than", "positive", "real", "simplex", "unit_interval"]


class Constraint:
    """A region a tensor's values must lie in; check(value) gives a bool tensor."""

    event_dim = 0
    is_discrete = False

    def check(self, value):
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Real(Constraint):
    def check(self, value):
        return value == value  # (NaN is the only real-tensor value outside)


class _Boolean(Constraint):
    is_discrete = True
    def check(self, value):
        return (value == 0) | (value == 1)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)

    def __repr__(self) -> str:
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(_Interval):
    is_discrete = True
    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return torch.all(value >= 0, dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


real = _Real()
boolean = _Boolean()
positive = _GreaterThan(0.0)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
greater_than = _GreaterThan
less_than = _LessThan
interval = _Interval
half_open_interval = _HalfOpenInterval
integer_interval = _IntegerInterval
for _cls in (Constraint, _Real, _Boolean, _GreaterThan, _LessThan, _Interval, _HalfOpenInterval,
             _IntegerInterval, _Simplex):
    _cls.__module__ = "torch.distributions.constraints"
del _cls


class _PositiveDefinite(Constraint):
    """Symmetric (within 1e-6) with a Cholesky factor."""

    event_dim = 2

    def check(self, value):
        symmetric = torch.isclose(value, value.mT, atol=1e-6).all(-2).all(-1)
        if not bool(symmetric.all()):
            return symmetric
        return torch.linalg.cholesky_ex(value).info.eq(0)


class _LowerCholesky(Constraint):
    """Lower triangular with a positive diagonal."""

    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).reshape(value.shape[:-2] + (-1,)).min(-1)[0]
        positive = (value.diagonal(dim1=-2, dim2=-1) > 0).min(-1)[0]
        return lower & positive


positive_definite = _PositiveDefinite()
lower_cholesky = _LowerCholesky()
_PositiveDefinite.__module__ = _LowerCholesky.__module__ = "torch.distributions.constraints"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = (value == 0) | (value == 1)
        is_normalized = value.sum(-1).eq(1)
        return is_boolean.all(-1) & is_normalized


class _IndependentConstraint(Constraint):
    """A base constraint over the last `reinterpreted_batch_ndims` dims, all at once."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims: int):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    def check(self, value):
        result = self.base_constraint.check(value)
        if self.reinterpreted_batch_ndims:
            result = result.reshape(result.shape[:result.dim() - self.reinterpreted_batch_ndims]
                                    + (-1,)).all(-1)
        return result

    def __repr__(self) -> str:
        return (f"IndependentConstraint({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


nonnegative = _GreaterThanEq(0.0)
greater_than_eq = _GreaterThanEq
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
one_hot = _OneHot()
independent = _IndependentConstraint
real_vector = _IndependentConstraint(real, 1)  # (PyTorch's own definition)
for _cls in (_GreaterThanEq, _IntegerGreaterThan, _OneHot, _IndependentConstraint):
    _cls.__module__ = "torch.distributions.constraints"
del _cls
__all__ += ["nonnegative", "greater_than_eq", "nonnegative_integer", "positive_integer",
            "one_hot", "independent", "half_open_interval", "real_vector"]


class _Multinomial(Constraint):
    is_discrete = True
    """Non-negative counts whose sum is at most `upper_bound` (one event: the last dim)."""

    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(dim=-1) & (x.sum(dim=-1) <= self.upper_bound)


class MixtureSameFamilyConstraint(Constraint):
    """A mixture component's support, checked with the component dim added back."""

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError("base_constraint must be a Constraint, got "
                                 f"{type(base_constraint).__name__}")
        self.base_constraint = base_constraint

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        keep = value.dim() - self.event_dim
        return result.reshape(tuple(result.shape[:keep]) + (-1,)).all(-1)

    def __repr__(self) -> str:
        return f"MixtureSameFamilyConstraint({self.base_constraint!r})"


multinomial = _Multinomial
_Multinomial.__module__ = MixtureSameFamilyConstraint.__module__ = \
    "torch.distributions.constraints"
__all__ += ["MixtureSameFamilyConstraint", "multinomial"]


class _LowerTriangular(Constraint):
    """Lower-triangular square matrices (any diagonal)."""

    event_dim = 2

    def check(self, value):
        return (value.tril() == value).view(value.shape[:-2] + (-1,)).min(-1)[0]


class _CorrCholesky(Constraint):
    """Cholesky factors of correlation matrices: lower Cholesky with unit-length rows, the
    length checked within 10 * n * eps of one (PyTorch's tolerance)."""

    event_dim = 2

    def check(self, value):
        tol = torch.finfo(value.dtype).eps * value.size(-1) * 10
        row_norm = torch.linalg.norm(value.detach(), dim=-1)
        unit_row_norm = (row_norm - 1.0).abs().le(tol).all(dim=-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        return torch.full(size=value.shape[:-2], fill_value=(value.shape[-2] == value.shape[-1]),
                          dtype=torch.bool)


class _Symmetric(_Square):
    def check(self, value):
        square = super().check(value)
        if not bool(square.all()):
            return square
        return torch.isclose(value, value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        return torch.linalg.eigvalsh(value).ge(0).all(-1)


def _all_constraints(cseq) -> list:
    if not all(isinstance(c, Constraint) for c in cseq):
        raise AssertionError("All elements of cseq must be Constraint instances")
    return list(cseq)


def _dim_in_range(dim, value) -> None:
    if not (-value.dim() <= dim < value.dim()):
        raise AssertionError(f"dim {dim} out of range for value with {value.dim()} dimensions")


class _Joined(Constraint):
    """Several constraints laid side by side along `dim` (cat's and stack's): discrete
    when any of them is."""

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)


class _Cat(_Joined):
    """Constraints for consecutive slices of `dim` (lengths[i] entries each), as torch.cat
    joins them: what CatTransform's domain and codomain are."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = _all_constraints(cseq)
        self.lengths = list([1] * len(self.cseq) if lengths is None else lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})")
        self.dim = dim

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        _dim_in_range(self.dim, value)
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start = start + length
        return torch.cat(checks, self.dim)


class _Stack(_Joined):
    """One constraint per index of `dim`, as torch.stack joins them (StackTransform's)."""

    def __init__(self, cseq, dim=0):
        self.cseq = _all_constraints(cseq)
        self.dim = dim

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        _dim_in_range(self.dim, value)
        parts = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return torch.stack([c.check(v) for v, c in zip(parts, self.cseq)], self.dim)


lower_triangular = _LowerTriangular()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
cat = _Cat
stack = _Stack
for _cls in (_LowerTriangular, _CorrCholesky, _Square, _Symmetric, _PositiveSemidefinite,
             _Cat, _Stack):
    _cls.__module__ = "torch.distributions.constraints"
del _cls
__all__ += ["lower_triangular", "corr_cholesky", "square", "symmetric", "positive_semidefinite",
            "cat", "stack"]


class _Dependent(Constraint):
    """The support or parameter of a distribution that depends on its other parameters (a
    Uniform's interval): it cannot be checked, and its event_dim and is_discrete are known
    only when given."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """Whether a constraint is a dependent one (validation skips those)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property on instances that reads as a dependent constraint on the class
    (`@constraints.dependent_property(event_dim=1)` over a support method)."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


dependent = _Dependent()
dependent_property = _DependentProperty
_Dependent.__module__ = _DependentProperty.__module__ = "torch.distributions.constraints"
__all__ += ["dependent", "dependent_property", "is_dependent"]
