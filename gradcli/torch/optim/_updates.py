"""PyTorch's single-tensor update steps as numpy operations on float32/float64 buffers.

Each function names the PyTorch in-place op it stands for and returns the new buffer.
"""

from __future__ import annotations

import numpy as np

from .optimizer import axpy, fma_arrays

_F32 = np.dtype(np.float32)


def add(a, b, alpha=1.0):
    """a.add(b, alpha=alpha)."""
    if alpha == 1:
        return a + b
    return axpy(alpha, b, a)


def mul(a, s):
    """a.mul(s): s in a's dtype (bfloat16: s in float32, PyTorch's opmath, rounded once)."""
    if a.dtype.kind == "V":
        return (a * np.float32(s)).astype(a.dtype)
    return a * a.dtype.type(s)


def lerp(a, end, weight):
    """a.lerp(end, weight): a + w (end - a) below w = 0.5, end - (end - a)(1 - w) above."""
    diff = end - a
    if abs(weight) < 0.5:
        return axpy(weight, diff, a)
    return axpy(-(1 - weight), diff, end) if a.dtype != _F32 else \
        (end.astype(np.float64) - diff.astype(np.float64) * float(np.float32(1 - weight))
         ).astype(_F32)


def addcmul(a, t1, t2, value=1.0):
    """a.addcmul(t1, t2, value=value): a + value * t1 * t2, the last multiply fused."""
    return fma_arrays(t1 * a.dtype.type(value), t2, a)


def addcdiv(a, t1, t2, value=1.0):
    """a.addcdiv(t1, t2, value=value): a + value * t1 / t2."""
    return a + (t1 * a.dtype.type(value)) / t2


def div(a, s):
    """a / s for a Python scalar s (in a's dtype; bfloat16: in float32, rounded once)."""
    if a.dtype.kind == "V":
        return (a / np.float32(s)).astype(a.dtype)
    return a / a.dtype.type(s)


def add_scalar(a, s):
    if a.dtype.kind == "V":
        return (a + np.float32(s)).astype(a.dtype)
    return a + a.dtype.type(s)
