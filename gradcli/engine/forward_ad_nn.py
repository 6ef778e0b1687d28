"""PyTorch's forward-derivative formulas for batch norm and the nn backward functions.

The double-vjp rule of forward_ad gives these ops the right tangent values, but the
tangent's own graph (its grad_fn when a primal or a tangent requires grad) is then the
graph of gradcli's backward formula. PyTorch's tangents come from derivatives.yaml's
`result:` lines instead: batch_norm_jvp (an AddBackward0 on top in training and with an
affine weight), the op itself for rrelu_with_noise_backward, a where for the shrinks'
backward, the underivable glu_backward_jvp for glu_backward. The formulas here are built
from those ops so that `tangent.grad_fn` prints PyTorch's name and a backward through the
tangent takes PyTorch's path. forward_ad merges FORMULAS (one-output ops) and
MULTI_FORMULAS (the BackwardOp nodes, which have a list of outputs) into its tables.
"""

from __future__ import annotations

import numpy as np

from .forward_ad_formulas import _unsupported_op, missing_zero, valued, zero_term
from .ops import registry as _registry
from .tensor import make

# ------------------------------------------------------------------ batch norm


def _divided(t, count: int):
    """t / count as ATen's C++ divides by a number (DivBackward1)."""
    return _registry.run_op(_registry.OPS["div_scalar"], (t,), (count,))


def _batch_norm(inputs, meta, res, tangents):
    """batch_norm_jvp: in training the normalisation's tangent
    (t - mean(t)) invstd + (x - mean) invstd_t, invstd_t = -invstd^3 mean((t - mean(t))
    (x - mean)) (AddBackward0 on top), in evaluation t invstd (MulBackward0); then the
    affine part: * weight + normalised x * weight_t, + bias_t. The batch statistics are
    constants there, as PyTorch's saved mean and invstd are. A tangent that is missing
    while its tensor is there is PyTorch's efficient zero: its terms are recorded only
    where the other factor requires grad and change no value."""
    x, w, b = inputs
    x_t, w_t, b_t = tangents
    mean, var, eps, training, invstd = meta[:5]
    data = x._data
    if data.ndim < 2 or data.size == 0:
        return NotImplemented
    dtype = data.dtype
    view = (1, data.shape[1]) + (1,) * (data.ndim - 2)
    dims = (0,) + tuple(range(2, data.ndim))
    count = data.size // data.shape[1]
    if training:
        mean_p = make(np.asarray(mean, dtype).reshape(view))
        invstd_p = make(np.asarray(invstd, dtype).reshape(view))
    else:
        mean_p = make(np.asarray(mean, dtype).reshape(view))
        with np.errstate(all="ignore"):
            invstd_p = make((1 / np.sqrt(np.asarray(var, dtype) + dtype.type(eps)))
                            .astype(dtype).reshape(view))
    centred_p = x - mean_p
    zero = x_t is None  # (the tangent so far is an efficient zero: zero-valued)
    if not zero:
        if training:
            centred_t = x_t - x_t.mean(dims, keepdim=True)
            invstd_t = _divided((centred_t * centred_p * -invstd_p.pow(3)).sum(dims, keepdim=True),
                                count)
            out = centred_t * invstd_p + centred_p * invstd_t
        else:
            out = x_t * invstd_p
    else:
        term = zero_term(centred_p) if training else None
        like = w_t if w_t is not None else b_t
        out = missing_zero(x, like)
        if term is not None:  # (the invstd tangent's term, read through x)
            out = valued(out + term, out._data)
    if w is not None:
        scaled = out * w.reshape(view)
        normalised = centred_p * invstd_p
        second = normalised * w_t.reshape(view) if w_t is not None else \
            zero_term(normalised, zero_first=False)
        if second is None:
            second = missing_zero(normalised, scaled)
        summed = scaled + second
        if zero:
            out = valued(summed, second._data)
        elif w_t is None:
            out = valued(summed, scaled._data)
        else:
            out = summed
        zero = zero and w_t is None
    if b is not None:
        if b_t is None:
            out = valued(out + missing_zero(b, out).reshape(view), out._data)
        else:
            bias_t = b_t.reshape(view)
            out = valued(out + bias_t, np.broadcast_to(bias_t._data, data.shape)) if zero \
                else out + bias_t
    if out._data.dtype != res._data.dtype:
        out = out.to(res.dtype)
    return out


# ------------------------------------------------------------------ nn backward functions


def _backward_op(op):
    """The BackwardOp behind a node op (its backward is the BackwardOp's bound method)."""
    return op.backward.__self__


def _masked_gradient(keep_name: str):
    """softshrink_backward / hardshrink_backward: PyTorch's
    where(|x| > lambda, grad_output_t, 0) (WhereBackward0 on top)."""

    def formula(inputs, meta, outs, tangents):
        g, x = inputs
        g_t = tangents[0]
        lambd = meta[0][0]
        first = outs[0]
        if g_t is None:
            g_t = make(np.zeros_like(g._data))
        keep = (x > lambd).logical_or(x < -lambd)
        zero = make(np.zeros((), first._data.dtype)).expand(tuple(first._data.shape))
        return [_registry.PUBLIC["torch.where"](keep, g_t, zero)]

    formula.__name__ = keep_name
    return formula


def _rrelu_backward(inputs, meta, outs, tangents):
    """rrelu_with_noise_backward: the op itself at (grad_output_t, self_p)
    (RreluWithNoiseBackwardBackward0)."""
    g, x = inputs
    g_t = tangents[0] if tangents[0] is not None else make(np.zeros_like(g._data))
    op = _registry.OPS["rrelu_with_noise_backward"]
    return [_backward_op(op)((g_t, x), meta[0], (True,))[0]]


def _glu_backward_jvp_fwd(grad_x, g, x, g_t, x_t, dim):
    """glu_backward's tangent: for x = (a | b), s = sigmoid(b), the derivative of
    (g s | g a s (1 - s)) along (g_t, x_t)."""
    a, b = np.split(x.astype(np.float64), 2, axis=dim)
    a_t, b_t = np.split(x_t.astype(np.float64), 2, axis=dim)
    g64, g_t64 = g.astype(np.float64), g_t.astype(np.float64)
    with np.errstate(all="ignore"):
        s = 1 / (1 + np.exp(-b))
        ds = s * (1 - s)
        first = g_t64 * s + g64 * ds * b_t
        second = (g_t64 * a * ds + g64 * a_t * ds + g64 * a * ds * (1 - 2 * s) * b_t)
    return np.concatenate([first, second], axis=dim).astype(x.dtype)


_GLU_BACKWARD_JVP = _unsupported_op("glu_backward_jvp", "glu_backward_jvp",
                                    _glu_backward_jvp_fwd)


def _glu_backward(inputs, meta, outs, tangents):
    """glu_backward's formula is ATen's glu_backward_jvp(result, grad_output, self,
    grad_output_t, self_t, dim), a function without a derivative: its node is
    NotImplemented, as PyTorch's."""
    g, x = inputs
    g_t = tangents[0] if tangents[0] is not None else make(np.zeros_like(g._data))
    x_t = tangents[1] if tangents[1] is not None else make(np.zeros_like(x._data))
    result = make(outs[0]._data)
    return [_registry.run_op(_GLU_BACKWARD_JVP, (result, g, x, g_t, x_t), meta[0])]


FORMULAS = {name: _batch_norm for name in (
    "batch_norm", "batch_norm_with_update", "native_batch_norm_legit",
    "native_batch_norm_legit_no_stats")}

MULTI_FORMULAS = {
    "softshrink_backward": _masked_gradient("softshrink_backward"),
    "hardshrink_backward": _masked_gradient("hardshrink_backward"),
    "rrelu_with_noise_backward": _rrelu_backward,
    "glu_backward": _glu_backward,
}
