"""torch.distributions: Normal, Bernoulli, Categorical and Uniform with kl_divergence, what
policy-gradient and VAE tutorials reach for (imported on first use).

Each follows PyTorch's definitions op for op (sampling draws through the same torch.normal,
torch.bernoulli, torch.multinomial and torch.rand calls, so seeded samples are PyTorch's),
with its argument validation, error texts and repr."""

from __future__ import annotations

from . import (
    constraints,
    kl_families,  # noqa: E402, F401  (registers their kl_divergence pairs)
    transforms,  # noqa: E402  (after simple: TransformedDistribution uses both)
)
from .distribution import Distribution
from .families import (
    Beta,
    Binomial,
    Dirichlet,
    Exponential,
    Gamma,
    Geometric,
    Laplace,
    OneHotCategorical,
)
from .kl import kl_divergence, register_kl
from .mvn import MultivariateNormal
from .simple import Bernoulli, Categorical, Normal, Uniform
from .transformed import Independent, LogNormal, TransformedDistribution

__all__ = ["Bernoulli", "Categorical", "Distribution", "MultivariateNormal", "Normal", "Uniform",
           "constraints", "transforms", "Beta", "Binomial", "Dirichlet", "Exponential", "Gamma",
           "Geometric", "Laplace", "OneHotCategorical", "Independent", "LogNormal",
           "TransformedDistribution",
           "kl_divergence", "register_kl"]

from .._namespace import unsupported as _unsupported  # noqa: E402

__getattr__ = _unsupported("torch.distributions", __name__)
