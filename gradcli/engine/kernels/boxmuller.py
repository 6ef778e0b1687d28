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
    """Reused temporaries for one chunk size (one set per thread). The sin and cos
    polynomials share rows of (2, lanes) arrays: one numpy call does both."""

    def __init__(self, lanes: int):
        self.f = [np.empty(lanes, _F32) for _ in range(5)]
        self.d = [np.empty(lanes, _F64) for _ in range(2)]
        self.i = [np.empty(lanes, np.int32) for _ in range(3)]
        self.f2 = np.empty((2, lanes), _F32)
        self.d2 = [np.empty((2, lanes), _F64) for _ in range(2)]
        self.i2 = np.empty((2, lanes), np.int32)


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
    float32). `x64` is x as float64; the result is left in `out32`. The coefficients are
    scalars, or columns (one per row of y64; x broadcasts over them). Every operation
    keeps one dtype: numpy's mixed float32/float64 loops cast through buffers and cost 3-6
    times a plain one."""
    mul, add = np.multiply, np.add
    mul(x64, coefs[0], y64)
    last = len(coefs) - 2
    for i, c in enumerate(coefs[1:]):
        add(y64, c, y64)
        _round32(y64, out32)
        if i < last:
            y64[...] = out32
            mul(y64, x64, y64)
    return out32


#: the cos-type (row 0) and sin-type (row 1) polynomials' coefficients, as columns
_TRIG_P = [np.array([[c], [s]], _F64) for c, s in zip(_COS_P, _SIN_P)]
#: sign of cos: flipped where (j + 2) & 4, of sin: where j & 4 (j is even)
_SIGN_SHIFT = np.array([[2], [0]], np.int32)


def _d0(value, dtype) -> np.ndarray:
    """A constant operand as a 0-d array of its operation's dtype: numpy takes one ~0.25 us
    faster than a scalar (no conversion per call), which is a third of the time of a
    look-ahead's few blocks (rng_sample._ahead_words). The dtype is the other operand's,
    so the loop, hence every rounding, is the one a scalar of that type selects."""
    return np.array(value, dtype)


_LOG_P0 = [_d0(c, _F64) for c in _LOG_P]
_I0 = {v: _d0(v, np.int32) for v in (1, 4, 23, 29, 30, 31, 126, ~1, 0x7FFFFF, 0x3F000000, _SQRTHF_MANT)}
_ONE32, _HALF32, _MINUS_TWO32 = _d0(1, _F32), _d0(0.5, _F32), _d0(-2, _F32)
_MINUS_HALF64 = _d0(-0.5, _F64)
_Q1_32, _Q2_32 = _d0(_LOG_Q1, _F32), _d0(_LOG_Q2, _F32)
_TWO_PI32, _FOPI32, _DP1_32, _DP2_32 = (_d0(c, _F32) for c in (_TWO_PI, _FOPI, _DP1, _DP2))
_DP3_64 = _d0(_DP3, _F64)


def _fill_blocks(data: np.ndarray, mean: np.float32, std: np.float32) -> None:
    """Turn `data` (float32 uniforms, shape (k, 16), C order) into normals in place.

    Lane selections and sign flips are integer bit operations on the float32 patterns, as
    the vector code does them (numpy's masked where/copyto run ~50x slower per element).
    Each numpy call costs ~0.5 us however few its lanes: for one block (randn(16)) the
    call count is the time, so work that can share a call does."""
    mul, add, sub = np.multiply, np.add, np.subtract
    band, bxor, shr, shl = np.bitwise_and, np.bitwise_xor, np.right_shift, np.left_shift
    k = data.shape[0]
    lanes = k * 8
    s = _scratch(lanes)
    x, y, e, z, r = s.f
    d0, d1 = s.d
    ia, ib, j = s.i
    t2, i2 = s.f2, s.i2
    z2, w2 = s.d2
    xb = x.view(np.int32)

    # ---- radius = sqrt(-2 * log(1 - u)), lanes 0..7 ----
    sub(_ONE32, data[:, :8], x.reshape(k, 8))  # u1 in [2**-24, 1]: no 0, no subnormal
    shr(xb, _I0[23], ia)
    sub(ia, _I0[126], ia)  # the kernel's exponent (e - 127) + 1
    band(xb, _I0[0x7FFFFF], xb)  # the mantissa
    sub(xb, _I0[_SQRTHF_MANT], ib)
    shr(ib, _I0[31], ib)  # -1 where the scaled mantissa is below sqrt(1/2), else 0
    add(ia, ib, ia)  # e -= 1 there
    e[...] = ia
    np.bitwise_or(xb, _I0[0x3F000000], xb)  # x in [0.5, 1)
    shl(ib, _I0[23], ib)
    sub(xb, ib, xb)  # doubled (exponent + 1) where below sqrt(1/2)
    sub(x, _ONE32, x)  # x - 1, or x + x - 1: both exact
    mul(x, x, z)
    d1[...] = x
    _poly(d1, _LOG_P0, y, d0)
    mul(y, x, y)
    mul(e, _Q1_32, r)
    d0[...] = y  # fma(y, z, e*q1)
    d1[...] = z
    mul(d0, d1, d0)
    d1[...] = r
    add(d0, d1, d0)
    _round32(d0, y)
    mul(z, _HALF32, r)  # exact
    sub(y, r, y)
    add(x, y, x)
    mul(e, _Q2_32, r)  # exact: e is a small integer, q2 has 9 bits
    add(x, r, x)
    mul(x, _MINUS_TWO32, x)
    np.sqrt(x, r)  # r: the radius

    # ---- sin and cos of theta = 2*pi*u, lanes 8..15 (theta >= 0) ----
    mul(data[:, 8:], _TWO_PI32, x.reshape(k, 8))
    mul(x, _FOPI32, y)
    j[...] = y  # truncation toward zero, as cvttps2dq
    add(j, _I0[1], j)
    band(j, _I0[~1], j)
    y[...] = j
    mul(y, _DP1_32, e)  # exact product
    add(x, e, x)
    mul(y, _DP2_32, e)  # exact product
    add(x, e, x)
    d0[...] = y  # fma(y, DP3, x)
    mul(d0, _DP3_64, d0)
    d1[...] = x
    add(d0, d1, d0)
    _round32(d0, x)
    mul(x, x, z)
    # both polynomials at once: row 0 the cos type, row 1 the sin type, on z (one row of
    # z2, broadcast: its second row takes x below)
    z2[0] = z
    _poly(z2[:1], _TRIG_P, t2, w2)
    # cos: fma(p*z, z, -z/2) + 1; sin: fma(p*z, x, x)
    mul(t2, z, t2)
    w2[...] = t2
    z2[1] = x
    mul(w2, z2, w2)
    mul(z2[0], _MINUS_HALF64, z2[0])  # exact (z is far above float32's subnormals or zero)
    add(w2, z2, w2)
    _round32(w2, t2)
    add(t2[0], _ONE32, t2[0])
    # (j & 2) == 0: cos, sin = rows 0, 1; else swapped: exchange the bits that differ
    tb = t2.view(np.int32)
    shl(j, _I0[30], ia)
    shr(ia, _I0[31], ia)  # all ones where swapped
    bxor(tb[0], tb[1], ib)
    band(ib, ia, ib)
    bxor(tb, ib, tb)
    # signs: cos negated where (j + 2) & 4, sin where j & 4
    add(j, _SIGN_SHIFT, i2)
    band(i2, _I0[4], i2)
    shl(i2, _I0[29], i2)
    bxor(tb, i2, tb)

    # ---- n = r*cos, r*sin; fma(n, std, mean) ----
    halves = data.reshape(k, 2, 8).transpose(1, 0, 2)
    mul(t2.reshape(2, k, 8), r.reshape(1, k, 8), halves)
    if std == 1 and mean == 0:  # fma(n, 1, 0) is n
        return
    data[...] = fma32(data, std, mean)


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
