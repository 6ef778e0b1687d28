"""torch.arange with a float step, bit for bit: PyTorch's kernel fills two vectors at a time
from a base rounded to the dtype, so some elements are not start + i*step rounded once
(arange(0, 1, 0.02)[15] is 0.29999998 in float32). A training loop on such inputs (a linear
fit to y = w*x + b over arange(0, 1, 0.02)) printed other losses after a few epochs."""

from __future__ import annotations

import numpy as np
import pytest
from torch_kernels import both_on_threads

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402

RANGES = [
    (0, 1, 0.02),
    (0, 10, 0.1),
    (1.5, 7.3, 0.37),  # 16 elements: the scalar formula only
    (-3, 3, 0.013),
    (10, 0, -0.3),
    (0.1, 5000, 0.7),
    (1e-3, 2.0, 1e-4),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("args", RANGES)
def test_float_arange_matches_bit_for_bit(args, dtype):
    ref = torch.arange(*args, dtype=getattr(torch, dtype)).numpy()
    got = gt.arange(*args, dtype=getattr(gt, dtype)).numpy()
    assert got.dtype == ref.dtype
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_long_arange_is_filled_per_thread_slice(threads, dtype):
    """From 32,768 elements each thread fills its own slice, its vectors from the slice's start."""
    with both_on_threads(torch, threads):
        ref = torch.arange(0.5, 40000, 0.3, dtype=getattr(torch, dtype)).numpy()
        got = gt.arange(0.5, 40000, 0.3, dtype=getattr(gt, dtype)).numpy()
    np.testing.assert_array_equal(got, ref)


def test_default_dtype_and_printing_of_a_float_range():
    ref = torch.arange(0, 1, 0.02).unsqueeze(dim=1)
    got = gt.arange(0, 1, 0.02).unsqueeze(dim=1)
    assert str(got[10:20].T) == str(ref[10:20].T)
    assert got[15].item() == ref[15].item()
    assert str(got.dtype) == str(ref.dtype)


def test_fit_over_a_float_range_prints_the_same_losses():
    """Losses of a two-parameter fit with L1 loss printed with all digits, epoch by epoch."""
    def run(lib):
        x = lib.arange(0, 1, 0.02).unsqueeze(dim=1)
        y = 0.7 * x + 0.3
        lib.manual_seed(42)
        w = lib.nn.Parameter(lib.randn(1))
        b = lib.nn.Parameter(lib.randn(1))
        opt = lib.optim.SGD([w, b], lr=0.01)
        out = []
        for _ in range(60):
            loss = lib.nn.L1Loss()(w * x[:40] + b, y[:40])
            opt.zero_grad()
            loss.backward()
            opt.step()
            out.append(f"{loss}")
        return out
    assert run(gt) == run(torch)


def test_integer_and_switch_off_ranges_unchanged(monkeypatch):
    assert gt.arange(0, 10, 3).tolist() == torch.arange(0, 10, 3).tolist()
    assert str(gt.arange(0.5, 4, 1, dtype=gt.int32)) == str(torch.arange(0.5, 4, 1, dtype=torch.int32))
    from gradcli.engine import kernels

    monkeypatch.setattr(kernels, "EXACT", False)
    got = gt.arange(0, 1, 0.02).numpy()
    np.testing.assert_array_equal(got, (np.arange(50) * 0.02).astype(np.float32))
    np.testing.assert_allclose(got, torch.arange(0, 1, 0.02).numpy(), rtol=1.3e-6, atol=1e-5)
