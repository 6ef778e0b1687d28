"""Distribution: shapes, argument and sample validation, repr (PyTorch's base class)."""

from __future__ import annotations

import gradcli.torch as torch

__all__ = ["Distribution", "ExponentialFamily"]

_EMPTY = torch.Size(())


def _location(self):
    """`self.loc`: the mean and the mode of the families symmetric about their location
    (Normal, Laplace, VonMises, the multivariate normals), the mode of the skewed ones."""
    return self.loc


_AT_LOC = property(_location)


class Distribution:
    """A probability distribution with batch_shape + event_shape; subclasses define sample,
    rsample, log_prob, entropy, mean and variance."""

    has_rsample = False
    arg_constraints: dict = {}
    support = None
    _validate_default = True

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        if value not in (True, False):
            raise ValueError
        Distribution._validate_default = value

    def __init__(self, batch_shape=_EMPTY, event_shape=_EMPTY, validate_args=None):
        self._batch_shape = torch.Size(batch_shape)
        self._event_shape = torch.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        else:
            self._validate_args = Distribution._validate_default
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if param not in self._params:
                    continue  # (a lazily derived parameter: probs from logits)
                value = self._params[param]
                if not bool(torch.all(constraint.check(value))):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def stddev(self):
        return self.variance.sqrt()

    def _extended_shape(self, sample_shape=_EMPTY):
        if not isinstance(sample_shape, torch.Size):
            sample_shape = torch.Size(sample_shape)
        return torch.Size(tuple(sample_shape) + tuple(self._batch_shape)
                          + tuple(self._event_shape))

    def sample(self, sample_shape=_EMPTY):
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=_EMPTY):
        raise NotImplementedError  # (PyTorch says nothing more)

    # what a family does not define raises as PyTorch's base class does
    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def sample_n(self, n: int):
        return self.sample(torch.Size((n,)))

    def perplexity(self):
        return torch.exp(self.entropy())

    def expand(self, batch_shape, _instance=None):
        """The same distribution over a larger batch: each parameter (and each inner
        distribution) expanded, not copied, as PyTorch's per-family expand methods do, with
        validation carried over and not repeated."""
        cls = type(self)
        own = next(c for c in cls.__mro__ if c.__module__.startswith("torch.distributions."))
        if own is Distribution:
            raise NotImplementedError
        if _instance is None and cls.__init__ is not own.__init__:
            raise NotImplementedError(
                f"Subclass {cls.__name__} of {own.__name__} that defines a custom __init__ "
                "method must also define a custom .expand() method.")
        batch_shape = torch.Size(batch_shape)
        new = cls.__new__(cls) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        n = len(self._batch_shape)
        swapped = {}
        params = getattr(self, "_params", {})
        for name, value in self.__dict__.items():
            if isinstance(value, torch.Tensor):
                if name in params or name in self._expanded_too \
                        or any(value is v for v in params.values()):
                    if id(value) not in swapped:
                        swapped[id(value)] = value.expand(
                            batch_shape + value.shape[n:] if value.dim() >= n else batch_shape)
                    setattr(new, name, swapped[id(value)])
            elif isinstance(value, Distribution):
                setattr(new, name, value.expand(self._inner_batch(name, value, batch_shape)))
        if "_params" in self.__dict__:
            new._params = {k: swapped.get(id(v), v) for k, v in params.items()}
        new._batch_shape = batch_shape
        return new

    #: batch-shaped tensors expand carries that are not checked parameters (Chi2's gamma
    #: concentration and rate under its df)
    _expanded_too: tuple = ()

    def _inner_batch(self, name, inner, batch_shape):
        """The batch shape an inner distribution takes when this one is expanded: the new
        batch followed by what the inner one has beyond this one's batch (a mixture's
        components, Independent's reinterpreted dimensions)."""
        return batch_shape + inner.batch_shape[len(self._batch_shape):]

    def _validate_sample(self, value) -> None:
        if not isinstance(value, torch.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = len(value.size()) - len(self._event_shape)
        if value.size()[start:] != self._event_shape:
            raise ValueError("The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual, expected = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        if not bool(torch.all(self.support.check(value))):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({self.support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    #: parameters checked at construction that PyTorch does not print, because they are
    #: properties read from a base distribution (HalfNormal's scale, Chi2's df)
    _unshown: tuple = ()

    def __repr__(self) -> str:
        shown = [(name, self._params[name]) for name in self.arg_constraints
                 if name in self._params and name not in self._unshown]
        text = ", ".join(f"{name}: {value if value.numel() == 1 else value.size()}"
                         for name, value in shown)
        return f"{type(self).__name__}({text})"


Distribution.__module__ = "torch.distributions.distribution"


class ExponentialFamily(Distribution):
    """A family whose density is exp(<t(x), theta> - F(theta) + k(x)): subclasses give the
    natural parameters theta, the log normalizer F and the mean carrier measure E[k(x)]."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """H = F(theta) - <theta, grad F(theta)> - E[k(x)], the gradient taken by autograd
        (kept differentiable, so the entropy has gradients too)."""
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        normalizer = self._log_normalizer(*params)
        grads = torch.autograd.grad(normalizer.sum(), params, create_graph=True)
        result = result + normalizer
        for param, grad in zip(params, grads):
            result = result - (param * grad).reshape(self._batch_shape + (-1,)).sum(-1)
        return result


ExponentialFamily.__module__ = "torch.distributions.exp_family"
