"""torch.lstm / gru / rnn_tanh / rnn_relu and the *_cell functions against PyTorch: the
same parameters (copied from PyTorch's modules), outputs, final states, grad_fn names and
gradients; the flat forms draw no random numbers of their own."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402

RNG = np.random.default_rng(21)


def _params(module):
    return [p.detach().numpy().copy() for p in module._flat_weights]


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("layers, bidirectional, batch_first, bias", [
    (1, False, False, True), (2, True, False, True), (2, False, True, False),
    (1, True, True, True)])
def test_layer_forms(kind, layers, bidirectional, batch_first, bias):
    cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}.get(kind, torch.nn.RNN)
    extra = {"nonlinearity": kind[4:]} if kind.startswith("rnn") else {}
    # (float32 for the LSTM: in float64 PyTorch leaves oneDNN and its output node is a
    # StackBackward0, which gradcli's nn.LSTM does not follow yet)
    dtype = np.float32 if kind == "lstm" else np.float64
    reference = cls(3, 4, layers, bias=bias, bidirectional=bidirectional, **extra)
    params = [p.astype(dtype) for p in _params(reference)]
    directions = 2 if bidirectional else 1
    x = RNG.standard_normal((2, 5, 3) if batch_first else (5, 2, 3)).astype(dtype)
    h = RNG.standard_normal((layers * directions, 2, 4)).astype(dtype)
    c = RNG.standard_normal((layers * directions, 2, 4)).astype(dtype)
    tol = dict(rtol=1e-7, atol=1e-7) if dtype == np.float64 else dict(rtol=1.3e-6, atol=1e-5)
    results = []
    for lib in (gt, torch):
        ps = [lib.tensor(p, requires_grad=True) for p in params]
        xs = lib.tensor(x, requires_grad=True)
        hx = (lib.tensor(h), lib.tensor(c)) if kind == "lstm" else lib.tensor(h)
        out = getattr(lib, kind)(xs, hx, ps, bias, layers, 0.0, False, bidirectional,
                                 batch_first)
        assert isinstance(out, tuple) and len(out) == (3 if kind == "lstm" else 2)
        sum(o.sum() for o in out).backward()
        results.append((out, [p.grad for p in ps] + [xs.grad], None))
    (o1, g1, _), (o2, g2, _) = results
    for a, b in zip(o1, o2):
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **tol)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a.numpy(), b.numpy(), **tol)


def test_layer_form_leaves_the_generator_alone():
    layer = gt.nn.LSTM(2, 3)
    params = list(layer._flat_weights) if hasattr(layer, "_flat_weights") else \
        list(layer.parameters())
    gt.manual_seed(4)
    gt.lstm(gt.ones(2, 1, 2), (gt.zeros(1, 1, 3), gt.zeros(1, 1, 3)), params, True, 1, 0.0,
            False, False, False)
    after = gt.rand(2)
    gt.manual_seed(4)
    assert gt.rand(2).tolist() == after.tolist()


@pytest.mark.parametrize("kind", ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"])
@pytest.mark.parametrize("bias", [True, False])
def test_cells(kind, bias):
    gates = {"lstm_cell": 4, "gru_cell": 3}.get(kind, 1)
    arrays = [RNG.standard_normal(s) for s in ((2, 3), (2, 4), (2, 4), (4 * gates, 3),
                                               (4 * gates, 4), (4 * gates,), (4 * gates,))]
    results = []
    for lib in (gt, torch):
        x, h, c, w_ih, w_hh, b_ih, b_hh = (lib.tensor(a, requires_grad=True) for a in arrays)
        hx = (h, c) if kind == "lstm_cell" else h
        biases = (b_ih, b_hh) if bias else ()
        out = getattr(lib, kind)(x, hx, w_ih, w_hh, *biases)
        outs = out if isinstance(out, tuple) else (out,)
        sum((o * o).sum() for o in outs).backward()
        results.append((outs, [t.grad for t in (x, h, w_ih, w_hh)]))
    (o1, g1), (o2, g2) = results
    for a, b in zip(o1, o2):
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-7, atol=1e-7)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-7, atol=1e-7)
