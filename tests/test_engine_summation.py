"""Whole-tensor float sums and means add in PyTorch's order (engine/kernels/summation.py), so
their bits, and the digits a printed tensor shows, are PyTorch's."""

import numpy as np
import pytest
from torch_kernels import both_on_threads, torch_with_measured_kernels

import gradcli.torch as torch
from gradcli.engine.kernels import summation

SIZES = (list(range(0, 140)) + [255, 256, 257, 511, 512, 1000, 1024, 4095, 4096, 4097, 10000,
                                  32767, 32768, 32769, 65535, 65536, 65537, 100003, 262144, 1000003])


def _data(n, dtype, rng):
    return (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4)).astype(dtype)


def _explicit_in_order(rows):
    total = np.zeros(rows.shape[1:], rows.dtype)
    for row in rows:
        total = total + row
    return total


@pytest.mark.parametrize("shape", [(3, 32), (17, 4, 8), (1000, 4, 4), (70, 16, 4, 8)])
def test_numpy_adds_along_an_outer_axis_in_order(shape):
    """What summation.py leans on: a reduce over a non-innermost axis is a plain loop."""
    rows = np.random.default_rng(1).standard_normal(shape).astype(np.float32) * 1000
    assert summation._in_order(rows).tobytes() == _explicit_in_order(rows).tobytes()
    step = 16
    runs = summation._runs(rows, step) if len(rows) >= step else None
    if runs is not None:
        want = np.stack([_explicit_in_order(rows[i:i + step])
                         for i in range(0, len(rows) // step * step, step)])
        assert runs.tobytes() == want.tobytes()


def test_negative_zeros_sum_to_positive_zero_and_specials_propagate():
    for n in (1, 2, 5, 9, 40, 300):
        got = torch.tensor([-0.0] * n).sum().item()
        assert str(got) == "0.0"
    assert torch.tensor([1.0, float("nan"), 2.0]).sum().isnan().item()
    assert torch.tensor([float("inf"), 1.0]).sum().item() == float("inf")
    assert torch.tensor([3e38] * 20).sum().item() == float("inf")  # float32 overflow


def test_other_layouts_and_dtypes_keep_their_sums():
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    assert x.t().sum().item() == 66.0  # F-contiguous: summed in memory order
    assert x[:, ::2].sum().item() == 30.0  # strided: a sum over all its dims
    assert torch.arange(10).sum().item() == 45 and torch.arange(10).sum().dtype == torch.int64
    assert torch.zeros(0).sum().item() == 0.0
    assert torch.zeros(0).mean().isnan().item()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("threads", [2, 1])
def test_sum_and_mean_are_pytorchs_bit_for_bit(dtype, threads):
    real = torch_with_measured_kernels()
    rng = np.random.default_rng(0)
    with both_on_threads(real, threads):
        for n in SIZES:
            for _ in range(3 if n < 2000 else 1):
                x = _data(n, dtype, rng)
                ours = torch.tensor(x.tolist(), dtype=getattr(torch, dtype))
                theirs = real.tensor(x.tolist(), dtype=getattr(real, dtype))
                assert ours.sum().item() == theirs.sum().item(), (n, "sum")
                if n:
                    assert ours.mean().item() == theirs.mean().item(), (n, "mean")
        x = _data(2 * 3 * 5 * 7, dtype, rng).reshape(6, 5, 7)
        ours = torch.tensor(x.tolist(), dtype=getattr(torch, dtype)).permute(2, 0, 1)
        theirs = real.tensor(x.tolist(), dtype=getattr(real, dtype)).permute(2, 0, 1)
        assert ours.sum().item() == theirs.sum().item()


def test_printed_sums_are_pytorchs():
    real = torch_with_measured_kernels()
    rng = np.random.default_rng(2)
    for _ in range(100):
        x = (rng.standard_normal(100) * 100).astype(np.float32).tolist()
        a = torch.tensor(x, requires_grad=True).sum()
        b = real.tensor(x, requires_grad=True).sum()
        assert repr(a) == repr(b)


def test_sums_and_means_of_views_with_steps_are_pytorchs():
    """A stepped slice does not fill one block of memory: PyTorch's iterator adds it as a sum
    over all its dims, and so does gradcli (numpy's order differed on ~60% of these)."""
    real = torch_with_measured_kernels()
    rng = np.random.default_rng(5)
    for trial in range(200):
        dtype = ("float32", "float64")[trial % 2]
        shape = tuple(int(v) for v in rng.integers(1, 50, size=rng.integers(1, 4)))
        x = (rng.standard_normal(shape) * 100).astype(dtype)
        steps = tuple(slice(None, None, int(rng.integers(1, 4))) for _ in shape)
        ours, theirs = torch.tensor(x), real.tensor(x)
        for a, b in ((ours[steps], theirs[steps]),
                     (ours.transpose(0, -1)[steps], theirs.transpose(0, -1)[steps])):
            assert a.sum().item() == b.sum().item(), (shape, steps)
            assert a.mean().item() == b.mean().item(), (shape, steps)
