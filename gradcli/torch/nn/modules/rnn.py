"""RNN, LSTM and GRU (single and multi-layer, bidirectional, batch_first, h0/c0, LSTM
proj_size), in the ops of PyTorch's CPU implementation (rnn_native.py), so their graphs,
and their gradients' graphs under create_graph, are PyTorch's: the input projected over the
whole sequence, each step's cell, the steps' hidden states stacked (StackBackward0), the
final states stacked over layers and directions; a float32 LSTM layer is one oneDNN op
(MkldnnRnnLayerBackward0, rnn_mkldnn.py) as PyTorch's, except with projections;
CatBackward0 joins two directions, TransposeBackward1 ends a batch_first RNN/GRU output."""

from __future__ import annotations

import math

from gradcli.engine.ops import nn_layers as layers
from gradcli.engine.ops.creation import zeros
from gradcli.engine.ops.registry import PUBLIC
from gradcli.engine.ops.shape import cat, stack

from . import rnn_mkldnn, rnn_native
from ._common import new_param
from ._init import nn_init
from .module import Module

__all__ = ["RNN", "LSTM", "GRU", "RNNBase"]


_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Module):
    """PyTorch's RNNBase: `mode` ('LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU') picks the gate
    count; RNN, LSTM and GRU pass theirs. Parameters are registered in PyTorch's order
    (layer, direction, then ih, hh, biases, hr), the order reset_parameters draws in."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) \
                or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            import warnings

            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", UserWarning,
                          stacklevel=1)  # (PyTorch's points at its own line too)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                                f"{type(value).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        # (the forward's family: RNN_TANH and RNN_RELU run the same cell)
        self.__dict__["_mode"] = mode if mode in ("LSTM", "GRU") else "RNN"
        gate = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        real_hidden = proj_size or hidden_size
        self._all_weights = []
        for layer in range(num_layers):
            width = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                suffix = f"l{layer}" + ("_reverse" if direction else "")
                shapes = [("weight_ih", (gate, width)), ("weight_hh", (gate, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for kind, shape in shapes:
                    setattr(self, f"{kind}_{suffix}", new_param(shape, device, dtype))
                    names.append(f"{kind}_{suffix}")
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def all_weights(self) -> list:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def reset_parameters(self) -> None:
        init = nn_init()
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _directions(self) -> int:
        return 2 if self.bidirectional else 1

    def _layer_params(self, layer: int, direction: int = 0):
        get = self._parameters.get
        suffix = f"l{layer}" + ("_reverse" if direction else "")
        return (get(f"weight_ih_{suffix}"), get(f"weight_hh_{suffix}"),
                get(f"bias_ih_{suffix}"), get(f"bias_hh_{suffix}"))

    def _prepare(self, input, hx):
        """(input as (T, N, F), unbatched?), after PyTorch's checks of the input and of the
        initial states, in its order and with its messages."""
        unbatched = input.dim() == 2
        if input.dim() not in (2, 3):
            tensor = " tensor" if self._mode == "RNN" else ""
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                             f"{input.dim()}D{tensor} instead")
        states = hx if self._mode == "LSTM" and hx is not None else (hx,)
        if hx is not None:
            dims = [h.dim() for h in states]
            want = 2 if unbatched else 3
            if any(d != want for d in dims):
                kind = "unbatched 2-D" if unbatched else "batched 3-D"
                if self._mode == "LSTM":
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                       f"got ({dims[0]}-D, {dims[1]}-D) tensors")
                raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                                   f"{dims[0]}-D tensor")
        if unbatched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        weight = self.weight_ih_l0
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")
        if hx is not None:
            count = self.num_layers * self._directions
            batch = input.shape[1]
            sizes = [(count, batch, self.proj_size or self.hidden_size),
                     (count, batch, self.hidden_size)]
            for k, h in enumerate(states):
                shape = tuple(h.shape) if not unbatched else (h.shape[0], 1, h.shape[1])
                if shape != sizes[k]:
                    what = f"hidden[{k}]" if self._mode == "LSTM" else "hidden"
                    raise RuntimeError(f"Expected {what} size {sizes[k]}, got {list(shape)}")
        return input, unbatched

    def _zeros(self, batch: int, like, size: int | None = None):
        return zeros(self.num_layers * self._directions, batch, size or self.hidden_size,
                     dtype=like.dtype)

    def _oneDNN(self, input) -> bool:  # noqa: N802 - the library's name
        """PyTorch runs a float32 or bfloat16 LSTM without projections through oneDNN on
        CPU (float64 and float16 take its default path, ending on a stack)."""
        return self._mode == "LSTM" and not self.proj_size \
            and str(input.dtype) in ("torch.float32", "torch.bfloat16")

    def _run(self, input, states, cell):
        """Run every layer over time, each direction in turn (the reverse one from the last
        step back), the directions' outputs concatenated; states: per layer and direction
        (index layer * directions + direction) a tuple of state tensors. `cell`: a cell of
        PyTorch's CPU decomposition (rnn_native.py), or "oneDNN" for a float32 LSTM's
        layer op (rnn_mkldnn.py; a packed input takes the cells)."""
        finals = []
        directions = self._directions
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                params = self._layer_params(layer, direction)
                state = states[layer * directions + direction]
                masks = self.__dict__.get("_step_masks")
                if cell == "oneDNN" and masks is None:
                    out, state = rnn_mkldnn.lstm_layer(input, state, params, bool(direction))
                else:
                    w_hr = self._parameters.get(f"weight_hr_l{layer}"
                                                + ("_reverse" if direction else ""))
                    out, state = rnn_native.run_direction(
                        input, state, params, rnn_native.lstm_cell if cell == "oneDNN" else cell,
                        bool(direction), masks, w_hr)
                outs.append(out)
                finals.append(state)
            input = outs[0] if directions == 1 else cat(outs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                from gradcli.torch.nn import functional

                input = functional.dropout(input, self.dropout, True)
        return input, finals

    def _forward_packed(self, packed, hx):
        """A PackedSequence input: the padded batch (in the packed, sorted order) runs with
        each sequence's state frozen after its last step (so a reverse direction starts at
        each sequence's own end); the output is packed again and the final states put back
        in the caller's batch order, as PyTorch's packed RNN gives them."""
        from gradcli.torch.nn.utils import rnn as rnn_utils

        data, batch_sizes, sorted_indices, unsorted_indices = packed
        padded, lengths = rnn_utils.pad_packed_sequence(
            rnn_utils.PackedSequence(data, batch_sizes, None, None))
        if hx is not None and sorted_indices is not None:
            hx = (tuple(h.index_select(1, sorted_indices) for h in hx)
                  if self._mode == "LSTM" else hx.index_select(1, sorted_indices))
        steps = padded.shape[0]
        self.__dict__["_step_masks"] = [(lengths > t).reshape(-1, 1) for t in range(steps)]
        batch_first = self.batch_first
        self.__dict__["batch_first"] = False
        try:
            output, hidden = type(self).forward(self, padded, hx)
        finally:
            self.__dict__.pop("_step_masks", None)
            self.__dict__["batch_first"] = batch_first
        out_data, _ = PUBLIC["torch._pack_padded_sequence"](output, lengths, False)
        if unsorted_indices is not None:
            hidden = (tuple(h.index_select(1, unsorted_indices) for h in hidden)
                      if self._mode == "LSTM" else hidden.index_select(1, unsorted_indices))
        return (rnn_utils.PackedSequence(out_data, batch_sizes, sorted_indices,
                                         unsorted_indices), hidden)

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
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s  # (PyTorch's shows no nonlinearity)


def _states(h, unbatched, count, by_index: bool = False):
    if h is None:
        return None
    if unbatched:
        h = h.unsqueeze(1)
    if by_index:  # (oneDNN's LSTM: hx[index], SelectBackward0)
        return [h[k] for k in range(count)]
    return list(h.unbind(0))  # (ATen unbinds the initial states: UnbindBackward0)


class RNN(RNNBase):
    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:  # RNN(input_size, hidden_size, num_layers, nonlinearity, ...)
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__(f"RNN_{nonlinearity.upper()}", *args, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if type(input).__name__ == "PackedSequence":
            return self._forward_packed(input, hx)
        input, unbatched = self._prepare(input, hx)
        count = self.num_layers * self._directions
        hs = _states(hx, unbatched, count) or list(self._zeros(input.shape[1], input))
        out, finals = self._run(input, [(h,) for h in hs],
                                rnn_native.simple_cell(self.nonlinearity))
        h_n = stack([s[0] for s in finals], 0)
        return self._finish(out, unbatched), (h_n.squeeze(1) if unbatched else h_n)


_PROJ_WARNED = []


class LSTM(RNNBase):
    """With proj_size, each step's hidden state is projected by weight_hr (h @ w_hr.t(),
    MmBackward0) and PyTorch leaves oneDNN for its default path (warning once)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        if type(input).__name__ == "PackedSequence":
            return self._forward_packed(input, hx)
        input, unbatched = self._prepare(input, hx)
        count = self.num_layers * self._directions
        if self.proj_size and not _PROJ_WARNED:
            import warnings

            _PROJ_WARNED.append(True)
            warnings.warn("LSTM with projections is not supported with oneDNN. Using default "
                          "implementation.", UserWarning, stacklevel=3)
        if hx is None:
            hs = list(self._zeros(input.shape[1], input, self.proj_size or self.hidden_size))
            cs = list(self._zeros(input.shape[1], input))
        else:
            hs = _states(hx[0], unbatched, count)
            cs = _states(hx[1], unbatched, count)
        native = rnn_native.lstm_cell
        if self._oneDNN(input):  # (its input made contiguous, its states picked by index)
            native = "oneDNN"
            input = input.contiguous()
            if hx is not None:
                hs = _states(hx[0], unbatched, count, by_index=True)
                cs = _states(hx[1], unbatched, count, by_index=True)
        out, finals = self._run(input, list(zip(hs, cs)), native)
        h_n = stack([s[0] for s in finals], 0)
        c_n = stack([s[1] for s in finals], 0)
        if unbatched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return self._finish(out, unbatched), (h_n, c_n)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        if type(input).__name__ == "PackedSequence":
            return self._forward_packed(input, hx)
        input, unbatched = self._prepare(input, hx)
        count = self.num_layers * self._directions
        hs = _states(hx, unbatched, count) or list(self._zeros(input.shape[1], input))

        out, finals = self._run(input, [(h,) for h in hs], rnn_native.gru_cell)
        h_n = stack([s[0] for s in finals], 0)
        return self._finish(out, unbatched), (h_n.squeeze(1) if unbatched else h_n)


_RNNBase = RNNBase  # (the name other modules import)
