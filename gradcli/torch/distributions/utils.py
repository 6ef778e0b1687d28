"""torch.distributions.utils: the helpers custom distributions are written with (broadcast
parameters together, logits <-> probabilities, a property computed once per instance, a
matrix's lower triangle as a vector and back), each as PyTorch defines it."""

from __future__ import annotations

import gradcli.torch as torch

from .simple import _broadcast_all, _clamp_probs, _logits_to_probs, _probs_to_logits

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix",
           "euler_constant"]  # (PyTorch's __all__ lacks the constant, which scripts read too)

euler_constant = 0.57721566490153286060  # (Euler-Mascheroni, the value PyTorch keeps here)


def broadcast_all(*values):
    """Python numbers become tensors of the first tensor's dtype (else the default dtype),
    and everything is broadcast together."""
    return _broadcast_all(*values)


def logits_to_probs(logits, is_binary=False):
    """sigmoid of log-odds (is_binary), else softmax over the last dim."""
    return _logits_to_probs(logits, is_binary)


def clamp_probs(probs):
    """Probabilities moved into [eps, 1 - eps] of their dtype, so their logs stay finite."""
    return _clamp_probs(probs)


def probs_to_logits(probs, is_binary=False):
    """The clamped probabilities' logs (is_binary: their log-odds)."""
    return _probs_to_logits(probs, is_binary)


class lazy_property:
    """A decorator: the method runs on the first read (with gradients recorded, whatever
    the grad mode) and its value then replaces it on the instance."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        for name in ("__module__", "__name__", "__qualname__", "__doc__"):
            try:
                setattr(self, name, getattr(wrapped, name))
            except AttributeError:
                pass

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_mask(n: int, diag: int):
    rows = torch.arange(n)
    return rows < rows.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag: int = 0):
    """The entries on and below diagonal `diag` of the last two dims, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag)]


def vec_to_tril_matrix(vec, diag: int = 0):
    """The inverse of tril_matrix_to_vec: a square matrix, zero above diagonal `diag`, whose
    size is the positive root of n^2 + (1 + 2 diag) n - |diag| (diag + 1) = 2 len(vec)."""
    b = 1 + 2 * diag
    n = (-b + (b ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > torch.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag)] = vec
    return mat


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property reads as on its class: also a property (as PyTorch's)."""

    def __init__(self, wrapped) -> None:
        property.__init__(self, wrapped)


lazy_property.__module__ = _lazy_property_and_property.__module__ = "torch.distributions.utils"
