"""The long tail of torch.nn.functional: activations (mish selu celu rrelu hardswish
hardsigmoid softsign softshrink hardshrink tanhshrink threshold glu logsigmoid prelu
softmin), normalizations (normalize group_norm local_response_norm), losses
(poisson_nll gaussian_nll cosine_embedding margin_ranking hinge_embedding multilabel_margin
multilabel_soft_margin multi_margin soft_margin triplet_margin(_with_distance)), distances
(cosine_similarity pairwise_distance pdist cdist), one_hot, pixel_(un)shuffle and pad.

Where PyTorch composes a function from other ops (softsign, tanhshrink, most losses) it is
composed here from the same ops, so the result's grad_fn is PyTorch's; where PyTorch has a
kernel of its own (MishBackward0, GluBackward0, PdistBackward0...) it is one `defop`, with
the backward formula of PyTorch's derivatives.yaml written in Tensor ops (so create_graph
differentiates it again, though through other node names than PyTorch's double backwards).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import autocast_state as _autocast
from .. import dtypes, sdp_backends
from ..grad_mode import GRAD_MODE, no_grad
from ..kernels import sleef
from ..tensor import Tensor, _type_word, _wrap_dim, make
from . import shape_checks
from .backward_nodes import BackwardOp, prelu_kernel_double_backward
from .registry import PUBLIC, defop, public, run_op, run_unary

_F64 = np.float64


def _const(x, like: Tensor) -> Tensor:
    return make(np.asarray(x, dtype=like._data.dtype))


def _mask_of(cond, like: Tensor) -> Tensor:
    """A 0/1 constant of like's dtype where `cond` (a numpy bool array) holds."""
    return make(np.asarray(cond).astype(like._data.dtype))


def _float_input(x: Tensor, kernel: str) -> None:
    if x._data.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_word(x.dtype)}'")


def _inplace(x: Tensor, op, meta=()) -> Tensor:
    return x._apply_inplace(lambda old: run_op(op, (old,), meta))


# ----------------------------------------------------------------- activations

def _softplus_t(x: Tensor) -> Tensor:
    return x.clamp_min(0) + (-x.abs()).exp().log1p()


def _mish_fwd(x):
    exact = sleef.mish32(x)  # PyTorch's float32 kernel: SLEEF's exp, log1p and tanh
    if exact is not None:
        return exact
    with np.errstate(all="ignore"):
        sp = np.logaddexp(0, x.astype(_F64))
        return (x * np.tanh(sp)).astype(x.dtype)


def _mish_backward(c, g):
    x, = c.saved
    s = x.sigmoid()
    t = _softplus_t(x).tanh()
    return (g * (t + x * s * (1 - t * t)),)


MISH = defop("mish", "MishBackward0", _mish_fwd, _mish_backward,
             "d mish(x) = tanh(sp(x)) + x sigmoid(x) (1 - tanh^2(sp(x)))", save="inputs",
             torch_call="torch.nn.functional.mish(a)")


@public("torch.nn.functional.mish")
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    _float_input(input, "mish_cpu")
    if inplace:
        return _inplace(input, MISH)
    return run_op(MISH, (input,))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _elu_fwd(x, alpha, scale, input_scale):
    with np.errstate(all="ignore"):
        neg = scale * alpha * np.expm1(x.astype(_F64) * input_scale)
        return np.where(x > 0, scale * x.astype(_F64), neg).astype(x.dtype)


def _elu_backward_formula(inputs, meta, mask):
    """ATen's elu_backward(grad_output, self): x <= 0 ? the exponential branch : scale. (A
    NaN x takes the scale branch; the exponential is taken of min(x, 0), so a huge x gives
    no inf * 0.)"""
    from .elementwise import where

    g, x = inputs
    alpha, scale, input_scale = meta
    neg = make(x._data <= 0)
    # (the exponent is differentiated only where x < 0: PyTorch's elu_double_backward masks
    # with self < 0, so at x = 0 the second derivative has no exponential term)
    below = where(make(x._data < 0), x, make(np.zeros((), x._data.dtype)))
    neg_part = (below * input_scale).exp() * (input_scale * scale * alpha)
    return (g * where(neg, neg_part, make(np.array(scale, x._data.dtype))),)


def _elu_double_backward(inputs, grads, meta):
    """derivatives.yaml's elu_backward entry: grad_output's gradient is elu_backward of the
    incoming gradient; self's is elu_backward(gg * g * input_scale) times the 0/1 mask
    x < 0 (a product, so an inf or nan there stays a nan where the mask is 0)."""
    g, x = inputs
    gg, = grads
    if gg is None:
        return None, None
    input_scale = meta[2]
    d_g = ELU_BACKWARD_OF((gg, x), meta, (True,))[0]
    below = (x < 0).to(gg.dtype)
    d_x = ELU_BACKWARD_OF((gg * g * input_scale, x), meta, (True,))[0] * below
    return d_g, d_x


# selu's and celu's derivative is elu_backward: under create_graph, PyTorch's
# EluBackwardBackward0 over (grad_output, self)
ELU_BACKWARD_OF = BackwardOp(
    "elu_backward_of_selu_celu", "EluBackwardBackward0", _elu_backward_formula, 1,
    "elu_backward(g, x) = g (x > 0 ? scale : scale alpha input_scale exp(x input_scale))",
    torch_call="torch.enable_grad()(lambda a: torch.autograd.grad(torch.selu(a), a, "
               "a * 0.5 + 1, create_graph=True)[0])(a)", explicit=_elu_double_backward)


def _elu_backward(c, g):
    x, = c.saved
    if GRAD_MODE.enabled:
        return ELU_BACKWARD_OF((g, x), c.meta, (True,))
    return _elu_backward_formula((g, x), c.meta, (True,))


def _elu_result_backward(c, g):
    """The in-place form's (is_result): x <= 0 ? g * input_scale * (y + scale * alpha)."""
    from .elementwise import where

    alpha, scale, input_scale = c.meta
    y = c.result
    neg = make(y._data <= 0)
    # (y is differentiated only where y < 0, as PyTorch's elu_double_backward masks with
    # result < 0: at y = 0 the second derivative is 0)
    below = where(make(y._data < 0), y, make(np.zeros((), y._data.dtype)))
    return (g * where(neg, (below + scale * alpha) * input_scale,
                      make(np.array(scale, y._data.dtype))),)


SELU = defop("selu", "EluBackward0", _elu_fwd, _elu_backward,
             "d elu(x) = scale (x > 0), scale alpha input_scale exp(x input_scale) (x <= 0)",
             save="inputs", torch_call="torch.selu(a)")
SELU_ = defop("selu_", "EluBackward1", _elu_fwd, _elu_result_backward,
              "d elu(x) from the result: scale (y > 0), input_scale (y + scale alpha)",
              save="result", torch_call="torch.selu_(a * 1)")
CELU = defop("celu", "CeluBackward0", _elu_fwd, _elu_backward,
             "d celu(x) = 1 (x > 0), exp(x / alpha) (x <= 0)", save="inputs",
             torch_call="torch.celu(a, alpha=1.5)")
CELU_ = defop("celu_", "CeluBackward1", _elu_fwd, _elu_result_backward,
              "d celu(x) from the result: 1 (y > 0), (y + alpha) / alpha", save="result",
              torch_call="torch.celu_(a * 1, alpha=1.5)")


@public("torch.nn.functional.selu")
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return selu_(input) if inplace else torch_selu(input)


@public("torch.selu")
def torch_selu(input: Tensor) -> Tensor:
    _float_input(input, "elu_cpu")
    return run_op(SELU, (input,), (_SELU_ALPHA, _SELU_SCALE, 1.0))


@public("torch.selu_", "torch.nn.functional.selu_")
def selu_(input: Tensor) -> Tensor:
    _float_input(input, "elu_cpu")
    return _inplace(input, SELU_, (_SELU_ALPHA, _SELU_SCALE, 1.0))


def _celu_meta(alpha) -> tuple:
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return (float(alpha), 1.0, 1.0 / float(alpha))


@public("torch.nn.functional.celu")
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return celu_(input, alpha) if inplace else torch_celu(input, alpha)


@public("torch.celu")
def torch_celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    _float_input(input, "elu_cpu")
    return run_op(CELU, (input,), _celu_meta(alpha))


@public("torch.celu_", "torch.nn.functional.celu_")
def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    _float_input(input, "elu_cpu")
    return _inplace(input, CELU_, _celu_meta(alpha))


def _leaky_fwd(x, slope):
    if type(slope) is np.ndarray:  # rrelu in training: the drawn slopes (1 where x > 0)
        return x * slope
    return np.where(x > 0, x, x * x.dtype.type(slope)).astype(x.dtype)


def _rrelu_backward_formula(inputs, meta, mask):
    g, x = inputs
    slope, = meta
    if type(slope) is np.ndarray:
        return (g * make(slope),)
    pos = _mask_of(x._data > 0, x)
    return (g * (pos + (1 - pos) * slope),)


def _rrelu_backward(c, g):
    if GRAD_MODE.enabled:  # (RreluWithNoiseBackwardBackward0 over (grad_output, self))
        return RRELU_BACKWARD((g, c.saved[0]), c.meta, (True,))
    return _rrelu_backward_formula((g, c.saved[0]), c.meta, (True,))


RRELU_BACKWARD = BackwardOp(
    "rrelu_with_noise_backward", "RreluWithNoiseBackwardBackward0", _rrelu_backward_formula, 1,
    "rrelu_with_noise_backward(g, x) = g (1 | slope); zeros along x",
    torch_call="torch.enable_grad()(lambda a: torch.autograd.grad(torch.rrelu(a), a, "
               "a * 0.5 + 1, create_graph=True)[0])(a)", zeros_for=(1,))


def _rrelu_result_backward(c, g):
    slope, = c.meta
    if type(slope) is np.ndarray:
        return (g * make(slope),)
    y = c.result
    pos = _mask_of(y._data > 0, y)
    return (g * (pos + (1 - pos) * slope),)


RRELU = defop("rrelu", "RreluWithNoiseBackward0", _leaky_fwd, _rrelu_backward,
              "d rrelu(x) = 1 (x > 0), else the slope: (lower + upper) / 2 in eval mode, the "
              "drawn one in training", save="inputs",
              torch_call="torch.rrelu(a)")
RRELU_ = defop("rrelu_", "RreluWithNoiseBackward1", _leaky_fwd, _rrelu_result_backward,
               "in place: the slope where the result is <= 0", save="result",
               torch_call="torch.rrelu_(a * 1)")


def _rrelu_noise(x: np.ndarray, lower, upper, generator) -> np.ndarray:
    """The slopes rrelu draws in training, as ATen's CPU kernel does: one 64-bit draw per
    element <= 0, in the order of a contiguous copy (boolean indexing's order), made a double uniform in [lower, upper) (lower and
    upper in the input's type first; a multiply and an add, unfused), cast to the input's
    type; 1 for the other elements."""
    from ..random import generator_of

    gen = generator_of(generator)
    low = float(x.dtype.type(lower))
    high = float(x.dtype.type(upper))
    draw = x <= 0
    raw = gen.random64(int(np.count_nonzero(draw)))
    u = (raw & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
    noise = np.ones(x.shape, x.dtype)
    noise[draw] = (u * (high - low) + low).astype(x.dtype)
    return noise


def _rrelu_args(input: Tensor, lower, upper, training: bool, generator=None) -> tuple:
    _float_input(input, "leaky_relu_cpu")
    if training:
        return (_rrelu_noise(input._data, lower, upper, generator),)
    return ((float(lower) + float(upper)) / 2,)


@public("torch.nn.functional.rrelu")
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    meta = _rrelu_args(input, lower, upper, training)
    return _inplace(input, RRELU_, meta) if inplace else run_op(RRELU, (input,), meta)


@public("torch.rrelu")
def torch_rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                training: bool = False, generator=None) -> Tensor:
    return run_op(RRELU, (input,), _rrelu_args(input, lower, upper, training, generator))


@public("torch.rrelu_", "torch.nn.functional.rrelu_")
def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False, generator=None) -> Tensor:
    return _inplace(input, RRELU_, _rrelu_args(input, lower, upper, training, generator))


def _hardswish_fwd(x):
    return (x * np.clip(x + 3, 0, 6) / 6).astype(x.dtype)


def _hardswish_backward(c, g):
    x, = c.saved
    if GRAD_MODE.enabled:  # (PyTorch's HardswishBackwardBackward0 over (grad_output, self))
        return HARDSWISH_BACKWARD((g, x), (), (True,))
    return _hardswish_backward_formula((g, x), (), (True,))


def _hardswish_backward_formula(inputs, meta, mask):
    """PyTorch's slope: 0 for x <= -3, x/3 + 1/2 inside, 1 for x >= 3 (an inf selects its
    branch, it is not multiplied by a 0 mask); nan gives nan, except for float32 tensors
    of more than one element, which PyTorch hands to oneDNN (slope 1 there)."""
    g, x = inputs
    d = x._data
    nan = np.isnan(d)
    to_one = nan & (d.dtype == np.float32) & (d.size > 1)
    inside = ((d > -3) & (d < 3)) | (nan & ~to_one)
    mid = _mask_of(inside, x)
    high = _mask_of((d >= 3) | to_one, x)
    slope = mid * (x.masked_fill(make(~inside), 0.0) / 3 + 0.5) + high
    if not GRAD_MODE.enabled:  # the values: the kernel's literal 0 below -3 (not g * 0)
        low = make(~(inside | (d >= 3) | to_one))
        return (PUBLIC["torch.where"](low, 0.0, g * slope),)
    return (g * slope,)


HARDSWISH_BACKWARD = BackwardOp(
    "hardswish_backward", "HardswishBackwardBackward0", _hardswish_backward_formula, 1,
    "hardswish_backward(g, x) = g (0 | x/3 + 1/2 | 1)",
    torch_call="torch.enable_grad()(lambda a: torch.autograd.grad(torch.nn.functional."
               "hardswish(a * 2), a, a * 0.5 + 1, create_graph=True)[0])(a)")
HARDSWISH = defop("hardswish", "HardswishBackward0", _hardswish_fwd, _hardswish_backward,
                  "d hardswish(x) = 0 (x < -3), x/3 + 1/2 (|x| <= 3), 1 (x > 3)",
                  save="inputs", torch_call="torch.nn.functional.hardswish(a * 2)")


@public("torch.nn.functional.hardswish")
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    _float_input(input, "hardswish_cpu")
    return _inplace(input, HARDSWISH) if inplace else run_op(HARDSWISH, (input,))


def _hardsigmoid_backward(c, g):
    x, = c.saved
    d = x._data
    # (PyTorch's kernel multiplies by 1/6 as a float literal, in double too)
    if GRAD_MODE.enabled and (g.requires_grad or x.requires_grad):
        # PyTorch has no derivative of hardsigmoid_backward: its create_graph gradient hangs
        # off a NotImplemented node over the inputs that require grad, which raises
        with no_grad():
            value = g * (_mask_of((d > -3) & (d < 3), x) * float(np.float32(1.0 / 6.0)))
        return (run_op(HARDSIGMOID_GRAD, tuple(t for t in (g, x) if t.requires_grad),
                       (value._data,)),)
    return (g * (_mask_of((d > -3) & (d < 3), x) * float(np.float32(1.0 / 6.0))),)


def _hardsigmoid_double(c, gg):
    raise RuntimeError("derivative for aten::hardsigmoid_backward is not implemented")


HARDSIGMOID_GRAD = defop("hardsigmoid_backward", "NotImplemented", lambda *arrays: arrays[-1],
                         _hardsigmoid_double,
                         "PyTorch has no derivative of hardsigmoid's gradient")


HARDSIGMOID = defop("hardsigmoid", "HardsigmoidBackward0",
                    lambda x: (np.clip(x + 3, 0, 6) / 6).astype(x.dtype), _hardsigmoid_backward,
                    "d hardsigmoid(x) = 1/6 on (-3, 3), else 0", save="inputs",
                    torch_call="torch.nn.functional.hardsigmoid(a * 2)")


@public("torch.nn.functional.hardsigmoid")
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    _float_input(input, "hardsigmoid_cpu")
    return _inplace(input, HARDSIGMOID) if inplace else run_op(HARDSIGMOID, (input,))


@public("torch.nn.functional.softsign")
def softsign(input: Tensor) -> Tensor:
    return input / (input.abs() + 1)


@public("torch.nn.functional.tanhshrink")
def tanhshrink(input: Tensor) -> Tensor:
    return input - input.tanh()


def _shrink_backward_formula(inputs, meta, mask):
    g, x = inputs
    lambd, = meta
    d = x._data
    return (g * _mask_of((d < -lambd) | (d > lambd), x),)


def _shrink_backward(c, g):
    if GRAD_MODE.enabled:  # (Softshrink/HardshrinkBackwardBackward0 over (grad_output, self))
        return _SHRINK_BACKWARD[c.op.name]((g, c.saved[0]), c.meta, (True,))
    return _shrink_backward_formula((g, c.saved[0]), c.meta, (True,))


_SHRINK_BACKWARD = {
    name: BackwardOp(f"{name}_backward", f"{name.capitalize()}BackwardBackward0",
                     _shrink_backward_formula, 1,
                     f"{name}_backward(g, x) = g where |x| > lambda; zeros along x",
                     torch_call=f"torch.enable_grad()(lambda a: torch.autograd.grad("
                                f"torch.nn.functional.{name}(a, 0.4), a, a * 0.5 + 1, "
                                f"create_graph=True)[0])(a)", zeros_for=(1,))
    for name in ("softshrink", "hardshrink")}


def _softshrink_fwd(x, lambd):
    return np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, x * 0)).astype(x.dtype)


SOFTSHRINK = defop("softshrink", "SoftshrinkBackward0", _softshrink_fwd, _shrink_backward,
                   "d softshrink(x) = 1 where |x| > lambda", save="inputs",
                   torch_call="torch.nn.functional.softshrink(a, 0.4)")
HARDSHRINK = defop("hardshrink", "HardshrinkBackward0",
                   lambda x, lambd: np.where((x >= -lambd) & (x <= lambd), 0, x).astype(x.dtype),
                   _shrink_backward, "d hardshrink(x) = 1 where |x| > lambda", save="inputs",
                   torch_call="a.hardshrink(0.4)")


@public("torch.nn.functional.softshrink")
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    _float_input(input, "softshrink_check")
    top = dtypes.finfo(input._data.dtype).max
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{_type_word(input.dtype)}, but found {float(lambd):g}")
    return run_op(SOFTSHRINK, (input,), (lambd,))


@public("torch.nn.functional.hardshrink", "torch.hardshrink", "Tensor.hardshrink")
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    _float_input(input, "hardshrink_cpu")
    return run_op(HARDSHRINK, (input,), (lambd,))


def _threshold_fwd(x, threshold, value):
    return np.where(x <= threshold, value, x).astype(x.dtype)


def _threshold_backward(c, g):
    """PyTorch's threshold_backward(grad, self, threshold) for both forms: the in-place one
    saves its input as it was (not its result: a value above the threshold would pass the
    gradient where the input did not), and a recorded graph gets ThresholdBackwardBackward0."""
    from .elementwise import THRESHOLD_BACKWARD

    return (run_op(THRESHOLD_BACKWARD, (g, c.saved[0]), (c.meta[0],)),)


THRESHOLD = defop("threshold", "ThresholdBackward0", _threshold_fwd, _threshold_backward,
                  "d threshold(x) = 1 where x > threshold", save="inputs",
                  torch_call="torch.threshold(a, 0.5, 2.0)")
THRESHOLD_ = defop("threshold_", "ThresholdBackward1", _threshold_fwd, _threshold_backward,
                   "d threshold_(x) = 1 where x > threshold", save="inputs",
                   torch_call="torch.threshold_(a * 1, 0.5, 2.0)")


@public("torch.threshold")
def torch_threshold(input: Tensor, threshold, value) -> Tensor:
    return run_op(THRESHOLD, (input,), (threshold, value))


@public("torch.threshold_", "torch.nn.functional.threshold_")
def threshold_(input: Tensor, threshold, value) -> Tensor:
    return _inplace(input, THRESHOLD_, (threshold, value))


@public("torch.nn.functional.threshold")
def threshold(input: Tensor, threshold, value, inplace: bool = False) -> Tensor:  # noqa: F811
    if inplace:
        return threshold_(input, threshold, value)
    return run_op(THRESHOLD, (input,), (threshold, value))


def _glu_fwd(x, dim):
    a, b = np.split(x, 2, axis=dim)
    with np.errstate(all="ignore"):
        return (a / (1 + np.exp(-b.astype(_F64)))).astype(x.dtype)


def _glu_backward(c, g):
    x, = c.saved
    if GRAD_MODE.enabled:  # (PyTorch's GluBackwardBackward0 over (grad_output, self))
        return GLU_BACKWARD((g, x), c.meta, (True,))
    return _glu_backward_formula((g, x), c.meta, (True,))


def _glu_backward_formula(inputs, meta, mask):
    """ATen's glu_backward in its kernel's order: s g for the first half, (1 - s) s a g
    for the second (the order decides where an overflow or inf * 0 happens)."""
    from .shape import cat

    g, x = inputs
    dim, = meta
    half = x._data.shape[dim] // 2
    a, b = x.narrow(dim, 0, half), x.narrow(dim, half, half)
    s = b.sigmoid()
    return (cat([s * g, (1 - s) * s * a * g], dim),)


def _glu_double_backward(inputs, grads, meta):
    """derivatives.yaml's glu_backward entry (glu_double_backward and its grad_output
    part), term by term as PyTorch writes them."""
    from .shape import cat

    g, x = inputs
    gg, = grads
    if gg is None:
        return None, None
    dim, = meta
    half = x._data.shape[dim] // 2
    a, b = x.narrow(dim, 0, half), x.narrow(dim, half, half)
    s = b.sigmoid()
    one_minus = 1 - s
    slope = s * one_minus
    gg_a, gg_b = gg.narrow(dim, 0, half), gg.narrow(dim, half, half)
    d_a = gg_b * g * slope
    curve = slope * one_minus - s * slope
    d_b = gg_b * a * g * curve + gg_a * g * slope
    ones = make(np.ones(g._data.shape, x._data.dtype))
    both = gg * GLU_BACKWARD((ones, x), meta, (True,))[0]
    d_g = both.narrow(dim, 0, half) + both.narrow(dim, half, half)
    return d_g, cat([d_a, d_b], dim)


GLU_BACKWARD = BackwardOp(
    "glu_backward", "GluBackwardBackward0", _glu_backward_formula, 1,
    "glu_backward(g, x): (s g | (1 - s) s a g) for x = (a | b), s = sigmoid(b)",
    torch_call="torch.enable_grad()(lambda a: (lambda x: torch.autograd.grad("
               "torch.nn.functional.glu(x), x, a * 0.5 + 1, create_graph=True)[0])("
               "torch.cat([a, a.cos()], -1)))(a)", explicit=_glu_double_backward)
GLU = defop("glu", "GluBackward0", _glu_fwd, _glu_backward,
            "glu(a|b) = a sigmoid(b): ga = g s, gb = g a s (1 - s)", save="inputs",
            torch_call="torch.nn.functional.glu(torch.cat([a, a.cos()], -1))")


@public("torch.nn.functional.glu")
def glu(input: Tensor, dim: int = -1) -> Tensor:
    if input._data.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, input._data.ndim)
    if input._data.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input._data.shape[d]}")
    _float_input(input, "glu_cpu")
    return run_op(GLU, (input,), (d,))


@public("torch.nn.functional.logsigmoid")
def logsigmoid(input: Tensor) -> Tensor:
    from .nn import LOG_SIGMOID

    _float_input(input, "log_sigmoid_cpu")
    return run_op(LOG_SIGMOID, (input,))


def _prelu_shape(x_ndim: int, w: np.ndarray, channels: int):
    if w.size == 1 or x_ndim < 2:
        return w.reshape(())
    return w.reshape((channels,) + (1,) * (x_ndim - 2))


def _prelu_fwd(x, w):
    ws = _prelu_shape(x.ndim, w, x.shape[1] if x.ndim >= 2 else 1)
    return np.where(x > 0, x, ws * x).astype(x.dtype)


def _prelu_backward_formula(inputs, meta, mask):
    """_prelu_kernel_backward(grad_output, self, weight): the input's gradient and the
    weight's, the latter still in the input's shape (the engine sums it to the weight's)."""
    g, x, w = inputs
    d = x._data
    channels = d.shape[1] if d.ndim >= 2 else 1
    ws = w.reshape(_prelu_shape(d.ndim, w._data, channels).shape)
    where = PUBLIC["torch.where"]  # (a branch, not a 0/1 mask: g * inf * 0 is no term)
    if not GRAD_MODE.enabled:  # the values, with the kernel's x > 0
        pos = _mask_of(d > 0, x).to(bool)
        return (where(pos, g, g * ws) if mask[0] else None,
                where(pos, 0.0, g * x) if mask[1] else None)
    # Differentiated (the double backward): only the vjp counts, and it is to be
    # derivatives.yaml's, masked with x >= 0, the where applied after the product (so +-0
    # and non-finite values land as PyTorch's); still differentiable for a third order.
    pos = _mask_of(d >= 0, x).to(bool)
    return (g * where(pos, 1.0, ws) if mask[0] else None,
            g * where(pos, 0.0, x) if mask[1] else None)


PRELU_KERNEL_BACKWARD = BackwardOp(
    "prelu_kernel_backward", "PreluKernelBackwardBackward0", _prelu_backward_formula, 2,
    "_prelu_kernel_backward(g, x, w) = (g (x > 0 ? 1 : w), g x (x <= 0))",
    torch_call="torch.enable_grad()(lambda a: (lambda w: torch.autograd.grad(("
               "torch.prelu(a.reshape(1, 1, -1), w) ** 2).sum(), w, create_graph=True)[0])("
               "torch.tensor([0.25], dtype=a.dtype, requires_grad=True)))(a * 1)",
    zeros_for=(1, 2), explicit=prelu_kernel_double_backward)


def _to_weight(gw, w):
    """The weight's gradient from the input-shaped one: a sum over the broadcast dims
    (keepdim: the weight is viewed to the input's rank), as the engine's sum_to."""
    shape, full = w._data.shape, gw._data.shape
    if shape == full:
        return gw
    lead = len(full) - len(shape)
    if lead < 0:  # (a 0-d input and its one weight)
        return gw.reshape(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and full[lead + i] != 1]
    out = gw.sum(dims, keepdim=True) if dims else gw
    return out.reshape(shape) if lead else out


def _prelu_backward(c, g):
    x, w = c.saved
    mask = (c.needs(0), c.needs(1))
    if GRAD_MODE.enabled:
        gx, gw = PRELU_KERNEL_BACKWARD((g, x, w), (), mask)
    else:
        gx, gw = _prelu_backward_formula((g, x, w), (), mask)
    if gw is not None:
        if x._data.size == w._data.size and not GRAD_MODE.enabled:
            gw = gw.reshape(w._data.shape)  # (PyTorch's sum_to: nothing to add up, -0. stays)
        else:
            gw = _to_weight(gw, w)
    return gx, gw


PRELU = defop("prelu", "PreluKernelBackward0", _prelu_fwd, _prelu_backward,
              "d prelu(x, w): gx = g (x > 0 ? 1 : w), gw = sum g x (x <= 0)", save="inputs",
              torch_call="torch.prelu(a, b.reshape(-1)[:1])")


@public("torch.nn.functional.prelu", "torch.prelu", "Tensor.prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's lower-precision list)
        return _autocast.lower(prelu, input, weight)
    x, w = input._data, weight._data
    if x.dtype != w.dtype:  # (ATen checks this first, and promotes nothing)
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{_type_word(input.dtype)} and {_type_word(weight.dtype)}")
    if w.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {w.ndim}")
    channels = x.shape[1] if x.ndim >= 2 else 1
    if w.size != 1 and w.size != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {w.size} and channel size = {channels}.")
    _float_input(input, "prelu_cpu")
    if x.ndim >= 2:  # (ATen views the weight to the input's rank: (1, C, 1, ...))
        weight = weight.reshape((1, w.size) + (1,) * (x.ndim - 2))
    return run_op(PRELU, (input, weight))


@public("torch.nn.functional.softmin")
def softmin(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    from .nn import softmax

    if dim is None:
        from ..warn_site import warn_at_caller

        warn_at_caller("Implicit dimension choice for softmin has been deprecated. Change the "
                       "call to include dim=X as an argument.")
        nd = input._data.ndim
        dim = 0 if nd in (0, 1, 3) else 1
    if dtype is None:
        return softmax(-input, dim)
    return softmax(-input.to(dtype), dim)


# ----------------------------------------------------------------- normalization

@public("torch.nn.functional.normalize")
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:
    vector_norm = PUBLIC["torch.linalg.vector_norm"]  # (complex: the norm of |input|)
    denom = vector_norm(input, p, dim, True).clamp_min(eps).expand_as(input)
    return input / denom


def _group_flat(x, groups):
    n, c = x.shape[:2]
    return x.reshape(n, groups, (c // groups) * math.prod(x.shape[2:]))


def _group_stats(x, groups, eps):
    flat = _group_flat(x, groups).astype(_F64)
    mean = flat.mean(-1)
    var = flat.var(-1)
    return mean, 1.0 / np.sqrt(var + eps)


def _group_norm_fwd(x, w, b, groups, eps):
    n, c = x.shape[:2]
    mean, rstd = _group_stats(x, groups, eps)
    flat = _group_flat(x, groups).astype(_F64)
    xhat = ((flat - mean[..., None]) * rstd[..., None]).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if w is not None:
        xhat = xhat * w.reshape(shape)
    if b is not None:
        xhat = xhat + b.reshape(shape)
    return xhat.astype(x.dtype)


def _group_norm_backward(c, g):
    x, w, b = c.saved
    groups, eps = c.meta
    d = x._data
    n, ch = d.shape[:2]
    shape = (1, ch) + (1,) * (d.ndim - 2)
    mean, rstd = _group_stats(d, groups, eps)
    mean_t = make(mean.astype(d.dtype)).reshape(n, groups, 1)
    rstd_t = make(rstd.astype(d.dtype)).reshape(n, groups, 1)
    per = (ch // groups) * math.prod(d.shape[2:])
    if GRAD_MODE.enabled:  # differentiable statistics under create_graph
        flat = x.reshape(n, groups, per)
        mean_t = flat.mean(-1, keepdim=True)
        rstd_t = ((flat - mean_t) ** 2).mean(-1, keepdim=True).add(eps).rsqrt()
    flat = x.reshape(n, groups, per)
    xhat = (flat - mean_t) * rstd_t
    gxhat = g * w.reshape(shape) if w is not None else g
    gflat = gxhat.reshape(n, groups, per)
    gx = gw = gb = None
    if c.needs(0):
        if GRAD_MODE.enabled:  # PyTorch's composite ends on a sum of two terms, then a view
            gx = rstd_t * gflat + rstd_t * (-gflat.mean(-1, keepdim=True)
                                            - xhat * (gflat * xhat).mean(-1, keepdim=True))
        else:
            gx = rstd_t * (gflat - gflat.mean(-1, keepdim=True)
                           - xhat * (gflat * xhat).mean(-1, keepdim=True))
        gx = gx.reshape(d.shape)
    dims = [0] + list(range(2, d.ndim))
    if w is not None and c.needs(1):
        gw = (g * xhat.reshape(d.shape)).sum(dims)
        if GRAD_MODE.enabled:
            gw = gw.view(ch)  # (PyTorch's create_graph gradient ends on a view)
    if b is not None and c.needs(2):
        gb = g.sum(dims)
    return gx, gw, gb


GROUP_NORM = defop("native_group_norm", "NativeGroupNormBackward0", _group_norm_fwd,
                   _group_norm_backward,
                   "xhat = (x - mean) rstd per group: gx = rstd (gxhat - mean gxhat - xhat mean(gxhat xhat))",
                   save="inputs",
                   torch_call="torch.nn.functional.group_norm(a.reshape(1, -1, 1).expand(2, -1, 3)"
                              " * torch.tensor([1., -2., 0.5], dtype=a.dtype), 1)")


@public("torch.nn.functional.group_norm")
def functional_group_norm(input: Tensor, num_groups: int, weight=None, bias=None,
                          eps: float = 1e-5) -> Tensor:
    """F.group_norm: torch.group_norm after F's own check (in Python, train or eval) that
    each group's statistics come from more than one value."""
    x = input._data
    if x.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{x.ndim}")
    size = [x.shape[0] * x.shape[1] // num_groups, num_groups, *x.shape[2:]]
    if math.prod(size[:1] + size[2:]) == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input "
                         f"size {size}")
    return group_norm(input, num_groups, weight, bias, eps)


@public("torch.group_norm")
def group_norm(input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Tensor:
    x = input._data
    if x.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{x.ndim}")
    c = x.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {_sizes(x.shape)} and "
                           f"num_groups={num_groups}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p._data.ndim != 1 or p._data.shape[0] != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape "
                               f"{_sizes(p._data.shape)} and input of shape {_sizes(x.shape)}")
    _float_input(input, "GroupNormKernelImpl")
    inputs = (input, weight, bias)
    return run_op(GROUP_NORM, inputs, (num_groups, eps),
                  arrays=(x, None if weight is None else weight._data,
                          None if bias is None else bias._data))


def _sizes(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


@public("torch.nn.functional.local_response_norm")
def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta (the channel
    window zero-padded size//2 before and (size-1)//2 after)."""
    from .shape import cat

    x = input._data
    if x.ndim < 3:
        raise ValueError("Expected 3D or higher dimensionality" + " " * 26  # (PyTorch's text)
                         + f"input (got {x.ndim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    before, after = size // 2, (size - 1) // 2
    zeros_shape = list(x.shape)
    parts = []
    if before:
        zeros_shape[1] = before
        parts.append(make(np.zeros(zeros_shape, x.dtype)))
    parts.append(sq)
    if after:
        zeros_shape[1] = after
        parts.append(make(np.zeros(zeros_shape, x.dtype)))
    padded = cat(parts, 1) if len(parts) > 1 else sq
    c = x.shape[1]
    total = padded.narrow(1, 0, c)
    for i in range(1, size):
        total = total + padded.narrow(1, i, c)
    # (an integer input averages as PyTorch's integer avg_pool: the sum of squares, never
    # negative, divided by size and truncated)
    mean = total // size if x.dtype.kind in "iu" else total / size
    div = (mean * alpha + k) ** beta
    return input / div


# ----------------------------------------------------------------- losses

def _reduction(size_average, reduce, reduction):
    from .nn import _reduction_arg

    return _reduction_arg(size_average, reduce, reduction)


def _reduce_t(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


@public("torch.nn.functional.poisson_nll_loss")
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(poisson_nll_loss, input, target, log_input, full,
                              size_average, eps, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        # (ATen's C++ `exp(input) - target * input` makes the product first: its node is
        # the older one, so under create_graph the exp branch's gradient comes first)
        scaled = target * input
        loss = input.exp() - scaled
    else:
        loss = input - target * (input + eps).log()
    if full:
        t = target._data
        with np.errstate(all="ignore"):
            keep = t > 1
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        # (masked_fill, as ATen: a product with a 0/1 mask keeps the nan of a zero
        # target's 0 * log(0))
        loss = loss + stirling.masked_fill(make(~keep), 0)
    return _reduce_t(loss, reduction)


@public("torch.nn.functional.gaussian_nll_loss")
def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    if not isinstance(var, Tensor):
        var = make(np.full(input._data.shape, float(var), input._data.dtype))
        if var._data.ndim and float(var._data.reshape(-1)[0]) < 0:
            raise ValueError("var has negative entry/entries")
    elif np.any(var._data < 0):
        raise ValueError("var has negative entry/entries")
    vshape, ishape = var._data.shape, input._data.shape
    if vshape != ishape:
        if ishape[:-1] == vshape:
            var = var.unsqueeze(-1)
        elif len(vshape) == len(ishape) and sum(
                v for i, v in zip(ishape, vshape) if i != v) == 1:
            pass  # (PyTorch's heteroscedastic test: the sizes differ where var has one)
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    var._data[...] = np.maximum(var._data, eps)  # (PyTorch clamps under no_grad, in place)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce_t(loss, reduction)


def _check_target_shape(name, input: Tensor, target: Tensor):
    if input._data.shape != target._data.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")


@public("torch.nn.functional.cosine_embedding_loss", "torch.cosine_embedding_loss")
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(cosine_embedding_loss, input1, input2, target,
                              margin, size_average, reduce, reduction)
    from .elementwise import where

    if isinstance(reduction, str):
        reduction = _reduction(size_average, reduce, reduction)
    else:
        reduction = {0: "none", 1: "mean", 2: "sum"}.get(reduction, "none")
    nd = input1._data.ndim
    tdim = target._data.ndim
    if tdim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if not (nd == input2._data.ndim == tdim + 1):
        raise RuntimeError(f"{tdim}D target tensor expects {tdim + 1}D input tensors, but found "
                           f"inputs with sizes {_sizes(input1._data.shape)} and "
                           f"{_sizes(input2._data.shape)}.")
    dim = nd - 1
    prod_sum = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + 1e-12
    mag2 = (input2 * input2).sum(dim) + 1e-12
    cos = prod_sum / (mag1 * mag2).sqrt()
    zeros = make(np.zeros(cos._data.shape, cos._data.dtype))
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    out = where(target == 1, pos, zeros) + where(target == -1, neg, zeros)
    return _reduce_t(out, reduction)


@public("torch.nn.functional.margin_ranking_loss", "torch.margin_ranking_loss")
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(margin_ranking_loss, input1, input2, target,
                              margin, size_average, reduce, reduction)
    if isinstance(reduction, str):
        reduction = _reduction(size_average, reduce, reduction)
        if not (input1._data.ndim == input2._data.ndim == target._data.ndim):
            raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                               f"dimension but got sizes: input1: {input1.shape}, input2: "
                               f"{input2.shape}, target: {target.shape} ")
    else:
        reduction = {0: "none", 1: "mean", 2: "sum"}.get(reduction, "none")
    out = (-target * (input1 - input2) + margin).clamp_min(0)
    return _reduce_t(out, reduction)


@public("torch.nn.functional.hinge_embedding_loss", "torch.hinge_embedding_loss")
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(hinge_embedding_loss, input, target, margin,
                              size_average, reduce, reduction)
    from .elementwise import where

    if isinstance(reduction, str):
        reduction = _reduction(size_average, reduce, reduction)
    else:
        reduction = {0: "none", 1: "mean", 2: "sum"}.get(reduction, "none")
    zeros = make(np.zeros(input._data.shape, input._data.dtype))
    margin_clamp = (margin - input).clamp_min(0)
    out = where(target != 1, margin_clamp, zeros) + where(target != -1, input, zeros)
    return _reduce_t(out, reduction)


@public("torch.nn.functional.soft_margin_loss")
def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(soft_margin_loss, input, target, size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    if GRAD_MODE.enabled and target.requires_grad:
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    a, b = input._data.shape, target._data.shape
    if a != b:  # (PyTorch's kernel writes -input * target into an output of input's shape)
        try:
            shape = np.broadcast_shapes(a, b)
        except ValueError:
            shape = a  # (run_op gives the broadcast error)
        if shape != a:
            raise RuntimeError(f"output with shape [{', '.join(map(str, a))}] doesn't match the "
                               f"broadcast shape [{', '.join(map(str, shape))}]")
    return run_op(SOFT_MARGIN, (input, target), (reduction,))


def _soft_margin_fwd(x, t, reduction):
    with np.errstate(all="ignore"):
        loss = np.log1p(np.exp(-t.astype(_F64) * x))
    if reduction == "mean":  # (an empty mean is nan, without numpy's warning)
        loss = loss.mean() if loss.size else np.float64("nan")
    elif reduction == "sum":
        loss = loss.sum()
    return np.asarray(loss).astype(x.dtype)


def _soft_margin_backward_formula(inputs, meta, mask):
    """ATen's soft_margin_loss_backward in its order: (t z) (-norm) / (z + 1) g, z =
    exp(-t x), norm 1/n for the mean."""
    g, x = inputs
    t, reduction = meta
    z = (-t * x).exp()
    norm = 1.0
    if reduction == "mean":  # (1/0 of an empty input is ATen's double inf)
        norm = 1.0 / x._data.size if x._data.size else float("inf")
    return (t * z * -norm / (z + 1) * g,)


def _soft_margin_double_backward(inputs, grads, meta):
    """derivatives.yaml's soft_margin_loss_backward entry: gg g t^2 z / (z + 1)^2 for
    self (a nan where z is inf, as PyTorch's), soft_margin_loss_backward of the incoming
    gradient for grad_output (summed against a reduced loss's scalar)."""
    g, x = inputs
    gg, = grads
    if gg is None:
        return None, None
    t, reduction = meta
    if reduction == "none":
        d_g = SOFT_MARGIN_BACKWARD((gg, x), meta, (True,))[0]
    else:
        ones = make(np.ones(g._data.shape, g._data.dtype))
        d_g = (SOFT_MARGIN_BACKWARD((ones, x), meta, (True,))[0] * gg).sum()
    z = (x * -t).exp()
    after = z + 1
    d_x = gg * g * (t * t) * z / (after * after)
    if reduction == "mean":
        d_x = d_x / x._data.size
    return d_g, d_x


SOFT_MARGIN_BACKWARD = BackwardOp(
    "soft_margin_loss_backward", "SoftMarginLossBackwardBackward0",
    _soft_margin_backward_formula, 1,
    "soft_margin_loss_backward(g, x; t) = g (-t e / (1 + e)), e = exp(-t x)",
    torch_call="torch.enable_grad()(lambda a: torch.autograd.grad("
               "torch.nn.functional.soft_margin_loss(a, torch.ones_like(a)) * a.sum(), a, "
               "create_graph=True)[0])(a)", explicit=_soft_margin_double_backward)


def _soft_margin_backward(c, g):
    x, t = c.saved
    reduction, = c.meta
    if GRAD_MODE.enabled and c.needs(0) and not c.needs(1):
        # (PyTorch's SoftMarginLossBackwardBackward0 over (grad_output, self))
        return SOFT_MARGIN_BACKWARD((g, x), (t, reduction), (True,))[0], None
    gx = _soft_margin_backward_formula((g, x), (t, reduction), (True,))[0] \
        if c.needs(0) else None
    gt = None
    if c.needs(1):
        z = (-t * x).exp()
        gt = g * (-x * z / (z + 1))
        if reduction == "mean":
            gt = gt / x._data.size
    return gx, gt


SOFT_MARGIN = defop("soft_margin_loss", "SoftMarginLossBackward0", _soft_margin_fwd,
                    _soft_margin_backward, "d log(1 + exp(-t x))/dx = -t e / (1 + e)",
                    save="inputs", broadcast=True,
                    torch_call="torch.nn.functional.soft_margin_loss(a, "
                               "b.detach().sign().expand_as(a))")


@public("torch.nn.functional.multilabel_soft_margin_loss")
def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight=None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if not input._data.ndim:  # (PyTorch reads the class count as input.size(-1))
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if weight is not None:
        loss = loss * weight
    class_dim = input._data.ndim - 1
    n_classes = input._data.shape[class_dim]
    loss = loss.sum(class_dim) / n_classes
    return _reduce_t(loss, reduction)


def _margin_targets(target, n_classes):
    """multilabel_margin_loss's targets per sample: the class indices before the first -1,
    as a 0/1 mask (is_target)."""
    t = target.reshape(-1, n_classes) if target.ndim else target.reshape(1, 1)
    mask = np.zeros(t.shape, bool)
    for i, row in enumerate(t):
        for j in row:
            if j < 0:
                break
            mask[i, j] = True
    return mask


def _multilabel_margin_fwd(x, target, reduction):
    x2 = x.reshape(-1, x.shape[-1]).astype(_F64) if x.ndim else x.reshape(1, 1).astype(_F64)
    n_classes = x2.shape[1]
    is_t = _margin_targets(target, n_classes)
    t2 = target.reshape(x2.shape)
    losses = np.zeros(len(x2))
    for i in range(len(x2)):
        for j in t2[i]:
            if j < 0:
                break
            diff = (1 - x2[i, j]) + x2[i]  # (PyTorch's order of the additions)
            losses[i] += np.sum(np.maximum(diff, 0)[~is_t[i]])
    losses /= n_classes
    if reduction == "mean":
        return np.asarray(losses.mean()).astype(x.dtype)
    if reduction == "sum":
        return np.asarray(losses.sum()).astype(x.dtype)
    return losses.reshape(x.shape[:-1] if x.ndim == 2 else ()).astype(x.dtype)


def _multilabel_margin_backward(c, g):
    """The loss is piecewise linear in x: its gradient is a constant pattern times g (so a
    create_graph backward differentiates it in g only, as PyTorch's)."""
    x, = c.saved
    target, reduction = c.meta
    d = x._data
    x2 = d.reshape(-1, d.shape[-1]).astype(_F64) if d.ndim else d.reshape(1, 1).astype(_F64)
    n_classes = x2.shape[1]
    is_t = _margin_targets(target, n_classes)
    t2 = target.reshape(x2.shape)
    pattern = np.zeros_like(x2)
    for i in range(len(x2)):
        for j in t2[i]:
            if j < 0:
                break
            # ((1 - x_j) + x_i as PyTorch adds it: 1 - (x_j - x_i) loses a tiny x_i)
            active = ((1 - x2[i, j]) + x2[i] > 0) & ~is_t[i]
            pattern[i] += active / n_classes
            pattern[i, j] -= active.sum() / n_classes
    if reduction == "mean":
        pattern /= len(x2)
    const = make(pattern.astype(d.dtype))
    if reduction == "none" and g._data.ndim:
        return ((const * g.unsqueeze(-1)).reshape(d.shape),)
    return ((const * g).reshape(d.shape),)


MULTILABEL_MARGIN = defop("multilabel_margin_loss", "MultilabelMarginLossBackward0",
                          _multilabel_margin_fwd, _multilabel_margin_backward,
                          "sum over targets j, non-targets i of max(0, 1 - (x_j - x_i)) / C",
                          save="inputs meta",
                          torch_call="torch.nn.functional.multilabel_margin_loss(a.reshape(1, -1),"
                                     " torch.tensor([[0] + [-1] * (a.numel() - 1)]))")


@public("torch.nn.functional.multilabel_margin_loss")
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(multilabel_margin_loss, input, target,
                              size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    x, t = input._data, target._data
    if x.ndim > 2 or (x.ndim <= 1 and t.ndim > 1) or t.shape != x.shape:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {_sizes(x.shape)}" if x.ndim > 2 or x.size == 0 else
                           f"inconsistent target size: {_sizes(t.shape)} for input of size: "
                           f"{_sizes(x.shape)}")
    if t.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {_type_word(target.dtype)}")
    n_classes = x.shape[-1] if x.ndim else 1
    if np.any(t >= n_classes) or np.any(t < -1):
        raise RuntimeError("multilabel_margin_loss: target out of range")
    return run_op(MULTILABEL_MARGIN, (input,), (t.copy(), reduction))


def _multi_margin_fwd(x, target, p, margin, weight, reduction):
    x2 = x.reshape(-1, x.shape[-1]).astype(_F64) if x.ndim else x.reshape(1, 1).astype(_F64)
    n, c = x2.shape
    t = target.reshape(-1)
    xt = x2[np.arange(n), t][:, None]
    z = np.maximum(margin - xt + x2, 0)
    z[np.arange(n), t] = 0
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.astype(_F64)[t][:, None]
    losses = z.sum(1) / c
    if reduction == "mean":
        return np.asarray(losses.mean()).astype(x.dtype)
    if reduction == "sum":
        return np.asarray(losses.sum()).astype(x.dtype)
    return losses.reshape(x.shape[:-1] if x.ndim == 2 else ()).astype(x.dtype)


def _multi_margin_backward(c, g):
    """PyTorch has no derivative of multi_margin_loss_backward: under create_graph the
    gradient hangs off a NotImplemented node over the inputs that require grad."""
    x = c.saved[0]
    if GRAD_MODE.enabled and (g.requires_grad or x.requires_grad):
        with no_grad():
            value, = _multi_margin_backward_of(c, g)
        return (run_op(MULTI_MARGIN_GRAD, tuple(t for t in (g, x) if t.requires_grad),
                       (value._data,)),)
    return _multi_margin_backward_of(c, g)


def _multi_margin_double(c, gg):
    raise RuntimeError("derivative for aten::multi_margin_loss_backward is not implemented")


MULTI_MARGIN_GRAD = defop("multi_margin_loss_backward", "NotImplemented",
                          lambda *arrays: arrays[-1], _multi_margin_double,
                          "PyTorch has no derivative of multi_margin_loss's gradient")


def _multi_margin_backward_of(c, g):
    """Tensor ops: with z_i = margin - x_y + x_i on the active
    non-target classes, g_i = coef_i = (p == 2 ? 2 z_i : 1) w_y / C, g_y = -sum coef."""
    x, = c.saved
    target, p, margin, weight, reduction = c.meta
    d = x._data
    x2 = x.reshape(-1, d.shape[-1]) if d.ndim else x.reshape(1, 1)
    n, ncls = x2._data.shape
    t = target.reshape(-1)
    rows = np.arange(n)
    onehot_np = np.zeros((n, ncls), d.dtype)
    onehot_np[rows, t] = 1
    onehot = make(onehot_np)
    # (x_y gathered, not x * onehot summed: an inf score elsewhere would make every z nan)
    xt = PUBLIC["torch.gather"](x2, 1, make(np.asarray(t, np.int64).reshape(-1, 1)))
    z = (x2 - xt) + margin
    active = (z._data > 0) & (onehot_np == 0)
    coef = z * 2 if p == 2 else make(np.ones((n, ncls), d.dtype))
    scale = active.astype(d.dtype) / ncls
    if weight is not None:
        scale = scale * weight.astype(d.dtype)[t][:, None]
    coef = coef * make(scale)
    grad = coef - onehot * coef.sum(1, keepdim=True)
    if reduction == "mean":
        grad = grad * (g / n)
    elif reduction == "sum" or not g._data.ndim:
        grad = grad * g
    else:
        grad = grad * g.reshape(-1, 1)
    return (grad.reshape(d.shape),)


MULTI_MARGIN = defop("multi_margin_loss", "MultiMarginLossBackward0", _multi_margin_fwd,
                     _multi_margin_backward, "sum over i != y of max(0, margin - x_y + x_i)^p / C",
                     save="inputs meta",
                     torch_call="torch.nn.functional.multi_margin_loss(a.reshape(1, -1) * 0.3, "
                                "torch.tensor([0]))")


@public("torch.nn.functional.multi_margin_loss")
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight=None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(multi_margin_loss, input, target, p, margin,
                              weight, size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight._data.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    x, t = input._data, target._data
    if x.ndim > 2 or x.size == 0:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {_sizes(x.shape)}")
    n = x.shape[0] if x.ndim == 2 else 1
    if t.ndim > 1 or t.size != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {_sizes(t.shape)}. Input has shape "
                           f"{_sizes(x.shape)}.")
    n_classes = x.shape[-1] if x.ndim else 1
    if np.any(t < 0) or np.any(t >= n_classes):
        raise IndexError(f"Target {int(t.reshape(-1)[(t.reshape(-1) < 0) | (t.reshape(-1) >= n_classes)][0])}"
                         f" is out of bounds.")
    w = None if weight is None else weight._data
    return run_op(MULTI_MARGIN, (input,), (t.copy(), p, float(margin), w, reduction))


@public("torch.nn.functional.triplet_margin_loss", "torch.triplet_margin_loss")
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(triplet_margin_loss, anchor, positive, negative, margin, p,
                              eps, swap, size_average, reduce, reduction)
    from .elementwise import minimum

    if isinstance(reduction, str):
        reduction = _reduction(size_average, reduce, reduction)
    else:
        reduction = {0: "none", 1: "mean", 2: "sum"}.get(reduction, "none")
    a, pz, nz = anchor._data.ndim, positive._data.ndim, negative._data.ndim
    if not (a == pz == nz):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a}D, positive "
                           f"{pz}D, and negative {nz}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    out = (margin + dist_pos - dist_neg).clamp_min(0)
    return _reduce_t(out, reduction)


@public("torch.nn.functional.triplet_margin_with_distance_loss")
def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    from .elementwise import minimum

    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pz, nz = anchor._data.ndim, positive._data.ndim, negative._data.ndim
    if not (a == pz == nz):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a}D, positive "
                           f"{pz}D, and negative {nz}D inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    dist_pos = dist(anchor, positive)
    dist_neg = dist(anchor, negative)
    if swap:
        dist_neg = minimum(dist_neg, dist(positive, negative))
    loss = (margin + dist_pos - dist_neg).clamp_min(0)
    return _reduce_t(loss, reduction)


# ----------------------------------------------------------------- distances

def _norm1_fwd(x, p, dim, keepdim):
    from .linalg_ext import _vector_norm_array

    return _vector_norm_array(x, float(p), (dim,), keepdim, x.dtype)


def _norm1_backward(c, g):
    from types import SimpleNamespace

    from .linalg_ext import _vector_norm_backward

    # the same formula as linalg.vector_norm's, over the one dim
    ctx = SimpleNamespace(saved=c.saved, result=c.result,
                          meta=(float(c.meta[0]), (c.meta[1],), c.meta[2], None))
    return _vector_norm_backward(ctx, g)


NORM_DIM = defop("norm_dim", "NormBackward1", _norm1_fwd, _norm1_backward,
                 "d ||x||_p/dx over one dim", save="inputs result",
                 torch_call="torch.nn.functional.pairwise_distance(a, b)")


@public("torch.nn.functional.pairwise_distance", "torch.pairwise_distance")
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    n1, n2 = x1._data.ndim, x2._data.ndim
    out_dim = max(n1, n2)
    inner = out_dim - 1 if out_dim else 0
    diff = x1 - x2 + eps
    return run_op(NORM_DIM, (diff,), (p, inner, keepdim))


@public("torch.nn.functional.cosine_similarity", "torch.cosine_similarity")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    from .linalg_ext import vector_norm

    common = dtypes.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_type_word(common)}")
    if x1._data.dtype.kind not in "fV":
        x1 = x1.to(common)
    if x2._data.dtype.kind not in "fV":
        x2 = x2.to(common)
    shape = np.broadcast_shapes(x1._data.shape, x2._data.shape)
    if x1._data.shape != shape:
        x1 = x1.expand(*shape)
    if x2._data.shape != shape:
        x2 = x2.expand(*shape)
    n1 = vector_norm(x1, 2, dim, True).clone()
    n2 = vector_norm(x2, 2, dim, True).clone()
    # (PyTorch clamps the clones in place under no_grad: the values change, not the graph)
    n1._data[...] = np.maximum(n1._data, eps)
    n2._data[...] = np.maximum(n2._data, eps)
    n1._vc[0] += 1
    n2._vc[0] += 1
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _pdist_fwd(x, p):
    n = x.shape[0]
    i, j = np.triu_indices(n, 1)
    diff = np.abs(x[i].astype(_F64) - x[j].astype(_F64))
    with np.errstate(all="ignore"):
        if p == 0:
            r = (diff != 0).sum(-1).astype(_F64)
        elif math.isinf(p):
            r = diff.max(-1) if diff.shape[-1] else np.zeros(len(diff))
        else:  # (the sum of powers in x's dtype, as PyTorch's: a float32 one overflows)
            r = (diff ** p).sum(-1).astype(x.dtype).astype(_F64) ** (1 / p)
    return r.astype(x.dtype)


def _pair_grad(diff: Tensor, dist: Tensor, g: Tensor, p: float) -> Tensor:
    """d dist_p(diff)/d diff times g, per pair (rows of diff), as PyTorch's pdist/cdist
    backward kernels: 0 where the distance is 0 (and for p = 0)."""
    from .elementwise import where

    zero = make(np.array(0.0, diff._data.dtype))
    dd = dist.unsqueeze(-1)
    gg = g.unsqueeze(-1)
    if p == 0:
        return diff * 0
    if p == 1:
        return gg * diff.sign()
    if p == 2:
        return where(dd == 0, zero, gg * diff / dd)
    if math.isinf(p):
        mask = (diff.abs() == dd).to(diff.dtype)
        return gg * diff.sign() * mask
    if p < 2:
        return where(dd == 0, zero, gg * diff.sign() * diff.abs() ** (p - 1) / dd ** (p - 1))
    return where(dd == 0, zero, gg * diff * diff.abs() ** (p - 2) / dd ** (p - 1))


def _not_differentiable(name: str):
    """The backward of a node PyTorch gives no derivative: its NotImplementedError."""
    def backward(c, gg):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return backward


# PyTorch's pdist/cdist gradients under create_graph: one node over (grad, self, result)
# (cdist: grad, x1, x2, result) whose own backward raises
PDIST_GRAD = defop("pdist_backward", "PdistBackwardBackward0", lambda *arrays: arrays[-1],
                   _not_differentiable("_pdist_backward"),
                   "PyTorch has no derivative of pdist's gradient")
CDIST_GRAD = defop("cdist_backward", "CdistBackwardBackward0", lambda *arrays: arrays[-1],
                   _not_differentiable("_cdist_backward"),
                   "PyTorch has no derivative of cdist's gradient")


def _pdist_backward(c, g):
    if GRAD_MODE.enabled:
        x, dist = c.saved[0], c.result
        with no_grad():
            value, = _pdist_backward_of(c, g)
        return (run_op(PDIST_GRAD, (g, x, dist), (value._data,)),)
    return _pdist_backward_of(c, g)


def _pdist_backward_of(c, g):
    x, = c.saved
    p, = c.meta
    dist = c.result
    n = x._data.shape[0]
    i, j = np.triu_indices(n, 1)
    if len(i) == 0:
        return (x * 0,)
    diff = x[make(i)] - x[make(j)]
    pair = _pair_grad(diff, dist, g, p)
    # scatter: + to row i, - to row j
    scatter_i = make(np.eye(n, dtype=x._data.dtype)[:, i])
    scatter_j = make(np.eye(n, dtype=x._data.dtype)[:, j])
    return ((scatter_i - scatter_j) @ pair,)


PDIST = defop("pdist", "PdistBackward0", _pdist_fwd, _pdist_backward,
              "d ||x_i - x_j||_p: + to row i, - to row j", save="inputs result",
              torch_call="torch.pdist(a.reshape(a.numel(), 1) * torch.tensor([[1., 2.]], "
                         "dtype=a.dtype))")


@public("torch.nn.functional.pdist", "torch.pdist")
def pdist(input: Tensor, p: float = 2) -> Tensor:
    x = input._data
    if x.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    if x.dtype.kind not in "fV":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if not x.flags.c_contiguous:
        input = input.contiguous()
    return run_op(PDIST, (input,), (float(p),))


def _cdist_fwd(x1, x2, p):
    diff = np.abs(x1[..., :, None, :].astype(_F64) - x2[..., None, :, :].astype(_F64))
    with np.errstate(all="ignore"):
        if p == 0:
            r = (diff != 0).sum(-1).astype(_F64)
        elif math.isinf(p):
            r = diff.max(-1) if diff.shape[-1] else np.zeros(diff.shape[:-1])
        else:  # (the sum of powers in the inputs' dtype, as PyTorch's)
            r = (diff ** p).sum(-1).astype(x1.dtype).astype(_F64) ** (1 / p)
    return r.astype(x1.dtype)


def _cdist_backward(c, g):
    x1, x2 = c.saved
    p, = c.meta
    dist = c.result
    with no_grad() if GRAD_MODE.enabled else _NO_CONTEXT:
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
        pair = _pair_grad(diff, dist, g, p)
        g1 = pair.sum(-2) if c.needs(0) else None
        g2 = (-pair).sum(-3) if c.needs(1) else None  # (an empty sum is 0., not -0.)
    if GRAD_MODE.enabled:
        # PyTorch's _cdist_backward(grad, x1, x2, p, cdist) for x1, and the same on the
        # transposed arguments for x2: nodes whose own backward raises
        if g1 is not None:
            g1 = run_op(CDIST_GRAD, (g, x1, x2, dist), (g1._data,))
        if g2 is not None:
            g2 = run_op(CDIST_GRAD, (g.mT.contiguous(), x2, x1, dist.mT.contiguous()),
                        (g2._data,))
    return g1, g2


class _NoContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NO_CONTEXT = _NoContext()


def _cdist_count(arrays, meta) -> int:
    """cdist's result size (broadcast batch x rows of x1 x rows of x2), for --max-elements."""
    x1, x2 = arrays[0], arrays[1]
    try:
        batch = np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    except ValueError:
        return 0  # the forward raises PyTorch's error
    return math.prod(batch) * x1.shape[-2] * x2.shape[-2]


CDIST = defop("cdist", "CdistBackward0", _cdist_fwd, _cdist_backward,
              "d ||x1_i - x2_j||_p: summed over j for x1, minus over i for x2",
              save="inputs result", broadcast=True, out_size=_cdist_count,
              torch_call="torch.cdist(a.reshape(-1, 1), a.reshape(-1, 1).cos() * 2)")


def _euclid_fwd(x1, x2):
    """PyTorch's _euclidean_dist: sqrt(clamp(|a|^2 + |b|^2 - 2 a.b, 0)) by one matrix product."""
    # in the inputs' dtype and PyTorch's order ([-2a, |a|^2, 1] . [b, 1, |b|^2], one term
    # after the other): float32's cancellation near 0 is part of PyTorch's result
    a, b = x1, x2
    an = (a * a).sum(-1)[..., :, None]
    bn = (b * b).sum(-1)[..., None, :]
    sq = ((a * a.dtype.type(-2)) @ np.swapaxes(b, -1, -2)) + an
    sq = sq + bn
    return np.sqrt(np.maximum(sq, 0)).astype(x1.dtype)


def _euclid_backward(c, g):
    """PyTorch's _euclidean_dist_backward: ratio = g / d (0 where d is 0)."""
    from .elementwise import where

    x1, x2 = c.saved
    res = c.result
    zero = make(np.array(0.0, res._data.dtype))
    ratio = where(res == 0, zero, g / res)
    g1 = x1 * ratio.sum(-1, keepdim=True) - ratio @ x2 if c.needs(0) else None
    g2 = x2 * ratio.sum(-2).unsqueeze(-1) - ratio.transpose(-2, -1) @ x1 if c.needs(1) else None
    return g1, g2


# (its generic test takes two independent inputs: a cos() of the first moves a last bit by
# CPU, which the matrix product's cancellation near 0 would magnify)
EUCLIDEAN_DIST = defop("euclidean_dist", "EuclideanDistBackward0", _euclid_fwd,
                       _euclid_backward, "d ||a_i - b_j||: ratio = g/d, ga = a rowsum - ratio b",
                       save="inputs result",
                       torch_call="torch.cdist(a.reshape(-1, 1), b.reshape(-1, 1) * 2, "
                                  "compute_mode='use_mm_for_euclid_dist')")


@public("torch.cdist")
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(cdist, x1, x2, p, compute_mode)
    a, b = x1._data, x2._data
    if a.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {a.ndim}D")
    if b.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {b.ndim}D")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} "
                           f"X2: {b.shape[-1]}")
    if a.dtype.kind not in "fV":
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: "
                           f"{_type_word(x1.dtype)}")
    if b.dtype.kind not in "fV":
        raise RuntimeError(f"cdist only supports floating-point dtypes, X2 got: "
                           f"{_type_word(x2.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
             "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    r1, r2 = a.shape[-2], b.shape[-2]
    mm = compute_mode == modes[1] or (compute_mode == modes[0] and (r1 > 25 or r2 > 25))
    if p == 2 and mm and a.size and b.size:  # (an empty operand: CdistBackward0 always)
        # PyTorch's matrix-product path: _euclidean_dist on (batch, rows, cols), viewed back
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        out_shape = tuple(batch) + (r1, r2)
        if batch:
            count = math.prod(batch)
            e1 = x1.expand(*batch, r1, a.shape[-1]).reshape(count, r1, a.shape[-1])
            e2 = x2.expand(*batch, r2, b.shape[-1]).reshape(count, r2, b.shape[-1])
        else:
            e1, e2 = x1, x2
        return run_op(EUCLIDEAN_DIST, (e1, e2)).view(out_shape)
    return run_op(CDIST, (x1, x2), (float(p),))


# ----------------------------------------------------------------- shape functions

@public("torch.nn.functional.one_hot")
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    t = tensor._data
    if t.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if t.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(t.max()) + 1
    if t.size and t.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if t.size and t.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = np.zeros(t.shape + (num_classes,), np.int64)
    np.put_along_axis(out, t[..., None], 1, axis=-1)
    return make(out)


def _pixel_shuffle_fwd(x, r):
    *batch, c, h, w = x.shape
    oc = c // (r * r)
    y = x.reshape(*batch, oc, r, r, h, w)
    nb = len(batch)
    order = list(range(nb)) + [nb, nb + 3, nb + 1, nb + 4, nb + 2]
    return np.ascontiguousarray(y.transpose(order)).reshape(*batch, oc, h * r, w * r)


def _pixel_unshuffle_fwd(x, r):
    if x.size == 0:  # (PyTorch returns an empty input as it is, shape and all)
        return x.copy()
    *batch, c, h, w = x.shape
    y = x.reshape(*batch, c, h // r, r, w // r, r)
    nb = len(batch)
    order = list(range(nb)) + [nb, nb + 2, nb + 4, nb + 1, nb + 3]
    return np.ascontiguousarray(y.transpose(order)).reshape(*batch, c * r * r, h // r, w // r)


PIXEL_SHUFFLE = defop("pixel_shuffle", "PixelShuffleBackward0", _pixel_shuffle_fwd,
                      lambda c, g: (run_op(PIXEL_UNSHUFFLE, (g,), c.meta),),
                      "a permutation: its gradient is pixel_unshuffle's",
                      torch_call="torch.nn.functional.pixel_shuffle(a.reshape(1, -1, 1, 1)"
                                 ".expand(1, 4, 1, 2), 2)")
PIXEL_UNSHUFFLE = defop("pixel_unshuffle", "PixelUnshuffleBackward0", _pixel_unshuffle_fwd,
                        lambda c, g: (pixel_shuffle(g, *c.meta),),
                        "a permutation: its gradient is pixel_shuffle's (with its checks)",
                        torch_call="torch.nn.functional.pixel_unshuffle(a.reshape(1, 1, 1, -1)"
                                   ".expand(1, 1, 2, -1).repeat(1, 1, 1, 2), 2)")


@public("torch.nn.functional.pixel_shuffle", "torch.pixel_shuffle")
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    x = input._data
    if x.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {x.ndim} dimension(s)")
    if upscale_factor <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got "
                           f"{upscale_factor}")
    c = x.shape[-3]
    if c % (upscale_factor * upscale_factor):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {upscale_factor * upscale_factor}")
    return run_op(PIXEL_SHUFFLE, (input,), (upscale_factor,))


@public("torch.nn.functional.pixel_unshuffle", "torch.pixel_unshuffle")
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    x = input._data
    if x.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {x.ndim} dimension(s)")
    if downscale_factor <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got "
                           f"{downscale_factor}")
    h, w = x.shape[-2:]
    if h % downscale_factor:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, "
                           f"but input.size(-2)={h} is not divisible by {downscale_factor}")
    if w % downscale_factor:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={w} is not divisible by {downscale_factor}")
    return run_op(PIXEL_UNSHUFFLE, (input,), (downscale_factor,))


# pad: constant (ConstantPadNdBackward0), reflect / replicate (Reflection/ReplicationPad{1,2,3}D),
# circular (a composition: CopySlices in PyTorch)

def _pad_widths(ndim, pad):
    widths = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        widths[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return widths


def _constant_pad_fwd(x, pad, value):
    widths = _pad_widths(x.ndim, pad)
    # negative widths crop
    crop = tuple(slice(max(-lo, 0), x.shape[d] - max(-hi, 0)) for d, (lo, hi) in enumerate(widths))
    x = x[crop]
    pos = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    return np.pad(x, pos, constant_values=value).astype(x.dtype)


def _constant_pad_backward(c, g):
    pad, _ = c.meta
    return (run_op(CONSTANT_PAD, (g,), (tuple(-p for p in pad), 0)),)


CONSTANT_PAD = defop("constant_pad_nd", "ConstantPadNdBackward0", _constant_pad_fwd,
                     _constant_pad_backward, "padding's gradient: the same slice of g",
                     torch_call="torch.nn.functional.pad(a, (1, 2), value=0.5)")


def _index_pad(size, lo, hi, mode):
    """The source index of each output position along one dim, for reflect / replicate."""
    idx = np.arange(-lo, size + hi)
    if mode == "replicate":
        return np.clip(idx, 0, size - 1)
    period = 2 * (size - 1) if size > 1 else 1
    idx = np.abs(idx) % period if size > 1 else np.zeros_like(idx)
    return np.where(idx >= size, period - idx, idx)


def _gather_pad_fwd(x, pad, mode):
    out = x
    widths = _pad_widths(x.ndim, pad)
    for d, (lo, hi) in enumerate(widths):
        if lo or hi:
            out = np.take(out, _index_pad(x.shape[d], lo, hi, mode), axis=d)
    return np.ascontiguousarray(out)


def _gather_pad_backward(c, g):
    """reflection/replication_pad{1,2,3}d_backward(grad_output, input): PyTorch's node of
    it takes the input too, so under create_graph the gradient of a leaf requires grad and
    differentiates to zeros along it (ReflectionPad1DBackwardBackward0 and kin)."""
    pad, mode = c.meta
    x = c.saved[0]
    return (run_op(_SCATTER_PADS[mode, len(pad) // 2], (g, x),
                   (pad, mode, tuple(x._data.shape))),)


def _scatter_pad_fwd(g, pad, mode):
    """The adjoint of _gather_pad_fwd: each output position's gradient added to its source."""
    out = g
    widths = _pad_widths(g.ndim, pad)
    for d, (lo, hi) in enumerate(widths):
        if lo or hi:
            size = g.shape[d] - lo - hi
            idx = _index_pad(size, lo, hi, mode)
            moved = np.moveaxis(out, d, 0)
            acc = np.zeros((size,) + moved.shape[1:], g.dtype)
            np.add.at(acc, idx, moved)
            out = np.moveaxis(acc, 0, d)
    return np.ascontiguousarray(out)


def _pad_node(mode: str, dims: int) -> str:
    return f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{dims}DBackward0"


def _scatter_pad_double(c, gg):
    pad, mode, x_shape = c.meta
    return (run_op(_GATHER_PADS[mode, len(pad) // 2], (gg,), (pad, mode)) if c.needs(0)
            else None,
            make(np.zeros(x_shape, gg._data.dtype)) if c.needs(1) else None)


def _pad_second_call(mode: str, dims: int) -> str:
    """A torch_call reaching the pad's backward op: a create_graph gradient whose
    grad_output depends on `a`, used again."""
    ones = ", ".join(["1"] * (dims + 1))
    sizes = ", ".join(["1", "2"] + ["2"] * (dims - 1))
    pads = ", ".join(["1"] * (2 * dims))
    return (f"torch.enable_grad()(lambda a: (lambda x: torch.autograd.grad(("
            f"torch.nn.functional.pad(x, ({pads}), mode='{mode}') ** 2).sum(), x, "
            f"create_graph=True)[0])(a.reshape({ones}, -1).expand({sizes}, -1) * 1).sum() * a)(a)")


_GATHER_PADS = {}
_SCATTER_PADS = {}
for _mode in ("reflect", "replicate"):
    for _dims in (1, 2, 3):
        _GATHER_PADS[_mode, _dims] = defop(
            f"{_mode}_pad{_dims}d", _pad_node(_mode, _dims), _gather_pad_fwd,
            _gather_pad_backward, f"{_mode} padding: each gradient added back to its source",
            save="inputs",
            torch_call=f"torch.nn.functional.pad(a.reshape({', '.join(['1'] * (_dims + 1))}, -1),"
                       f" ({', '.join(['1'] * (2 * _dims))}), mode='{_mode}')"
            if _dims == 1 else
            f"torch.nn.functional.pad(a.reshape({', '.join(['1'] * (_dims + 1))}, -1)"
            f".expand({', '.join(['1', '1'] + ['2'] * (_dims - 1))}, -1), "
            f"({', '.join(['1'] * (2 * _dims))}), mode='{_mode}')")
        _SCATTER_PADS[_mode, _dims] = defop(
            f"{_mode}_pad{_dims}d_backward", _pad_node(_mode, _dims)[:-1] + "Backward0",
            lambda g, x, pad, mode, x_shape: _scatter_pad_fwd(g, pad, mode), _scatter_pad_double,
            "the adjoint of a gather: its gradient along grad_output is the gather, along the "
            "input zeros", torch_call=_pad_second_call(_mode, _dims))


@public("torch.nn.functional.pad")
def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """F.pad: PyTorch's Python function hands (input, pad, mode, value) by position to
    its C++ pad, whose parser refuses a mode that is no str (position 3 however given)."""
    pad = tuple(int(p) for p in pad)
    if not isinstance(mode, str):
        raise TypeError(f"pad(): argument 'mode' (position 3) must be str, not "
                        f"{type(mode).__name__}")
    if _autocast.ENABLED and (mode == "replicate" or (mode == "reflect" and len(pad) < 6)) \
            and _autocast.wanted():  # (CPU autocast's float32 list: reflection_pad1d/2d,
        return _autocast.fp32(_PAD, input, pad, mode, value)  # replication_pad1d/2d/3d)
    x = input._data
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > x.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           "dimension but got padding length "
                           f"{len(pad)} and input of dimension {x.ndim}")
    if mode == "constant":
        fill = 0 if value is None else value
        widths = _pad_widths(x.ndim, pad)
        new_shape = [s + lo + hi for s, (lo, hi) in zip(x.shape, widths, strict=True)]
        for d, (lo, hi) in enumerate(widths):
            if x.shape[d] - max(-lo, 0) - max(-hi, 0) < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
        if any(s < 0 for s in new_shape):
            d = next(i for i, s in enumerate(new_shape) if s < 0)
            raise RuntimeError(f"The input size {x.shape[d]}, plus negative padding "
                               f"{widths[d][0]} and {widths[d][1]} resulted in a negative output "
                               f"size, which is invalid. Check dimension {d} of your input.")
        return run_op(CONSTANT_PAD, (input,), (pad, fill))
    if value is not None and value != 0:
        raise NotImplementedError(f"Padding mode \"{mode}\" doesn't take in value argument.")
    dims = len(pad) // 2
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if x.ndim not in (dims + 1, dims + 2) or dims > 3:
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {x.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, pad)
    shape_checks.padded_input(x.shape, dims)
    for i in range(dims):
        d = x.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (lo >= x.shape[d] or hi >= x.shape[d]):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} "
                               f"of input {_sizes(x.shape)}")
    return run_op(_GATHER_PADS[mode, dims], (input,), (pad, mode))


_PAD = pad  # (the function, which its own parameter `pad` hides in its body)


def _pad_circular(input: Tensor, pad: tuple) -> Tensor:
    """PyTorch's circular padding: the (cropped) input copied into the middle of a new
    tensor, then each dim's borders copied from the other side (CopySlices)."""
    x = input._data
    dims = len(pad) // 2
    core = input
    widths = _pad_widths(x.ndim, pad)
    for d, (lo, hi) in enumerate(widths):
        size = x.shape[d]
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
    for i in range(dims):  # (every padded dim is sliced, the last first: SliceBackward0s)
        d = x.ndim - 1 - i
        lo, hi = widths[d]
        size = x.shape[d]
        core = core.narrow(d, max(-lo, 0), size - max(-lo, 0) - max(-hi, 0))
    shape = [s + lo + hi for s, (lo, hi) in zip(x.shape, widths, strict=True)]
    out = make(np.zeros(shape, x.dtype))
    middle = out
    for d, (lo, _) in enumerate(widths):
        middle = middle.narrow(d, max(lo, 0), core._data.shape[d])
    middle.copy_(core)
    for i in range(dims):
        d = x.ndim - 1 - i
        lo, hi = max(widths[d][0], 0), max(widths[d][1], 0)
        size = shape[d]
        if lo:
            out.narrow(d, 0, lo).copy_(out.narrow(d, size - hi - lo, lo))
        if hi:
            out.narrow(d, size - hi, hi).copy_(out.narrow(d, lo, hi))
    return out


# ----------------------------------------------------------------- attention

def _causal_mask(length: int, source: int) -> np.ndarray:
    return np.tril(np.ones((length, source), bool))


def _additive_mask(mask, dtype):
    """An attn_mask as the additive float mask PyTorch adds to the scores (bool: -inf where
    False)."""
    if mask is None:
        return None
    if mask.dtype == np.bool_:
        return np.where(mask, 0.0, -np.inf).astype(dtype)
    return mask.astype(dtype)


def _sdpa_fwd(q, k, v, mask, scale, groups):
    kk = np.repeat(k, groups, axis=-3) if groups > 1 else k
    vv = np.repeat(v, groups, axis=-3) if groups > 1 else v
    s = (q.astype(_F64) @ np.swapaxes(kk.astype(_F64), -1, -2)) * scale
    if mask is not None:
        s = s + mask
    with np.errstate(all="ignore"):
        s = s - s.max(-1, keepdims=True)
        e = np.exp(s)
        p = e / e.sum(-1, keepdims=True)
    p = np.nan_to_num(p)  # a fully masked row attends to nothing (0)
    return (p @ vv.astype(_F64)).astype(q.dtype)


def _expand_heads(x: Tensor, groups: int) -> Tensor:
    if groups == 1:
        return x
    n, h, s, e = x._data.shape
    return x.unsqueeze(2).expand(n, h, groups, s, e).reshape(n, h * groups, s, e)


def _sum_heads(x: Tensor, groups: int) -> Tensor:
    if groups == 1:
        return x
    n, hg, s, e = x._data.shape
    return x.reshape(n, hg // groups, groups, s, e).sum(2)


def _sdpa_backward(c, g):
    from .nn import softmax

    q, k, v = c.saved
    mask, scale, groups = c.meta
    kk, vv = _expand_heads(k, groups), _expand_heads(v, groups)
    s = (q @ kk.transpose(-2, -1)) * scale
    if mask is not None:
        s = s + make(mask)
    p = softmax(s, -1)
    gq = gk = gv = None
    if c.needs(2):
        gv = _sum_heads(p.transpose(-2, -1) @ g, groups)
    if c.needs(0) or c.needs(1):
        gp = g @ vv.transpose(-2, -1)
        gs = p * (gp - (gp * p).sum(-1, keepdim=True))
        if c.needs(0):
            gq = (gs @ kk) * scale
        if c.needs(1):
            gk = _sum_heads((gs.transpose(-2, -1) @ q) * scale, groups)
    return gq, gk, gv


SDPA = defop("scaled_dot_product_flash_attention", "ScaledDotProductFlashAttentionForCpuBackward0",
             _sdpa_fwd, _sdpa_backward,
             "O = softmax(Q K^T s + M) V: gV = P^T gO, gS = P (gP - rowsum(gP P)), "
             "gQ = gS K s, gK = gS^T Q s", save="inputs",
             torch_call="torch.nn.functional.scaled_dot_product_attention(a.reshape(1, 1, -1, 1)"
                        " * 1, a.reshape(1, 1, -1, 1).cos(), a.reshape(1, 1, -1, 1).sin())")


def _safe_softmax_fwd(x, dim):
    from ..kernels.softmax import softmax_forward

    out = softmax_forward(x, dim)
    dead = np.all(np.isneginf(x), axis=dim, keepdims=True)
    return np.where(dead, 0, out).astype(out.dtype) if dead.any() else out


def _safe_softmax_backward(c, g):
    from .nn import SOFTMAX_BACKWARD

    return (run_op(SOFTMAX_BACKWARD, (g, c.result), c.meta),)


# ATen's math attention takes _safe_softmax: a row masked everywhere (all -inf) attends to
# nothing (0) instead of NaN; where a row has a finite score it is softmax, gradient and all
SAFE_SOFTMAX = defop("_safe_softmax", "SafeSoftmaxBackward0", _safe_softmax_fwd,
                     _safe_softmax_backward, "softmax, 0 on all -inf rows: s*(g - sum(g*s))",
                     save="result",
                     torch_call="torch._safe_softmax(a.reshape(1, -1) * 1, -1)")


@public("torch._safe_softmax")
def _safe_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:  # noqa: A002
    x = input if dtype is None else input.to(dtype)
    return run_unary(SAFE_SOFTMAX, x, (_wrap_dim(dim, x.dim()),))


def _scaled(t: Tensor, factor: float) -> Tensor:
    """ATen multiplies by a C++ scalar: mul.Scalar, whose node is MulBackward1."""
    from .elementwise import MUL_SCALAR

    return run_op(MUL_SCALAR, (t,), (factor,))


def _in_query_layout(out: Tensor, query: Tensor) -> Tensor:
    """PyTorch's CPU flash kernel writes its output in the query's layout when that is
    dense with the head dim innermost (MultiheadAttention's heads-interleaved q, whose
    permute(2, 0, 1, 3) is then contiguous, so the reshape after it is a view), else in C
    order. (A non-dense query with the head dim innermost gets another layout in PyTorch,
    not reproduced: C order here.)"""
    strides = query.stride()
    arr = out._data
    if strides[-1] != 1 or query.is_contiguous() or not arr.size:
        if not arr.flags.c_contiguous:  # numpy's matmul may keep an operand's order
            out._data = np.ascontiguousarray(arr)
        return out
    from .memory_formats import preserved

    order = sorted(range(arr.ndim), key=lambda d: -strides[d])
    step, dense = 1, True
    for d in reversed(order):
        if arr.shape[d] != 1 and strides[d] != step:
            dense = False
        step *= arr.shape[d]
    if dense:
        proto = np.lib.stride_tricks.as_strided(np.empty(arr.size, arr.dtype), arr.shape,
                                                tuple(s * arr.itemsize for s in strides))
        out._data = preserved(arr, proto)
    return out


def _check_math_allowed(q_dim: int, k_dim: int, v_dim: int, dropout_p: float) -> None:
    """PyTorch's refusal when the math path is switched off (sdpa_kernel without MATH) and
    its flash kernel cannot take the inputs, or is switched off too."""
    if sdp_backends.ENABLED["math"]:
        return
    if not sdp_backends.ENABLED["flash"]:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This "
                           "is likely due to turning off both the math kernel and the fused "
                           "kernels.")
    warnings.warn("Flash attention kernel not used because:", UserWarning, stacklevel=3)
    if not q_dim == k_dim == v_dim == 4:
        warnings.warn("All fused kernels requires query, key and value to be 4 dimensional, but "
                      f"got Query dim: {q_dim}, Key dim: {k_dim}, Value dim: {v_dim} instead.",
                      UserWarning, stacklevel=3)
    elif dropout_p > 0:
        warnings.warn("Both fused kernels do not support non-zero dropout.", UserWarning,
                      stacklevel=3)
    raise RuntimeError("No available kernel.  Aborting execution.")


@public("torch.nn.functional.scaled_dot_product_attention")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale=None,
                                 enable_gqa: bool = False) -> Tensor:
    """PyTorch's CPU choice: its flash kernel (one node) for 4-d inputs with equal batch
    sizes and head dims and no dropout; else the math composition (matmuls, softmax,
    dropout)."""
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's lower-precision list)
        return _autocast.lower(scaled_dot_product_attention, query, key, value, attn_mask,
                               dropout_p, is_causal, scale, enable_gqa)
    q, k, v = query._data, key._data, value._data
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if not (q.dtype == k.dtype == v.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {query.dtype} key.dtype: {key.dtype} and value.dtype: "
                           f"{value.dtype} instead.")
    if not (q.size and k.size and v.size):
        # PyTorch's answer for an empty operand: zeros of the output's shape plus the
        # inputs' sums times 0 (an AddBackward0 over a MulBackward1), so every input gets
        # a (zero) gradient
        zeros = make(np.zeros(np.broadcast_shapes(q.shape[:-1], v.shape[:-2] + (1,))
                              + v.shape[-1:], q.dtype))
        return zeros + (query.sum() + key.sum() + value.sum()) * 0
    e = q.shape[-1]
    sc = (1.0 / math.sqrt(e)) if scale is None else float(scale)
    length, source = q.shape[-2], k.shape[-2]
    mask = _causal_mask(length, source) if is_causal else (
        attn_mask._data if attn_mask is not None else None)
    groups = 1
    if enable_gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        if q.shape[-3] % k.shape[-3]:
            raise RuntimeError("number of heads in key and value must divide the number of "
                               "heads in query")
        groups = q.shape[-3] // k.shape[-3]
    flash = (q.ndim == k.ndim == v.ndim == 4 and q.shape[0] == k.shape[0] == v.shape[0]
             and e == k.shape[-1] == v.shape[-1] and q.dtype.kind in "fV"
             and (groups > 1 or q.shape[1] == k.shape[1] == v.shape[1])
             and not (attn_mask is not None and attn_mask.requires_grad) and not dropout_p > 0)
    if not (flash and sdp_backends.ENABLED["flash"]):
        flash = False
        _check_math_allowed(q.ndim, k.ndim, v.ndim, dropout_p)
    if flash:
        add = _additive_mask(mask, q.dtype)
        return _in_query_layout(run_op(SDPA, (query, key, value), (add, sc, groups)), query)
    # the math path: both operands scaled by sqrt(scale), masked, softmax, matmul
    root = math.sqrt(sc)
    kk, vv = key, value
    if groups > 1:
        kk, vv = _expand_heads(key, groups), _expand_heads(value, groups)
    scores = _scaled(query, root) @ _scaled(kk, root).transpose(-2, -1)
    if mask is not None:
        if mask.dtype == np.bool_:
            scores = scores + make(_additive_mask(mask, q.dtype))
        else:
            scores = scores + attn_mask
    attn = run_unary(SAFE_SOFTMAX, scores, (scores.dim() - 1,))
    if dropout_p > 0:  # ATen's dropout (training), drawn from the default generator
        from ..rng_dropout import dropout

        attn = dropout(attn, dropout_p, True)
    return attn @ vv


# ----------------------------------------------------------------- embedding_bag

def _bag_ids(n_idx, offsets, include_last):
    """The bag each index belongs to (-1: none), the number of bags, and where the indices
    past include_last_offset's end start (n_idx when there are none)."""
    offs = list(offsets)
    if include_last:
        bags = len(offs) - 1
        ends = offs[1:]
    else:
        bags = len(offs)
        ends = offs[1:] + [n_idx]
    ids = np.full(n_idx, -1)
    for b in range(bags):
        ids[offs[b]:ends[b]] = b
    past = ends[-1] if include_last and bags > 0 else n_idx
    return ids, bags, past


def _bag_backward(c, g):
    weight, psw = c.saved
    matrix, rows, onehot, mode, gather = c.meta[:5]
    gw = gpsw = None
    if mode == "max":
        gw = run_op(_linear_adjoint(), (g,), (gather,)) if c.needs(0) else None
        return gw, None
    if c.needs(0):
        m = make(matrix)
        if psw is not None:
            m = (make(rows) * psw.unsqueeze(0)) @ make(onehot)
        gw = m.transpose(0, 1) @ g
    if psw is not None and c.needs(1):
        gpsw = ((make(onehot) @ weight) * (make(rows).transpose(0, 1) @ g)).sum(-1)
    return gw, gpsw


def _linear_adjoint():
    from .conv_ext import LINEAR_MAP_ADJOINT

    return LINEAR_MAP_ADJOINT


def _bag_fwd(weight, psw, matrix, rows, onehot, mode, gather, forward_matrix=None):
    if mode == "max":
        return gather.gather.apply(weight)
    if forward_matrix is not None:  # (mean's offsets-only forward: see _embedding_bag_kernel)
        matrix = forward_matrix
    m = matrix if psw is None else (rows * psw[None, :]) @ onehot
    return (m @ weight.astype(_F64)).astype(weight.dtype)


EMBEDDING_BAG = defop("embedding_bag", "EmbeddingBagBackward0", _bag_fwd, _bag_backward,
                      "each bag a (weighted) sum / mean / max of rows: the gradient goes back to "
                      "those rows", save="inputs",
                      torch_call="torch.nn.functional.embedding_bag(torch.tensor([0, 0, 0]), "
                                 "a.reshape(1, -1) * 1, torch.tensor([0, 1]), mode='sum')")


@public("torch.nn.functional.embedding_bag")
def embedding_bag(input: Tensor, weight: Tensor, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights=None, include_last_offset: bool = False,
                  padding_idx=None) -> Tensor:
    """F.embedding_bag's Python layer in PyTorch's order (shapes, the input's rank, the mode,
    then max_norm renorming the named rows in place without recording), then the kernel."""
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) "
                         "is not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        offsets = make(np.arange(0, input.numel(), max(input.shape[1], 1),
                                 dtype=input._data.dtype)[:input.shape[0]])
        include_last_offset = False
        input = input.reshape(-1)  # noqa: A001
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    modes = {"sum": 0, "mean": 1, "max": 2}
    if mode not in modes:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        with no_grad():
            PUBLIC["torch.embedding_renorm_"](weight.detach(), input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    return _embedding_bag_kernel(weight, input, offsets, modes[mode], per_sample_weights,
                                 include_last_offset, padding_idx)[0]


@public("torch.embedding_bag")
def embedding_bag_aten(weight: Tensor, indices: Tensor, offsets: Tensor,
                       scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                       per_sample_weights=None, include_last_offset: bool = False,
                       padding_idx=None):
    """torch.embedding_bag: the kernel F.embedding_bag calls, with its three bookkeeping
    tensors (offset2bag, bag_size, max_indices) as PyTorch's CPU kernel fills them."""
    return _embedding_bag_kernel(weight, indices, offsets, mode, per_sample_weights,
                                 include_last_offset, padding_idx)


def _embedding_bag_kernel(weight: Tensor, input: Tensor, offsets: Tensor, mode_enum: int,
                          psw, include_last_offset: bool, padding_idx):
    from .conv_ext import Gather, Scatter

    mode = ("sum", "mean", "max")[mode_enum]
    for t in (input, offsets):  # (PyTorch names both 'indices')
        if t._data.dtype not in (np.int64, np.int32):
            raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                               "following "
                               f"scalar types: Long, Int; but got torch.{_type_word(t.dtype)}"
                               "Tensor instead (while checking arguments for embedding_bag)")
    flat, w = input._data.reshape(-1), weight._data
    offs = [int(o) for o in offsets._data.reshape(-1)]
    if offs and offs[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {offs[0]}\n"
                           "[ torch.LongTensor{} ]")  # (PyTorch prints an empty tensor after)
    if offs and offs[-1] > len(flat):
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {len(flat)} "
                           f"but got offsets[-1] of {offs[-1]}")
    vocab, dim = w.shape
    for pos, v in enumerate(flat.tolist()):
        if not 0 <= v < vocab:
            raise RuntimeError(f"Index {pos} of input takes value {v} which is not in the valid "
                               f"range [0, {vocab})")
    if (dim == 0 and flat.size and mode != "max"
            and w.dtype == np.float32):  # (PyTorch's float32 sum kernel refuses a 0-wide row)
        raise RuntimeError("Expected i < index_size to be true, but got false.  (Could this "
                           "error message be improved?  If so, please report an enhancement "
                           "request to PyTorch.)")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += vocab
    ids, bags, past = _bag_ids(len(flat), offs, include_last_offset)
    # PyTorch's CPU kernel files the indices past include_last_offset's end under the last
    # bag (offset2bag), so they count in bag_size and are taken in by every path that
    # reads offset2bag: max, sum and mean with a padding_idx, and every backward. The sum
    # and mean fast paths (no padding_idx) read the offsets instead: their forward leaves
    # them out (mean still divides by the longer bag_size); the plain sum's backward reads
    # an offset2bag it never filled (undefined in PyTorch): gradcli keeps the offsets there.
    # Those fast paths are the reduced-precision ones': a float64 weight takes the generic.
    fast_dtype = w.dtype != np.float64
    fast = mode == "sum" and padding_idx is None and fast_dtype
    segment_ids = ids
    if past < len(flat) and not fast:
        segment_ids = ids.copy()
        ids[past:] = bags - 1
    keep = ids >= 0
    if padding_idx is not None:
        keep &= flat != padding_idx
    rows = np.zeros((bags, len(flat)), w.dtype)
    rows[ids[keep], np.arange(len(flat))[keep]] = 1.0
    counts = rows.sum(1).astype(np.int64)
    if mode == "mean":
        rows_scaled = np.where(counts[:, None] > 0, rows / np.maximum(counts[:, None], 1), 0.0)
    else:
        rows_scaled = rows
    onehot = np.zeros((len(flat), vocab), w.dtype)
    onehot[np.arange(len(flat)), flat] = 1.0
    matrix = (rows_scaled @ onehot).astype(w.dtype)
    forward_matrix = None
    if mode == "mean" and padding_idx is None and fast_dtype and segment_ids is not ids:
        segment = np.zeros((bags, len(flat)), w.dtype)
        inside = segment_ids >= 0
        segment[segment_ids[inside], np.arange(len(flat))[inside]] = 1.0
        forward_matrix = ((np.where(counts[:, None] > 0, segment / np.maximum(
            counts[:, None], 1), 0.0)) @ onehot).astype(w.dtype)
    gather = None
    max_indices = np.zeros(bags, np.int64) if mode == "sum" else counts
    if mode == "max":
        index = np.full((bags, dim), -1, np.int64)  # (-1: an empty bag, zeros)
        max_indices = np.zeros((bags, dim), np.int64)
        for b in range(bags):
            members = flat[(ids == b) & keep]
            if len(members):
                vals = w[members]
                max_indices[b] = members[np.argmax(vals, 0)]
                index[b] = max_indices[b] * dim + np.arange(dim)
        gather = Scatter(Gather(index.reshape(-1), (bags, dim), w.shape))
    out = run_op(EMBEDDING_BAG, (weight, psw),
                 (matrix, rows.astype(w.dtype), onehot, mode, gather, forward_matrix),
                 arrays=(w, None if psw is None else psw._data))
    # (the sum kernel's fast path leaves offset2bag empty and bag_size zero)
    offset2bag = np.zeros(0, np.int64) if fast else np.where(ids >= 0, ids, 0).astype(np.int64)
    bag_size = np.zeros(bags, np.int64) if mode == "sum" else counts
    return out, make(offset2bag), make(bag_size), make(max_indices)


@public("torch.embedding_renorm_")
def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float,
                      norm_type: float) -> Tensor:
    """Scales each row of `input` that `indices` names whose norm exceeds max_norm down to
    max_norm (over norm + 1e-7, as PyTorch's kernel), in place; not differentiable."""
    weight = input
    input = indices  # noqa: A001
    if weight.dim() != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {weight.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "embedding_renorm_)")
    if input._data.dtype not in (np.int64, np.int32):
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"torch.{_type_word(input.dtype)}Tensor instead (while checking "
                           "arguments for embedding_renorm_)")
    weight._check_inplace()
    w = weight._data
    n = w.shape[0]
    for row in sorted(set(input._data.reshape(-1).tolist())):
        if not -n <= row < n:
            raise IndexError(f"select(): index {row} out of range for tensor of size "
                             f"[{', '.join(map(str, w.shape))}] at dimension 0")
        norm = float(np.asarray(np.linalg.norm(w[row].astype(np.float64), ord=norm_type),
                                w.dtype))
        if norm > max_norm:
            w[row] = w[row] * w.dtype.type(max_norm / (norm + 1e-7))
    weight._vc[0] += 1
    return weight


# ----------------------------------------------------------------- affine_grid

def _base_grid(size, align_corners, dtype=None):
    """(prod(spatial), nd + 1) rows [x, y, (z,) 1]: normalized coordinates, x the last dim.

    With the theta's dtype the coordinates are PyTorch's own values in that dtype
    (torch.linspace, then `* (n - 1) / n` as two rounded ops): grid_sample floors them, so
    a coordinate one ulp under a pixel centre picks the other cell (and gradient)."""
    def coords(n):
        if n <= 1:
            return np.zeros(max(n, 1))
        if dtype is None:
            lin = np.linspace(-1.0, 1.0, n)
            return lin if align_corners else lin * (n - 1) / n
        lin_t = PUBLIC["torch.linspace"](-1.0, 1.0, n, dtype=dtype)
        if not align_corners:
            lin_t = lin_t * (n - 1) / n
        return lin_t._data.astype(_F64)

    spatial = size[2:]
    axes = [coords(n) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    cols = [m.reshape(-1) for m in reversed(mesh)]  # x (last dim) first
    return np.stack(cols + [np.ones(cols[0].shape)], -1)


def _affine_fwd(theta, base, out_shape):
    grid = np.einsum("pk,nik->npi", base, theta.astype(_F64))
    return grid.reshape(out_shape).astype(theta.dtype)


def _affine_backward(c, g):
    base, out_shape = c.meta
    n = out_shape[0]
    k = out_shape[-1]
    gm = g.reshape(n, -1, k)  # (N, P, nd)
    return (gm.transpose(1, 2) @ make(base.astype(g._data.dtype)),)


AFFINE_GRID = defop("affine_grid_generator", "AffineGridGeneratorBackward0", _affine_fwd,
                    _affine_backward, "grid = base theta^T: g_theta = g^T base",
                    torch_call="torch.nn.functional.affine_grid(a.reshape(1, 1, -1)[..., :1]"
                               ".expand(1, 2, 3) * torch.tensor([[1., 0.5, 2.], [0., 1., -1.]], "
                               "dtype=a.dtype), (1, 1, 2, 3), align_corners=False)")


# ----------------------------------------------------------------- ctc_loss

def _logsumexp(a, axis=None):
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return out.squeeze(axis) if axis is not None else out.reshape(())


def _ctc_one(lp, target, length, blank):
    """(nll, gradient w.r.t. log_probs) of one sample: PyTorch's CPU kernel's alpha-beta
    recursion in log space; the gradient is its `exp(lp) - exp(log(alpha beta) + nll - lp)`
    (the gradient through a log_softmax, as PyTorch returns it)."""
    t_len = length
    ext = np.full(2 * len(target) + 1, blank)
    ext[1::2] = target
    s_len = len(ext)
    neg = -np.inf
    alpha = np.full((t_len, s_len), neg)
    if t_len:
        alpha[0, 0] = lp[0, blank]
        if s_len > 1:
            alpha[0, 1] = lp[0, ext[1]]
    skip = np.zeros(s_len, bool)
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    for t in range(1, t_len):
        prev = alpha[t - 1]
        a1 = np.concatenate([[neg], prev[:-1]])
        a2 = np.where(skip, np.concatenate([[neg, neg], prev[:-2]]), neg)
        alpha[t] = _logsumexp(np.stack([prev, a1, a2]), 0) + lp[t, ext]
    if t_len == 0:
        nll = 0.0 if len(target) == 0 else np.inf
        return nll, np.zeros_like(lp)
    ends = [alpha[t_len - 1, s_len - 1]] + ([alpha[t_len - 1, s_len - 2]] if s_len > 1 else [])
    nll = -_logsumexp(np.array(ends))
    beta = np.full((t_len, s_len), neg)
    beta[t_len - 1, s_len - 1] = lp[t_len - 1, ext[s_len - 1]]
    if s_len > 1:
        beta[t_len - 1, s_len - 2] = lp[t_len - 1, ext[s_len - 2]]
    skip_b = np.zeros(s_len, bool)
    skip_b[:-2] = (ext[:-2] != blank) & (ext[:-2] != ext[2:])
    for t in range(t_len - 2, -1, -1):
        nxt = beta[t + 1]
        b1 = np.concatenate([nxt[1:], [neg]])
        b2 = np.where(skip_b, np.concatenate([nxt[2:], [neg, neg]]), neg)
        beta[t] = _logsumexp(np.stack([nxt, b1, b2]), 0) + lp[t, ext]
    grad = np.exp(lp).copy()
    grad[t_len:] = 0
    ab = alpha + beta  # (T, S)
    for c in np.unique(ext):
        lcab = _logsumexp(ab[:, ext == c], 1)
        with np.errstate(all="ignore"):
            grad[:t_len, c] = np.exp(lp[:t_len, c]) - np.exp(lcab + nll - lp[:t_len, c])
    return nll, grad


def _ctc_fwd(lp, targets, input_lengths, target_lengths, blank, zero_infinity, batched, flat):
    x = lp.astype(_F64) if batched else lp.astype(_F64)[:, None, :]
    n = x.shape[1]
    losses = np.zeros(n)
    grads = np.zeros_like(x)
    offset = 0
    for b in range(n):
        tl = int(target_lengths[b])
        if flat:
            target = targets[offset:offset + tl]
            offset += tl
        else:
            target = (targets[b] if targets.ndim == 2 else targets)[:tl]
        nll, grad = _ctc_one(x[:, b, :], np.asarray(target), int(input_lengths[b]), blank)
        if zero_infinity and np.isinf(nll):
            grad = np.zeros_like(grad)  # (the loss itself is zeroed by a where, after)
        losses[b] = nll
        grads[:, b, :] = grad
    if not batched:
        grads = grads[:, 0, :]
        losses = losses.reshape(())
    return losses.astype(lp.dtype), grads.astype(lp.dtype)


def _ctc_backward(c, g):
    grads, = c.meta[-1:]
    scale = g.unsqueeze(-1) if g._data.ndim else g
    if GRAD_MODE.enabled:  # (a node that refuses to be differentiated, as PyTorch's)
        return (run_op(CTC_GRAD, (scale, c.saved[0]), (grads,)),)
    return (make((scale._data * grads).astype(grads.dtype)),)


def _ctc_double(c, gg):
    raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


CTC = defop("ctc_loss", "CtcLossBackward0", lambda lp, meta, grads: meta, _ctc_backward,
            "the CTC negative log likelihood: alpha-beta recursion; its gradient as PyTorch's "
            "(through the log_softmax)", save="inputs meta")
CTC_GRAD = defop("ctc_loss_backward", "NotImplemented",
                 lambda g, lp, grads: (g * grads).astype(grads.dtype), _ctc_double,
                 "PyTorch has no derivative of the CTC gradient")


@public("torch.nn.functional.ctc_loss", "torch.ctc_loss")
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction="mean", zero_infinity: bool = False) -> Tensor:
    from .elementwise import where

    if isinstance(reduction, int):
        reduction = {0: "none", 1: "mean", 2: "sum"}.get(reduction, "none")
    elif reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    lp = log_probs._data
    batched = lp.ndim == 3
    if lp.ndim not in (2, 3):
        raise RuntimeError(f"ctc_loss(): Expected log_probs to have 2 or 3 dimensions, but got "
                           f"{lp.ndim}")
    if lp.size == 0:
        raise RuntimeError("log_probs tensor must not be empty")

    def as_array(v):
        if isinstance(v, Tensor):
            return v._data.reshape(-1) if v._data.ndim else v._data.reshape(1)
        return np.asarray(v).reshape(-1)

    il, tl = as_array(input_lengths), as_array(target_lengths)
    t = targets._data
    n = lp.shape[1] if batched else 1
    if len(il) != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    flat = t.ndim == 1  # the targets of all samples concatenated
    if np.any(il > lp.shape[0]):
        bad = int(np.argmax(il > lp.shape[0]))
        raise RuntimeError(f"Expected input_lengths to have value at most {lp.shape[0]}, but "
                           f"got value {int(il[bad])} (while checking arguments for ctc_loss_cpu)")
    _losses, grads = _ctc_fwd(lp, t, il, tl, blank, zero_infinity, batched, flat)
    loss = run_op(CTC, (log_probs,), (_losses, grads))
    if zero_infinity:
        loss = where(loss == np.inf, make(np.zeros(loss._data.shape, lp.dtype)), loss)
    if reduction == "mean":
        denom = make(np.maximum(tl, 1).astype(lp.dtype).reshape(loss._data.shape))
        return (loss / denom).mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# ----------------------------------------------------------------- torch.* spellings

@public("torch.poisson_nll_loss")
def torch_poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool,
                           eps: float, reduction: int) -> Tensor:
    mode = {0: "none", 1: "mean", 2: "sum"}.get(reduction, "none")
    return poisson_nll_loss(input, target, log_input, full, None, eps, None, mode)
