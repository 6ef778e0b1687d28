"""The lean paths bench W7 (the tutorials' nn + optim polynomial fit) runs through give the
same bits, nodes and errors as the general code they shortcut, and as PyTorch."""

import numpy as np
import pytest
from torch_kernels import torch_with_measured_kernels

import gradcli.torch as torch
from gradcli.engine.kernels import summation


def _general_row_sum(flat):
    """The cascade of summation._chunk without its one-level shortcut."""
    lanes = summation.LANES[flat.dtype]
    whole = len(flat) // lanes
    vector = summation._four_accumulators(flat[: whole * lanes].reshape(whole, lanes))
    return summation._scalars_in_order(flat.dtype, [*flat[whole * lanes:], *vector])


def _same_bits(a, b) -> bool:
    return (np.isnan(a) and np.isnan(b)) or (a == b and np.signbit(a) == np.signbit(b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_level_row_sums_are_the_cascades(dtype):
    """Every size the shortcut takes (2 to 255 groups of four vectors), against the general
    cascade: plain values, wide exponents, signed zeros, infinities and nan."""
    rng = np.random.default_rng(7)
    lanes = summation.LANES[np.dtype(dtype)]
    sizes = sorted({*range(8 * lanes - 2, 8 * lanes + 70), *rng.integers(8 * lanes, 1024 * lanes, 120),
                    64 * lanes, 128 * lanes, 1020 * lanes + lanes - 1, 1024 * lanes - 1})
    taken = 0
    for n in sizes:
        for kind in range(4):
            x = rng.standard_normal(n).astype(dtype)
            if kind == 1:
                x = (x * 10.0 ** rng.integers(-30, 30, n)).astype(dtype)
            elif kind == 2:
                x = np.where(rng.random(n) < 0.5, -0.0, 0.0).astype(dtype)
            elif kind == 3:
                x[rng.integers(0, n, 2)] = [np.inf, -np.inf] if n % 2 else [np.inf, 1.0]
            with np.errstate(invalid="ignore"):
                fast = summation._row_one_level(x)
                if fast is None:
                    continue
                taken += 1
                want = _general_row_sum(x)
                lane = summation._lane_rows(x.reshape(1, -1))[0]
            assert type(fast) is type(want)
            assert _same_bits(fast, want) and _same_bits(fast, lane), (n, kind, fast, want)
    assert taken > 600
    assert summation._row_one_level(np.ones(8 * lanes - 1, dtype)) is None
    assert summation._row_one_level(np.ones(1024 * lanes, dtype)) is None


def test_w7_loss_and_bias_gradient_sums_are_pytorchs():
    """The two sums of a W7 step (the loss, reduction='sum', and the bias gradient summed
    back over 2000 rows) give PyTorch's bits."""
    real = torch_with_measured_kernels()
    rng = np.random.default_rng(3)
    for n in (64, 100, 513, 2000, 4095, 8191):
        pred = rng.standard_normal((n, 1)).astype(np.float32)
        target = rng.standard_normal(n).astype(np.float32)
        results = []
        for T in (torch, real):
            p = T.tensor(pred.tolist(), requires_grad=True)
            b = T.tensor([0.25], requires_grad=True)
            loss = T.nn.functional.mse_loss((p + b).flatten(0, 1), T.tensor(target.tolist()),
                                            reduction="sum")
            loss.backward()
            results.append((loss.item(), b.grad.tolist(), p.grad.flatten().tolist()))
        assert results[0] == results[1], n


def test_broadcast_gradients_summed_back_over_leading_and_size_one_dims():
    """A backward undoes a broadcast over leading dims only (a bias's gradient: no keepdim
    sum, no reshape) and over leading plus size-1 dims: the same shapes and sums either way."""
    rng = np.random.default_rng(9)
    for shape, other in (((3,), (2000, 3)), ((1,), (2000, 1)), ((1, 3), (5, 4, 3)), ((4, 1), (2, 4, 3))):
        b = torch.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
        x = torch.tensor(rng.standard_normal(other).astype(np.float32))
        (b + x).sum().backward()
        want = np.ones(other, np.float32).sum(axis=tuple(range(len(other) - len(shape))))
        want = want.sum(axis=tuple(i for i, s in enumerate(shape) if s == 1), keepdims=True)
        assert b.grad.shape == b.shape
        assert np.array_equal(b.grad.numpy(), want.astype(np.float32))
