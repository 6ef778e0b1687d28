"""Layers and their functional forms against real PyTorch: values, gradients, grad_fn
names, reprs, parameters/buffers (PyTorch's initial weights copied in), running stats."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import gradcli.torch as G

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)


def f(*shape, dtype=np.float32):
    return R.standard_normal(shape).astype(dtype)


def compare(fn, *arrays, rtol=1e-5, atol=1e-5):
    """fn(lib, *tensors) in both libraries: values, grad_fn name, every input's gradient."""
    outs = []
    for lib in (torch, G):
        ts = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        y = fn(lib, *ts)
        g = np.random.default_rng(5).standard_normal(tuple(y.shape)).astype(y.detach().numpy().dtype
                                                                           if lib is torch else
                                                                           y._data.dtype)
        y.backward(lib.tensor(g))
        outs.append((np.array(y.tolist()), type(y.grad_fn).__name__,
                     [None if t.grad is None else np.array(t.grad.tolist()) for t in ts]))
    (vt, nt, gt), (vg, ng, gg) = outs
    np.testing.assert_allclose(vg, vt, rtol=rtol, atol=atol)
    assert ng == nt
    for a, b in zip(gg, gt):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=10 * rtol, atol=atol)


FUNCTIONAL = {
    "gelu": (lambda L, x: L.nn.functional.gelu(x), [f(3, 4)]),
    "gelu_tanh": (lambda L, x: L.nn.functional.gelu(x, approximate="tanh"), [f(3, 4)]),
    "silu": (lambda L, x: L.nn.functional.silu(x), [f(3, 4)]),
    "elu": (lambda L, x: L.nn.functional.elu(x, 0.7), [f(3, 4)]),
    "leaky_relu": (lambda L, x: L.nn.functional.leaky_relu(x, 0.1), [f(3, 4)]),
    "softplus": (lambda L, x: L.nn.functional.softplus(x * 10, beta=2, threshold=5), [f(3, 4)]),
    "hardtanh": (lambda L, x: L.nn.functional.hardtanh(x, -0.5, 0.7), [f(3, 4)]),
    "relu6": (lambda L, x: L.nn.functional.relu6(x * 5), [f(3, 4)]),
    "l1": (lambda L, x, t: L.nn.functional.l1_loss(x, t), [f(3, 4), f(3, 4)]),
    "l1_sum": (lambda L, x, t: L.nn.functional.l1_loss(x, t, reduction="sum"), [f(3, 4), f(3, 4)]),
    "smooth_l1": (lambda L, x, t: L.nn.functional.smooth_l1_loss(x, t, beta=0.5),
                  [f(3, 4), f(3, 4)]),
    "huber": (lambda L, x, t: L.nn.functional.huber_loss(x, t, reduction="none", delta=0.7),
              [f(3, 4), f(3, 4)]),
    "kl_div": (lambda L, x, t: L.nn.functional.kl_div(x.log_softmax(1), t.softmax(1),
                                                      reduction="batchmean"), [f(3, 4), f(3, 4)]),
    "kl_div_log": (lambda L, x, t: L.nn.functional.kl_div(x, t, reduction="sum",
                                                          log_target=True), [f(3, 4), f(3, 4)]),
    "layer_norm": (lambda L, x, w, b: L.nn.functional.layer_norm(x, (4,), w, b),
                   [f(3, 4), f(4), f(4)]),
    "embedding": (lambda L, i, w: L.nn.functional.embedding(i, w, padding_idx=1),
                  [np.array([[0, 1, 2], [2, 2, 3]]), f(5, 3)]),
    "bilinear": (lambda L, a, b, w, c: L.nn.functional.bilinear(a, b, w, c),
                 [f(2, 3), f(2, 4), f(5, 3, 4), f(5)]),
    "batch_norm": (lambda L, x, w, b: L.nn.functional.batch_norm(x, None, None, w, b, True),
                   [f(4, 3, 5), f(3), f(3)]),
    "conv2d": (lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, stride=2, padding=1),
               [f(2, 3, 7, 6), f(4, 3, 3, 2), f(4)]),
    "conv2d_groups": (lambda L, x, w: L.nn.functional.conv2d(x, w, groups=2, dilation=2),
                      [f(2, 4, 7, 7), f(6, 2, 2, 3)]),
    "conv1d": (lambda L, x, w, b: L.nn.functional.conv1d(x, w, b, padding=2),
               [f(2, 3, 9), f(4, 3, 3), f(4)]),
    "conv1d_same_unbatched": (lambda L, x, w: L.nn.functional.conv1d(x, w, padding="same"),
                              [f(3, 9), f(4, 3, 3)]),
    "max_pool2d": (lambda L, x: L.nn.functional.max_pool2d(x, 2), [f(2, 3, 6, 7)]),
    "max_pool2d_ceil": (lambda L, x: L.nn.functional.max_pool2d(x, 3, 2, 1, ceil_mode=True),
                        [f(2, 3, 6, 7)]),
    "max_pool1d": (lambda L, x: L.nn.functional.max_pool1d(x, 3, stride=2), [f(2, 3, 9)]),
    "avg_pool2d": (lambda L, x: L.nn.functional.avg_pool2d(x, 2), [f(2, 3, 6, 7)]),
    "avg_pool2d_opts": (lambda L, x: L.nn.functional.avg_pool2d(
        x, 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True), [f(2, 3, 6, 7)]),
    "adaptive_avg_pool2d": (lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, (3, 2)),
                            [f(2, 3, 7, 5)]),
    "adaptive_avg_pool2d_1": (lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, 1),
                              [f(2, 3, 7, 5)]),
}


@pytest.mark.parametrize("name", list(FUNCTIONAL))
def test_functional_matches(name):
    fn, arrays = FUNCTIONAL[name]
    compare(fn, *arrays)


def both(build):
    torch.manual_seed(0)
    theirs = build(torch)
    ours = build(G)
    ours.load_state_dict(OrderedDict((k, G.tensor(v.detach().numpy().copy()))
                                     for k, v in theirs.state_dict().items()))
    return ours, theirs


LAYERS = {
    "embedding": (lambda L: L.nn.Embedding(6, 3, padding_idx=2),
                  lambda L: L.tensor([[0, 2, 5], [1, 1, 3]])),
    "conv1d": (lambda L: L.nn.Conv1d(3, 4, 3, stride=2, padding=1), lambda L: L.tensor(f(2, 3, 9))),
    "conv2d": (lambda L: L.nn.Conv2d(3, 4, (3, 2), bias=False, groups=1, dilation=2),
               lambda L: L.tensor(f(2, 3, 8, 7))),
    "maxpool1d": (lambda L: L.nn.MaxPool1d(2), lambda L: L.tensor(f(2, 3, 8))),
    "maxpool2d": (lambda L: L.nn.MaxPool2d(3, stride=(1, 2)), lambda L: L.tensor(f(2, 3, 8, 7))),
    "avgpool2d": (lambda L: L.nn.AvgPool2d(3, stride=1, padding=1), lambda L: L.tensor(f(1, 3, 5, 5))),
    "adaptive": (lambda L: L.nn.AdaptiveAvgPool2d((2, 3)), lambda L: L.tensor(f(2, 3, 5, 7))),
    "batchnorm1d": (lambda L: L.nn.BatchNorm1d(3), lambda L: L.tensor(f(4, 3))),
    "batchnorm2d": (lambda L: L.nn.BatchNorm2d(3, momentum=None), lambda L: L.tensor(f(4, 3, 2, 2))),
    "layernorm": (lambda L: L.nn.LayerNorm((2, 3)), lambda L: L.tensor(f(4, 2, 3))),
    "layernorm_noaffine": (lambda L: L.nn.LayerNorm(3, elementwise_affine=False),
                           lambda L: L.tensor(f(4, 3))),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_matches(name):
    build, make_data = LAYERS[name]
    fixed = {}

    def data(lib):  # the same numbers for both libraries
        if "x" not in fixed:
            fixed["x"] = make_data(torch).numpy()
        return lib.tensor(fixed["x"])

    ours, theirs = both(build)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for _ in range(2):  # twice: running statistics move
        out_o, out_t = ours(data(G)), theirs(data(torch))
        np.testing.assert_allclose(np.array(out_o.tolist()), out_t.detach().numpy(),
                                   rtol=1e-5, atol=1e-5)
        if out_t.requires_grad:
            assert type(out_o.grad_fn).__name__ == type(out_t.grad_fn).__name__
            out_o.sum().backward()
            out_t.sum().backward()
    for (k, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        np.testing.assert_allclose(np.array(a.tolist()), b.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=k)
    for (k, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(np.array(a.grad.tolist()), b.grad.numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=k)
    ours.eval()
    theirs.eval()
    out_o, out_t = ours(data(G)), theirs(data(torch))
    np.testing.assert_allclose(np.array(out_o.tolist()), out_t.detach().numpy(), rtol=1e-5,
                               atol=1e-5)


def test_activation_and_loss_modules():
    x = f(4, 5)
    t = f(4, 5)
    cls = np.array([1, 0, 4, 2])
    for build, args in [
        (lambda L: L.nn.ReLU(), (x,)), (lambda L: L.nn.GELU(), (x,)), (lambda L: L.nn.SiLU(), (x,)),
        (lambda L: L.nn.LeakyReLU(0.3), (x,)), (lambda L: L.nn.ELU(0.5), (x,)),
        (lambda L: L.nn.Tanh(), (x,)), (lambda L: L.nn.Sigmoid(), (x,)),
        (lambda L: L.nn.Softmax(dim=1), (x,)), (lambda L: L.nn.LogSoftmax(dim=0), (x,)),
        (lambda L: L.nn.Softplus(2.0), (x,)), (lambda L: L.nn.Hardtanh(-0.3, 0.3), (x,)),
        (lambda L: L.nn.MSELoss(), (x, t)), (lambda L: L.nn.L1Loss(reduction="sum"), (x, t)),
        (lambda L: L.nn.SmoothL1Loss(beta=0.3), (x, t)), (lambda L: L.nn.HuberLoss(delta=0.4), (x, t)),
        (lambda L: L.nn.KLDivLoss(reduction="batchmean", log_target=True), (x, t)),
        (lambda L: L.nn.CrossEntropyLoss(label_smoothing=0.2), (x, cls)),
        (lambda L: L.nn.CrossEntropyLoss(weight=L.tensor([1.0, 2.0, 0.5, 1.0, 3.0]),
                                         ignore_index=2), (x, cls)),
        (lambda L: L.nn.CrossEntropyLoss(), (x, np.abs(t) / np.abs(t).sum(1, keepdims=True))),
        (lambda L: L.nn.NLLLoss(), (x, cls)),
        (lambda L: L.nn.BCELoss(), (1 / (1 + np.exp(-x)), (t > 0).astype(np.float32))),
        (lambda L: L.nn.BCEWithLogitsLoss(pos_weight=L.tensor([2.0] * 5)),
         (x, (t > 0).astype(np.float32))),
    ]:
        assert repr(build(G)) == repr(build(torch))
        compare(lambda L, *ts, b=build: b(L)(*ts), *args)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("kwargs", [{}, {"num_layers": 2, "batch_first": True},
                                    {"num_layers": 2, "bias": False}], ids=["one", "bf", "nobias"])
def test_recurrent_layers_match(name, kwargs):
    ours, theirs = both(lambda lib: getattr(lib.nn, name)(3, 4, **kwargs))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = f(5, 2, 3)
    h0 = f(kwargs.get("num_layers", 1), 2 if not kwargs.get("batch_first") else 5, 4)
    results = []
    for lib, m in ((torch, theirs), (G, ours)):
        xt = lib.tensor(x, requires_grad=True)
        hx = lib.tensor(h0)
        if name == "LSTM":
            hx = (hx, lib.tensor(h0 * 0.5))
        out, h = m(xt, hx)
        hn = h[0] if isinstance(h, tuple) else h
        (out.sum() + hn.pow(2).sum()).backward()
        results.append((np.array(out.tolist()), np.array(hn.tolist()), np.array(xt.grad.tolist()),
                        np.array(m.weight_ih_l0.grad.tolist()), type(out.grad_fn).__name__,
                        type(hn.grad_fn).__name__))
    (t, g) = results
    for a, b in zip(g[:4], t[:4]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert g[4:] == t[4:]


RECURRENT_VARIANTS = [
    ("RNN", {"bidirectional": True}), ("GRU", {"bidirectional": True}),
    ("LSTM", {"bidirectional": True}),
    ("RNN", {"bidirectional": True, "num_layers": 2, "batch_first": True, "nonlinearity": "relu"}),
    ("GRU", {"bidirectional": True, "num_layers": 2, "bias": False}),
    ("LSTM", {"bidirectional": True, "num_layers": 2, "batch_first": True}),
    ("LSTM", {"proj_size": 2}), ("LSTM", {"proj_size": 3, "num_layers": 2, "batch_first": True}),
    ("LSTM", {"proj_size": 2, "bidirectional": True, "num_layers": 2, "bias": False}),
]


@pytest.mark.parametrize("name,kwargs", RECURRENT_VARIANTS,
                         ids=[f"{n}-{'-'.join(k)}" for n, k in RECURRENT_VARIANTS])
@pytest.mark.parametrize("given_state", [False, True], ids=["zeros", "h0"])
def test_bidirectional_and_projected_recurrent_layers_match(name, kwargs, given_state):
    """Parameter names and shapes (weight_ih_l1_reverse, weight_hr_l0), repr, outputs, final
    states, the grad_fn names of all three and every parameter's gradient, as PyTorch's."""
    ours, theirs = both(lambda lib: getattr(lib.nn, name)(3, 4, **kwargs))
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    layers_dirs = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    batch_first = kwargs.get("batch_first", False)
    x = f(2, 5, 3) if batch_first else f(5, 2, 3)
    h0 = f(layers_dirs, 2, kwargs.get("proj_size") or 4)
    c0 = f(layers_dirs, 2, 4)
    results = []
    for lib, m in ((torch, theirs), (G, ours)):
        xt = lib.tensor(x, requires_grad=True)
        hx = None
        if given_state:
            hx = (lib.tensor(h0), lib.tensor(c0)) if name == "LSTM" else lib.tensor(h0)
        out, h = m(xt, hx)
        states = h if isinstance(h, tuple) else (h,)
        loss = out.pow(2).sum() + sum((s * (k + 1)).sum() for k, s in enumerate(states))
        loss.backward()
        results.append(([np.array(t.tolist()) for t in (out, *states, xt.grad)],
                        [np.array(p.grad.tolist()) for _, p in m.named_parameters()],
                        [type(t.grad_fn).__name__ for t in (out, *states)],
                        [type(n).__name__ for n, _ in out.grad_fn.next_functions if n is not None]))
    theirs_r, ours_r = results
    for a, b in zip(ours_r[0] + ours_r[1], theirs_r[0] + theirs_r[1]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert ours_r[2:] == theirs_r[2:]


def test_unbatched_bidirectional_gru_matches():
    ours, theirs = both(lambda lib: lib.nn.GRU(3, 4, bidirectional=True))
    x = f(5, 3)
    out_o, h_o = ours(G.tensor(x))
    out_t, h_t = theirs(torch.tensor(x))
    assert tuple(out_o.shape) == tuple(out_t.shape) and tuple(h_o.shape) == tuple(h_t.shape)
    np.testing.assert_allclose(np.array(out_o.tolist()), out_t.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(h_o.tolist()), h_t.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("build", [
    "nn.RNN(3, 4, proj_size=2)", "nn.GRU(3, 4, proj_size=2)", "nn.LSTM(3, 4, proj_size=4)",
    "nn.LSTM(3, 4, proj_size=-1)", "nn.LSTM(3, 4, num_layers=0)", "nn.LSTM(3, 0)",
    "nn.LSTM(3, 4, dropout=1.5)", "nn.LSTM(3, 4, bias=1)",
])
def test_recurrent_constructor_errors_match(build):
    def run(lib):
        try:
            eval(build, {"nn": lib.nn})  # noqa: S307 - the fixed expressions above
        except Exception as e:  # noqa: BLE001 - compare what each raises
            return type(e).__name__, str(e)
        return None

    assert run(G) == run(torch) is not None


def test_same_initial_weights_after_seed():
    G.manual_seed(3)
    torch.manual_seed(3)
    ours = G.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    theirs = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    for (k, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert np.array_equal(np.array(a.tolist(), np.float32), b.detach().numpy()), k


CONV_PADDING_MODES = [
    ("Conv1d", (2, 3, 9), dict(padding=2, padding_mode="reflect")),
    ("Conv1d", (2, 3, 9), dict(padding=1, stride=2, padding_mode="replicate")),
    ("Conv1d", (2, 3, 9), dict(padding=3, padding_mode="circular")),
    ("Conv1d", (2, 3, 9), dict(padding="same", dilation=2, padding_mode="reflect")),
    ("Conv2d", (2, 3, 7, 6), dict(padding=1, padding_mode="reflect")),
    ("Conv2d", (2, 3, 7, 6), dict(padding=(2, 1), padding_mode="replicate", bias=False)),
    ("Conv2d", (2, 3, 7, 6), dict(padding=(1, 2), padding_mode="circular", groups=3)),
    ("Conv2d", (2, 3, 7, 6), dict(padding="same", padding_mode="circular")),
]


@pytest.mark.parametrize("name,shape,kwargs", CONV_PADDING_MODES,
                         ids=[f"{n}-{k['padding_mode']}-{i}" for i, (n, _, k) in
                              enumerate(CONV_PADDING_MODES)])
def test_conv_padding_modes_match(name, shape, kwargs):
    """padding_mode reflect/replicate/circular: PyTorch pads with F.pad and convolves
    unpadded; the repr, output, grad_fn chain and gradients are its."""
    ours, theirs = both(lambda lib: getattr(lib.nn, name)(3, 6, 3, **kwargs))
    assert repr(ours) == repr(theirs)
    assert ours._reversed_padding_repeated_twice == list(theirs._reversed_padding_repeated_twice)
    x = f(*shape)
    got = []
    for lib, m in ((torch, theirs), (G, ours)):
        xt = lib.tensor(x, requires_grad=True)
        out = m(xt)
        (out * out).sum().backward()
        chain = []
        node = out.grad_fn
        while node is not None and node.next_functions:
            chain.append(type(node).__name__)
            node = node.next_functions[0][0]
        got.append((np.array(out.tolist()), np.array(xt.grad.tolist()),
                    np.array(m.weight.grad.tolist()), chain))
    for a, b in zip(got[1][:3], got[0][:3]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert got[1][3] == got[0][3]


def test_conv_unknown_padding_mode_is_refused_as_pytorch_does():
    for lib in (G, torch):
        with pytest.raises(ValueError, match="padding_mode must be one of .* but got "
                                             "padding_mode='mirror'"):
            lib.nn.Conv2d(3, 4, 3, padding_mode="mirror")


@pytest.mark.parametrize("call", [
    "nn.GRU(3, 4, bidirectional=True)(T.zeros(5, 2, 3), T.zeros(1, 2, 4))",
    "nn.RNN(3, 4, num_layers=2)(T.zeros(5, 2, 3), T.zeros(2, 3, 4))",
    "nn.RNN(3, 4)(T.zeros(5, 2, 3), T.zeros(2, 4))",
    "nn.RNN(3, 4)(T.zeros(5, 3), T.zeros(1, 1, 4))",
    "nn.RNN(3, 4)(T.zeros(2, 5, 2, 3))",
    "nn.GRU(3, 4)(T.zeros(2, 5, 2, 3))",
    "nn.LSTM(3, 4)(T.zeros(5, 2, 2))",
    "nn.LSTM(3, 4, proj_size=2)(T.zeros(5, 2, 3), (T.zeros(1, 2, 4), T.zeros(1, 2, 4)))",
    "nn.LSTM(3, 4, bidirectional=True)(T.zeros(5, 2, 3), (T.zeros(2, 2, 4), T.zeros(1, 2, 4)))",
    "nn.LSTM(3, 4)(T.zeros(5, 3), (T.zeros(1, 1, 4), T.zeros(1, 4)))",
    "nn.LSTM(3, 4)(T.zeros(5, 2, 3, dtype=T.float64))",
    "nn.LSTM(3, 4, batch_first=True)(T.zeros(2, 5, 3), (T.zeros(1, 5, 4), T.zeros(1, 5, 4)))",
])
def test_recurrent_forward_errors_match(call):
    def run(lib):
        try:
            eval(call, {"nn": lib.nn, "T": lib})  # noqa: S307 - the fixed expressions above
        except Exception as e:  # noqa: BLE001 - compare what each raises
            return type(e).__name__, str(e)
        return None

    assert run(G) == run(torch) is not None


def test_seeded_bidirectional_gru_with_dropout_draws_as_pytorch():
    """Weights and the dropout between layers (on both directions' joined output) drawn
    from the seeded generator in PyTorch's order."""
    results = []
    for lib in (torch, G):
        lib.manual_seed(5)
        m = lib.nn.GRU(3, 4, num_layers=3, bidirectional=True, dropout=0.5)
        out, h = m(lib.randn(6, 2, 3))
        results.append((np.array(out.tolist()), np.array(h.tolist()), out.grad_fn.name()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-6)
    assert results[1][2] == results[0][2] == "CatBackward0"
