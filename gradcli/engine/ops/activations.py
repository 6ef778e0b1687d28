"""Pointwise activations of torch.nn.functional: gelu, silu, elu, leaky_relu, softplus,
hardtanh (and relu6, which PyTorch runs as hardtanh(0, 6)).

Each is a pair of ops as in PyTorch's derivatives table: the activation (`GeluBackward0`)
and its backward (`GeluBackwardBackward0`, what a create_graph gradient records), whose
own gradient is formed from Tensor ops. Values are computed in numpy at full accuracy.
"""

from __future__ import annotations

import math

import numpy as np

from ..node import keep_given
from ..tensor import Tensor, make
from .registry import defop, public, run_op, run_unary

_SQRT_2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_K = math.sqrt(2.0 / math.pi)
_TANH_C = 0.044715


def _erf(x):
    from scipy.special import erf

    return erf(x)


def _cast(out, like):
    return np.asarray(out, dtype=like.dtype)


def _pointwise(name: str, node: str, f, df, d2f, torch_call: str, rule: str):
    """Declare an activation and its backward: f(x, *meta) and df(x, *meta) over numpy
    arrays; d2f(x, *meta) over Tensors (so that gradients of any order exist): the
    backward's gradient in x is g * gg * d2f(x)."""
    back_node = node.replace("Backward0", "BackwardBackward0").replace("Backward1", "BackwardBackward0")

    def back_forward(g, x, *meta):
        with np.errstate(all="ignore"):
            slope = df(x, *meta)
            if slope.dtype == np.bool_:  # (a pass/block mask: g or 0, even for an inf g)
                return _cast(np.where(slope, g, 0.0), x)
            return _cast(g * slope, x)

    def back_grads(c, gg):
        g, x = c.saved
        dg = run_op(backward, (gg, x), c.meta) if c.needs(0) else None
        dx = None
        if c.needs(1):  # (d2f None: the slope is piecewise constant, PyTorch's zeros_like)
            dx = (make(np.zeros(x._data.shape, x._data.dtype)) if d2f is None
                  else gg * g * d2f(x, *c.meta))
        return dg, dx

    backward = defop(name + "_backward", back_node, back_forward, back_grads,
                     f"d[{name}_backward(g, x)]/dg = {name}'(x)", save="inputs",
                     torch_call=f"torch.enable_grad()(lambda a: torch.autograd.grad({torch_call}"
                                ", a, a * 0.5 + 1, create_graph=True)[0])(a)")

    def forward(x, *meta):
        with np.errstate(all="ignore"):
            return _cast(f(x, *meta), x)

    op = defop(name, node, forward,
               lambda c, g: (run_op(backward, (g, c.saved[0]), c.meta),),
               rule, save="inputs", torch_call=torch_call)
    return op, backward


# ------------------------------------------------------------------ gelu
def _gelu(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(_TANH_K * (x + _TANH_C * x ** 3)))
    if x.dtype == np.float32 and x.size > 1:
        # PyTorch hands a float32 tensor of more than one element to oneDNN's gelu, which
        # forms x(1 + erf(x/sqrt 2)) before halving it (so 2e38 overflows to inf) and
        # gives nan at +inf; one element goes through ATen's own kernel (gelu(inf) = inf)
        whole = (x.astype(np.float64) * (1 + _erf(x.astype(np.float64) / _SQRT_2)))
        return np.where(x == np.inf, np.nan, whole.astype(np.float32) * np.float32(0.5))
    return 0.5 * x * (1 + _erf(x / _SQRT_2))


def _gelu_d(x, approximate):
    if approximate == "tanh":
        t = np.tanh(_TANH_K * (x + _TANH_C * x ** 3))
        du = _TANH_K * (1 + 3 * _TANH_C * x * x)
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du
    return 0.5 * (1 + _erf(x / _SQRT_2)) + x * _INV_SQRT_2PI * np.exp(-0.5 * x * x)


def _gelu_d2(x: Tensor, approximate):
    if approximate == "tanh":
        t = (_TANH_K * (x + _TANH_C * x ** 3)).tanh()
        du = _TANH_K * (1 + 3 * _TANH_C * x * x)
        d2u = _TANH_K * 6 * _TANH_C * x
        sech2 = 1 - t * t
        return sech2 * du + 0.5 * x * (sech2 * d2u - 2 * t * sech2 * du * du)
    return _INV_SQRT_2PI * (-0.5 * x * x).exp() * (2 - x * x)


GELU, GELU_BACKWARD = _pointwise(
    "gelu", "GeluBackward0", _gelu, _gelu_d, _gelu_d2,
    "torch.nn.functional.gelu(a)", "d gelu(a)/da = Phi(a) + a phi(a)")


# ------------------------------------------------------------------ silu
def _sig(x):
    return 1 / (1 + np.exp(-x))


def _silu_grad(c, g):
    """PyTorch's infinitely_differentiable_silu_backward: Tensor ops (MulBackward0...)."""
    from .elementwise import _plus

    x = c.saved[0]
    s = x.sigmoid()
    return (g * s * _plus(x * (1.0 - s), 1.0),)  # (C++'s `1 + ...`: AddBackward1)


SILU = defop("silu", "SiluBackward0", lambda x: _cast(x * _sig(x), x), _silu_grad,
             "d silu(a)/da = s(a)(1 + a(1 - s(a)))", save="inputs",
             torch_call="torch.nn.functional.silu(a)")


# ------------------------------------------------------------------ elu
def _elu(x, alpha, scale, input_scale):
    # (x where x <= 0, not np.minimum(x, 0): -0.0 stays -0.0, so elu(-0.0) is -0.0 as in ATen)
    neg = scale * alpha * np.expm1(np.where(x > 0, 0, x) * input_scale)
    return np.where(x > 0, scale * x, neg)


def _elu_d(x, alpha, scale, input_scale):
    return np.where(x > 0, scale, scale * alpha * input_scale * np.exp(np.minimum(x, 0) * input_scale))


def _elu_d2(x: Tensor, alpha, scale, input_scale):
    from .elementwise import where

    # (PyTorch's elu_double_backward masks with x < 0: the second derivative is 0 at +-0)
    return where(x < 0, scale * alpha * input_scale ** 2 * (x * input_scale).exp(), 0.0)


ELU, ELU_BACKWARD = _pointwise(
    "elu", "EluBackward0", _elu, _elu_d, _elu_d2,
    "torch.nn.functional.elu(a)", "d elu(a)/da = 1 if a > 0 else alpha exp(a)")


# ------------------------------------------------------------------ leaky_relu
LEAKY_RELU, LEAKY_RELU_BACKWARD = _pointwise(
    "leaky_relu", "LeakyReluBackward0", lambda x, s: np.where(x > 0, x, x * s),
    lambda x, s: np.where(x > 0, 1.0, s), None,
    "torch.nn.functional.leaky_relu(a, 0.2)", "d leaky_relu(a)/da = 1 if a > 0 else slope")


# ------------------------------------------------------------------ softplus
def _softplus(x, beta, threshold):
    bx = x * beta
    return np.where(bx > threshold, x, np.log1p(np.exp(np.minimum(bx, threshold))) / beta)


def _softplus_d(x, beta, threshold):
    bx = x * beta
    return np.where(bx > threshold, 1.0, _sig(np.minimum(bx, threshold)))


def _softplus_d2(x: Tensor, beta, threshold):
    from .elementwise import where

    s = (x * beta).sigmoid()
    return where(x * beta > threshold, 0.0, beta * s * (1 - s))


SOFTPLUS, SOFTPLUS_BACKWARD = _pointwise(
    "softplus", "SoftplusBackward0", _softplus, _softplus_d, _softplus_d2,
    "torch.nn.functional.softplus(a)", "d softplus(a)/da = sigmoid(beta a)")


# ------------------------------------------------------------------ hardtanh
HARDTANH, HARDTANH_BACKWARD = _pointwise(
    "hardtanh", "HardtanhBackward0", lambda x, lo, hi: np.clip(x, lo, hi),
    lambda x, lo, hi: (x > lo) & (x < hi),
    None,
    "torch.nn.functional.hardtanh(a, -0.5, 0.5)", "d hardtanh(a)/da = 1 inside (min, max)")


# ------------------------------------------------------------------ entry points
def _float_input(input, name: str) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input._data.dtype.kind not in "fV":
        from ..tensor import _type_word

        kernel = {"gelu": "GeluKernelImpl", "silu": "silu", "elu": "elu",
                  "leaky_relu": "leaky_relu", "softplus": "softplus",
                  "hardtanh": "clamp_scalar_cpu"}.get(name, name)
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_word(input.dtype)}\'')
    return input


def _apply(op, input, meta, inplace: bool):
    if inplace:
        return input._apply_inplace(lambda old: run_unary(op, old, meta))
    return run_unary(op, input, meta)


@public("torch.nn.functional.gelu")
def gelu(input, approximate: str = "none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return run_unary(GELU, _float_input(input, "gelu"), (approximate,))


@public("torch.nn.functional.silu")
def silu(input, inplace: bool = False):
    # (PyTorch's kernel takes complex input too, x / (1 + exp(-x)); its autograd refuses
    # a complex result, as the op table does for an op outside complex.HOLOMORPHIC)
    if not (isinstance(input, Tensor) and input._data.dtype.kind == "c"):
        _float_input(input, "silu")
    return _apply(SILU, input, (), inplace)


@public("torch.nn.functional.elu")
def elu(input, alpha: float = 1.0, inplace: bool = False):
    return _apply(ELU, _float_input(input, "elu"), (alpha, 1.0, 1.0), inplace)


@public("torch.nn.functional.elu_")
def elu_(input, alpha: float = 1.0):
    return elu(input, alpha, True)


@public("torch.nn.functional.leaky_relu")
def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    return _apply(LEAKY_RELU, _float_input(input, "leaky_relu"), (negative_slope,), inplace)


@public("torch.nn.functional.leaky_relu_")
def leaky_relu_(input, negative_slope: float = 0.01):
    return leaky_relu(input, negative_slope, True)


@public("torch.nn.functional.softplus")
def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    return run_unary(SOFTPLUS, _float_input(input, "softplus"), (beta, threshold))


@public("torch.nn.functional.hardtanh")
def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if isinstance(input, Tensor) and input._data.dtype.kind in "iub":
        return _integer_hardtanh(input, min_val, max_val, inplace)
    return keep_given(_apply(HARDTANH, _float_input(input, "hardtanh"), (min_val, max_val), inplace),
                      HARDTANH, min_val, max_val)


def _integer_hardtanh(input, min_val, max_val, inplace: bool):
    """PyTorch's integer hardtanh: a clamp to the limits truncated to integers (no
    gradient: an integer tensor has none); bool and negative limits of an unsigned type
    are refused."""
    d = input._data
    if d.dtype.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if d.dtype.kind == "u" and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    clipped = np.clip(d, math.trunc(min_val), math.trunc(max_val)).astype(d.dtype)
    if inplace:
        return input.copy_(make(clipped))
    return make(clipped)


@public("torch.nn.functional.hardtanh_")
def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    return hardtanh(input, min_val, max_val, True)


@public("torch.nn.functional.relu6")
def relu6(input, inplace: bool = False):
    return keep_given(hardtanh(input, 0.0, 6.0, inplace), HARDTANH, 0, 6)  # (PyTorch's ints)
