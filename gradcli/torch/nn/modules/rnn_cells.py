"""RNNCell, LSTMCell and GRUCell: one time step, as PyTorch's CPU cells compute it (two
linear layers and pointwise ops, so the nodes are its: TanhBackward0 / ReluBackward0,
MulBackward0 for an LSTM's h, AddBackward0 for a GRU's), with its checks and messages,
parameter names, initialisation order and reprs. Unbatched (1-d) inputs work as there."""

from __future__ import annotations

import math

from gradcli.engine.ops import nn as F
from gradcli.engine.ops.creation import zeros

from ._common import new_param
from ._init import nn_init
from .module import Module
from .rnn_native import mul_inplace

__all__ = ["RNNCell", "LSTMCell", "GRUCell"]


class RNNCellBase(Module):
    """PyTorch's RNNCellBase: `num_chunks` gates of hidden_size rows each (1 for RNNCell,
    4 for LSTMCell, 3 for GRUCell); bias and num_chunks have no defaults, as there."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gates = num_chunks * hidden_size
        self.weight_ih = new_param((gates, input_size), device, dtype)
        self.weight_hh = new_param((gates, hidden_size), device, dtype)
        if bias:
            self.bias_ih = new_param((gates,), device, dtype)
            self.bias_hh = new_param((gates,), device, dtype)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init = nn_init()
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _batched(self, input, hx):
        """(input as (N, F), hx as (N, H) tuples or None, unbatched?) after PyTorch's
        checks."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = ((f"hx[{i}]", h) for i, h in enumerate(hx)) if isinstance(hx, tuple) \
            else (("hidden", hx),)
        for what, h in states:
            if h is not None and h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D "
                                 "instead")
        unbatched = input.dim() == 1
        if unbatched:
            input = input.unsqueeze(0)
            if hx is not None:
                hx = tuple(h.unsqueeze(0) for h in hx) if isinstance(hx, tuple) \
                    else hx.unsqueeze(0)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        for i, h in enumerate(hx if isinstance(hx, tuple) else (hx,)):
            if h is None:
                continue
            if h.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match "
                                   f"hidden{i} batch size {h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got "
                                   f"{h.shape[1]}, expected {self.hidden_size}")
        return input, hx, unbatched

    def _zeros(self, input):
        return zeros(input.shape[0], self.hidden_size, dtype=input.dtype)


class RNNCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        input, hx, unbatched = self._batched(input, hx)
        if hx is None:
            hx = self._zeros(input)
        pre = F.linear(hx, self.weight_hh, self.bias_hh) + \
            F.linear(input, self.weight_ih, self.bias_ih)
        out = pre.tanh() if self.nonlinearity == "tanh" else pre.relu()
        return out.squeeze(0) if unbatched else out


class LSTMCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        input, hx, unbatched = self._batched(input, hx)
        if hx is None:
            hx = (self._zeros(input), self._zeros(input))
        h, c = hx
        gates = F.linear(h, self.weight_hh, self.bias_hh) + \
            F.linear(input, self.weight_ih, self.bias_ih)
        i, f, g, o = gates.unsafe_chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, hx, unbatched = self._batched(input, hx)
        if hx is None:
            hx = self._zeros(input)
        gi = F.linear(input, self.weight_ih, self.bias_ih).unsafe_chunk(3, 1)
        gh = F.linear(hx, self.weight_hh, self.bias_hh).unsafe_chunk(3, 1)
        r = (gh[0] + gi[0]).sigmoid()
        z = (gh[1] + gi[1]).sigmoid()
        n = (gi[2] + mul_inplace(gh[2], r)).tanh()
        out = mul_inplace(hx - n, z) + n  # (ATen's in-place steps: rnn_native.py)
        return out.squeeze(0) if unbatched else out


RNNCell.__module__ = LSTMCell.__module__ = GRUCell.__module__ = RNNCellBase.__module__ = \
    "torch.nn.modules.rnn"
