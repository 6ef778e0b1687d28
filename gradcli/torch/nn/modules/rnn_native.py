"""RNN, GRU and LSTM layers in the ops of PyTorch's CPU implementation (ATen's RNN.cpp).

The values of a recurrent layer do not depend on how it is decomposed, but its graph
does, and under create_graph so does the graph of its gradients (their grad_fn names and
next_functions). PyTorch's CPU path, reproduced here op for op:

- each layer and direction projects the whole input sequence at once,
  linear(input, w_ih, b_ih) on the (T, N, F) tensor (view / addmm / view), and unbinds
  it along time;
- each step adds linear(h, w_hh, b_hh) to its projected input (that order: the hidden
  projection is the sum's first operand) and applies the cell: tanh or relu for RNN;
  for GRU the gates from unsafe_chunk(3) of both projections, r = sigmoid(h_r + i_r),
  z = sigmoid(h_z + i_z), n = tanh(i_n + h_n * r), h' = (h - n) * z + n; for LSTM
  unsafe_chunk(4) of the sum, c' = f * c + i * g, h' = o * tanh(c') (then h' w_hr^T with
  projections);
- the steps' outputs are stacked (a reverse direction runs from the last step and its
  outputs are put back in time order), two directions concatenated on the last dim;
- a float32 LSTM without projections runs each layer as one oneDNN op instead
  (mkldnn_rnn_layer: rnn_mkldnn.py).
"""

from __future__ import annotations

from gradcli.engine.ops import nn as F
from gradcli.engine.ops.linalg import matmul
from gradcli.engine.ops.registry import PUBLIC
from gradcli.engine.ops.shape import cat, stack


def _chunks(t, n: int):
    return PUBLIC["torch.unsafe_chunk"](t, n, 1)


_MUL_INPLACE: list = [None]


def mul_inplace(a, b):
    """a.mul_(b) as ATen's GRU cell writes it into a temporary: MulBackward0, whose saved
    `self` is a clone of a (CloneBackward0 in the gradient of b under create_graph)."""
    from gradcli.engine.grad_mode import GRAD_MODE
    from gradcli.engine.ops import registry

    if not (GRAD_MODE.enabled and b.requires_grad):
        return a * b
    op = _MUL_INPLACE[0]
    if op is None:
        def backward(c, g):
            a_saved, b_saved = c.saved
            return (g * b_saved if c.needs(0) else None,
                    g * c.meta[0] if c.needs(1) else None)

        op = _MUL_INPLACE[0] = registry.Op(
            "mul_inplace_saving_clone", "MulBackward0", lambda x, y, clone: x * y, backward,
            "d (a * b) = g b, g clone(a)", save_inputs=True, save_meta=True, broadcast=True)
    return registry.run_op(op, (a, b), (a.clone(),))


def simple_cell(nonlinearity: str):
    def cell(x_w, state, w_hh, b_hh, w_hr=None):
        pre = F.linear(state[0], w_hh, b_hh) + x_w
        return (pre.tanh() if nonlinearity == "tanh" else pre.relu(),)

    return cell


def gru_cell(x_w, state, w_hh, b_hh, w_hr=None):
    h = state[0]
    gi = _chunks(x_w, 3)
    gh = _chunks(F.linear(h, w_hh, b_hh), 3)
    reset = (gh[0] + gi[0]).sigmoid()
    update = (gh[1] + gi[1]).sigmoid()
    new = (gi[2] + mul_inplace(gh[2], reset)).tanh()
    return (mul_inplace(h - new, update) + new,)


def lstm_cell(x_w, state, w_hh, b_hh, w_hr=None):
    h, c = state
    i, f, g, o = _chunks(F.linear(h, w_hh, b_hh) + x_w, 4)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    c = f * c + i * g
    h = o * c.tanh()
    if w_hr is not None:
        h = matmul(h, w_hr.t())
    return (h, c)


def run_direction(input, state, params, cell, reverse: bool, masks=None, w_hr=None):
    """One layer in one direction: (its outputs stacked in time order, the final state).
    `masks` (packed input): per step, where a sequence has ended its state is kept."""
    w_ih, w_hh, b_ih, b_hh = params
    steps = F.linear(input, w_ih, b_ih).unbind(0)
    outputs = [None] * len(steps)
    for t in (range(len(steps) - 1, -1, -1) if reverse else range(len(steps))):
        new = cell(steps[t], state, w_hh, b_hh, w_hr)
        if masks is not None:
            new = tuple(PUBLIC["torch.where"](masks[t], n, o) for n, o in zip(new, state))
        state = new
        outputs[t] = state[0]
    return stack(outputs, 0), state


def join_directions(outs):
    return outs[0] if len(outs) == 1 else cat(outs, outs[0].dim() - 1)
