"""torch.distributions: Normal, Bernoulli, Categorical and Uniform with kl_divergence, what
policy-gradient and VAE tutorials reach for (imported on first use).

Each follows PyTorch's definitions op for op (sampling draws through the same torch.normal,
torch.bernoulli, torch.multinomial and torch.rand calls, so seeded samples are PyTorch's),
with its argument validation, error texts and repr."""

from __future__ import annotations

from . import constraints
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .mvn import MultivariateNormal
from .simple import Bernoulli, Categorical, Normal, Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "MultivariateNormal", "Normal", "Uniform",
           "constraints",
           "kl_divergence", "register_kl"]

from .._namespace import unsupported as _unsupported  # noqa: E402

__getattr__ = _unsupported("torch.distributions", __name__)
