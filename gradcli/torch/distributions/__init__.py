"""torch.distributions: Normal, Bernoulli, Categorical and Uniform with kl_divergence, what
policy-gradient and VAE tutorials reach for (imported on first use).

Each follows PyTorch's definitions op for op (sampling draws through the same torch.normal,
torch.bernoulli, torch.multinomial and torch.rand calls, so seeded samples are PyTorch's),
with its argument validation, error texts and repr."""

from __future__ import annotations

from . import (
    constraint_registry,  # noqa: F401  (torch.distributions.constraint_registry)
    constraints,
    kl,
    kl_cross,  # noqa: F401  (registers the cross-family kl_divergence pairs)
    kl_families,  # noqa: E402, F401  (registers their kl_divergence pairs)
    transforms,  # noqa: E402  (after simple: TransformedDistribution uses both)
    utils,  # noqa: F401  (torch.distributions.utils)
)
from .constraint_registry import biject_to, transform_to
from .derived_families import (
    Cauchy,
    Chi2,
    FisherSnedecor,
    Gumbel,
    HalfCauchy,
    HalfNormal,
    InverseGamma,
    Kumaraswamy,
    NegativeBinomial,
    Pareto,
    Poisson,
    StudentT,
    Weibull,
)
from .distribution import Distribution, ExponentialFamily
from .exponential_family import ContinuousBernoulli
from .families import (
    Beta,
    Binomial,
    Dirichlet,
    Exponential,
    Gamma,
    Geometric,
    Laplace,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from .generalized_pareto import GeneralizedPareto
from .kl import kl_divergence, register_kl
from .lkj_cholesky import LKJCholesky
from .lowrank_mvn import LowRankMultivariateNormal
from .mixtures_and_relaxed import (
    MixtureSameFamily,
    Multinomial,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
)
from .mvn import MultivariateNormal
from .simple import Bernoulli, Categorical, Normal, Uniform
from .transformed import Independent, LogisticNormal, LogNormal, TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .von_mises import VonMises
from .wishart import Wishart

__all__ = ["Bernoulli", "Categorical", "Distribution", "MultivariateNormal", "Normal", "Uniform",
           "constraints", "transforms", "Beta", "Binomial", "Dirichlet", "Exponential", "Gamma",
           "Geometric", "Laplace", "OneHotCategorical", "Independent", "LogNormal",
           "TransformedDistribution",
           "kl_divergence", "register_kl",
           "Cauchy", "Chi2", "Gumbel", "HalfCauchy", "HalfNormal", "Pareto", "Poisson", "StudentT",
           "Weibull", "FisherSnedecor", "InverseGamma", "NegativeBinomial", "MixtureSameFamily",
           "Kumaraswamy", "OneHotCategoricalStraightThrough", "Multinomial", "RelaxedBernoulli",
           "RelaxedOneHotCategorical",
           "AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform", "PowerTransform",
           "SigmoidTransform", "SoftplusTransform", "TanhTransform", "Transform",
           "identity_transform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "ReshapeTransform", "SoftmaxTransform",
           "StickBreakingTransform", "biject_to", "transform_to", "ContinuousBernoulli",
           "ExponentialFamily", "VonMises", "LowRankMultivariateNormal",
           "LogisticNormal", "GeneralizedPareto", "LKJCholesky", "Wishart", "CatTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "StackTransform"]


def _family_modules() -> None:
    """PyTorch defines each family in a module of its own (`torch.distributions.normal`), which
    scripts import from (`from torch.distributions.normal import Normal`): a module object
    of that name holding the class, for each family here whose module gradcli's files do not
    already mirror."""
    import sys
    import types

    from . import mixtures_and_relaxed as extra

    # (the relaxed families' log-space bases live only in their family's module, as in PyTorch)
    bases = {"LogitRelaxedBernoulli": extra.LogitRelaxedBernoulli,
             "ExpRelaxedCategorical": extra.ExpRelaxedCategorical}
    for name in __all__ + list(bases):
        cls = bases[name] if name in bases else globals()[name]
        if not isinstance(cls, type) or not cls.__module__.startswith("torch.distributions."):
            continue
        short = cls.__module__.rsplit(".", 1)[1]
        if short in ("transforms", "distribution", "constraints", "kl", "constraint_registry",
                     "lkj_cholesky", "wishart"):
            continue  # (real modules of this package)
        full = f"{__name__}.{short}"
        module = sys.modules.get(full)
        if module is None:
            module = types.ModuleType(full, f"torch.distributions.{short}")
            module.__all__ = []
            sys.modules[full] = module
            globals()[short] = module
        setattr(module, name, cls)
        module.__all__.append(name)


_family_modules()

# The library's own kl_divergence pairs and constraint transforms, as registered above:
# what a `gradcli run` program starts from, as a fresh process does (a program's own
# register_kl / biject_to.register calls are forgotten when the next one starts).
_LIBRARY_REGISTRATIONS = ((kl._KL, dict(kl._KL)),
                          (biject_to._registry, dict(biject_to._registry)),
                          (transform_to._registry, dict(transform_to._registry)))


def _forget_program_registrations() -> None:
    for registry, library in _LIBRARY_REGISTRATIONS:
        if registry != library:
            registry.clear()
            registry.update(library)
    kl._CHOSEN.clear()

from .._namespace import unsupported as _unsupported  # noqa: E402

__getattr__ = _unsupported("torch.distributions", __name__)
