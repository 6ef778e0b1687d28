"""torch.signal.windows: scipy-style window functions of length M.

Each window is a function of an evenly spaced grid (torch.linspace) built from the public
ops, as PyTorch builds it, so requires_grad=True gives PyTorch's graph (ExpBackward0,
SumBackward1, DivBackward0...). sym=True gives the symmetric window (filter design),
sym=False the periodic one (spectral analysis: the symmetric window of M + 1 points
without its last). Only float32 and float64, strided.
"""

from __future__ import annotations

import math

import gradcli.torch as _torch

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]

_STRIDED = "torch.strided"


def _checks(name: str, M, dtype, layout):
    if dtype is None:
        dtype = _torch.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout) != _STRIDED:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_torch.float32, _torch.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M, dtype, requires_grad, ones_at_one=True):
    """The window of 0 points (empty), or of 1 point (a one) where the formula would divide
    by zero; None otherwise."""
    if M == 0:
        return _torch.empty((0,), dtype=dtype, requires_grad=requires_grad)
    if M == 1 and ones_at_one:
        return _torch.ones((1,), dtype=dtype, requires_grad=requires_grad)
    return None


def _grid(start, step, M, dtype, requires_grad):
    return _torch.linspace(start, start + (M - 1) * step, M, dtype=dtype,
                           requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None,
                requires_grad=False):
    """exp(-|n - center| / tau) (the Poisson window)."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    empty = _trivial(M, dtype, requires_grad, ones_at_one=False)
    if empty is not None:
        return empty
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    rate = 1 / tau
    k = _torch.linspace(-center * rate, (-center + (M - 1)) * rate, M, dtype=dtype,
                        requires_grad=requires_grad)
    return _torch.exp(-_torch.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """sin(pi (n + 1/2) / M) (the sine window)."""
    dtype = _checks("cosine", M, dtype, layout)
    empty = _trivial(M, dtype, requires_grad, ones_at_one=False)
    if empty is not None:
        return empty
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return _torch.sin(_grid(0.5 * step, step, M, dtype, requires_grad))


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    """exp(-((n - center) / std)**2 / 2)."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    empty = _trivial(M, dtype, requires_grad, ones_at_one=False)
    if empty is not None:
        return empty
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / (std * math.sqrt(2))
    k = _torch.linspace(start * scale, (start + (M - 1)) * scale, M, dtype=dtype,
                        requires_grad=requires_grad)
    return _torch.exp(-(k ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    """I0(beta sqrt(1 - (2n / (M - 1) - 1)**2)) / I0(beta)."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    trivial = _trivial(M, dtype, requires_grad)
    if trivial is not None:
        return trivial
    beta = _torch.tensor(beta, dtype=dtype)
    start = -beta
    step = 2.0 * beta / (M if not sym else M - 1)
    end = _torch.minimum(beta, start + (M - 1) * step)
    k = _torch.linspace(start, end, M, dtype=dtype, requires_grad=requires_grad)
    return _torch.i0(_torch.sqrt(beta * beta - _torch.pow(k, 2))) / _torch.i0(beta)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangle 1 - |2n / (M - 1) - 1|."""
    dtype = _checks("bartlett", M, dtype, layout)
    trivial = _trivial(M, dtype, requires_grad)
    if trivial is not None:
        return trivial
    step = 2 / (M if not sym else M - 1)
    return 1 - _torch.abs(_grid(-1, step, M, dtype, requires_grad))


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """sum_i (-1)**i a[i] cos(2 pi i n / (M - 1)): the family of hann, hamming, blackman,
    nuttall."""
    dtype = _checks("general_cosine", M, dtype, layout)
    trivial = _trivial(M, dtype, requires_grad)
    if trivial is not None:
        return trivial
    if not hasattr(a, "__iter__"):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / (M if not sym else M - 1)
    k = _grid(0, step, M, dtype, requires_grad)
    signed = _torch.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype,
                           requires_grad=requires_grad)
    i = _torch.arange(signed.shape[0], dtype=signed.dtype, requires_grad=signed.requires_grad)
    return (signed.unsqueeze(-1) * _torch.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """general_hamming with alpha = 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """general_hamming with alpha = 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """general_cosine with a = (0.42, 0.5, 0.08)."""
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Nuttall's minimum 4-term Blackman-Harris window."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
