"""The float32 Box-Muller emulation is exact over its whole input domain.

Each half of a block depends on one float32 uniform alone (u = k / 2**24, 2**24 values):
the radius on lanes 0-7, sin and cos on lanes 8-15. The emulation takes each fused
multiply-add in float64 and rounds to float32, which can differ from one FMA rounding
only where the float64 sum lands exactly halfway between two float32. This test finds
every such lane over all 2**24 uniforms and recomputes them with true FMAs in rational
arithmetic, step for step as the AVX2 kernel: they agree, so randn's float32 path is
PyTorch's bits for every input (not only for the seeds compared with PyTorch).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from gradcli.engine.kernels import boxmuller as B

F32 = np.float32


def _r32(q: Fraction) -> np.float32:
    """q rounded to the nearest float32, ties to even."""
    c = F32(float(q))
    best = None
    for cand in (np.nextafter(c, F32(-np.inf)), c, np.nextafter(c, F32(np.inf))):
        d = abs(Fraction(float(cand)) - q)
        even = (int(np.array(cand).view(np.int32)) & 1) == 0
        if best is None or d < best[0] or (d == best[0] and even):
            best = (d, cand)
    return F32(best[1])


def _q(v) -> Fraction:
    return Fraction(float(v))


def _mul(a, b):
    return _r32(_q(a) * _q(b))


def _add(a, b):
    return _r32(_q(a) + _q(b))


def _fma(a, b, c):
    return _r32(_q(a) * _q(b) + _q(c))


def _radius(u):
    x = _add(F32(1), -u)
    bits = int(np.array(x).view(np.int32))
    e = F32((bits >> 23) - 126)
    mant = bits & 0x7FFFFF
    below = mant < 0x3504F3
    if below:
        e = _add(e, F32(-1))
    x = np.array(mant | 0x3F000000, np.int32).view(np.float32)[()]
    x = _add(_add(x, x), F32(-1)) if below else _add(x, F32(-1))
    z = _mul(x, x)
    y = F32(B._LOG_P[0])
    for c in B._LOG_P[1:]:
        y = _fma(y, x, F32(c))
    y = _mul(y, x)
    y = _fma(y, z, _mul(e, B._LOG_Q1))
    y = _add(y, -_mul(z, F32(0.5)))
    x = _add(x, y)
    x = _fma(e, B._LOG_Q2, x)
    return np.sqrt(_mul(x, F32(-2)))


def _sincos(u):
    th = _mul(u, B._TWO_PI)
    j = (int(_mul(th, B._FOPI)) + 1) & ~1
    y = F32(j)
    x = _fma(y, B._DP1, th)
    x = _fma(y, B._DP2, x)
    x = _fma(y, F32(B._DP3), x)
    z = _mul(x, x)
    yc = _fma(F32(B._COS_P[0]), z, F32(B._COS_P[1]))
    yc = _fma(yc, z, F32(B._COS_P[2]))
    yc = _fma(_mul(yc, z), z, -_mul(z, F32(0.5)))
    yc = _add(yc, F32(1))
    ys = _fma(F32(B._SIN_P[0]), z, F32(B._SIN_P[1]))
    ys = _fma(ys, z, F32(B._SIN_P[2]))
    ys = _fma(x, _mul(z, ys), x)
    s, c = (ys, yc) if (j & 2) == 0 else (yc, ys)
    return (-s if j & 4 else s), (-c if ((j - 2) & 4) == 0 else c)


def _one_block(u):
    blk = np.full((1, 16), u, F32)
    B._fill_blocks(blk, F32(0), F32(1))
    return blk[0, 0], blk[0, 8]


def test_exact_emulator_agrees_on_a_sample():
    rng = np.random.default_rng(0)
    for k in rng.integers(0, 1 << 24, 200):
        u = F32(k) * F32(2.0 ** -24)
        r = _radius(u)
        s, c = _sincos(u)
        assert _one_block(u) == (_mul(r, c), _mul(r, s)), k


def test_every_uniform(monkeypatch):
    hits = []
    real_round = B._round32

    lanes = B._CHUNK_BLOCKS * 8

    def watched(d64, out32):
        # one row of lanes, or the sin and cos rows: lane i of any row is uniform i
        bits = d64.reshape(-1).view(np.int64)
        hits.append(np.nonzero((bits & 0x1FFFFFFF) == 0x10000000)[0] % lanes)
        real_round(d64, out32)

    monkeypatch.setattr(B, "_round32", watched)
    flagged = set()
    for start in range(0, 1 << 24, lanes):
        k = np.arange(start, start + lanes, dtype=np.int64)
        u = (k.astype(F32) * F32(2.0 ** -24)).reshape(-1, 8)
        blocks = np.empty((u.shape[0], 16), F32)
        blocks[:, :8] = u
        blocks[:, 8:] = u
        hits.clear()
        B._fill_blocks(blocks, F32(0), F32(1))
        for h in hits:
            flagged.update((start + h).tolist())
    monkeypatch.setattr(B, "_round32", real_round)
    assert len(flagged) > 100, "the scan found (almost) no halfway sums: it is not looking"
    for k in sorted(flagged):
        u = F32(k) * F32(2.0 ** -24)
        r = _radius(u)
        s, c = _sincos(u)
        assert _one_block(u) == (_mul(r, c), _mul(r, s)), k


@pytest.mark.parametrize("a, b, c", [
    (1 + 2**-23, 2**-24 * (1 - 2**-23), 1 + 2**-23),
    (1 + 2**-23, 2**-24 * (1 - 2**-23), -(1 + 2**-23)),
    (3.0, 0.1, -0.3),
])
def test_fma32_rounds_once(a, b, c):
    a, b, c = F32(a), F32(b), F32(c)
    assert B.fma32(np.array([a]), b, c)[0] == _fma(a, b, c)
