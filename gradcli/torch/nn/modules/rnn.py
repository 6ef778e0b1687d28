"""RNN, LSTM and GRU (single and multi-layer, batch_first, h0/c0), as PyTorch's CPU
composite path computes them: each time step is linear layers and pointwise ops, the
steps' hidden states stacked (StackBackward0), the final states stacked over layers.
The outputs end on PyTorch's nodes: MkldnnRnnLayerBackward0 for an LSTM layer (PyTorch
runs it through oneDNN), TransposeBackward1 for a batch_first RNN/GRU output."""

from __future__ import annotations

import math

from gradcli.engine.ops import nn as F
from gradcli.engine.ops import nn_layers as layers
from gradcli.engine.ops.creation import zeros
from gradcli.engine.ops.shape import stack

from ._common import new_param
from ._init import nn_init
from .module import Module

__all__ = ["RNN", "LSTM", "GRU"]


class _RNNBase(Module):
    _gates = 1
    _mode = "RNN"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None,
                 nonlinearity: str = "tanh") -> None:
        super().__init__()
        if bidirectional:
            raise ValueError("gradcli: bidirectional RNNs are not supported")
        if proj_size:
            raise ValueError("gradcli: LSTM proj_size is not supported")
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if num_layers < 1:
            raise ValueError("num_layers must be greater than or equal to 1")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.mode = self._mode if self._mode != "RNN" else f"RNN_{nonlinearity.upper()}"
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = False
        self.proj_size = 0
        self.nonlinearity = nonlinearity
        gate = self._gates * hidden_size
        for layer in range(num_layers):
            width = input_size if layer == 0 else hidden_size
            setattr(self, f"weight_ih_l{layer}", new_param((gate, width), device, dtype))
            setattr(self, f"weight_hh_l{layer}", new_param((gate, hidden_size), device, dtype))
            if bias:
                setattr(self, f"bias_ih_l{layer}", new_param((gate,), device, dtype))
                setattr(self, f"bias_hh_l{layer}", new_param((gate,), device, dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init = nn_init()
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _layer_params(self, layer: int):
        get = self._parameters.get
        return (get(f"weight_ih_l{layer}"), get(f"weight_hh_l{layer}"),
                get(f"bias_ih_l{layer}"), get(f"bias_hh_l{layer}"))

    def _prepare(self, input, hx):
        """(input as (T, N, F), initial states per layer, unbatched?)."""
        unbatched = input.dim() == 2
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}D instead")
        if unbatched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")
        return input, unbatched

    def _zeros(self, batch: int, like):
        return zeros(self.num_layers, batch, self.hidden_size, dtype=like.dtype)

    def _run(self, input, states, cell):
        """Run every layer over time; states: per layer a tuple of state tensors."""
        finals = []
        for layer in range(self.num_layers):
            params = self._layer_params(layer)
            state = states[layer]
            outputs = []
            for t in range(input.shape[0]):
                state = cell(input[t], state, *params)
                outputs.append(state[0])
            input = stack(outputs, 0)
            if self._mode == "LSTM":
                input = layers.lstm_layer_output(input)
            if self.dropout and self.training and layer < self.num_layers - 1:
                from gradcli.torch.nn import functional

                input = functional.dropout(input, self.dropout, True)
            finals.append(state)
        return input, finals

    def _finish(self, output, unbatched):
        if unbatched:
            return output.squeeze(1)
        if not self.batch_first:
            return output
        if self._mode == "LSTM":
            return output.transpose(0, 1)
        return layers.rnn_output_transpose(output)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


def _states(h, unbatched, num_layers):
    if h is None:
        return None
    if unbatched:
        h = h.unsqueeze(1)
    return [h[k] for k in range(num_layers)]


class RNN(_RNNBase):
    def __init__(self, *args, **kwargs) -> None:
        if len(args) > 3 and isinstance(args[3], str):  # RNN(in, hidden, layers, 'relu')
            kwargs["nonlinearity"] = args[3]
            args = args[:3] + args[4:]
        super().__init__(*args, **kwargs)

    def forward(self, input, hx=None):
        input, unbatched = self._prepare(input, hx)
        hs = _states(hx, unbatched, self.num_layers) or list(self._zeros(input.shape[1], input))
        act = (lambda t: t.tanh()) if self.nonlinearity == "tanh" else (lambda t: t.relu())

        def cell(x, state, w_ih, w_hh, b_ih, b_hh):
            return (act(F.linear(x, w_ih, b_ih) + F.linear(state[0], w_hh, b_hh)),)

        out, finals = self._run(input, [(h,) for h in hs], cell)
        h_n = stack([s[0] for s in finals], 0)
        return self._finish(out, unbatched), (h_n.squeeze(1) if unbatched else h_n)


class LSTM(_RNNBase):
    _gates = 4
    _mode = "LSTM"

    def forward(self, input, hx=None):
        input, unbatched = self._prepare(input, hx)
        if hx is None:
            z = self._zeros(input.shape[1], input)
            hs, cs = list(z), list(z)
        else:
            hs = _states(hx[0], unbatched, self.num_layers)
            cs = _states(hx[1], unbatched, self.num_layers)

        def cell(x, state, w_ih, w_hh, b_ih, b_hh):
            h, c = state
            gates = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
            i, f, g, o = gates.chunk(4, 1)
            c = f.sigmoid() * c + i.sigmoid() * g.tanh()
            return (o.sigmoid() * c.tanh(), c)

        out, finals = self._run(input, list(zip(hs, cs)), cell)
        h_n = stack([s[0] for s in finals], 0)
        c_n = stack([s[1] for s in finals], 0)
        if unbatched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return self._finish(out, unbatched), (h_n, c_n)


class GRU(_RNNBase):
    _gates = 3
    _mode = "GRU"

    def forward(self, input, hx=None):
        input, unbatched = self._prepare(input, hx)
        hs = _states(hx, unbatched, self.num_layers) or list(self._zeros(input.shape[1], input))

        def cell(x, state, w_ih, w_hh, b_ih, b_hh):
            h = state[0]
            gi = F.linear(x, w_ih, b_ih).chunk(3, 1)
            gh = F.linear(h, w_hh, b_hh).chunk(3, 1)
            r = (gi[0] + gh[0]).sigmoid()
            z = (gi[1] + gh[1]).sigmoid()
            n = (gi[2] + r * gh[2]).tanh()
            return ((h - n) * z + n,)

        out, finals = self._run(input, [(h,) for h in hs], cell)
        h_n = stack([s[0] for s in finals], 0)
        return self._finish(out, unbatched), (h_n.squeeze(1) if unbatched else h_n)
