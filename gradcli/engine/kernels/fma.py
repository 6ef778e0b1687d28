"""c - a*b rounded once, as the fused multiply-adds PyTorch's kernels get from the
compiler's FMA contraction (numpy has none); two roundings with the switch off."""

from __future__ import annotations

import numpy as np

from .. import kernels as _switch


def fused_minus_product32(c, a, b):
    """c - a*b for float32 arrays, rounded once, as the fused multiply-add that PyTorch's
    kernels get from FMA contraction: a*b is exact in float64, and so is the difference
    unless the terms lie far apart in magnitude (then two roundings, which differ from one
    only when float64's result is a float32 halfway point)."""
    if not _switch.EXACT:
        return np.asarray(np.subtract(c, np.multiply(a, b)), dtype=np.float32)
    return np.asarray(np.subtract(c, np.multiply(a, b, dtype=np.float64)), dtype=np.float32)


_VELTKAMP = 134217729.0  # 2^27 + 1: splits a double into two halves of 26 bits


def fused_minus_product64(c, a, b):
    """c - a*b for float64 arrays as a fused multiply-add gives it (PyTorch's kernels get
    one from FMA contraction): a*b = p + err exactly (Dekker's product of Veltkamp's
    halves), c - p = s + e exactly (Knuth's two-sum), then s + (e - err), which is the
    once-rounded result but for rare double-rounding ties. Where a step overflows, the
    plain c - a*b."""
    if not _switch.EXACT:
        with np.errstate(over="ignore", invalid="ignore"):
            return c - a * b
    with np.errstate(over="ignore", invalid="ignore"):
        p = a * b
        t = _VELTKAMP * a
        ah = t - (t - a)
        al = a - ah
        t = _VELTKAMP * b
        bh = t - (t - b)
        bl = b - bh
        err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s = c - p
        v = s - c
        e = (c - (s - v)) + (-p - v)
        out = s + (e - err)
        return np.where(np.isfinite(out), out, s)
