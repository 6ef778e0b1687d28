"""A float32 LSTM layer as PyTorch's CPU runs it: one oneDNN op per layer and direction.

ATen's mkldnn_rnn makes the input contiguous (a batch_first input: a clone of its
transpose), picks each layer's initial states by index, and runs mkldnn_rnn_layer(input,
w_ih, w_hh, b_ih, b_hh, hx, cx): one node, MkldnnRnnLayerBackward0, over the input and the
four weights (zeros for absent biases) and the two states, with three differentiable
outputs (the output sequence, the last h and the last c). Its backward under
create_graph is mkldnn_rnn_layer_differentiable_backward, reproduced op for op below:
the gates recomputed step by step (linear over x_t first, then the hidden projection
added), then walked back in time, each step's input gradient a matmul of the gates'
gradients with w_ih unsqueezed and all of them concatenated, the weight gradients summed
over steps. Without a graph the same formula gives the values.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine.grad_mode import GRAD_MODE, no_grad
from gradcli.engine.ops import nn as F
from gradcli.engine.ops import registry
from gradcli.engine.ops.linalg import matmul
from gradcli.engine.ops.linalg_ext import _grads, _run_multi
from gradcli.engine.ops.registry import PUBLIC
from gradcli.engine.ops.shape import cat
from gradcli.engine.tensor import make

from . import rnn_native


def _one_minus(t):
    """C++'s `1 - t`: a tensor of ones minus t (SubBackward0)."""
    return make(np.ones_like(t._data)) - t


def _differentiable_backward(inputs, reverse: bool, grads):
    x, w_ih, w_hh, b_ih, b_hh, hx0, cx0 = inputs
    steps = x.shape[0]
    g_out, g_hy, g_cy = grads
    if g_out is None and g_hy is None and g_cy is None:
        return (None,) * 7
    zeros_like = PUBLIC["torch.zeros_like"]
    if g_out is None:
        g_out = zeros_like(make(np.zeros((steps,) + tuple(hx0.shape), x._data.dtype)))
    grad_hy = g_hy if g_hy is not None else zeros_like(hx0)
    grad_cy = g_cy if g_cy is not None else zeros_like(cx0)
    gates = [None] * steps
    states = [(hx0, cx0)]
    h, c = hx0, cx0
    for seq in range(1, steps + 1):
        t = steps - seq if reverse else seq - 1
        i, f, g, o = PUBLIC["torch.unsafe_chunk"](
            F.linear(x[t], w_ih, b_ih) + F.linear(h, w_hh, b_hh), 4, 1)
        i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
        gates[t] = (i, f, g, o)
        c = f * c + i * g
        h = o * c.tanh()
        states.append((h, c))
    dx_steps = [None] * steps
    d_wx = d_wh = d_b = None
    dprev_h = dprev_c = None
    for seq in range(steps - 1, -1, -1):
        t = steps - seq - 1 if reverse else seq
        i, f, g, o = gates[t]
        cy = states[seq + 1][1]
        h_prev, c_prev = states[seq]
        new_grad_hy = g_out[t] + grad_hy
        d1 = grad_cy + new_grad_hy * o * _one_minus(cy.tanh() * cy.tanh())
        dgp = d1 * i
        dip = d1 * g
        dprev_c = d1 * f
        dfp = d1 * c_prev
        dop = new_grad_hy * cy.tanh()
        do_ = dop * o * _one_minus(o)
        dg = dgp * _one_minus(g * g)
        df = dfp * f * _one_minus(f)
        di = dip * i * _one_minus(i)
        da = cat([di, df, dg, do_], 1)
        db_ = da.sum(0)
        dx = matmul(da, w_ih).unsqueeze(0)
        dprev_h = matmul(da, w_hh)
        dwx_ = matmul(da.transpose(0, 1), x[t])
        dwh_ = matmul(da.transpose(0, 1), h_prev)
        if d_b is None:
            d_b, d_wx, d_wh = db_, dwx_, dwh_
        else:
            d_b, d_wx, d_wh = d_b + db_, d_wx + dwx_, d_wh + dwh_
        dx_steps[t] = dx
        grad_hy, grad_cy = dprev_h, dprev_c
    return (cat(dx_steps, 0), d_wx, d_wh, d_b, d_b, dprev_h, dprev_c)


def _backward(c, grads):
    inputs = c.saved
    reverse = c.meta[0]
    incoming = _grads(grads, 3)
    if GRAD_MODE.enabled:
        got = _differentiable_backward(inputs, reverse, incoming)
    else:
        with no_grad():
            got = _differentiable_backward(inputs, reverse, incoming)
    return tuple(g if c.needs(k) else None for k, g in enumerate(got))


_LAYER: list = [None]


def _layer_op():
    op = _LAYER[0]
    if op is None:
        op = _LAYER[0] = registry.Op(
            "mkldnn_rnn_layer", "MkldnnRnnLayerBackward0", None, _backward,
            "an LSTM layer over time as one op; its gradient recomputes the gates",
            save_inputs=True, multi=True)
    return op


def lstm_layer(input, state, params, reverse: bool):
    """One layer in one direction: (its output over time, (h_last, c_last)), as nodes of
    one mkldnn_rnn_layer op."""
    w_ih, w_hh, b_ih, b_hh = params
    hx, cx = state
    if b_ih is None:
        b_ih = make(np.zeros(w_ih.shape[0], w_ih._data.dtype))
        b_hh = make(np.zeros(w_hh.shape[0], w_hh._data.dtype))
    with no_grad():
        out, (h, c) = rnn_native.run_direction(input, (hx, cx), (w_ih, w_hh, b_ih, b_hh),
                                               rnn_native.lstm_cell, reverse)
    outs = _run_multi(_layer_op(), (input, w_ih, w_hh, b_ih, b_hh, hx, cx), (reverse,),
                      [out._data, h._data, c._data], (True, True, True))
    return outs[0], (outs[1], outs[2])
