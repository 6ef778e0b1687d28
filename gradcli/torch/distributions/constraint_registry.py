"""torch.distributions.constraint_registry: biject_to and transform_to, the lookups from a
constraint to a transform from unconstrained reals onto it (how optimizers keep a scale
positive or probabilities on the simplex). Looked up by the constraint's class, as PyTorch
does: so biject_to(positive) is the greater_than transform, PyTorch's answer."""

from __future__ import annotations

from numbers import Number

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Constraint classes mapped to functions that build their transform."""

    def __init__(self) -> None:
        self._registry: dict = {}

    def register(self, constraint, factory=None):
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError("Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


ConstraintRegistry.__module__ = "torch.distributions.constraint_registry"

biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _identity(constraint):
    return transforms.identity_transform


def _independent(registry):
    def factory(constraint):
        return transforms.IndependentTransform(registry(constraint.base_constraint),
                                               constraint.reinterpreted_batch_ndims)
    return factory


def _exp(constraint):
    return transforms.ExpTransform()


def _above(constraint):
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.lower_bound, 1)])


def _below(constraint):
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.upper_bound, -1)])


def _between(constraint):
    low, high = constraint.lower_bound, constraint.upper_bound
    if isinstance(low, Number) and low == 0 and isinstance(high, Number) and high == 1:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform(
        [transforms.SigmoidTransform(), transforms.AffineTransform(low, high - low)])


for _registry in (biject_to, transform_to):
    _registry.register(constraints.real, _identity)
    _registry.register(constraints.independent, _independent(_registry))
    # (positive and nonnegative share greater_than's classes, whose entry replaces theirs)
    _registry.register(constraints.positive, _exp)
    _registry.register(constraints.nonnegative, _exp)
    _registry.register(constraints.greater_than, _above)
    _registry.register(constraints.greater_than_eq, _above)
    _registry.register(constraints.less_than, _below)
    _registry.register(constraints.interval, _between)
    _registry.register(constraints.half_open_interval, _between)
del _registry

biject_to.register(constraints.simplex, lambda c: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: transforms.SoftmaxTransform())
transform_to.register(constraints.lower_cholesky, lambda c: transforms.LowerCholeskyTransform())
transform_to.register(constraints.positive_definite,
                      lambda c: transforms.PositiveDefiniteTransform())
transform_to.register(constraints.positive_semidefinite,
                      lambda c: transforms.PositiveDefiniteTransform())


def _joined(registry):
    """cat and stack constraints: each part's own transform, joined the same way."""
    def cat(constraint):
        return transforms.CatTransform([registry(c) for c in constraint.cseq], constraint.dim,
                                       constraint.lengths)

    def stack(constraint):
        return transforms.StackTransform([registry(c) for c in constraint.cseq], constraint.dim)
    return cat, stack


for _registry in (biject_to, transform_to):
    _registry.register(constraints.corr_cholesky, lambda c: transforms.CorrCholeskyTransform())
    _cat, _stack = _joined(_registry)
    _registry.register(constraints.cat, _cat)
    _registry.register(constraints.stack, _stack)
del _registry, _cat, _stack
