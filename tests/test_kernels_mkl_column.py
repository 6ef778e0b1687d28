"""The one-column products of kernels/mkl.py (a @ b with b a single column: bench W7's
Linear(3, 1)) against their order written plainly, on random shapes, scales and signed
zeros. The MKL-order tests against PyTorch skip on CPUs other than the one the order was
measured on; this comparison runs everywhere (the AMD kernels chosen whatever the CPU) and pins the fast layout of the products
(one contiguous row per step of k) and the bias added in place to the plain order."""

import numpy as np
import pytest

from gradcli.engine.kernels import mkl

F32 = np.float32


@pytest.fixture(autouse=True)
def amd_kernels(monkeypatch):
    """These are the AMD kernels' orders (kernels/mkl.py), checked on every CPU: the level MKL
    would run here (mkl_intel.isa()) is set to AMD's for the test."""
    monkeypatch.setattr(mkl, "_level", ["amd"])


def _plain_in_order(a, column, start):
    """+0 (+ start) + a[:, 0]*column[0] + a[:, 1]*column[1] + ..., one rounding each. (numpy's
    add.reduce, which the kernels use, starts from +0 even without `initial`: a start of -0
    and products of -0 give +0.)"""
    total = np.zeros(a.shape[0], F32)
    if start is not None:
        total = total + np.broadcast_to(start, (a.shape[0], 1))[:, 0]
    for step in range(a.shape[1]):
        total = total + a[:, step] * column[step]
    return total


def _random(rng, shape):
    x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(F32)
    x[rng.random(shape) < 0.15] = -0.0
    return x


def _same_bits(got, want):
    return got.shape == want.shape and got.dtype == want.dtype and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_one_column_products_sum_in_the_plain_order(layout):
    rng = np.random.default_rng(23)
    checked = 0
    for _ in range(400):
        m, k = int(rng.integers(2, 600)), int(rng.integers(2, 5))
        a = _random(rng, (m, k))
        if layout == "columns":  # stored column by column (a.t() of a row-major matrix)
            a = np.asfortranarray(a)
        b = _random(rng, (1, k)).T  # w.t() of a Linear's row-major weight
        c = [None, _random(rng, (1,)), _random(rng, (m, 1)), np.array([-0.0], F32)][int(rng.integers(4))]
        alpha = [1, 1, 0.5, -3.0][int(rng.integers(4))]
        if not mkl.applies(a, b):
            continue
        got = mkl.product(a, b, None if c is None else c.copy(), alpha)
        if layout == "rows":  # gemv: the sum from +0, then alpha, then + c
            want = _plain_in_order(a, b[:, 0], None)
            if alpha != 1:
                want = want * F32(alpha)
            if c is not None:
                want = want + np.broadcast_to(c, (m, 1))[:, 0]
        else:  # the sum starts from c, the column scaled by alpha first
            want = _plain_in_order(a, b[:, 0] * F32(alpha) if alpha != 1 else b[:, 0], c)
        assert _same_bits(got, want.reshape(m, 1)), (layout, m, k, alpha, c)
        checked += 1
    assert checked > 300


def test_the_bias_is_not_changed():
    """The bias is added into the product's own fresh result, never into the caller's array."""
    a = np.arange(12, dtype=F32).reshape(4, 3)
    b = np.ones((3, 1), F32)
    c = np.array([0.5], F32)
    out = mkl.product(a, b, c, 1)
    assert c.tolist() == [0.5]
    assert out[:, 0].tolist() == [3.5, 12.5, 21.5, 30.5]
