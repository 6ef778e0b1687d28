"""Wishart: distributions over positive-definite matrices (sums of df outer products of
Gaussian vectors with a given covariance). Samples follow PyTorch's Bartlett construction
call for call (chi-square diagonal, randn below it), including PyTorch's correction
loop: its singularity test reads the support check's result as "singular", so every
sample batch that is in fact valid is drawn again (with the warning "Singular sample
detected."), and seeded samples match PyTorch's only by doing the same."""

from __future__ import annotations

import math
from numbers import Number

import gradcli.torch as torch

from . import constraints
from .derived_families import Chi2
from .distribution import _EMPTY, ExponentialFamily

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _warn(message: str, once_key: str | None = None) -> None:
    """At the user's line; or, with once_key, once per program: PyTorch warns from inside
    its own Distribution.sample then, one source line that Python's filter shows once."""
    from gradcli.engine import warn_site

    if once_key is None:
        warn_site.warn_at_caller(message)
    else:
        warn_site.warn_once(once_key, message)


def _mvdigamma(x, p: int):
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    steps = torch.arange(p, dtype=x.dtype).div(2).expand(x.shape + (-1,))
    return torch.digamma(x.unsqueeze(-1) - steps).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=torch.finfo(x.dtype).eps)


def _precision_to_scale_tril(matrix):
    """L of the covariance from the precision P: flip, factor, invert, flip back."""
    flipped = torch.linalg.cholesky(torch.flip(matrix, (-2, -1)))
    inverse_t = torch.transpose(torch.flip(flipped, (-2, -1)), -2, -1)
    identity = torch.eye(matrix.shape[-1], dtype=matrix.dtype)
    return torch.linalg.solve_triangular(inverse_t, identity, upper=False)


_MATRICES = ("covariance_matrix", "precision_matrix", "scale_tril")


class Wishart(ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [(name, m) for name, m in zip(_MATRICES, (covariance_matrix, precision_matrix,
                                                          scale_tril)) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        name, param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = torch.Size(param.shape[:-2])
            self.df = torch.tensor(df, dtype=param.dtype)
        else:
            batch_shape = torch.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        expanded = param.expand(batch_shape + (-1, -1))
        setattr(self, name, expanded)
        self._params = {name: expanded, "df": self.df}
        if bool(self.df.lt(event_shape[-1]).any()):
            _warn("Low df values detected. Singular samples are highly likely to occur for "
                  "ndim - 1 < df < ndim.")
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = param
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(param)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(param)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        """The Bartlett factor's squared diagonal: chi-square with df, df - 1, ... df - p + 1."""
        steps = torch.arange(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        batch_shape = torch.Size(batch_shape)
        new = type(self).__new__(type(self)) if _instance is None else _instance
        cov_shape = batch_shape + self._event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        new._params = {}
        for name in _MATRICES:
            if name in self.__dict__:
                value = self.__dict__[name].expand(cov_shape)
                setattr(new, name, value)
                new._params[name] = value
        new._params["df"] = new.df
        new._event_shape = self._event_shape
        new._dist_chi2 = new._chi2(batch_shape)
        ExponentialFamily.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __getattr__(self, name):
        """scale_tril, covariance_matrix and precision_matrix from the Cholesky factor, made
        on first read and kept (then shown by repr, as PyTorch's lazy properties are)."""
        scale = self.__dict__.get("_unbroadcasted_scale_tril")
        if scale is None or name not in _MATRICES:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        shape = self._batch_shape + self._event_shape
        with torch.enable_grad():
            if name == "scale_tril":
                value = scale.expand(shape)
            elif name == "covariance_matrix":
                value = (scale @ scale.transpose(-2, -1)).expand(shape)
            else:
                identity = torch.eye(self._event_shape[-1], dtype=scale.dtype)
                value = torch.cholesky_solve(identity, scale).expand(shape)
        self.__dict__[name] = value
        self._params[name] = value
        return value

    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = math.nan
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        v = self.covariance_matrix
        diag_v = v.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (
            v.pow(2) + torch.einsum("...i,...j->...ij", diag_v, diag_v))

    def _bartlett_sampling(self, sample_shape=_EMPTY):
        p = self._event_shape[-1]
        noise = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(
            dim1=-2, dim2=-1)
        i, j = torch.tril_indices(p, p, offset=-1)
        noise[..., i, j] = torch.randn(
            torch.Size(sample_shape) + self._batch_shape + (int(p * (p - 1) / 2),),
            dtype=noise.dtype)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def sample(self, sample_shape=_EMPTY):
        with torch.no_grad():
            return self._rsample(sample_shape, None, "wishart.sample")

    def rsample(self, sample_shape=_EMPTY, max_try_correction=None):
        return self._rsample(sample_shape, max_try_correction, None)

    def _rsample(self, sample_shape, max_try_correction, once_key):
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = torch.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self.support.check(sample)  # (sic: PyTorch's test, see the docstring)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        if bool(is_singular.any()):
            _warn("Singular sample detected.", once_key)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(is_singular[is_singular].shape)
                sample[is_singular] = sample_new
                is_singular_new = ~self.support.check(sample_new)
                if self._batch_shape:
                    is_singular_new = is_singular_new.amax(self._batch_dims)
                is_singular[is_singular.clone()] = is_singular_new
                if not bool(is_singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        log_diag = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (-nu * (p * _log_2 / 2 + log_diag)
                - torch.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * torch.linalg.slogdet(value).logabsdet
                - torch.cholesky_solve(value, self._unbroadcasted_scale_tril)
                .diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        log_diag = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _log_2 / 2 + log_diag)
                + torch.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-torch.linalg.slogdet(-2 * x).logabsdet + _log_2 * p) \
            + torch.mvlgamma(y + (p + 1) / 2, p=p)


Wishart.__module__ = "torch.distributions.wishart"
