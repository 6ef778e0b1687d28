"""tanh of large float64 arrays through exp (gradcli/engine/ops/elementwise.py).

The kernel trades numpy's scalar tanh for its faster exp where that is accurate
(|x| >= 1). These tests hold it to its word: within one ulp of the true value, the
special values exactly as numpy's, no floating-point warning or error even when the
user makes overflow raise, the same bits on one thread or several, and PyTorch's
values (to the ulp its own kernel allows).
"""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as gt
from gradcli.engine import parallel
from gradcli.engine.ops import elementwise

CHUNK = parallel.CHUNK_MAX
N = 5 * CHUNK + 777  # several chunks and a ragged end
assert parallel.chunk_size(N) == CHUNK


@pytest.fixture
def two_threads(monkeypatch):
    monkeypatch.setattr(parallel.POOL, "cores", max(2, parallel.POOL.cores))
    monkeypatch.setattr(parallel, "_blas_spin_until", [0.0])
    before = gt.get_num_threads()
    gt.set_num_threads(2)
    yield
    parallel.POOL.threads = before


def _tanh(values: np.ndarray) -> np.ndarray:
    return np.array(gt.tensor(values, dtype=gt.float64).tanh().tolist())


def _ulps(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.abs(x.view(np.int64) - y.view(np.int64))


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 60, reason="needs an 80-bit long double")
@pytest.mark.parametrize("lo, hi", [(1.0, 1.2), (1.0, 2.0), (2.0, 19.0), (19.0, 400.0), (0.0, 4.0)])
def test_within_one_ulp_of_the_true_value_from_one_up(lo, hi):
    rng = np.random.default_rng(int(lo * 10 + hi))
    x = rng.uniform(lo, hi, N) * rng.choice([-1.0, 1.0], N)
    truth = np.tanh(x.astype(np.longdouble))
    spacing = np.spacing(np.abs(truth.astype(np.float64))).astype(np.longdouble)
    error = np.abs((_tanh(x).astype(np.longdouble) - truth) / spacing)
    numpy_error = np.abs((np.tanh(x).astype(np.longdouble) - truth) / spacing)
    large = np.abs(x) >= elementwise.TANH_BY_EXP_FROM
    assert error[large].max() <= 1.0  # below 1 it is numpy's own tanh (1.2 ulp at worst)
    assert error.max() <= max(1.0, numpy_error.max())


def test_special_values_as_numpy_and_no_floating_point_error():
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 354.8, 355.0, -1e308, 1e-300, 5e-324, 0.999]
    x = np.resize(np.array(specials), N)
    x[::7] = 3.0  # mostly large, so the formula computes the chunks
    with np.errstate(all="raise"):
        got = _tanh(x)
    want = np.tanh(x)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[ok]), np.signbit(want[ok]))
    assert (_ulps(got[ok], want[ok]) <= 1).all()
    assert (got[np.abs(x) >= 20] == np.sign(x[np.abs(x) >= 20])).all()


def test_below_one_it_is_numpys_tanh_bit_for_bit():
    rng = np.random.default_rng(1)
    x = rng.uniform(1.0, 30.0, N)
    x[rng.choice(N, N // 40, replace=False)] = rng.uniform(-1.0, 1.0, N // 40)
    small = np.abs(x) < elementwise.TANH_BY_EXP_FROM
    got = _tanh(x)
    assert np.array_equal(got[small], np.tanh(x[small]))
    assert not np.array_equal(got[~small], np.tanh(x[~small]))  # the formula did run


def test_a_transposed_input_keeps_numpys_tanh_below_one():
    """A non-contiguous array takes one call on the whole; its small values must still
    be written back (an F-ordered temporary once swallowed them: 8e-8 relative error)."""
    values = np.linspace(-30.0, 30.0, 100 * 100).reshape(100, 100)
    values[:5, 0] = [1e-9, -2e-7, 0.5, -0.25, 1e-300]
    x = gt.tensor(values, dtype=gt.float64).t()
    got = np.array(x.tanh().tolist())
    small = np.abs(values.T) < elementwise.TANH_BY_EXP_FROM
    assert np.array_equal(got[small], np.tanh(values.T[small]))
    assert (_ulps(got, np.tanh(values.T)) <= 1).all()
    fortran = np.asfortranarray(values)
    assert np.array_equal(elementwise._tanh_by_exp(fortran)[np.abs(fortran) < 1],
                          np.tanh(fortran[np.abs(fortran) < 1]))


def test_the_same_bits_on_one_thread_or_two(two_threads):
    """Chunks of every kind: all large, a few small values, mostly small."""
    rng = np.random.default_rng(2)
    chunk = CHUNK
    x = rng.uniform(1.0, 30.0, N)
    x[chunk: chunk + 50] = 0.25
    x[2 * chunk: 3 * chunk] = rng.uniform(-0.9, 0.9, chunk)
    x[4 * chunk + 100:] = rng.standard_normal(N - 4 * chunk - 100)
    split = _tanh(x)
    gt.set_num_threads(1)
    alone = _tanh(x)
    assert np.array_equal(split.view(np.int64), alone.view(np.int64))


def test_small_arrays_and_float32_keep_their_old_path():
    x = np.linspace(-5, 5, elementwise.TANH_BY_EXP_MIN_SIZE - 1)
    assert np.array_equal(_tanh(x), np.tanh(x))
    x32 = np.linspace(-30, 30, N, dtype=np.float32)
    got = np.array(gt.tensor(x32).tanh().tolist(), dtype=np.float32)
    assert (_ulps(got.astype(np.float64), np.tanh(x32.astype(np.float64)).astype(np.float32).astype(np.float64)) <= 1).all()


def test_the_gradient_reads_the_same_result():
    x = gt.tensor(np.linspace(-8, 8, N), dtype=gt.float64, requires_grad=True)
    y = x.tanh()
    y.sum().backward()
    t = np.array(y.tolist())
    assert np.array_equal(np.array(x.grad.tolist()), 1 - t * t)


@pytest.mark.parametrize("scale", [0.5, 3.0, 30.0])
def test_pytorchs_values_to_its_own_ulp(scale):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal(N) * scale
    want = torch.tensor(x).tanh().numpy()
    got = _tanh(x)
    assert (_ulps(got, want) <= 1).all()
    numpy_agreement = (np.tanh(x) == want).mean()
    assert (got == want).mean() >= numpy_agreement - 1e-3
    x32 = x.astype(np.float32)
    got32 = np.array(gt.tensor(x32).tanh().tolist(), dtype=np.float32)
    assert (got32 == torch.tensor(x32).tanh().numpy()).mean() >= 0.99


@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (40000,)])
def test_float32_gradient_rounds_one_minus_y_squared_once_as_pytorch(shape):
    """PyTorch's tanh_backward kernel fuses 1 - y*y into one multiply-add: given PyTorch's own
    y and incoming gradient, gradcli's backward formula gives its bits on every element
    (two float32 roundings differed on ~30% of them)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    a = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    x = torch.tensor(a, requires_grad=True)
    y = torch.tanh(x)
    y.backward(torch.tensor(g))
    ours = elementwise.TANH_BACKWARD.forward(g, y.detach().numpy())
    assert np.array_equal(np.asarray(ours).view(np.uint32), x.grad.numpy().view(np.uint32))


def test_float32_gradient_keeps_its_dtype_and_broadcast_gradients():
    y = np.array([0.25, -0.5, 0.999], dtype=np.float32)
    out = elementwise.TANH_BACKWARD.forward(np.float32(2.0), y)
    assert out.dtype == np.float32
    expected = (2 * (1 - y.astype(np.float64) ** 2)).astype(np.float32)
    assert np.array_equal(out, expected)
