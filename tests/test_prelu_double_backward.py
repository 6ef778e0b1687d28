"""prelu's double backward is derivatives.yaml's _prelu_kernel_backward formula: it
branches on x >= 0 (the first order on x > 0), so at x = +-0 its gradients are exact
zeros. Compared with PyTorch 2.13 over shapes and weights, inputs holding +0 and -0:
values, the sign of every zero, and the graph two nodes deep."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

X = np.array([[0.0, -0.0, 1.5, -2.0], [0.5, -0.0, 0.0, -1.0], [2.0, -0.5, -0.0, 3.0]])


def _chain(fn, depth):
    if fn is None:
        return None
    if depth == 0:
        return type(fn).__name__
    return type(fn).__name__, tuple(_chain(f, depth - 1) for f, _ in fn.next_functions)


def _run(m, shape, weights):
    x = m.tensor(X.reshape(-1)[:int(np.prod(shape))].reshape(shape), requires_grad=True)
    w = m.tensor(weights, dtype=m.float64, requires_grad=True)
    y = m.nn.functional.prelu(x, w)
    gx, gw = m.autograd.grad((y * y * y).sum(), (x, w), create_graph=True)
    hx, hw = m.autograd.grad((gx * gx).sum() + (gw * gw).sum(), (x, w), create_graph=True)
    values = [t.detach().numpy() if m is torch else np.array(t._data) for t in (gx, gw, hx, hw)]
    return values, [_chain(hx.grad_fn, 2), _chain(hw.grad_fn, 2)]


@pytest.mark.parametrize(("shape", "weights"), [
    ((12,), [0.25]), ((3, 4), [0.25]), ((4, 3), [0.25, -0.5, 1.5]), ((2, 3, 2), [0.1, 0.2, 0.3]),
    ((1, 3, 4), [-0.25, 0.5, 2.0])])
def test_prelu_second_order_matches_pytorch(shape, weights):
    (values, graphs), (e_values, e_graphs) = _run(gt, shape, weights), _run(torch, shape, weights)
    for got, expected in zip(values, e_values, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
        zero = expected == 0
        assert np.array_equal(got == 0, zero)
        assert np.array_equal(np.signbit(got[zero]), np.signbit(expected[zero]))
    assert graphs == e_graphs
