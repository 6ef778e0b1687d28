"""torch.binomial(count, prob, generator=None): one binomial draw per element, as PyTorch's
CPU kernel draws it, so seeded samples are PyTorch's bit for bit.

Elements are drawn in order, each from float64 uniforms (53 bits of one 64-bit output
each): binomial inversion (a sum of geometric waiting times) when count * min(p, 1 - p) <
10, else Hormann's BTRS transformed rejection (PyTorch's variant, without the log in the
box test); p > 1/2 draws count - Binomial(count, 1 - p). Arithmetic PyTorch does in the
tensor's own type (the products of count and prob, k) is done in that type here too.
"""

from __future__ import annotations

import math

import numpy as np

from ..random import generator_of
from ..tensor import Tensor
from .linalg_ext import _run_multi
from .registry import defop, public

_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float) -> float:
    """log(k!) minus Stirling's approximation of it."""
    if k <= 9:
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _inversion(count, prob, uniform, S):
    logprob = float(np.log1p(S(-prob)))
    geom_sum = 0.0
    num_geom = S(0)
    while True:
        geom = math.ceil(math.log(uniform()) / logprob)
        geom_sum += geom
        if geom_sum > count:
            return num_geom
        num_geom = S(num_geom + 1)


def _btrs(count, prob, uniform, S):
    stddev = float(np.sqrt(S(S(count * prob) * S(1 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(prob)
    c = float(S(count * prob)) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(S(prob / S(1 - prob)))
    alpha = (2.83 + 5.1 / b) * stddev
    m = float(np.floor(S(S(count + 1) * prob)))
    n = float(count)
    while True:
        u = uniform() - 0.5
        v = uniform()
        us = 0.5 - abs(u)
        k = S(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        kf = float(k)
        upper = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1)))
                 + (n + 1) * math.log((n - m + 1) / float(S(S(count - k) + 1)))
                 + (kf + 0.5) * math.log(r * float(S(S(count - k) + 1)) / float(S(k + 1)))
                 + _stirling_tail(m) + _stirling_tail(n - m)
                 - _stirling_tail(kf) - _stirling_tail(float(S(count - k))))
        if v <= upper:
            return k


def _sample(count, prob, uniform, S):
    if count <= 0.0 or prob <= 0.0:
        return S(0)
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if S(count * prob) >= 10.0:
            return _btrs(count, prob, uniform, S)
        return _inversion(count, prob, uniform, S)
    if prob > 0.5:
        q = S(1.0 - prob)
        if S(count * q) >= 10.0:
            return S(count - _btrs(count, q, uniform, S))
        return S(count - _inversion(count, q, uniform, S))
    return S(math.nan)


def _no_derivative(ctx, grads):
    raise RuntimeError("derivative for aten::binomial is not implemented")


BINOMIAL = defop("binomial", "NotImplemented", None, _no_derivative,
                 "PyTorch declares no derivative for binomial (backward raises)", multi=True)


@public("torch.binomial")
def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """Binomial(count, prob) draws, element by element (broadcast), in count's dtype."""
    if not isinstance(count, Tensor) or not isinstance(prob, Tensor):
        raise TypeError("binomial(): argument 'count' (position 1) must be Tensor")
    c, p = count._data, prob._data
    if c.dtype.kind != "f":
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{_word(count.dtype)}")
    if p.dtype != c.dtype:
        raise RuntimeError(f"Found dtype {_word(prob.dtype)} but expected {_word(count.dtype)}")
    shape = np.broadcast_shapes(c.shape, p.shape)
    from ..rng_sample import uniform01_f64  # (the samplers load on first use)

    S = c.dtype.type
    gen = generator_of(generator)

    def uniform():
        return float(uniform01_f64(gen, 1)[0])

    cs = np.broadcast_to(c, shape).reshape(-1)
    ps = np.broadcast_to(p, shape).reshape(-1)
    out = np.empty(cs.shape, c.dtype)
    for i in range(cs.size):
        out[i] = _sample(S(cs[i]), S(ps[i]), uniform, S)
    (result,) = _run_multi(BINOMIAL, (count, prob), (), [out.reshape(shape)], (True,))
    return result


def _word(dtype) -> str:
    from .aliases_and_config import _scalar_name

    return _scalar_name(dtype)
