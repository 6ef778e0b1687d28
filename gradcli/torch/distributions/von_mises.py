"""VonMises, the circular normal: log_prob through the polynomial approximations of the
modified Bessel functions I0 and I1 (Abramowitz & Stegun 9.8.1-9.8.4) PyTorch uses, and
Best & Fisher's rejection sampler run on the same torch.rand draws, loop for loop, so seeded
samples are PyTorch's."""

from __future__ import annotations

import math

import gradcli.torch as torch

from . import constraints
from .distribution import _AT_LOC, _EMPTY, Distribution
from .simple import _broadcast_all

__all__ = ["VonMises"]

_I0_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
             -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2]
_I1_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]
_I1_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
             0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2]


def _horner(y, coefficients):
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = c + y * result
    return result


def _log_bessel(x, order=0):
    """log I0(x) or log I1(x): the small-argument series below 3.75, the asymptotic one
    above."""
    small_coef, large_coef = (_I0_SMALL, _I0_LARGE) if order == 0 else (_I1_SMALL, _I1_LARGE)
    y = x / 3.75
    small = _horner(y * y, small_coef)
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _horner(3.75 / x, large_coef).log()
    return torch.where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    done = torch.zeros(x.shape, dtype=torch.bool)
    while not bool(done.all()):
        u1, u2, u3 = torch.rand((3,) + tuple(x.shape), dtype=loc.dtype).unbind()
        z = torch.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = torch.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = _broadcast_all(loc, concentration)
        self._params = {"loc": self.loc, "concentration": self.concentration}
        super().__init__(self.loc.shape, _EMPTY, validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.concentration * torch.cos(value - self.loc) - math.log(2 * math.pi) \
            - _log_bessel(self.concentration, order=0)

    def _proposal_r(self, kappa):
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return torch.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape=_EMPTY):
        with torch.no_grad():
            loc = self.loc.to(torch.double)
            kappa = self.concentration.to(torch.double)
            x = torch.zeros(self._extended_shape(sample_shape), dtype=torch.double)
            return _rejection_sample(loc, kappa, self._proposal_r(kappa), x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        # (PyTorch's VonMises builds a new instance, so validation runs again)
        validate_args = self.__dict__.get("_validate_args")
        return type(self)(self.loc.expand(batch_shape), self.concentration.expand(batch_shape),
                          validate_args=validate_args)

    mean = mode = _AT_LOC

    @property
    def variance(self):
        return 1 - (_log_bessel(self.concentration, order=1)
                    - _log_bessel(self.concentration, order=0)).exp()


VonMises.__module__ = "torch.distributions.von_mises"
