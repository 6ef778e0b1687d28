"""A convolution's backward as one op, ConvolutionBackwardBackward0, as PyTorch records it.

PyTorch's ConvolutionBackward0 computes the gradients of input, weight and bias with one
call, `convolution_backward(grad_output, input, weight, ...)`, and under create_graph that
call is one node with three outputs whose inputs are grad_output, input and weight. So
the weight's gradient of `conv(x, w)` requires grad when only `w` does (the node takes `w`
although that gradient does not depend on it), every gradient's grad_fn is the same node
(output numbers 0, 1, 2, the bias's included), its next_functions are those of
grad_output, input and weight, and differentiating a gradient along an input it does not
depend on gives no gradient (allow_unused's None) rather than zeros.

A convolution family (the 1d/2d layers of nn_layers.py, the im2col ones of conv_ext.py,
transposed convolutions included) hands in a `ConvFamily`: how to compute the two
gradients as arrays and the forward op itself (without bias), from which every higher
order follows, since a convolution is bilinear in (input, weight):
d/dgrad_output = conv(ggI, w) + conv(x, ggW) + ggb, d/dinput = the input gradient of
conv(., ggW) at grad_output, d/dweight = the weight gradient of conv(ggI, .) at
grad_output.
"""

from __future__ import annotations

import numpy as np

from ..grad_mode import no_grad
from ..tensor import Tensor
from .linalg_ext import _grads, _run_multi
from .registry import defop


class ConvFamily:
    """What a convolution module supplies; `geo` is its forward node's meta."""

    def grad_input(self, g: Tensor, w: Tensor, x_shape: tuple, geo: tuple) -> np.ndarray:
        raise NotImplementedError

    def grad_weight(self, g: Tensor, x: Tensor, w_shape: tuple, geo: tuple) -> np.ndarray:
        raise NotImplementedError

    def forward(self, x: Tensor, w: Tensor, geo: tuple) -> Tensor:
        """The convolution of x with w, recorded, without bias."""
        raise NotImplementedError


def _double_backward(c, grads):
    g, x, w = c.saved
    family, geo = c.meta[0], c.meta[1]
    ggx, ggw, ggb = _grads(grads, 3)
    dg = None
    if c.needs(0):
        parts = []
        if ggx is not None:
            parts.append(family.forward(ggx, w, geo))
        if ggw is not None:
            parts.append(family.forward(x, ggw, geo))
        if ggb is not None:
            spread = ggb.reshape((1, -1) + (1,) * (g.dim() - 2)).expand(tuple(g.shape))
            parts.append(spread)
        for part in parts:
            dg = part if dg is None else dg + part
    dx = dw = None
    if c.needs(1) and ggw is not None:
        dx = convolution_backward(family, geo, g, x, ggw, (True, False, False))[0]
    if c.needs(2) and ggx is not None:
        dw = convolution_backward(family, geo, g, ggx, w, (False, True, False))[1]
    return dg, dx, dw


CONVOLUTION_BACKWARD = defop(
    "convolution_backward", "ConvolutionBackwardBackward0", None, _double_backward,
    "d/dg = conv(ggI, w) + conv(x, ggW) + ggb; d/dx = grad_input(g, ggW); "
    "d/dw = grad_weight(g, ggI)",
    save="inputs", multi=True,
    torch_call="torch.enable_grad()(lambda a: (lambda w: torch.autograd.grad("
               "torch.nn.functional.conv1d(a.reshape(1, 1, -1), w), w, "
               "torch.ones(1, 1, a.numel() - 1, dtype=a.dtype) * a.sum(), create_graph=True)[0])("
               "torch.tensor([[[0.5, -1.0]]], dtype=a.dtype, requires_grad=True)))(a)")

_NONE = np.empty(0)


def convolution_backward(family: ConvFamily, geo: tuple, g: Tensor, x: Tensor, w: Tensor,
                         mask: tuple) -> tuple:
    """(grad_input, grad_weight, grad_bias) of a convolution at grad_output `g`, each only
    where `mask` asks (None elsewhere), recorded as one node when a graph is being made."""
    with no_grad():
        gx = family.grad_input(g, w, tuple(x.shape), geo) if mask[0] else _NONE
        gw = family.grad_weight(g, x, tuple(w.shape), geo) if mask[1] else _NONE
        gb = g.sum([0] + list(range(2, g.dim())))._data if mask[2] else _NONE
    outs = _run_multi(CONVOLUTION_BACKWARD, (g, x, w), (family, geo, tuple(mask)),
                      [gx, gw, gb], tuple(mask))
    return tuple(o if wanted else None for o, wanted in zip(outs, mask, strict=True))
