"""The ATen forms behind nn.RNN / LSTM / GRU and their cells: torch.lstm, torch.gru,
torch.rnn_tanh, torch.rnn_relu (input, hx, params, has_biases, num_layers, dropout, train,
bidirectional, batch_first) and torch.lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell.

The layer forms run the modules' own forward over the given flat parameter list (in
PyTorch's order: per layer and direction w_ih, w_hh, then b_ih, b_hh when has_biases, then
w_hr with projections), on a module shell that never draws initial weights, so the random
state stays as PyTorch leaves it; the cells are the modules' formulas, in PyTorch's order.
"""

from __future__ import annotations

from gradcli.engine.ops import nn as F

from .module import Module
from .rnn import GRU, LSTM, RNN


def _shell(cls, params, has_biases, num_layers, dropout, train, bidirectional, batch_first,
           hidden_size, nonlinearity="tanh"):
    """An instance of cls holding `params` under its parameter names, without __init__."""
    module = cls.__new__(cls)
    Module.__init__(module)
    directions = 2 if bidirectional else 1
    params = list(params)
    per = len(params) // (num_layers * directions) if params else 0
    base = 4 if has_biases else 2
    proj = per > base
    kinds = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if has_biases else []) + \
        (["weight_hr"] if proj else [])
    if per != len(kinds) or len(params) != per * num_layers * directions:
        raise RuntimeError(f"Expected {len(kinds) * num_layers * directions} parameters for "
                           f"this RNN, got {len(params)}")
    weight_hr = params[len(kinds) - 1] if proj else None
    family = {LSTM: "LSTM", GRU: "GRU"}.get(cls, "RNN")
    values = {
        "mode": family if family != "RNN" else f"RNN_{nonlinearity.upper()}",
        "_mode": family,
        "input_size": params[0].shape[1], "hidden_size": hidden_size,
        "num_layers": num_layers, "bias": bool(has_biases), "batch_first": bool(batch_first),
        "dropout": float(dropout), "bidirectional": bool(bidirectional),
        "proj_size": weight_hr.shape[0] if proj else 0, "nonlinearity": nonlinearity,
        "_all_weights": [],
    }
    for name, value in values.items():
        module.__dict__[name] = value
    module.training = bool(train)
    k = 0
    for layer in range(num_layers):
        for direction in range(directions):
            suffix = f"l{layer}" + ("_reverse" if direction else "")
            names = []
            for kind in kinds:
                module._parameters[f"{kind}_{suffix}"] = params[k]
                names.append(f"{kind}_{suffix}")
                k += 1
            module._all_weights.append(names)
    return module


def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
         batch_first):
    """(output, h_n, c_n): nn.LSTM's forward over the flat parameters."""
    h0, c0 = hx
    module = _shell(LSTM, params, has_biases, num_layers, dropout, train, bidirectional,
                    batch_first, c0.shape[-1])
    output, (h_n, c_n) = module.forward(input, (h0, c0))
    return output, h_n, c_n


def _simple(cls, nonlinearity):
    def layer(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
              batch_first):
        module = _shell(cls, params, has_biases, num_layers, dropout, train, bidirectional,
                        batch_first, hx.shape[-1], nonlinearity)
        return module.forward(input, hx)

    return layer


gru = _simple(GRU, "tanh")
rnn_tanh = _simple(RNN, "tanh")
rnn_relu = _simple(RNN, "relu")


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: (h', c')."""
    h, c = hx
    gates = F.linear(h, w_hh, b_hh) + F.linear(input, w_ih, b_ih)
    i, f, g, o = gates.chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: h'."""
    gi = F.linear(input, w_ih, b_ih).chunk(3, 1)
    gh = F.linear(hx, w_hh, b_hh).chunk(3, 1)
    r = (gh[0] + gi[0]).sigmoid()
    z = (gh[1] + gi[1]).sigmoid()
    n = (gi[2] + gh[2] * r).tanh()
    return (hx - n) * z + n


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman step with tanh: h'."""
    return (F.linear(hx, w_hh, b_hh) + F.linear(input, w_ih, b_ih)).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman step with relu: h'."""
    return (F.linear(hx, w_hh, b_hh) + F.linear(input, w_ih, b_ih)).relu()
