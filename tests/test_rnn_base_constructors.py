"""nn.RNNBase(mode, input_size, hidden_size, ...) and nn.RNNCellBase(input_size,
hidden_size, bias, num_chunks) take PyTorch's arguments: same repr, parameter names and
shapes, the same numbers after manual_seed, the same errors; RNN/LSTM/GRU and the cells
(which pass their mode / chunk count) are unchanged."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402


def _state(module):
    return [(k, tuple(v.shape), str(v.dtype), np.asarray(v.tolist()))
            for k, v in module.state_dict().items()]


def _same_module(make):
    built = []
    for lib in (G, torch):
        lib.manual_seed(0)
        try:
            m = make(lib)
        except Exception as exc:  # the comparison is of the type and text
            built.append((type(exc).__name__, str(exc)))
            continue
        built.append((repr(m), type(m).__name__, _state(m)))
    ours, theirs = built
    if len(ours) == 2 or len(theirs) == 2:
        assert ours == theirs
        return
    assert ours[:2] == theirs[:2]
    assert [s[:3] for s in ours[2]] == [s[:3] for s in theirs[2]]
    for a, b in zip(ours[2], theirs[2]):
        assert np.array_equal(a[3], b[3]), a[0]


RNN_BASE_ARGS = [
    (("LSTM", 2, 3), {}), (("GRU", 2, 3), {"num_layers": 2}), (("RNN_TANH", 2, 3), {}),
    (("RNN_RELU", 2, 4), {"bidirectional": True, "bias": False}),
    (("LSTM", 3, 5), {"proj_size": 2, "num_layers": 2, "batch_first": True}),
    (("LSTM", 2, 3, 1, True, False, 0.0, False, 0), {}),
    (("XYZ", 2, 3), {}), (("LSTM", 0, 3), {}), (("LSTM", 2, 3), {"proj_size": 3}),
    (("GRU", 2, 3), {"dropout": 2}), (("GRU", 2.0, 3), {}), (("LSTM", 2, 3), {"bias": 1}),
    (("LSTM", 2, 3), {"dtype": "float64"}),
]


@pytest.mark.parametrize("args, kwargs", RNN_BASE_ARGS, ids=str)
def test_rnn_base_takes_pytorchs_arguments(args, kwargs):
    def make(lib):
        kw = dict(kwargs)
        if "dtype" in kw:
            kw["dtype"] = getattr(lib, kw["dtype"])
        return lib.nn.RNNBase(*args, **kw)
    _same_module(make)


CELL_BASE_ARGS = [(3, 4, True, 1), (3, 4, False, 4), (2, 5, True, 3), (2, 2, True, 2)]


@pytest.mark.parametrize("args", CELL_BASE_ARGS, ids=str)
def test_rnn_cell_base_takes_pytorchs_arguments(args):
    _same_module(lambda lib: lib.nn.RNNCellBase(*args))


def test_rnn_cell_base_wants_bias_and_num_chunks():
    for lib in (G, torch):
        with pytest.raises(TypeError):
            lib.nn.RNNCellBase(3, 4)


@pytest.mark.parametrize("make", [
    lambda nn: nn.RNN(2, 3, 2, "relu"), lambda nn: nn.RNN(2, 3, nonlinearity="relu"),
    lambda nn: nn.RNN(2, 3, 1, "sigmoid"), lambda nn: nn.RNN(2, 3, proj_size=1),
    lambda nn: nn.GRU(2, 3, proj_size=1), lambda nn: nn.LSTM(2, 4, proj_size=2),
    lambda nn: nn.RNNCell(2, 3, False, "relu"), lambda nn: nn.LSTMCell(2, 3),
    lambda nn: nn.GRUCell(2, 3, bias=False)], ids=range(9))
def test_subclasses_pass_their_modes_as_pytorchs(make):
    _same_module(lambda lib: make(lib.nn))


def test_subclassing_rnn_base_and_running_the_lstm_forward():
    outs = []
    for lib in (G, torch):
        class Stacked(lib.nn.LSTM):
            pass

        lib.manual_seed(1)
        net = Stacked(2, 3, num_layers=2)
        x = lib.tensor(np.linspace(-1, 1, 10).reshape(5, 1, 2).astype(np.float32))
        y, (h, c) = net(x)
        y.sum().backward()
        outs.append((y, h, c, net.weight_ih_l1.grad, repr(net), net.mode,
                     isinstance(net, lib.nn.RNNBase)))
    for a, b in zip(outs[0][:4], outs[1][:4]):
        torch.testing.assert_close(torch.tensor(a.tolist()), b.detach())
    assert outs[0][4:] == outs[1][4:]


def test_rnn_base_has_no_forward_as_pytorch():
    errors = []
    for lib in (G, torch):
        with pytest.raises(NotImplementedError) as info:
            lib.nn.RNNBase("GRU", 2, 3)(lib.ones(4, 1, 2))
        errors.append(str(info.value))
    assert errors[0] == errors[1]
