"""The 2-norm of a vector of under 8 elements takes Python float math (`_norm2_small`)
instead of three ufunc calls: it must give numpy's reduction bit for bit, on every
dtype it takes, at every scale, and through the public API."""

import math

import numpy as np
import pytest

import gradcli.torch as torch
from gradcli.engine.ops.reductions import _norm2_small


def _ufunc_norm(a):
    """The general path: what `_norm_fwd` computes for larger or other arrays."""
    return np.sqrt(np.add.reduce(a * a, axis=(0,), keepdims=False))


def _same(x, y) -> bool:
    return x.dtype == y.dtype and x.shape == y.shape and (
        x == y or (np.isnan(x) and np.isnan(y)))


def _cases(dtype, rng):
    """Vectors of 0 to 7 elements at scales across the dtype's whole range (subnormal
    squares, float32 sums that overflow), with the special values mixed in."""
    info = np.finfo(dtype)
    top = int(math.log10(float(info.max))) // 2 + 2  # squares overflow near the top
    bottom = int(math.log10(float(info.smallest_subnormal))) // 2 - 1
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan]
    for n in range(8):
        for _ in range(600):
            scale = 10.0 ** rng.integers(bottom, top)
            x = rng.standard_normal(n) * scale
            yield x.astype(dtype)
        for _ in range(40):
            x = rng.standard_normal(n)
            if n:
                x[rng.integers(n)] = specials[rng.integers(len(specials))]
            yield x.astype(dtype)
    # sums of float32 squares at the edge of float32's range
    big = np.sqrt(np.finfo(np.float32).max)
    yield np.array([big, big], dtype=dtype)
    yield np.array([big * 0.75, big * 0.75, 1.0], dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_norm_is_the_ufunc_norm_bit_for_bit(dtype):
    rng = np.random.default_rng(7)
    checked = 0
    for x in _cases(dtype, rng):
        got, want = _norm2_small(x), _ufunc_norm(x)
        assert _same(got, want), (x, got, want)
        checked += 1
    assert checked > 5000


def test_float32_sums_are_rounded_each_step():
    """The check above has teeth: summing float32 squares in double without rounding each
    step differs from numpy's float32 sum on this data."""
    rng = np.random.default_rng(7)
    differs = 0
    for x in _cases(np.float32, rng):
        unrounded = np.array(math.sqrt(sum((x * x).astype(np.float64).tolist())), np.float32)
        if not _same(unrounded, _ufunc_norm(x)):
            differs += 1
    assert differs > 0


def test_tensor_norm_takes_the_same_values():
    rng = np.random.default_rng(3)
    for dtype in (torch.float32, torch.float64):
        for n in range(8):
            data = rng.standard_normal(2 * n)
            t = torch.tensor(data.tolist(), dtype=dtype)[::2]  # a strided view as well
            got = t.norm()
            assert got.dtype == dtype and got.shape == ()
            assert got.item() == _ufunc_norm(t._data).item()
    y = torch.tensor([3.0, 4.0], requires_grad=True)
    n = y.norm()
    n.backward()
    assert n.grad_fn.name() == "LinalgVectorNormBackward0"
    assert y.grad.tolist() == [0.6000000238418579, 0.800000011920929]


def test_small_norm_agrees_with_pytorch_on_what_numpy_and_pytorch_share():
    real = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    for n in (1, 4):  # sizes where PyTorch's kernel sums in numpy's order
        for _ in range(200):
            x = rng.standard_normal(n).astype(np.float32)
            assert torch.tensor(x.tolist()).norm().item() == real.tensor(x.tolist()).norm().item()
