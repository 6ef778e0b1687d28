"""softmax / log_softmax add a row in the order PyTorch's kernels do (vec::reduce_all:
one vector accumulator, the tail into its first lanes, the lanes folded in halves), and
log_softmax's backward rounds g - exp(y) * sum(g) once for float32 (its kernel is compiled
with FMA contraction). What is left between gradcli and PyTorch here is the exp kernel
(PyTorch's SLEEF against numpy's), so the end-to-end checks count matching elements."""

import numpy as np
import pytest
from torch_kernels import torch_with_measured_kernels

import gradcli.torch as gt
from gradcli.engine.ops import nn
from gradcli.engine.summation import softmax_row_sums


def test_row_sums_order_without_torch():
    # one float32 vector of 8 lanes plus a tail of 2: the tail goes into lanes 0 and 1,
    # then ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7))
    x = np.array([1e8, 1, 1, 1, -1e8, 1, 1, 1, 1, 1], dtype=np.float32)
    a = [x[0] + x[8], x[1] + x[9], *x[2:8]]
    a = np.array(a, dtype=np.float32)
    expected = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
    assert softmax_row_sums(x[None])[0] == expected
    short = np.array([[3.0, -0.0, 1e-30]])  # shorter than a vector: in order from the first
    assert softmax_row_sums(short)[0] == (3.0 + -0.0) + 1e-30
    assert softmax_row_sums(np.array([[-0.0]]))[0] == 0.0
    assert np.signbit(softmax_row_sums(np.array([[-0.0]]))[0])  # a row of one keeps -0.


@pytest.mark.parametrize("shape", [(3, 5), (4, 8), (4, 100), (2, 3, 17), (7,)])
def test_softmax_backward_is_pytorchs_bit_for_bit_given_its_output(shape):
    """float32; float64's backward still differs from PyTorch on some rows (not found why:
    the same order brought its matching elements from ~40% to ~62%)."""
    torch = torch_with_measured_kernels()
    dtype = np.float32
    rng = np.random.default_rng(3)
    for _ in range(5):
        a = rng.standard_normal(shape).astype(dtype)
        g = rng.standard_normal(shape).astype(dtype)
        x = torch.tensor(a, requires_grad=True)
        y = torch.softmax(x, -1)
        y.backward(torch.tensor(g))
        ours = nn._softmax_bwd_fwd(g, y.detach().numpy(), len(shape) - 1)
        assert ours.tobytes() == x.grad.numpy().tobytes()


def _matching(ours, theirs, dtype):
    return (np.asarray(ours.detach().tolist(), dtype) == theirs.detach().numpy()).mean()


def test_softmax_family_matches_most_of_pytorchs_bits():
    """Before the row order, float32 softmax matched PyTorch on ~52% of these elements,
    its gradient on ~45%, log_softmax's gradient on ~78% (now ~88%, ~79%, ~96%)."""
    torch = torch_with_measured_kernels()
    rng = np.random.default_rng(9)
    counts = np.zeros(3)
    for _ in range(20):
        a = rng.standard_normal((4, 100)).astype(np.float32)
        g = rng.standard_normal((4, 100)).astype(np.float32)
        results = []
        for lib in (gt, torch):
            x = lib.tensor(a, requires_grad=True)
            y = lib.softmax(x, 1)
            y.backward(lib.tensor(g))
            x2 = lib.tensor(a, requires_grad=True)
            lib.log_softmax(x2, 1).backward(lib.tensor(g))
            results.append((y, x.grad, x2.grad))
        counts += [_matching(o, t, np.float32) for o, t in zip(*results)]
    softmax, softmax_grad, log_softmax_grad = counts / 20
    assert softmax > 0.75 and softmax_grad > 0.65 and log_softmax_grad > 0.9
