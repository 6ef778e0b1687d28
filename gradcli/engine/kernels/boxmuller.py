"""PyTorch's vectorised Box-Muller for float32 (`randn`, `normal_` of 16+ contiguous
elements), with the arithmetic of its AVX2 kernel, so the bits are PyTorch's.

PyTorch's CPU normal kernel fills a float32 tensor of 16 or more elements with uniforms,
then turns each block of 16 into normals: lanes 0-7 give the radius from log(1 - u),
lanes 8-15 the angle 2*pi*u, cos goes to the first half and sin to the second. It takes
log and sin/cos from a Cephes-style AVX polynomial library (not libm), and the compiler
fused many of its multiply-adds into FMA instructions (read from the shipped binary: the
log polynomial, y*z + e*q1, e*q2 + x, the three-part angle reduction, both sin/cos
polynomials, y*z - z/2 and x*y2 + x). The normal kernel is registered for the AVX2 build
only (PyTorch keeps it off AVX-512 on purpose), so an AVX2 and an AVX-512 machine draw the
same numbers; a build without AVX2 (ATEN_CPU_CAPABILITY=default) takes libm's float log,
sin and cos instead, which this module does not reproduce.

Every step is one IEEE float32 operation in numpy, as the vector unit does it. A fused
multiply-add is taken in float64 (the product of two float32 is exact there) and rounded
to float32 (`_round32`); that rounds twice, which differs from one FMA only when the
float64 sum falls exactly halfway between two float32 without the exact sum being there.
Each half of a block depends on one uniform alone (2**24 possible values), so this was
checked exhaustively: tests/test_rng_boxmuller_exact.py finds every halfway sum over all
of them and recomputes those lanes with true FMAs in rational arithmetic; they agree, so
the standard normal path is PyTorch's bits for every input. The final fma(n, std, mean),
which depends on the caller's numbers, goes through `fma32`, which redoes halfway lanes
exactly. Products PyTorch fuses that are exact in float32 anyway (e*q2, y*DP1, y*DP2,
z*0.5) are plain float32 operations here.
"""

from __future__ import annotations

import math
import threading

import numpy as np

_F32 = np.float32
_F64 = np.float64

_SQRTHF = _F32(0.707106781186547524)
_LOG_P = [_F64(_F32(c)) for c in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                                   1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1,
                                   -2.4999993993E-1, 3.3333331174E-1)]
_LOG_Q1 = _F32(-2.12194440e-4)
_LOG_Q2 = _F32(0.693359375)
_FOPI = _F32(1.27323954473516)
_DP1 = _F32(-0.78515625)
_DP2 = _F32(-2.4187564849853515625e-4)
_DP3 = _F64(_F32(-3.77489497744594108e-8))
_COS_P = [_F64(_F32(c)) for c in (2.443315711809948E-005, -1.388731625493765E-003, 4.166664568298827E-002)]
_SIN_P = [_F64(_F32(c)) for c in (-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1)]
_TWO_PI = _F32(2.0 * math.pi)

#: blocks of 16 per pass: the temporaries (a few 8-lane float32/float64 arrays) stay in cache
_CHUNK_BLOCKS = 2048
_SQRTHF_MANT = 0x3504F3  # sqrt(1/2)'s mantissa bits: x in [0.5, 1) is below it iff its mantissa is


class _Scratch:
    """Reused temporaries for one chunk size (one set per thread)."""

    def __init__(self, lanes: int):
        self.f = [np.empty(lanes, _F32) for _ in range(5)]
        self.d = [np.empty(lanes, _F64) for _ in range(2)]
        self.i = [np.empty(lanes, np.int32) for _ in range(3)]


_LOCAL = threading.local()


def _scratch(lanes: int) -> _Scratch:
    per_thread = getattr(_LOCAL, "scratch", None)
    if per_thread is None:
        per_thread = _LOCAL.scratch = {}
    s = per_thread.get(lanes)
    if s is None:
        s = per_thread[lanes] = _Scratch(lanes)
    return s


def _round32(d64, out32) -> None:
    """A fused multiply-add's float64 sum, rounded to float32 into out32 (every FMA of the
    kernel ends here: tests/test_rng_boxmuller_exact.py watches it)."""
    out32[...] = d64


def _poly(x64, coefs, out32, y64):
    """Horner with one FMA per step: y = fma(y, x, c), rounded to float32 each time (a
    product of two float32 is exact in float64, the sum rounds once there, then to
    float32). `x64` is x as float64; the result is left in `out32`. (Mixed float32/float64
    operands would save calls but cost more per call, on small arrays too: measured.)"""
    np.multiply(x64, coefs[0], out=y64)
    last = len(coefs) - 2
    for i, c in enumerate(coefs[1:]):
        np.add(y64, c, out=y64)
        _round32(y64, out32)
        if i < last:
            y64[...] = out32
            np.multiply(y64, x64, out=y64)
    return out32


def _fill_blocks(data: np.ndarray, mean: np.float32, std: np.float32) -> None:
    """Turn `data` (float32 uniforms, shape (k, 16), C order) into normals in place.

    Lane selections and sign flips are integer bit operations on the float32 patterns, as
    the vector code does them (numpy's masked where/copyto run ~50x slower per element)."""
    k = data.shape[0]
    lanes = k * 8
    s = _scratch(lanes)
    x, y, e, z, r = s.f
    d0, d1 = s.d
    ia, ib, j = s.i
    xb, yb, eb, zb = (v.view(np.int32) for v in (x, y, e, z))

    # ---- radius = sqrt(-2 * log(1 - u)), lanes 0..7 ----
    np.subtract(_F32(1), data[:, :8], out=x.reshape(k, 8))  # u1 in [2**-24, 1]: no 0, no subnormal
    np.right_shift(xb, 23, out=ia)
    np.subtract(ia, 126, out=ia)  # the kernel's exponent (e - 127) + 1
    np.bitwise_and(xb, 0x7FFFFF, out=xb)  # the mantissa
    np.subtract(xb, _SQRTHF_MANT, out=ib)
    np.right_shift(ib, 31, out=ib)  # -1 where the scaled mantissa is below sqrt(1/2), else 0
    np.add(ia, ib, out=ia)  # e -= 1 there
    e[...] = ia
    np.bitwise_or(xb, 0x3F000000, out=xb)  # x in [0.5, 1)
    np.left_shift(ib, 23, out=ib)
    np.subtract(xb, ib, out=xb)  # doubled (exponent + 1) where below sqrt(1/2)
    np.subtract(x, _F32(1), out=x)  # x - 1, or x + x - 1: both exact
    np.multiply(x, x, out=z)
    d1[...] = x
    _poly(d1, _LOG_P, y, d0)
    np.multiply(y, x, out=y)
    np.multiply(e, _LOG_Q1, out=r)
    np.multiply(y, z, out=d0, dtype=_F64)  # fma(y, z, e*q1)
    np.add(d0, r, out=d0)
    _round32(d0, y)
    np.multiply(z, _F32(0.5), out=r)  # exact
    np.subtract(y, r, out=y)
    np.add(x, y, out=x)
    np.multiply(e, _LOG_Q2, out=r)  # exact: e is a small integer, q2 has 9 bits
    np.add(x, r, out=x)
    np.multiply(x, _F32(-2), out=x)
    np.sqrt(x, out=r)  # r: the radius

    # ---- sin and cos of theta = 2*pi*u, lanes 8..15 (theta >= 0) ----
    np.multiply(data[:, 8:], _TWO_PI, out=x.reshape(k, 8))
    np.multiply(x, _FOPI, out=y)
    j[...] = y  # truncation toward zero, as cvttps2dq
    np.add(j, 1, out=j)
    np.bitwise_and(j, ~1, out=j)
    y[...] = j
    np.multiply(y, _DP1, out=e)  # exact product
    np.add(x, e, out=x)
    np.multiply(y, _DP2, out=e)  # exact product
    np.add(x, e, out=x)
    np.multiply(y, _DP3, out=d0, dtype=_F64)  # fma(y, DP3, x)
    np.add(d0, x, out=d0)
    _round32(d0, x)
    np.multiply(x, x, out=z)
    d1[...] = z
    # cos polynomial: fma, fma, *z, fma(y, z, -z/2), +1
    _poly(d1, _COS_P, e, d0)
    np.multiply(e, z, out=e)
    np.multiply(e, z, out=d0, dtype=_F64)
    np.multiply(z, _F32(0.5), out=y)
    np.subtract(d0, y, out=d0)
    _round32(d0, e)
    np.add(e, _F32(1), out=e)  # e: the cos-type polynomial
    # sin polynomial: fma, fma, z*y, fma(x, t, x)
    _poly(d1, _SIN_P, y, d0)
    np.multiply(z, y, out=y)
    np.multiply(x, y, out=d0, dtype=_F64)
    np.add(d0, x, out=d0)
    _round32(d0, y)  # y: the sin-type polynomial
    # (j & 2) == 0: sin = y, cos = e; else swapped. m = all ones where swapped.
    np.bitwise_and(j, 2, out=ia)
    np.right_shift(ia, 1, out=ia)
    np.negative(ia, out=ia)
    np.bitwise_xor(yb, eb, out=ib)
    np.bitwise_and(ib, ia, out=ib)  # the bits that differ, where swapped
    np.bitwise_xor(yb, ib, out=zb)  # z: sin
    np.bitwise_xor(eb, ib, out=eb)  # e: cos
    # signs: sin negated where j & 4, cos where (j - 2) & 4 == 0
    np.bitwise_and(j, 4, out=ia)
    np.left_shift(ia, 29, out=ia)
    np.bitwise_xor(zb, ia, out=zb)
    np.subtract(j, 2, out=j)
    np.invert(j, out=j)
    np.bitwise_and(j, 4, out=j)
    np.left_shift(j, 29, out=j)
    np.bitwise_xor(eb, j, out=eb)

    # ---- n = r*cos, r*sin; fma(n, std, mean) ----
    r2 = r.reshape(k, 8)
    if std == 1 and mean == 0:  # fma(n, 1, 0) is n
        np.multiply(r2, e.reshape(k, 8), out=data[:, :8])
        np.multiply(r2, z.reshape(k, 8), out=data[:, 8:])
        return
    for n, half in ((e, slice(0, 8)), (z, slice(8, 16))):
        np.multiply(r, n, out=n)
        data[:, half] = fma32(n, std, mean).reshape(k, 8)


def _fill_range(blocks: np.ndarray, mean, std, lo: int, hi: int) -> None:
    for start in range(lo, hi, _CHUNK_BLOCKS):
        _fill_blocks(blocks[start:min(start + _CHUNK_BLOCKS, hi)], mean, std)


def fma32(a, b, c) -> np.ndarray:
    """float32 fma(a, b, c) over arrays (broadcasting), rounded once as the FMA instruction
    does. The product of two float32 is exact in float64; the float64 sum then rounds, and
    rounding that to float32 can differ from one rounding only when the float64 sum sits
    exactly halfway between two float32 (its low 29 bits 1000...0) without the exact sum
    being there: those rare lanes are redone in exact rational arithmetic."""
    a64 = np.asarray(a, np.float64)
    s = a64 * np.asarray(b, np.float64)
    s += np.asarray(c, np.float64)
    out = s.astype(np.float32)
    bits = s.view(np.int64)
    tie = (bits & 0x1FFFFFFF) == 0x10000000
    if tie.any():
        _fix_ties(out, tie, a, b, c, s)
    return out


def _fix_ties(out, tie, a, b, c, s) -> None:
    from fractions import Fraction

    shape = out.shape
    a, b, c = (np.broadcast_to(np.asarray(v, np.float32), shape) for v in (a, b, c))
    for idx in zip(*np.nonzero(tie)):
        exact = Fraction(float(a[idx])) * Fraction(float(b[idx])) + Fraction(float(c[idx]))
        near = Fraction(float(s[idx]))  # the float64 sum: a float32 midpoint
        if exact == near:
            continue  # a true tie: rounding it to even, as the cast did, is right
        # the two float32 around the midpoint; the exact value lies on one side of it
        even = np.float32(s[idx])
        if Fraction(float(even)) > near:
            below, above = np.nextafter(even, np.float32(-np.inf)), even
        else:
            below, above = even, np.nextafter(even, np.float32(np.inf))
        out[idx] = above if exact > near else below


#: from this many blocks (65,536 elements) the blocks are shared out over the engine's
#: threads (engine/parallel.py): each block is computed alone, so the bits do not change
_SPLIT_BLOCKS = 4096


def _fill_split(blocks: np.ndarray, mean, std) -> None:
    full = blocks.shape[0]
    if full >= _SPLIT_BLOCKS:
        from .. import parallel

        pieces = min(parallel.POOL.threads, parallel.POOL.cores, full // (_SPLIT_BLOCKS // 2))
        if pieces > 1 and parallel.perf_counter() >= parallel._blas_spin_until[0]:
            step = _CHUNK_BLOCKS
            bounds = [full * k // pieces // step * step for k in range(pieces)] + [full]
            parallel._run_pieces(_fill_range, (blocks, mean, std), bounds)
            return
    _fill_range(blocks, mean, std, 0, full)


def normal_fill_f32(data: np.ndarray, tail: np.ndarray | None, mean: float, std: float) -> None:
    """PyTorch's float32 normal fill of a C-contiguous 1-D `data` (16+ uniforms drawn, in
    place). `tail`: when len(data) is not a multiple of 16, the 16 fresh uniforms PyTorch
    draws for the last 16 elements (which it recomputes, overwriting normals already made)."""
    mean32, std32 = _F32(mean), _F32(std)
    n = data.shape[0]
    full = n // 16
    blocks = data[:full * 16].reshape(full, 16)
    _fill_split(blocks, mean32, std32)
    if tail is not None:
        last = np.ascontiguousarray(tail, dtype=_F32).reshape(1, 16)
        _fill_blocks(last, mean32, std32)
        data[n - 16:] = last.reshape(16)
