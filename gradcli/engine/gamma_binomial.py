"""The gamma and binomial samplers and the gamma gradient as PyTorch's CPU kernels compute
them, on Python floats and numpy arrays (loaded on first use by gradcli.engine.ops.gamma_sampler
and the distributions: nothing at start-up needs them).

The gamma sampler replays PyTorch's serial kernel on the same generator: Marsaglia and
Tsang's squeeze-and-reject loop over double-precision uniforms and cached Box-Muller normals
(alpha < 1 boosted by u^(1/alpha)); the binomial sampler its inversion and BTRS loops. The
gamma gradient is PyTorch's piecewise approximation of -(dF/dalpha)/f, evaluated in double
precision, since it, not the exact derivative, is what PyTorch returns.
"""

from __future__ import annotations

import math

import numpy as np

from .dtypes import finfo

_F32 = np.float32
_THIRD_F32 = float(_F32(1.0) / _F32(3.0))
_SQUEEZE_F32 = float(_F32(0.0331))


def _gamma_draw(gen, alpha: float, single: bool) -> float:
    """One standard-gamma variate (float literals of the C++ kept as float32 constants;
    `single`: the float32 kernel, whose 1/alpha and alpha + 1 are float operations)."""
    from .rng_sample import normal_scalar, uniform01_f64

    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        power = float(_F32(1.0) / _F32(alpha)) if single else 1.0 / alpha
        scale *= (1.0 - float(uniform01_f64(gen, 1)[0])) ** power
        alpha = float(_F32(alpha) + _F32(1.0)) if single else alpha + 1.0
    d = float(_F32(alpha) - _F32(_THIRD_F32)) if single else alpha - _THIRD_F32
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = float(normal_scalar(gen, 1, 0.0, 1.0)[0])
            y = 1.0 + c * x
            if not y <= 0:  # (as the C++'s `while (y <= 0)`: a nan alpha ends, not loops)
                break
        v = y * y * y
        u = 1.0 - float(uniform01_f64(gen, 1)[0])
        xx = x * x
        if u < 1.0 - _SQUEEZE_F32 * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def gamma_variates(alphas, single: bool) -> np.ndarray:
    """Draws for a flat run of alphas, in order, from the default generator."""
    from .random import generator_of

    gen = generator_of(None)
    return np.array([_gamma_draw(gen, float(a), single) for a in alphas], dtype=np.float64)


def standard_gamma_array(alpha):
    single = alpha.dtype == np.float32
    out = gamma_variates(np.ascontiguousarray(alpha).reshape(-1), single).reshape(alpha.shape)
    npdt = alpha.dtype
    return np.fmax(out.astype(npdt), finfo(npdt).tiny)  # (std::max(tiny, nan): tiny)


def _digamma(x: float) -> float:
    from scipy.special import digamma

    return float(digamma(x))


#: PyTorch's fit of the gradient between the small-x series and the large-alpha expansion:
#: rows are powers of u = log(x/alpha), columns numerator (4) and denominator (4) in v
_RATIONAL = ((0.16009398, -0.094634809, 0.025146376, -0.0030648343,
              1, 0.32668115, 0.10406089, 0.0014179084),
             (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
              0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
             (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
              0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07))


def _gamma_grad_one(alpha: float, x: float) -> float:
    """d x / d alpha for a standard-gamma draw x, by PyTorch's piecewise approximation."""
    if x < 0.8:
        numer, denom = 1.0, alpha
        series1 = numer / denom
        series2 = numer / (denom * denom)
        for i in range(1, 6):
            numer *= -x / i
            denom += 1
            series1 += numer / denom
            series2 += numer / (denom * denom)
        pow_x_alpha = x ** alpha
        pdf = x ** (alpha - 1) * math.exp(-x)
        cdf = pow_x_alpha * series1
        cdf_alpha = (math.log(x) - _digamma(alpha)) * cdf - pow_x_alpha * series2
        result = -cdf_alpha / pdf
        return 0.0 if math.isnan(result) else result
    if alpha > 8.0:
        if 0.9 * alpha <= x <= 1.1 * alpha:
            numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
            numer_2 = (1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
                       + alpha * (107 + 3600 * x))
            return numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
        denom = math.sqrt(8 * alpha)
        term2 = denom / (alpha - x)
        term3 = (x - alpha - alpha * math.log(x / alpha)) ** -1.5
        term23 = term2 - term3 if x < alpha else term2 + term3
        term1 = math.log(x / alpha) * term23 - \
            math.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
        stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
        return -stirling * x * term1 / denom
    u = math.log(x / alpha)
    v = math.log(alpha)
    coef = [_RATIONAL[0][i] + u * (_RATIONAL[1][i] + u * _RATIONAL[2][i]) for i in range(8)]
    p = coef[0] + v * (coef[1] + v * (coef[2] + v * coef[3]))
    q = coef[4] + v * (coef[5] + v * (coef[6] + v * coef[7]))
    return math.exp(p / q)


def gamma_grad_array(alpha, x):
    flat_a = np.broadcast_to(alpha, x.shape).reshape(-1)
    out = [_gamma_grad_one(float(a), float(v)) for a, v in zip(flat_a, x.reshape(-1))]
    return np.array(out, dtype=np.float64).reshape(x.shape).astype(x.dtype)


# ---------------------------------------------------------------- binomial
def _tail(k: float) -> float:
    """Stirling's series tail log k! - (k + 1/2) log(k + 1) + (k + 1) - log(2 pi)/2, tabled
    for k < 10 (the values the binomial sampler's acceptance bound uses)."""
    if k <= 9:
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287)


def _binomial_draw(gen, count, prob, single: bool) -> float:
    """One binomial variate as PyTorch's serial kernel draws it: inversion (summing
    geometric gaps) when count * p < 10, else Hormann's transformed rejection (BTRS), on the
    smaller of p and 1 - p. `single`: the float32 kernel, whose count and p (and the
    products of the two) are float values."""
    from .rng_sample import uniform01_f64

    f = _F32 if single else float

    def uniform() -> float:
        return float(uniform01_f64(gen, 1)[0])

    count, prob = f(count), f(prob)
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return float(count)
    if prob != prob:
        return math.nan
    flip = prob > 0.5
    p = f(1.0 - float(prob)) if flip else prob
    if float(f(count * p)) >= 10.0:
        k = _btrs(uniform, count, p, f)
    else:
        log_q = float(f(math.log1p(-float(p)))) if single else math.log1p(-p)
        total, k = 0.0, 0.0
        while True:
            total += math.ceil(math.log(uniform()) / log_q)
            if total > float(count):
                break
            k += 1
    return float(count) - k if flip else k


def _btrs(uniform, count, p, f) -> float:
    stddev = float(f(math.sqrt(float(f(count * p * f(1 - p))))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(p)
    c = float(f(count * p)) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(f(p / f(1 - p)))
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(float(f((count + 1) * p)))
    n = float(count)
    while True:
        u = uniform() - 0.5
        v = uniform()
        us = 0.5 - abs(u)
        k = float(f(math.floor((2 * a / us + b) * u + c)))
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1)))
                 + float(f(count + 1)) * math.log((n - m + 1) / float(f(count - k + 1)))
                 + (k + 0.5) * math.log(r * float(f(count - k + 1)) / float(f(k + 1)))
                 + _tail(m) + _tail(n - m) - _tail(k) - _tail(float(f(count - k))))
        if v <= bound:
            return k


def binomial_variates(counts, probs, single: bool) -> np.ndarray:
    """torch.binomial's draws for flat runs of counts and probabilities, in order."""
    from .random import generator_of

    gen = generator_of(None)
    return np.array([_binomial_draw(gen, float(n), float(p), single)
                     for n, p in zip(counts, probs)], dtype=np.float64)
