"""The parameter and support constraints the distributions here check, printed as PyTorch's."""

from __future__ import annotations

import gradcli.torch as torch

__all__ = ["Constraint", "boolean", "greater_than", "integer_interval", "interval", "lower_cholesky",
           "positive_definite",
           "less_than", "positive", "real", "simplex", "unit_interval"]


class Constraint:
    """A region a tensor's values must lie in; check(value) gives a bool tensor."""

    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Real(Constraint):
    def check(self, value):
        return value == value  # (NaN is the only real-tensor value outside)


class _Boolean(Constraint):
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
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _OneHot(Constraint):
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
