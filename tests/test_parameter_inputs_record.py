"""Ops that record one node for several outputs record it when an input is an
nn.Parameter (a Tensor subclass) as for a plain tensor: the linalg decompositions, and an
LSTM whose input does not require grad (only its weights do), against PyTorch 2.13."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

CALLS = {
    "slogdet": lambda T, p: T.linalg.slogdet(p).logabsdet,
    "eigh": lambda T, p: T.linalg.eigh(p).eigenvalues,
    "qr": lambda T, p: T.linalg.qr(p).Q,
    "svd": lambda T, p: T.linalg.svd(p).S,
    "lu_factor": lambda T, p: T.linalg.lu_factor(p).LU,
    "inv": lambda T, p: T.linalg.inv(p),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_parameter_input_records_the_node(name):
    seen = []
    for T in (gt, torch):
        p = T.nn.Parameter(T.eye(2, dtype=T.float64) * 2 + 0.1)
        out = CALLS[name](T, p)
        out.sum().backward()
        seen.append((type(out.grad_fn).__name__, p.grad.tolist()))
    assert seen[0][0] == seen[1][0]
    np.testing.assert_allclose(seen[0][1], seen[1][1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("layers", [1, 2])
def test_lstm_weights_alone_require_grad(layers):
    seen = []
    for T in (gt, torch):
        T.manual_seed(0)
        net = T.nn.LSTM(2, 3, num_layers=layers)
        y, (h, c) = net(T.ones(5, 1, 2))
        y.sum().backward()
        seen.append((type(y.grad_fn).__name__, type(h.grad_fn).__name__,
                     net.weight_ih_l0.grad.tolist()))
    assert seen[0][:2] == seen[1][:2]
    np.testing.assert_allclose(seen[0][2], seen[1][2], rtol=1.3e-6, atol=1e-5)
