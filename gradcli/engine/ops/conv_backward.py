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

from ..grad_mode import GRAD_MODE, no_grad
from ..tensor import Tensor
from .linalg_ext import _grads, _run_multi
from .registry import PUBLIC, defop


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
    params = _params(geo, w) if GRAD_MODE.enabled else None
    if c.needs(1) and ggw is not None:
        dx = _input_term(params, g, x, ggw) if params is not None else \
            convolution_backward(family, geo, g, x, ggw, (True, False, False))[0]
    if c.needs(2) and ggx is not None:
        dw = _weight_term(params, g, ggx, w) if params is not None else \
            convolution_backward(family, geo, g, ggx, w, (False, True, False))[1]
    return dg, dx, dw


# ------------------------------------------------------------------ third order
# Under create_graph the second-order gradients of input and weight are, in PyTorch's
# _convolution_double_backward, convolutions themselves (ConvolutionBackward0 nodes, with
# TransposeBackward0 around the weight's), so a third order records those; the values
# are the same as the backward op's.


def _params(geo, w: Tensor):
    """(dims, stride, padding, dilation, transposed, output_padding, groups) of a family's
    forward meta: conv1d/conv2d's (stride, padding, dilation, groups, one_d), the im2col
    family's (spec, groups, transposed, out_shape)."""
    if len(geo) == 5:
        stride, padding, dilation, groups, one_d = geo
        if one_d:
            stride, padding, dilation = stride[1:], padding[1:], dilation[1:]
        nd = len(stride)
        return nd, tuple(stride), tuple(padding), tuple(dilation), False, (0,) * nd, groups
    spec, groups, transposed, out_shape = geo
    nd = len(spec.kernel)
    out_pad = (0,) * nd
    if transposed:
        out_pad = tuple(o - ((i - 1) * s - 2 * p + d * (k - 1) + 1) for o, i, s, p, d, k in zip(
            out_shape[2:], spec.out_spatial, spec.stride, spec.padding, spec.dilation,
            spec.kernel, strict=True))
    return (nd, tuple(spec.stride), tuple(spec.padding), tuple(spec.dilation), bool(transposed),
            out_pad, groups)


def _convolution(x, w, nd, stride, padding, dilation, transposed, output_padding, groups):
    """ATen's convolution(x, w, None, ...) through the public ops (ConvolutionBackward0)."""
    if transposed:
        return PUBLIC[f"torch.nn.functional.conv_transpose{nd}d"](
            x, w, None, stride, padding, output_padding, groups, dilation)
    return PUBLIC[f"torch.nn.functional.conv{nd}d"](x, w, None, stride, padding, dilation,
                                                    groups)


_PADDED: list = [None]


def _refusing_backward(gi, g, ggw, out_pad):
    """PyTorch computes this term as a plain convolution that keeps the transposed one's
    output_padding: the forward ignores it, its backward (the next order) refuses it. The
    same values on a ConvolutionBackward0 node over (grad_output, ggW, no bias) that raises
    so."""
    from .registry import Op, run_op

    op = _PADDED[0]
    if op is None:
        def backward(c, grad):
            raise RuntimeError("output_padding is not supported for non-transposed "
                               f"convolutions; got: {' '.join(map(str, c.meta[-1]))}")

        op = _PADDED[0] = Op("convolution_output_padded", "ConvolutionBackward0",
                             lambda a, b, bias, values, pads: values, backward,
                             "a convolution whose backward PyTorch refuses")
    return run_op(op, (g, ggw, None), (gi._data, tuple(out_pad)))


def _narrowed(t, like_shape):
    for d in range(2, t.dim()):
        if t.shape[d] > like_shape[d]:
            t = t.narrow(d, 0, like_shape[d])
    return t


def _input_term(params, g, x, ggw):
    """gI: the transposed convolution of grad_output with ggW (a convolution for a
    transposed forward, narrowed to the input), output padding where the input had rows
    the forward did not reach."""
    nd, stride, padding, dilation, transposed, out_pad, groups = params
    if transposed:
        gi = _convolution(g, ggw, nd, stride, padding, dilation, False, out_pad, groups)
        if any(out_pad) and gi.requires_grad:
            gi = _refusing_backward(gi, g, ggw, out_pad)
        return _narrowed(gi, tuple(x.shape))
    pads = []
    for i in range(nd):
        k = ggw.shape[2 + i]
        expected = (k - 1) * dilation[i] - 2 * padding[i] + stride[i] * (g.shape[2 + i] - 1) + 1
        pads.append(x.shape[2 + i] - expected)
    return _convolution(g, ggw, nd, stride, padding, dilation, True, tuple(pads), groups)


def _weight_term(params, g, ggx, w):
    """gW: the convolution of ggI with grad_output over the batch (both transposed to put
    it on the channel dim; stride and dilation swapped; per group, concatenated), then
    transposed back and narrowed to the weight."""
    nd, stride, padding, dilation, transposed, out_pad, groups = params
    g_t, ggx_t = g.transpose(0, 1), ggx.transpose(0, 1)
    args = (nd, dilation, padding, stride, False, (0,) * nd, 1)

    def one(a, b):
        return _convolution(b, a, *args) if transposed else _convolution(a, b, *args)

    if groups == 1:
        gw_t = one(ggx_t, g_t)
    else:
        parts = []
        for k in range(groups):
            size_i, size_o = ggx_t.shape[0] // groups, g_t.shape[0] // groups
            parts.append(one(ggx_t.narrow(0, size_i * k, size_i), g_t.narrow(0, size_o * k, size_o)))
        gw_t = PUBLIC["torch.cat"](parts, 1)
    return _narrowed(gw_t.transpose(0, 1), tuple(w.shape))


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
