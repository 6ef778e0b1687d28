"""PyTorch's float32 exp, log, log1p and tanh as its CPU kernels compute them: SLEEF's vector
code (expf8_u10, logf8_u10, log1pf8_u10, tanhf8_u10, built for AVX2 with fused multiply-adds)
and glibc's expf in the scalar tails; and the float32 sigmoid and mish that combine them.

With the switch off (gradcli.engine.kernels.EXACT) each is numpy's own function.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import kernels as _switch
from ..parallel import get_num_threads, split_elementwise


def rounded_once(fn):
    """fn computed in float64 and rounded once for float32 input: PyTorch's float32 kernels
    (MKL's HA functions for torch.exp and torch.tanh, SLEEF elsewhere, within 1 ulp) agree
    with that on ~99% of inputs for exp/tanh/log1p (tanh: 99.96% with MKL's AVX2 code, 99.0%
    with its AVX-512 code) and ~95% for sin/cos, where numpy's own float32 kernels agree on
    only 60-90% (a last-bit difference shows after cancellation, e.g. in softmax's
    gradient)."""
    def forward(a):
        if a.dtype == np.float32 and _switch.EXACT:
            with np.errstate(over="ignore"):
                return fn(a.astype(np.float64)).astype(np.float32)
        return fn(a)

    forward.__name__ = fn.__name__
    return forward


def power(a, b):
    """a ** b (numpy operands) for pow's tensor forms. A float32 result is computed in
    float64 and rounded once: PyTorch's scalar loop (glibc's powf, where the innermost
    dimension is short or broadcast, as in x.unsqueeze(-1).pow(tensor([1, 2, 3]))) gives
    that on every element measured, its SLEEF vector code (powf8_u10) on ~98%. numpy's own
    float32 power is an AVX-512 SVML kernel on CPUs that have it, off PyTorch's bits on
    ~7-20% of elements, and other bits on other CPUs."""
    if _switch.EXACT and np.result_type(a, b) == np.float32:
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            return np.power(np.asarray(a, np.float64), np.asarray(b, np.float64)).astype(np.float32)
    return np.power(a, b)


# ------------------------------------- the float32 exp and log of PyTorch's vector kernels
# PyTorch's softmax and log_softmax kernels (and their backwards) call Vectorized<float>'s
# exp() and log(): SLEEF's expf8_u10 and logf8_u10, built for AVX2 with fused
# multiply-adds. Unlike torch.exp (MKL's vsExp, which the rounded-once _exp matches on
# ~99% of elements) SLEEF's exp is off the correctly rounded value on ~9% of elements
# (up to 0.95 ulp), which moved ~60% of float32 log_softmax outputs off PyTorch's bits.
# vec_exp32 and vec_log32 redo SLEEF's steps: each float32 operation as numpy float32
# arithmetic, each fused multiply-add as an exact float64 product plus its addend,
# rounded once to float32 (twice, strictly, but the float64 sum is a float32 halfway
# point only with probability ~2^-29).
_F32_, _F64_, _I32_ = np.float32, np.float64, np.int32
_EXP_BY_LN2 = np.array(1.442695040888963407359924681001892137426645954152985934135449406931, _F32_)
_LN2_UPPER = np.array(0.693145751953125, _F32_)  # 15 bits: q * _LN2_UPPER is exact
_MINUS_LN2_LOWER = np.array(-float(_F32_(1.428606765330187045e-06)))
_EXP_COEFFS = [float(_F32_(c)) for c in (
    0.000198527617612853646278381, 0.00139304355252534151077271, 0.00833336077630519866943359,
    0.0416664853692054748535156, 0.166666671633720397949219, 0.5)]
_EXP_C0, _HALF64, _ONE32 = np.array(_EXP_COEFFS[0]), np.array(0.5), np.array(1, _F32_)
# With |s| <= ln(2)/2 the first four Horner steps each stay inside one binade: [2^-10,
# 2^-9), [2^-7, 2^-6), [2^-5, 2^-4), [2^-3, 2^-2). There rounding to float32 is rounding
# to a multiple of 2^(e-23), which float64 does exactly by adding and taking away
# M = 1.5 * 2^(e+29) (M + c is exact: c is such a multiple too), one ufunc call cheaper.
_EXP_STEPS = [(np.array(c + 1.5 * 2.0 ** (e + 29)), np.array(1.5 * 2.0 ** (e + 29)))
              for c, e in zip(_EXP_COEFFS[1:5], (-10, -7, -5, -3))]


def _vec_exp32(d, out=None):
    """SLEEF's expf8_u10 of a float32 array (bit for bit, also for inf, nan, overflow and
    the subnormal results down to its cut at -104)."""
    mul, add, sub = np.multiply, np.add, np.subtract
    with np.errstate(invalid="ignore", over="ignore"):
        q = mul(d, _EXP_BY_LN2)
        np.rint(q, out=q)
        s = mul(q, _LN2_UPPER)
        sub(d, s, out=s)  # fma(q, -ln2_upper, d): the product is exact
        t = mul(q, _MINUS_LN2_LOWER, dtype=_F64_)
        add(t, s, out=t)
        s = t.astype(_F32_)  # fma(q, -ln2_lower, s)
        s64 = s.astype(_F64_)
        u = mul(s64, _EXP_C0)
        for c_plus_m, m in _EXP_STEPS:  # u = fma(u, s, c), rounded by the binade's M
            add(u, c_plus_m, out=u)
            sub(u, m, out=u)
            mul(u, s64, out=u)
        add(u, _HALF64, out=u)
        u32 = u.astype(_F32_)  # the last step's result straddles 0.5: rounded by a cast
        mul(s, s, out=s)
        mul(s, u32, out=u, dtype=_F64_)
        add(u, s64, out=u)
        u32 = u.astype(_F32_)  # fma(s*s, u, s)
        add(u32, _ONE32, out=u32)
        # times 2^q: below -104 that rounds to 0, past 88.7 it overflows to inf; but far
        # out (q past int32, inf) the steps above are garbage: SLEEF's cuts then apply
        r = np.ldexp(u32, q.astype(_I32_), out=out)
        if q.size and not (q.min() >= -160 and q.max() <= 160):  # (or nan)
            r[d < -104] = 0
            r[d > 100] = np.inf
    return r


_vec_exp32_split = split_elementwise(_vec_exp32)


def vec_exp32(d):
    """SLEEF's expf8_u10 of a float32 array, on every core for a large one; numpy's exp
    with the switch off."""
    if not _switch.EXACT:
        with np.errstate(over="ignore"):
            return np.exp(d)
    return _vec_exp32_split(d)


def _two_to_the_32nds():
    """2^(i/32) for i < 32, correctly rounded doubles (from 60-digit decimals)."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 60
        return np.array([float(Decimal(2) ** (Decimal(i) / 32)) for i in range(32)])


# glibc's expf (2.27 and later: 2^(k/32) from a table times a cubic in the rest, in double,
# rounded once to float), which std::exp runs in the kernels' scalar tails: it differs from
# the correctly rounded value on ~0.06% of inputs. Its double steps are redone in float64
# (its fused multiply-adds as two roundings: a different float only when the double lies
# within ~2^-52 of a float32 halfway point); matched glibc 2.36's expf on 800,000 inputs
# (random bit patterns among them).
@lru_cache(maxsize=1)
def _expf_table():
    """Made on first use: the decimals take ~5 ms, which every start-up would pay."""
    return _two_to_the_32nds().view(np.uint64) - (np.arange(32, dtype=np.uint64) << np.uint64(47))


_EXPF_BY_LN2 = float.fromhex("0x1.71547652b82fep+0") * 32
_EXPF_SHIFT = float.fromhex("0x1.8p+52")
_EXPF_C = (float.fromhex("0x1.c6af84b912394p-5") / 32 ** 3,
           float.fromhex("0x1.ebfce50fac4f3p-3") / 32 ** 2,
           float.fromhex("0x1.62e42ff0c52d6p-1") / 32)


def glibc_expf32(x):
    """glibc's expf of a float32 array, bit for bit (std::exp(float) in PyTorch's scalar
    code on Linux)."""
    if not _switch.EXACT:
        with np.errstate(over="ignore"):
            return np.exp(np.asarray(x, _F32_))
    xd = np.asarray(x, _F32_).astype(_F64_)
    with np.errstate(invalid="ignore", over="ignore"):
        z = xd * _EXPF_BY_LN2
        k = z + _EXPF_SHIFT  # z rounded to an integer, in k's low bits
        bits = k.view(np.int64)
        r = z - (k - _EXPF_SHIFT)
        scale = _expf_table()[bits & 31] + (bits.view(np.uint64) << np.uint64(47))
        y = (_EXPF_C[0] * r + _EXPF_C[1]) * (r * r) + (_EXPF_C[2] * r + 1)
        y *= scale.view(_F64_)
        out = y.astype(_F32_)
        if xd.size and not (xd.min() > -88.0 and xd.max() < 88.0):
            # glibc's own cases: overflow, underflow, inf, nan
            out = np.where(xd > float.fromhex("0x1.62e42ep6"), _F32_(np.inf), out)
            out = np.where(xd < float.fromhex("-0x1.9fe368p6"), _F32_(0), out)
            out = np.where(np.isnan(xd), _F32_(np.nan), out)
    return out


_LOG_BY_EXPONENT = np.arange(-160, 140) * (float(_F32_(0.69314718246459960938))
                                           + float(_F32_(-1.904654323148236017e-09)))
_LOG_COEFFS = [np.array(float(_F32_(c))) for c in (0.3027294874, 0.3996108174, 0.6666694880)]
# |x| < 0.2, so x^2 < 0.04: the polynomial's two steps stay in [0.25, 0.5) and [0.5, 1)
_LOG_STEPS = [(np.array(float(c) + 1.5 * 2.0 ** (e + 29)), np.array(1.5 * 2.0 ** (e + 29)))
              for c, e in zip(_LOG_COEFFS[1:], (-2, -1))]
_FOUR_THIRDS = np.array(1.0 / 0.75, _F32_)
_ONE64 = np.array(1.0)
_SMALLEST_NORMAL32 = _F32_(2.0 ** -126)


def _vec_log32_normal(d, shift=None):
    """SLEEF's logf8_u10 of positive normal finite float32 values: d = m * 2^e with m in
    [0.75, 1.5), x = (m - 1)/(m + 1), log d = e ln2 + 2x + x^3 p(x^2). Its float32 steps
    (x's leading float, x^2, the polynomial, x^3 p) are redone exactly; its float-pair
    steps (x to ~2^-45, e ln2 and the sums) are computed in float64, which differed from
    the exact pair arithmetic on 2 of 132 million values tried (a float32 halfway case)."""
    mul, add, sub = np.multiply, np.add, np.subtract
    e = mul(d, _FOUR_THIRDS).view(_I32_)
    e >>= 23
    e -= 127
    m = sub(d.view(_I32_), e << 23).view(_F32_)  # d * 2^-e
    if shift is not None:
        e -= shift
    num = sub(m, _ONE32)  # exact
    x32 = _ONE32 / add(m, _ONE32)
    x32 *= num
    x2 = mul(x32, x32)
    x264 = x2.astype(_F64_)
    (c1, m1), (c2, m2) = _LOG_STEPS  # fma(p, x2, c) twice, rounded by its binade's M
    p = mul(x264, _LOG_COEFFS[0])
    p += c1
    p -= m1
    p *= x264
    p += c2
    p -= m2
    cubic = mul(x2, x32)
    cubic *= p  # float32 times float32 in float64, rounded once into cubic
    total = num.astype(_F64_)
    total /= add(m, _ONE64)
    total += total
    e += 160
    total += _LOG_BY_EXPONENT.take(e)
    total += cubic
    return total.astype(_F32_)


def vec_log32(d):
    """SLEEF's logf8_u10 of a float32 array (_vec_log32_normal; zeros, negatives,
    subnormals, inf and nan as SLEEF treats them)."""
    d = np.asarray(d, _F32_)
    if not _switch.EXACT:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(d)
    if d.size and d.min() >= _SMALLEST_NORMAL32 and d.max() < np.inf:
        return _vec_log32_normal(d)
    with np.errstate(invalid="ignore", over="ignore"):
        tiny = (d > 0) & (d < _SMALLEST_NORMAL32)
        x = np.where(tiny, d * _F32_(2.0 ** 64), d)
        x = np.where((x > 0) & (x < np.inf), x, _ONE32)
        r = _vec_log32_normal(x, np.where(tiny, 64, 0).astype(_I32_))
        r = np.where(d == np.inf, _F32_(np.inf), r)
        r = np.where((d < 0) | np.isnan(d), _F32_(np.nan), r)
        return np.where(d == 0, _F32_(-np.inf), r).astype(_F32_)


def vec_log1p32(d):
    """SLEEF's log1pf8_u10 of float32 values in [0, inf) (and nan): d + 1 = m' * 2^e with
    m' in [0.75, 1.5); m = d * 2^-e + (2^-e - 1) (one fused rounding), x = m / (2 + m),
    log1p d = e ln2 + 2x + x^3 p(x^2), as vec_log32 redoes SLEEF's logf. Where d/2 is
    subnormal SLEEF gives 2 * (d/2 rounded). Matched PyTorch's log_sigmoid on 2.2 million
    float32 inputs (exp(-|x|) for x across [-110, 110], 0, +-inf, nan) bit for bit."""
    if not _switch.EXACT:
        with np.errstate(invalid="ignore"):
            return np.log1p(np.asarray(d, _F32_))
    shape = np.shape(d)
    d = np.asarray(d, _F32_).reshape(-1)
    with np.errstate(all="ignore"):
        dp1 = d + _F32_(1)
        e = ((dp1 * _FOUR_THIRDS).view(_I32_) >> 23) - 127
        e = np.where(np.isnan(d), 0, e)
        t = np.ldexp(1.0, -e)
        m = (d.astype(_F64_) * t + (t - 1)).astype(_F32_)
        x32 = (m * (_F32_(1) / (m + _F32_(2)))).astype(_F32_)
        m64 = m.astype(_F64_)
        x64 = m64 / (m64 + 2)
        x2 = x32 * x32
        x264 = x2.astype(_F64_)
        (c1, m1), (c2, m2) = _LOG_STEPS  # fma(p, x2, c) twice, rounded by its binade's M
        p = x264 * _LOG_COEFFS[0]
        p += c1
        p -= m1
        p *= x264
        p += c2
        p -= m2
        cubic = x2 * x32
        cubic *= p  # float32 times float32 in float64, rounded once into cubic
        r = np.asarray((_LOG_BY_EXPONENT.take(e + 160) + 2 * x64 + cubic).astype(_F32_))
        tiny = (d > 0) & (d < _F32_(2.0 ** -125))
        if tiny.any():
            r[tiny] = (d[tiny] * _F32_(0.5)) * _F32_(2)
        r[np.isnan(d)] = np.nan
    return r.reshape(shape)


EXACT_SIGMOID_MAX = 65536  # float32 elements: see sigmoid32


def _sigmoid32_as_pytorch(a):
    """PyTorch's float32 sigmoid kernel: 1 / (1 + exp(-a)), each step in float32. Its
    vectorized loop takes two 8-lane vectors at a time, with SLEEF's exp (vec_exp32), and
    the last n % 16 elements of each thread's chunk one by one, with glibc's expf
    (glibc_expf32): its bits on every element tried (1,000,003 values, and every size up
    to 40), where numpy's exp gave them on 83% (visible in printed text after a
    cancellation, such as binary_cross_entropy_with_logits' gradient sigmoid(x) - t: 3.6%
    of random cases; a tensor under 16 elements is all scalar tail). The elements go in
    memory order, as PyTorch's iterator takes them (a transposed input too)."""
    if a.flags.c_contiguous or not a.flags.f_contiguous:
        return _sigmoid32_flat(np.ascontiguousarray(a).reshape(-1)).reshape(a.shape)
    return _sigmoid32_flat(a.T.reshape(-1)).reshape(a.T.shape).T


_GRAIN = 32768  # at::internal::GRAIN_SIZE: a thread's chunk is at least this long


def _scalar_tails(n: int):
    """Which of n elements PyTorch's vectorised elementwise kernels compute one by one: each
    thread's chunk (at least _GRAIN long) runs two 8-lane vectors at a time, then its last
    chunk % 16 elements in scalar code."""
    threads = max(1, min(get_num_threads(), -(-n // _GRAIN)))
    chunk = -(-n // threads)
    scalar = np.zeros(n, bool)
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        scalar[start + (stop - start) // 16 * 16:stop] = True
    return scalar


def _sigmoid32_flat(x):
    n = x.size
    if n == 0:
        return x.copy()
    scalar = _scalar_tails(n)
    with np.errstate(over="ignore"):
        e = _vec_exp32(np.negative(x))
        if scalar.any():
            e[scalar] = glibc_expf32(np.negative(x[scalar]))
        return np.divide(_ONE32, np.add(e, _ONE32, out=e), out=e)




def sigmoid32(a):
    """PyTorch's float32 sigmoid, bit for bit, for float32 arrays of up to EXACT_SIGMOID_MAX
    elements; None for the others (and with the switch off): numpy's formula then. The
    SLEEF emulation costs ~30 numpy calls (25 us on 3 elements against 3, 12 ms on 10^6
    against 1.7), so larger ones, which print summarized, keep numpy's exp."""
    if (_switch.EXACT and type(a) is np.ndarray and a.dtype == _F32_
            and a.size <= EXACT_SIGMOID_MAX):
        return _sigmoid32_as_pytorch(a)
    return None


# ------------------------------------------- the float32 tanh of PyTorch's vector kernels
# Vectorized<float>::tanh is SLEEF's tanhf8_u10 (AVX2) / tanhf16_u10 (AVX-512), the same
# steps and bits: exp(2|x|) as a float pair (SLEEF's expk2f), then (d - 1/d) / (d + 1/d) in
# float-pair arithmetic, past |x| = 8.664339742 exactly 1. PyTorch calls it inside other
# kernels (mish's vector body, GELU's tanh approximation). torch.tanh itself is not it:
# PyTorch's MKL builds run float32 tanh through MKL's vmsTanh (its own bits, which differ
# between MKL's AVX2 and AVX-512 code), and this one agrees with that on only ~98% of
# elements where the float64 tanh rounded once agrees on 99.0-99.9%.
# Each float32 operation below is numpy float32 arithmetic; each fused multiply-add an exact
# float64 product plus its addend, rounded to float32 (as _vec_exp32 does); each exact
# product error x*y - fl(x*y) is exact in float64.
_TANH_CUT = _F32_(8.664339742)
_TANH_BY_LN2 = _EXP_BY_LN2
_MINUS_LN2_UPPER, _MINUS_LN2_LOWER32 = -_LN2_UPPER, _F32_(-1.428606765330187045e-06)
_EXPK_COEFFS = [_F32_(c) for c in (0.1980960224e-3, 0.1394256484e-2, 0.8333456703e-2,
                                   0.4166637361e-1)]
_EXPK_SIXTH = _F32_(0.166666659414234244790680580464)
_HALF32 = _F32_(0.5)
_ALL_ONES_NAN = np.array(-1, _I32_).view(_F32_)  # SLEEF ORs a nan input's lane to all ones


def _fma32(a, b, c):
    """a*b + c for float32 arrays, rounded once (but for float64 halfway ties)."""
    r = np.multiply(a, b, dtype=_F64_)
    r += c
    return r.astype(_F32_)


def _product_error(x, y, s):
    """x*y - s for s = fl(x*y): exact (a fused multiply-subtract)."""
    r = np.multiply(x, y, dtype=_F64_)
    r -= s
    return r.astype(_F32_)


def _pair_plus(xh, xl, y):
    """SLEEF's dfadd2_vf2_vf2_vf: the pair (xh, xl) plus the float y."""
    s = xh + y
    v = s - xh
    return s, ((xh - (s - v)) + (y - v)) + xl


def _pair_times(xh, xl, yh, yl):
    """SLEEF's dfmul_vf2_vf2_vf2 with FMA: the pair product's leading float and tail."""
    s = xh * yh
    return s, _fma32(xh, yl, _fma32(xl, yh, _product_error(xh, yh, s)))


def _expk2_32(y):
    """SLEEF's expk2f of the pair (y, 0) for 0 <= y <= 8.67: exp(y) as a float pair."""
    q = np.rint(y * _TANH_BY_LN2)
    sh, sl = _pair_plus(y, np.zeros_like(y), q * _MINUS_LN2_UPPER)
    sh, sl = _pair_plus(sh, sl, q * _MINUS_LN2_LOWER32)
    u = np.full_like(y, _EXPK_COEFFS[0])
    for c in _EXPK_COEFFS[1:]:
        u = _fma32(u, sh, c)
    s = sh * u  # dfmul_vf2_vf2_vf(s, u)
    th, tl = _pair_plus(s, _fma32(sl, u, _product_error(sh, u, s)), _EXPK_SIXTH)
    th, tl = _pair_plus(*_pair_times(sh, sl, th, tl), _HALF32)
    sq = sh * sh  # dfsqu_vf2_vf2(s)
    sq_tail = _fma32(sh + sh, sl, _product_error(sh, sh, sq))
    ph, pl = _pair_times(sq, sq_tail, th, tl)
    s = sh + ph  # dfadd2_vf2_vf2_vf2(s, p)
    v = s - sh
    th, tl = s, ((sh - (s - v)) + (ph - v)) + (sl + pl)
    s = _ONE32 + th  # dfadd_vf2_vf_vf2(1, t)
    tl = ((_ONE32 - s) + th) + tl
    scale = np.ldexp(_ONE32, q.astype(_I32_))  # 2^q, q <= 13: exact
    return s * scale, tl * scale


def _vec_tanh32(x, out=None):
    """SLEEF's tanhf8_u10 of a float32 array, bit for bit (signed zeros, subnormals, the
    cut at 8.664339742, +-inf, and nan as SLEEF's all-ones nan)."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        y = np.abs(x)
        far = ~(y <= _TANH_CUT)  # also nan
        if far.any():
            y[far] = 0
        dh, dl = _expk2_32(y)
        eh = _ONE32 / dh  # dfrec_vf2_vf2(d): two fused 1 - d*e steps
        w = (_ONE32 - np.multiply(dh, eh, dtype=_F64_)).astype(_F32_)
        el = eh * (w - np.multiply(dl, eh, dtype=_F64_)).astype(_F32_)
        nh = dh - eh  # dfadd_vf2_vf2_vf2(d, -e)
        nl = (((dh - nh) - eh) + dl) - el
        ddh = dh + eh  # dfadd_vf2_vf2_vf2(d, e)
        ddl = (((dh - ddh) + eh) + dl) + el
        t = _ONE32 / ddh  # dfdiv_vf2_vf2_vf2(n, dd)
        s = nh * t
        u = _product_error(t, nh, s)
        v = ((_ONE32 - np.multiply(ddh, t, dtype=_F64_)).astype(_F32_)
             - np.multiply(ddl, t, dtype=_F64_)).astype(_F32_)
        r = s + _fma32(s, v, _fma32(nl, t, u))
        if far.any():
            r[far] = 1
        r = np.copysign(r, x, out=out)
        nan = np.isnan(x)
        if nan.any():
            r[nan] = _ALL_ONES_NAN
    return r


_vec_tanh32_split = split_elementwise(_vec_tanh32)


def vec_tanh32(x):
    """PyTorch's Vectorized<float>::tanh (SLEEF's tanhf8_u10) of a float32 array, on every
    core for a large one; numpy's tanh with the switch off."""
    x = np.asarray(x, _F32_)
    if not _switch.EXACT:
        return np.tanh(x)
    if x.ndim == 0:
        return _vec_tanh32(x.reshape(1)).reshape(())
    return _vec_tanh32_split(np.ascontiguousarray(x))


def _mish32_flat(x):
    """mish of a flat float32 array as PyTorch's kernel runs it: x * tanh(log1p(exp(x))),
    SLEEF's expf8, log1pf8 and tanhf8 over two 8-lane vectors at a time, and the last
    n % 16 elements of each thread's chunk one by one with glibc's expf, log1pf and tanhf
    (the latter two taken here in float64, rounded once: within an ulp, not their bits)."""
    n = x.size
    scalar = _scalar_tails(n)
    with np.errstate(all="ignore"):
        e = vec_exp32(x)
        finite = e < np.inf
        t = np.ones(n, _F32_)  # log1p(inf) = inf, tanh(inf) = 1
        t[finite] = vec_tanh32(vec_log1p32(e[finite]))
        if scalar.any():
            xs = x[scalar]
            t[scalar] = np.tanh(np.log1p(glibc_expf32(xs).astype(_F64_))).astype(_F32_)
        # (a nan's bits differ from PyTorch's, which vary between its two vectors)
        return np.multiply(x, t, out=t)


def mish32(a):
    """PyTorch's float32 mish (its bits on every element of the vector body: SLEEF's exp,
    log1p and tanh; the scalar tail within an ulp) for a C- or F-contiguous float32 array
    of up to EXACT_SIGMOID_MAX elements; None otherwise (and with the switch off)."""
    if not (_switch.EXACT and type(a) is np.ndarray and a.dtype == _F32_
            and 0 < a.size <= EXACT_SIGMOID_MAX):
        return None
    if a.flags.c_contiguous:
        return _mish32_flat(a.reshape(-1)).reshape(a.shape)
    if a.flags.f_contiguous:
        return _mish32_flat(a.T.reshape(-1)).reshape(a.T.shape).T
    return None
