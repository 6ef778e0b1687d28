"""Gradients of recurrent layers under create_graph have PyTorch's graph: the output's
grad_fn and each gradient's (input, every parameter) compared with PyTorch 2.13
recursively four nodes deep (names and next_functions), for RNN/GRU/LSTM with 1 and 2
layers, batch_first, bidirectional, float64 and float32 (a float32 LSTM is oneDNN's
layer op in PyTorch), and for the three cells; with and without biases, an unbatched
input, given initial states that require grad; and the gradients' values and their own
gradients (a second backward) agree."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _chain(fn, depth):
    if fn is None:
        return None
    if depth == 0:
        return type(fn).__name__
    return type(fn).__name__, tuple(_chain(f, depth - 1) for f, _ in fn.next_functions)


def _values(m, t):
    return t.detach().numpy() if m is torch else np.array(t._data)


def _run(m, kind, layers, batch_first, bidirectional, dtype):
    m.manual_seed(0)
    dt = getattr(m, dtype)
    if kind.endswith("Cell"):
        mod = getattr(m.nn, kind)(3, 2).to(dt)
        x = m.randn(2, 3, dtype=dt, requires_grad=True)
    else:
        mod = getattr(m.nn, kind)(3, 2, num_layers=layers, batch_first=batch_first,
                                  bidirectional=bidirectional).to(dt)
        x = m.randn(2, 2, 3, dtype=dt, requires_grad=True)
    out = mod(x)
    y = out[0] if isinstance(out, tuple) else out
    leaves = [x, *mod.parameters()]
    grads = m.autograd.grad((y * y).sum(), leaves, create_graph=True)
    graphs = [_chain(y.grad_fn, 4)] + [_chain(g.grad_fn, 4) for g in grads]
    second = m.autograd.grad(sum((g * g).sum() for g in grads), leaves, allow_unused=True)
    return graphs, [_values(m, g) for g in grads], [
        None if g is None else _values(m, g) for g in second]


def _cases():
    for kind in ("RNN", "GRU", "LSTM"):
        for layers, bf, bi, dtype in itertools.product((1, 2), (False, True), (False, True),
                                                       ("float64", "float32")):
            yield pytest.param(kind, layers, bf, bi, dtype,
                               id=f"{kind}-{layers}l-bf{bf:d}-bi{bi:d}-{dtype}")
    for kind in ("RNNCell", "GRUCell", "LSTMCell"):
        for dtype in ("float64", "float32"):
            yield pytest.param(kind, 1, False, False, dtype, id=f"{kind}-{dtype}")


@pytest.mark.parametrize(("kind", "layers", "batch_first", "bidirectional", "dtype"),
                         list(_cases()))
def test_recurrent_gradient_graph_matches_pytorch(kind, layers, batch_first, bidirectional,
                                                  dtype):
    graphs, grads, second = _run(gt, kind, layers, batch_first, bidirectional, dtype)
    e_graphs, e_grads, e_second = _run(torch, kind, layers, batch_first, bidirectional, dtype)
    tol = dict(rtol=1e-7, atol=1e-7) if dtype == "float64" else dict(rtol=1e-5, atol=1e-5)
    for g, e in zip(grads, e_grads, strict=True):
        np.testing.assert_allclose(g, e, **tol)
    for g, e in zip(second, e_second, strict=True):
        assert (g is None) == (e is None)
        if e is not None:
            np.testing.assert_allclose(g, e, **tol)
    for k, (g, e) in enumerate(zip(graphs, e_graphs, strict=True)):
        assert g == e, f"graph {k} (0: the output, then the input's and each parameter's gradient)"


def _run_states(m, kind, bias, unbatched, given, dtype):
    m.manual_seed(0)
    dt = getattr(m, dtype)
    mod = getattr(m.nn, kind)(3, 2, num_layers=2, bias=bias).to(dt)
    x = m.randn(*((2, 3) if unbatched else (2, 2, 3)), dtype=dt, requires_grad=True)
    leaves = [x, *mod.parameters()]
    hx = None
    if given:
        shape = (2, 2) if unbatched else (2, 2, 2)
        h = m.randn(*shape, dtype=dt, requires_grad=True)
        leaves.append(h)
        hx = h
        if kind == "LSTM":
            c = m.randn(*shape, dtype=dt, requires_grad=True)
            leaves.append(c)
            hx = (h, c)
    out, h_n = mod(x, hx)
    h_n = h_n[0] if isinstance(h_n, tuple) else h_n
    grads = m.autograd.grad((out * out).sum() + (h_n * h_n).sum(), leaves, create_graph=True)
    graphs = [_chain(out.grad_fn, 4), _chain(h_n.grad_fn, 4)] + [_chain(g.grad_fn, 4)
                                                                 for g in grads]
    return graphs, [_values(m, g) for g in grads]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("given", [False, True], ids=["zero_states", "given_states"])
@pytest.mark.parametrize("unbatched", [False, True], ids=["batched", "unbatched"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
def test_recurrent_states_and_biases_match_pytorch(kind, bias, unbatched, given, dtype):
    graphs, grads = _run_states(gt, kind, bias, unbatched, given, dtype)
    e_graphs, e_grads = _run_states(torch, kind, bias, unbatched, given, dtype)
    for g, e in zip(grads, e_grads, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
    assert graphs == e_graphs
