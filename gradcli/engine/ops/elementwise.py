"""Elementwise ops: arithmetic, unary math, comparisons, where/clamp/maximum.

Each op is one `defop` entry; the functions below only turn user arguments
(Tensors, Python scalars, dtype promotion) into a `run_op` call.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..grad_mode import GRAD_MODE
from ..kernels.fma import fused_minus_product32
from ..kernels.sleef import power as _float_power
from ..kernels.sleef import rounded_once, sigmoid32
from ..node import keep_index_inputs, packs_index_first
from ..parallel import split_elementwise
from ..tensor import Tensor, make
from .registry import PUBLIC, defop, no_derivative, run_op, run_scalar, run_unary

# ----------------------------------------------------------------- helpers


def _zero_like(g):
    """A piecewise-constant op's gradient: zeros, as PyTorch's zeros_like(grad) (not g * 0,
    which is nan where g is inf or nan and records a MulBackward0 under create_graph)."""
    return make(np.zeros(g._data.shape, g._data.dtype))


def _power(a, b):
    """a ** b; integers to negative integer powers as PyTorch computes them (1, -1 or 0)."""
    if not (isinstance(b, np.ndarray) and b.dtype.kind in "iu" and np.result_type(a, b).kind in "iu"
            and (b < 0).any()):
        return _float_power(a, b)
    a = np.asarray(a, dtype=np.result_type(a, b))
    neg = b < 0
    out = np.power(a, np.where(neg, 0, b))
    odd = (b % 2) != 0
    special = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(neg, special, out).astype(out.dtype)


def _simd_positions(out_shape, operands, block: int):
    """Where PyTorch's CPU kernels run their vectorized code: in blocks of `block` elements
    along the innermost coalesced dimension (contiguous operands, broadcasting by stride 0);
    the rest of each row, the tail, runs the scalar code. None when nothing is vectorized."""
    dims = [d for d, n in enumerate(out_shape) if n != 1]
    if not dims:
        return None
    strides = []
    for x in operands:
        shp = np.shape(x)
        shp = (1,) * (len(out_shape) - len(shp)) + tuple(shp)
        st, acc = {}, 1
        for d in range(len(out_shape) - 1, -1, -1):
            st[d] = acc if shp[d] != 1 else 0
            acc *= shp[d]
        strides.append(st)
    inner = dims[-1]
    length = out_shape[inner]
    base = [st[inner] for st in strides]
    for d in reversed(dims[:-1]):  # coalesce outward while every operand stays in step
        if any(st[d] != b * length for st, b in zip(strides, base)):
            break
        length *= out_shape[d]
    vec = length - length % block
    if not vec:
        return None
    return (np.arange(int(np.prod(out_shape))) % length < vec).reshape(out_shape)


def _fmod(a, b):
    """std::fmod; where PyTorch's vectorized kernel (SLEEF) runs, a quotient a/b that
    overflows gives nan (fmod(1., 1e-45) is nan in a float32 tensor of 16 or more)."""
    out = np.fmod(a, b)
    if out.dtype.kind in "fV" and out.ndim:
        with np.errstate(all="ignore"):
            big = np.isinf(np.true_divide(a, b)) & np.isfinite(a) & (np.asarray(b) != 0)
        if big.any():
            where = _simd_positions(out.shape, (a, b), 64 // out.dtype.itemsize)
            if where is not None:
                out = np.where(big & where, np.nan, out).astype(out.dtype, copy=False)
    return out


def _mod(a, b):
    """PyTorch's remainder: the sign of the divisor; floats via fmod, keeping fmod's zero."""
    if np.result_type(a, b).kind not in "fV":
        return np.mod(a, b)
    mod = _fmod(a, b)
    fix = (mod != 0) & ((b < 0) != (mod < 0))
    return np.where(fix, mod + b, mod)


def _where(cond, a, b):
    return where(cond, a, b)


TANH_BY_EXP_FROM = 1.0  # |x| from which a large array's tanh comes from exp
TANH_BY_EXP_MIN_SIZE = 4096  # elements


def _tanh_by_exp(x, out=None):
    """tanh of a float64 array: 1 - 2/(1 + exp(2|x|)) with the sign of x, where
    |x| >= TANH_BY_EXP_FROM; numpy's tanh below that, where 1 - ... would cancel.

    numpy's float64 tanh is scalar code (~14 ns an element here); its exp takes ~5 ns,
    and the formula stays within 0.96 ulp of the true value on [1, 2) and 0.56 ulp
    beyond (numpy's tanh: 0.78 and 0.86; PyTorch's SLEEF: 1 ulp). When one element in
    eight or more of a (strided) sample lies below 1, numpy's tanh does the whole
    piece: the formula would be computed for nothing there. So a value can differ by
    an ulp with its neighbours, as PyTorch's differ between its vector body and its
    scalar tail; a split array still gives the same bits, since the pieces of a split
    are whole chunks (engine/parallel.py)."""
    sample = x[::16]
    if np.count_nonzero(np.abs(sample) < TANH_BY_EXP_FROM) * 8 > sample.size:
        return np.tanh(x, out=out)
    r = np.abs(x, out=np.empty(x.shape, x.dtype) if out is None else out)  # C order:
    flat_r, flat_x = r.reshape(-1), x.reshape(-1)  # flat_r is a view, in x's C order
    small = np.flatnonzero(flat_r < TANH_BY_EXP_FROM)
    np.add(r, r, out=r)
    np.exp(r, out=r)  # inf past |x| = 354.9: the result is then 1, as it should be
    r += 1.0
    np.divide(2.0, r, out=r)
    np.subtract(1.0, r, out=r)
    np.copysign(r, x, out=r)
    if small.size:
        flat_r[small] = np.tanh(flat_x[small])
    return r


_tanh_by_exp_split = split_elementwise(_tanh_by_exp)


def _tanh64(a):
    """Small arrays take numpy's tanh whole: the formula's calls cost more there."""
    if type(a) is np.ndarray and a.size >= TANH_BY_EXP_MIN_SIZE and a.dtype == np.float64:
        with np.errstate(over="ignore"):
            return _tanh_by_exp_split(a)
    return np.tanh(a)


# (not log: its float32 kernel in PyTorch rounds log(float32(e)) to 1, as numpy's does)
# The costly math kernels run on every core for large arrays (see engine/parallel.py).
_exp, _sin, _cos = (rounded_once(split_elementwise(f)) for f in (np.exp, np.sin, np.cos))
# float32 torch.tanh is MKL's vmsTanh (PyTorch's MKL builds), not SLEEF's tanh: rounding
# float64's once matches it more often (kernels/sleef.py, vec_tanh32)
_tanh = rounded_once(_tanh64)
_log, _tan = split_elementwise(np.log), split_elementwise(np.tan)
# log computed in float64, rounded once for float32: closer to MKL's vsLn, which PyTorch's
# log_ calls for contiguous float32 tensors (logsumexp), than numpy's float32 log
log_rounded_once = rounded_once(_log)


# ------------------------------------------------------------ the op table
# Binary arithmetic: inputs (a, b), either may be a Python scalar.
ADD = defop("add", "AddBackward0", np.add, lambda c, g: (g, g), "d(a+b)/da = 1, d(a+b)/db = 1",
            broadcast=True, torch_call="a + b")
ADD_ALPHA = defop("add_alpha", "AddBackward0", lambda a, b, alpha: a + b * alpha,
                  lambda c, g: (g, g * c.meta[0]), "d(a+alpha*b)/da = 1, d(a+alpha*b)/db = alpha",
                  broadcast=True, torch_call="torch.add(a, b, alpha=2.5)")
SUB = defop("sub", "SubBackward0", np.subtract, lambda c, g: (g, -g), "d(a-b)/da = 1, d(a-b)/db = -1",
            broadcast=True, torch_call="a - b")
SUB_ALPHA = defop("sub_alpha", "SubBackward0", lambda a, b, alpha: a - b * alpha,
                  lambda c, g: (g, -g * c.meta[0]), "d(a-alpha*b)/da = 1, d(a-alpha*b)/db = -alpha",
                  broadcast=True, torch_call="torch.sub(a, b, alpha=2.5)")
RSUB = defop("rsub", "RsubBackward1", lambda a, s: s - a, lambda c, g: (-g,), "d(s-a)/da = -1",
             torch_call="2.5 - a")
RSUB_ALPHA = defop("rsub_alpha", "RsubBackward1", lambda a, s, alpha: s - a * alpha,
                   lambda c, g: (-g * c.meta[1],), "d(s-alpha*a)/da = -alpha",
                   torch_call="torch.rsub(a, 2.5, alpha=2)")
RSUB_TENSOR = defop("rsub_tensor", "RsubBackward0", lambda a, b, alpha: b - a * alpha,
                    lambda c, g: (-g * c.meta[0] if c.meta[0] != 1 else -g, g),
                    "d(b-alpha*a)/da = -alpha, d/db = 1", broadcast=True,
                    torch_call="torch.rsub(a, b)")
MUL = defop("mul", "MulBackward0", np.multiply,
            lambda c, g: (g * c.saved[1] if c.needs(0) else None, g * c.saved[0] if c.needs(1) else None),
            "d(a*b)/da = b, d(a*b)/db = a", save="inputs", broadcast=True, torch_call="a * b",
            save_for=((1,), (0,)), check_order=(1, 0))
DIV = defop("div", "DivBackward0", np.true_divide,
            lambda c, g: (g / c.saved[1] if c.needs(0) else None,
                          -g * ((c.saved[0] / c.saved[1]) / c.saved[1]) if c.needs(1) else None),
            "d(a/b)/da = 1/b, d(a/b)/db = -a/b^2", save="inputs", broadcast=True, torch_call="a / b",
            save_for=((1,), (0, 1)), check_order=(1, 0))
#: the ops elementwise.binary hands a bfloat16 tensor's right-hand number in float32
_NUMBER_IN_FLOAT32 = frozenset((ADD, SUB, MUL, DIV))
NEG = defop("neg", "NegBackward0", np.negative, lambda c, g: (-g,), "d(-a)/da = -1", torch_call="-a")


def _pow_self_grad(g, a, e):
    """PyTorch's pow_backward_self / pow_backward: exponent 0 gives zeros, not g * 0 (nan at inf)."""
    if isinstance(e, Tensor):
        return _where(e == 0, 0.0, g * (e * a ** (e - 1)))
    if e == 0 and type(e) is not bool:  # Scalar(False).equal(0.0) is false in PyTorch
        return make(np.zeros(a._data.shape, a._data.dtype))  # zeros_like(self): no graph
    e = float(e)
    # PyTorch's pow_backward, same grouping (same rounding); its `exponent * ...` multiplies
    # by a Scalar: MulBackward1 under create_graph
    return g * _times(a ** (e - 1), e)


def _pow_exp_grad(g, a, e, result):
    """PyTorch's pow_backward_exponent: d(a^b)/db = a^b * log(a), 0 where a == 0 and b >= 0.

    At a == 0 and b < 0 it is result * log(0) = inf * -inf = -inf, as in PyTorch.
    """
    if type(a) is bool:  # PyTorch's Scalar.log() has no bool case
        raise RuntimeError(
            'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/c10/core/Scalar.cpp":42, please '
            "report a bug to PyTorch. unknown ivalue tag 4")
    if isinstance(a, Tensor):
        if a._data.dtype != result._data.dtype:
            a = a.to(dtypes.FROM_NP[result._data.dtype])
        return g * _where((a == 0).logical_and(e >= 0), 0.0, result * a.log())
    if a == 0:
        return g * _where(e >= 0, 0.0, result * float("-inf"))
    with np.errstate(invalid="ignore"):  # (a backward formula: not an op's quiet forward)
        log_a = float(np.log(a))  # Scalar.log(): nan for a negative base
    return g * (result * log_a)


def _pow_scalar(a, e):
    """a ** e for a number e, with PyTorch's kernels: 0 -> ones, 1 -> a copy, and for floats
    0.5 -> sqrt, -0.5 -> 1/sqrt, -1 -> 1/a, 2 -> a*a, 3 -> a*a*a, -2 -> 1/(a*a)
    (so (-0.) ** -0.5 is -inf and (-inf) ** 0.5 is nan, as in PyTorch)."""
    if e == 0:
        return np.ones_like(a)
    if e == 1:
        return a.copy()
    if a.dtype.kind in "fV":
        if e == 0.5:
            return np.sqrt(a)
        if e == -0.5:
            return 1 / np.sqrt(a)
        if e == -1:
            return 1 / a
        if e == 2:
            return a * a
        if e == 3:
            return a * a * a
        if e == -2:
            return 1 / (a * a)
        out = _float_power(a, a.dtype.type(e))  # PyTorch's vector code: a float32 exponent
        if a.dtype == np.float32 and float(a.dtype.type(e)) != e and a.size:
            # its scalar loop (the tail) raises to the double exponent
            vectorized = _simd_positions(a.shape, (a,), 16)
            exact = _float_power(a, e)
            out = exact if vectorized is None else np.where(vectorized, out, exact)
        return out
    return np.power(a, e)


POW_SCALAR = defop("pow", "PowBackward0", _pow_scalar,
                   lambda c, g: (_pow_self_grad(g, c.saved[0], c.meta[0]),),
                   "d(a^n)/da = n*a^(n-1)", save="inputs", torch_call="a ** 2.5", domain="positive")
POW_TENSOR = defop("pow_tensor", "PowBackward1", _power,
                   lambda c, g: (_pow_self_grad(g, c.saved[0], c.saved[1]) if c.needs(0) else None,
                                 _pow_exp_grad(g, c.saved[0], c.saved[1], c.result)
                                 if c.needs(1) else None),
                   "d(a^b)/da = b*a^(b-1), d(a^b)/db = a^b*log(a)", save="inputs result",
                   broadcast=True, torch_call="a ** b", domain="positive", check_order=(1, 0, 2))
# PyTorch saves the exponent (and the result) for s ** a: modifying a in place then raises
RPOW = defop("rpow", "PowBackward2", lambda a, s: _power(s, a),
             lambda c, g: (_pow_exp_grad(g, c.meta[0], c.saved[0], c.result),),
             "d(s^a)/da = s^a*log(s)", save="inputs result", torch_call="2.5 ** a")

EXP = defop("exp", "ExpBackward0", _exp, lambda c, g: (g * c.result,), "d(exp a)/da = exp a",
            save="result", torch_call="a.exp()")
LOG = defop("log", "LogBackward0", _log, lambda c, g: (g / c.saved[0],), "d(log a)/da = 1/a",
            save="inputs", torch_call="a.log()", domain="positive")
_HALF_TINY = {np.dtype(np.float32): 2.0 ** -125, np.dtype(np.float64): 2.0 ** -1021}


def _log1p(a, out=None):
    """log1p as PyTorch's CPU kernel (SLEEF) computes it: for |a| so small that a/2 is
    subnormal, the result is 2 * (a/2 rounded), so 1e-45 gives 0 in float32 (not 1.4e-45)."""
    r = rounded_once(np.log1p)(a)
    tiny = _HALF_TINY.get(r.dtype)
    if tiny is not None:
        small = (np.abs(a) < tiny) & (a != 0)
        if small.any():
            half = (a * r.dtype.type(0.5)) * r.dtype.type(2) + r.dtype.type(0)
            r = np.where(small, half, r)
    if out is None:
        return r
    out[...] = r
    return out


LOG1P = defop("log1p", "Log1PBackward0", split_elementwise(_log1p),
              lambda c, g: (g / (c.saved[0] + 1),),
              "d(log(1+a))/da = 1/(1+a)", save="inputs", torch_call="a.log1p()",
              domain="positive")
SQRT = defop("sqrt", "SqrtBackward0", np.sqrt, lambda c, g: (g / (c.result * 2),),
             "d(sqrt a)/da = 1/(2 sqrt a)", save="result", torch_call="a.sqrt()",
             domain="positive")
RSQRT = defop("rsqrt", "RsqrtBackward0", lambda a: 1 / np.sqrt(a),
              lambda c, g: (-0.5 * g * c.result ** 3,), "d(a^-1/2)/da = -1/2 a^-3/2",
              save="result", torch_call="a.rsqrt()", domain="positive")
def _times_fresh(g: Tensor, fresh: Tensor) -> Tensor:
    """g * fresh, where `fresh` was just made by the calling formula and nothing else holds
    it: without a graph to record, the product goes into fresh's buffer (the same ufunc
    and values, one array less at the peak of a long backward)."""
    f, gd = fresh._data, g._data
    if (GRAD_MODE.enabled or type(f) is not np.ndarray or f.shape != gd.shape
            or f.dtype != gd.dtype):
        return g * fresh
    return make(np.multiply(gd, f, out=f))


SIN = defop("sin", "SinBackward0", _sin, lambda c, g: (_times_fresh(g, c.saved[0].cos()),),
            "d(sin a)/da = cos a", save="inputs", torch_call="a.sin()")
COS = defop("cos", "CosBackward0", _cos, lambda c, g: (_times_fresh(-g, c.saved[0].sin()),),
            "d(cos a)/da = -sin a", save="inputs", torch_call="a.cos()")
TAN = defop("tan", "TanBackward0", _tan, lambda c, g: (g * (1 + c.result * c.result),),
            "d(tan a)/da = 1 + tan^2 a", save="result", torch_call="a.tan()",
            domain="small")


def _mul_scalar_fwd(a, s):
    out = a * s
    return out if out.dtype == a.dtype else out.astype(a.dtype)


# tensor * Python number inside PyTorch's C++ formulas: MulBackward1 (the Python operator
# makes a MulBackward0); std/var's backward use it
MUL_SCALAR = defop("mul_scalar", "MulBackward1", _mul_scalar_fwd,
                   lambda c, g: (run_op(MUL_SCALAR, (g,), c.meta),), "d(a*s)/da = s",
                   torch_call="torch.enable_grad()(lambda a: torch.autograd.grad("
                              "a.std(), a, create_graph=True)[0] * a * a)(a)")


def _add_scalar_fwd(a, s):
    out = a + s
    return out if out.dtype == a.dtype else out.astype(a.dtype)


# tensor + Python number inside PyTorch's C++ formulas (sigmoid's and binary_cross_entropy's
# double backward): AddBackward1
ADD_SCALAR = defop("add_scalar", "AddBackward1", _add_scalar_fwd, lambda c, g: (g,), "d(a+s)/da = 1",
                   torch_call="torch.enable_grad()(lambda a: torch.autograd.grad(torch.autograd.grad("
                              "a.sigmoid(), a, a * 0.5 + 1, create_graph=True)[0] * a, a, a, "
                              "create_graph=True)[0])(a)")


def _div_scalar_fwd(a, s):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = a / s
    return out if out.dtype == a.dtype else out.astype(a.dtype)


# tensor / Python number inside PyTorch's C++ formulas (mean's backward, cross_entropy with
# class probabilities): DivBackward1
DIV_SCALAR = defop("div_scalar", "DivBackward1", _div_scalar_fwd,
                   lambda c, g: (run_op(DIV_SCALAR, (g,), c.meta),), "d(a/s)/da = 1/s",
                   # times a.sum(): cross_entropy alone is shift-invariant, so the sum of
                   # its gradient is rounding noise (the fuzzer's create_graph scenario)
                   torch_call="torch.nn.functional.cross_entropy(a.reshape(1, -1), "
                              "torch.ones_like(a.reshape(1, -1)) / a.numel()) * a.sum()")


def _times(t, s):
    """t * s for a Python number inside PyTorch's C++ formulas: MulBackward1."""
    return run_op(MUL_SCALAR, (t,), (s,))


def _plus(t, s):
    """t + s for a Python number inside PyTorch's C++ formulas: AddBackward1."""
    return run_op(ADD_SCALAR, (t,), (s,))


TANH = defop("tanh", "TanhBackward0", _tanh,
             lambda c, g: (run_op(TANH_BACKWARD, (g, c.result)),),
             "d(tanh a)/da = 1 - tanh^2 a", save="result", torch_call="a.tanh()")
# tanh's backward as an op of its own (PyTorch's tanh_backward), so the gradient graph
# under create_graph has TanhBackwardBackward0 nodes: d/dg = tanh_backward, d/dy = -2 y g
def _tanh_backward(g, y):
    """g * (1 - y*y) as PyTorch's kernel gives it: its compiler fuses 1 - y*y into one
    multiply-add, rounded once (fused_minus_product32 for float32: PyTorch's bits on every
    element tried, where two float32 roundings differed on ~30%). float64 keeps the two
    roundings (numpy has no fused multiply-add). One buffer when g matches y's shape and
    dtype (the same values as separate ufunc calls: only the allocations go)."""
    if type(y) is np.ndarray and y.dtype == np.float32:
        t = fused_minus_product32(1.0, y, y)
    else:
        t = y * y
        if type(t) is not np.ndarray:  # 0-d: numpy gives a scalar
            return g * (1 - t)
        np.subtract(1, t, out=t)
    if type(g) is np.ndarray and g.shape == t.shape and g.dtype == t.dtype:
        return np.multiply(g, t, out=t)
    return g * t


TANH_BACKWARD = defop(
    "tanh_backward", "TanhBackwardBackward0", lambda g, y: _tanh_backward(g, y),
    lambda c, gg: (run_op(TANH_BACKWARD, (gg, c.saved[1])) if c.needs(0) else None,
                   gg * (_times(c.saved[1], -2) * c.saved[0]) if c.needs(1) else None),
    "d[g(1 - y^2)]/dg = 1 - y^2, /dy = -2 y g", save="inputs", broadcast=True,
    torch_call="torch.enable_grad()(lambda a: torch.autograd.grad("
               "a.tanh(), a, a * 0.5 + 1, create_graph=True)[0])(a)")


def _sigmoid(a, out=None):
    """1 / (1 + exp(-a)), into `out` when given (the same operations, in place)."""
    with np.errstate(over="ignore"):
        if out is None:
            return 1 / (1 + np.exp(-a))
        np.negative(a, out=out)
        np.exp(out, out=out)
        out += 1
        return np.divide(1, out, out=out)


_sigmoid_split = split_elementwise(_sigmoid)


def _sigmoid_forward(a):
    """Small float32 tensors get PyTorch's bits (kernels/sleef.py: sigmoid32)."""
    out = sigmoid32(a)
    return _sigmoid_split(a) if out is None else out


SIGMOID = defop("sigmoid", "SigmoidBackward0", _sigmoid_forward,
                lambda c, g: (run_op(SIGMOID_BACKWARD, (g, c.result)),), "d(sigmoid a)/da = s*(1-s)",
                save="result", torch_call="a.sigmoid()")
# PyTorch's sigmoid_backward as an op (SigmoidBackwardBackward0): d/dg = sigmoid_backward,
# d/dy = gg * g * (1 - 2y)
SIGMOID_BACKWARD = defop(
    "sigmoid_backward", "SigmoidBackwardBackward0", lambda g, y: g * (1 - y) * y,
    lambda c, gg: (run_op(SIGMOID_BACKWARD, (gg, c.saved[1])) if c.needs(0) else None,
                   (gg * c.saved[0]) * _plus(_times(c.saved[1], -2), 1) if c.needs(1) else None),
    "d[g(1 - y)y]/dg = (1 - y)y, /dy = g(1 - 2y)", save="inputs", broadcast=True,
    torch_call="torch.enable_grad()(lambda a: torch.autograd.grad("
               "a.sigmoid(), a, a * 0.5 + 1, create_graph=True)[0])(a)")
RELU = defop("relu", "ReluBackward0", lambda a: np.where(a < 0, 0, a).astype(a.dtype, copy=False),
             lambda c, g: (run_op(THRESHOLD_BACKWARD, (g, c.result), (0,)),),
             "d(relu a)/da = 1 if a > 0 else 0", save="result", torch_call="a.relu()")
# PyTorch's threshold_backward(g, x, t) as an op (ThresholdBackwardBackward0): g where
# x > t, else 0; d/dg = threshold_backward again, d/dx = 0
THRESHOLD_BACKWARD = defop(
    "threshold_backward", "ThresholdBackwardBackward0",
    lambda g, x, t: np.where(x <= t, 0, g).astype(g.dtype, copy=False),
    lambda c, gg: (run_op(THRESHOLD_BACKWARD, (gg, c.saved[1]), c.meta) if c.needs(0) else None,
                   make(np.zeros_like(gg._data)) if c.needs(1) else None),
    "d threshold_backward(g, x)/dg = 1 where x > t, /dx = 0", save="inputs", broadcast=True,
    torch_call="torch.enable_grad()(lambda a: torch.autograd.grad("
               "a.relu(), a, a * 0.5 + 1, create_graph=True)[0])(a)")
ABS = defop("abs", "AbsBackward0", np.abs, lambda c, g: (g * c.saved[0].sgn(),),
            "d|a|/da = sgn(a) (PyTorch's formula: SgnBackward0 under create_graph)", save="inputs", torch_call="a.abs()")
def _sign(a):
    return (a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)  # sign(nan) = 0, sign(-0.) = 0.


SIGN = defop("sign", "SignBackward0", _sign, lambda c, g: (_zero_like(g),), "d sign(a)/da = 0",
             torch_call="a.sign()")
RECIPROCAL = defop("reciprocal", "ReciprocalBackward0", lambda a: 1 / a,
                   lambda c, g: (-g * (c.result * c.result),), "d(1/a)/da = -1/a^2",
                   save="result", torch_call="a.reciprocal()")


def _clamp_fwd(a, lo, hi):
    # PyTorch's comparisons: nan stays nan, and -0. stays -0. against a bound of 0;
    # a nan bound makes every element nan (its kernel's min/max propagate nan)
    if (lo is not None and lo != lo) or (hi is not None and hi != hi):
        return np.full_like(a, np.nan)
    out = a
    if lo is not None:
        out = np.where(out < lo, lo, out)
    if hi is not None:
        out = np.where(out > hi, hi, out)
    if out is a:
        out = a.copy()
    return out.astype(a.dtype, copy=False)


def _clamp_mask(a, lo, hi):
    mask = None
    if lo is not None:
        mask = a >= lo
    if hi is not None:
        upper = a <= hi
        mask = upper if mask is None else mask.logical_and(upper)
    return mask


CLAMP = defop("clamp", "ClampBackward1", _clamp_fwd,
              lambda c, g: (_where(_clamp_mask(c.saved[0], *c.meta), g, 0.0),),
              "d clamp(a)/da = 1 inside [min, max], else 0", save="inputs", torch_call="a.clamp(-0.5, 0.5)")
CLAMP_MIN = defop("clamp_min", "ClampMinBackward0", lambda a, lo: _clamp_fwd(a, lo, None),
                  lambda c, g: (_where(c.saved[0] >= c.meta[0], g, 0.0),),
                  "d clamp_min(a)/da = 1 where a >= min", save="inputs", torch_call="a.clamp_min(0.1)")
CLAMP_MAX = defop("clamp_max", "ClampMaxBackward0", lambda a, hi: _clamp_fwd(a, None, hi),
                  lambda c, g: (_where(c.saved[0] <= c.meta[0], g, 0.0),),
                  "d clamp_max(a)/da = 1 where a <= max", save="inputs", torch_call="a.clamp_max(0.1)")


def _clamp_bound_fwd(a, bound, pick):
    """clamp_min/clamp_max with a tensor bound: numpy's maximum/minimum propagate nan from
    either side, as PyTorch's kernels do."""
    return pick(a, bound)


def _keep_unless(a, bound, beyond):
    """a, or the bound where a is beyond it or the bound is nan: PyTorch's element kernel
    keeps a when a equals the bound (clamp_min(0., -0.) is 0.; np.maximum gives -0.)."""
    out = np.where(beyond(a, bound) | np.isnan(bound), bound, a)
    return out.astype(np.result_type(a, bound), copy=False)


CLAMP_MIN_TENSOR = defop(
    "clamp_min_tensor", "ClampMinBackward1", lambda a, lo: _keep_unless(a, lo, np.less),
    lambda c, g: (_where(c.saved[0] >= c.saved[1], g, 0.0) if c.needs(0) else None,
                  _where(c.saved[0] < c.saved[1], g, 0.0) if c.needs(1) else None),
    "d clamp_min(a, m)/da = 1 where a >= m, d/dm = 1 where a < m", save="inputs",
    broadcast=True, torch_call="torch.clamp_min(a, b)", check_order=(1, 0))
CLAMP_MAX_TENSOR = defop(
    "clamp_max_tensor", "ClampMaxBackward1", lambda a, hi: _keep_unless(a, hi, np.greater),
    lambda c, g: (_where(c.saved[0] <= c.saved[1], g, 0.0) if c.needs(0) else None,
                  _where(c.saved[0] > c.saved[1], g, 0.0) if c.needs(1) else None),
    "d clamp_max(a, m)/da = 1 where a <= m, d/dm = 1 where a > m", save="inputs",
    broadcast=True, torch_call="torch.clamp_max(a, b)", check_order=(1, 0))


def _clamp_t_fwd(a, lo, hi):
    """clamp with tensor bounds (either may be None): nan where a or a given bound is nan."""
    out = a
    if lo is not None:
        out = np.where(out < lo, lo, out)
    if hi is not None:
        out = np.where(out > hi, hi, out)
    if out.dtype.kind in "fV":
        for bound in (lo, hi):
            if bound is not None:
                out = np.where(np.isnan(bound), bound, out)
    if out is a:
        out = a.copy()
    return out.astype(a.dtype, copy=False)


def _clamp_t_grads(c, g):
    """PyTorch's clamp_backward and clamp_backward_min_max (a bound may be None)."""
    a, lo, hi = c.saved
    if lo is not None and hi is not None:
        ga = _where((a >= lo).logical_and(a <= hi), g, 0.0) if c.needs(0) else None
        glo = _where((a < lo).logical_and(lo < hi), g, 0.0) if c.needs(1) else None
        ghi = _where((a > hi).logical_or(hi < lo), g, 0.0) if c.needs(2) else None
        return ga, glo, ghi
    if lo is not None:
        return (_where(a >= lo, g, 0.0) if c.needs(0) else None,
                _where(a < lo, g, 0.0) if c.needs(1) else None, None)
    return (_where(a <= hi, g, 0.0) if c.needs(0) else None, None,
            _where(a > hi, g, 0.0) if c.needs(2) else None)


CLAMP_TENSOR = defop(
    "clamp_tensor", "ClampBackward0", _clamp_t_fwd, _clamp_t_grads,
    "d clamp(a, lo, hi) = 1 inside, to lo below, to hi above", save="inputs", broadcast=True,
    torch_call="torch.clamp(a, min=b)", check_order=(2, 1, 0))


def _max_min_grads(c, g, self_loses):
    a, b = c.saved
    tie = a == b
    half = g / 2
    ga = _where(self_loses(a, b), 0.0, _where(tie, half, g)) if c.needs(0) else None
    gb = _where(self_loses(b, a), 0.0, _where(tie, half, g)) if c.needs(1) else None
    return ga, gb


def _maximum(a, b):
    """PyTorch's maximum: the first argument at ties (-0. vs 0.), nan from either side."""
    out = np.where(np.less(a, b), b, a)
    return np.where(np.isnan(b), b, out) if out.dtype.kind in "fV" else out


def _minimum(a, b):
    out = np.where(np.greater(a, b), b, a)
    return np.where(np.isnan(b), b, out) if out.dtype.kind in "fV" else out


MAXIMUM = defop("maximum", "MaximumBackward0", _maximum,
                lambda c, g: _max_min_grads(c, g, lambda x, y: x < y),
                "d max(a,b)/da = 1 where a > b (1/2 at ties)", save="inputs", broadcast=True,
                torch_call="torch.maximum(a, b)", check_order=(1, 0))
MINIMUM = defop("minimum", "MinimumBackward0", _minimum,
                lambda c, g: _max_min_grads(c, g, lambda x, y: x > y),
                "d min(a,b)/da = 1 where a < b (1/2 at ties)", save="inputs", broadcast=True,
                torch_call="torch.minimum(a, b)", check_order=(1, 0))
WHERE = defop("where", "WhereBackward0", lambda a, b, cond: np.where(cond, a, b),
              lambda c, g: (_where(c.meta_tensor(0), g, 0.0) if c.needs(0) else None,
                            _where(c.meta_tensor(0), 0.0, g) if c.needs(1) else None),
              "d where(c,a,b)/da = c, d/db = not c", broadcast=True, save="meta",
              torch_call="torch.where(a > 0, a, b)")
packs_index_first(WHERE)  # (WhereBackward0 saves the condition first)


def _floor_div(a, b):
    """PyTorch's div(rounding_mode="floor"): floats as numpy's floor_divide (a/b at b == 0)."""
    return np.floor_divide(a, b)


def _trunc_div(a, b):
    """PyTorch's div(rounding_mode="trunc"): trunc(a / b) for floats, exact for integers."""
    if np.result_type(a, b).kind in "fV":
        return np.trunc(np.true_divide(a, b))
    q = np.floor_divide(a, b)
    # round towards zero: floor is one too low where the division is inexact and signs differ
    return np.where((q * b != a) & ((np.asarray(a) < 0) != (np.asarray(b) < 0)), q + 1, q).astype(q.dtype)


def _rounded_div(a, b, mode):
    if mode is None:
        return np.true_divide(a, b)
    return _floor_div(a, b) if mode == "floor" else _trunc_div(a, b)


def _zeros_of(g):
    """A gradient of zeros (PyTorch's grad.new_zeros: no graph, zero even where g is inf/nan)."""
    return make(np.zeros(g._data.shape, g._data.dtype))


def _div_mode_grads(c, g):
    if c.meta[0] is None:  # rounding_mode=None given explicitly: true division's gradients
        return DIV.backward(c, g)
    return (_zeros_of(g) if c.needs(0) else None, _zeros_of(g) if c.needs(1) else None)


# div(a, b, rounding_mode=...): PyTorch saves a and b as for true division (so modifying
# them, or a second backward, raises) though a rounded quotient's gradients are zeros
DIV_MODE = defop("div_mode", "DivBackward2", _rounded_div, _div_mode_grads,
                 "d div(a, b, rounding_mode)/da = 0, d/db = 0", save="inputs", broadcast=True,
                 torch_call="torch.div(a, b, rounding_mode='floor')", save_for=((1,), (0, 1)))
# Like PyTorch, remainder and fmod save a and b only when b's gradient is needed (it reads
# them): with b not requiring grad nothing is saved, so modifying a in place or a second
# backward is fine. That variant is its own entry (same node class) that saves nothing.
REMAINDER = defop("remainder", "RemainderBackward1", _mod,
                  lambda c, g: (g, -g * div(c.saved[0], c.saved[1], rounding_mode="floor")
                                if c.needs(1) else None),
                  "d(a mod b)/da = 1, d/db = -floor(a/b)", save="inputs", broadcast=True,
                  torch_call="torch.remainder(a, b)", check_order=(1, 0))
REMAINDER_SELF = defop("remainder_self", "RemainderBackward1", _mod, lambda c, g: (g, None),
                       "d(a mod b)/da = 1 (b needs no gradient: nothing saved)", broadcast=True,
                       torch_call="torch.remainder(a, torch.full_like(b, 1.5))")
REMAINDER_SCALAR = defop("remainder_scalar", "RemainderBackward0", _mod,
                         lambda c, g: (g,), "d(a mod s)/da = 1", broadcast=True,
                         torch_call="torch.remainder(a, 1.5)")
RREMAINDER = defop("rremainder", "NotImplemented", _mod,
                   no_derivative("remainder"), broadcast=True, torch_call="2.5 % a")


FMOD = defop("fmod", "FmodBackward1", _fmod,
             lambda c, g: (g, -g * div(c.saved[0], c.saved[1], rounding_mode="trunc")
                           if c.needs(1) else None),
             "d fmod(a, b)/da = 1, d/db = -trunc(a/b)", save="inputs", broadcast=True,
             torch_call="torch.fmod(a, b)", check_order=(1, 0))
FMOD_SELF = defop("fmod_self", "FmodBackward1", _fmod, lambda c, g: (g, None),
                  "d fmod(a, b)/da = 1 (b needs no gradient: nothing saved)", broadcast=True,
                  torch_call="torch.fmod(a, torch.full_like(b, 1.5))")
FMOD_SCALAR = defop("fmod_scalar", "FmodBackward0", _fmod, lambda c, g: (g,), "d fmod(a, s)/da = 1",
                    broadcast=True, torch_call="torch.fmod(a, 1.5)")
FLOOR_DIVIDE = defop("floor_divide", "NotImplemented", lambda a, b: np.floor_divide(a, b),
                     no_derivative("floor_divide"), broadcast=True, torch_call="a // b")
FLOOR = defop("floor", "FloorBackward0", np.floor, lambda c, g: (_zero_like(g),), "d floor(a)/da = 0",
              torch_call="a.floor()")
CEIL = defop("ceil", "CeilBackward0", np.ceil, lambda c, g: (_zero_like(g),), "d ceil(a)/da = 0",
             torch_call="a.ceil()")
ROUND = defop("round", "RoundBackward0", np.round, lambda c, g: (_zero_like(g),), "d round(a)/da = 0",
              torch_call="a.round()")


def _round_decimals(a, decimals):
    """PyTorch's round.decimals: nearbyint(a * 10^d) / 10^d, or for d < 0
    nearbyint(a / 10^-d) * 10^-d, with the power in a's dtype."""
    ten = a.dtype.type(10.0 ** (-decimals if decimals < 0 else decimals))
    if decimals < 0:
        return np.rint(a / ten) * ten
    return np.rint(a * ten) / ten


ROUND_DECIMALS = defop("round_decimals", "RoundBackward1", _round_decimals,
                       lambda c, g: (_zero_like(g),), "d round(a, decimals)/da = 0",
                       torch_call="a.round(decimals=2)")
TRUNC = defop("trunc", "TruncBackward0", np.trunc, lambda c, g: (_zero_like(g),), "d trunc(a)/da = 0",
              torch_call="a.trunc()")

# ------------------------------------------------------------ entry points


def _operand_dtype_cast(a, b, result: dtypes.dtype):
    """numpy operands for a binary op computed in `result` dtype."""
    npdt = result.np
    x = a._data if isinstance(a, Tensor) else a
    y = b._data if isinstance(b, Tensor) else b
    if isinstance(a, Tensor) and x.dtype != npdt:
        x = x.astype(npdt)
    elif not isinstance(a, Tensor):
        x = _scalar_as(x, result)
    if isinstance(b, Tensor) and y.dtype != npdt:
        y = y.astype(npdt)
    elif not isinstance(b, Tensor):
        y = _scalar_as(y, result)
    return x, y


_I64_LO, _I64_HI, _U64_END = -(2 ** 63), 2 ** 63 - 1, 2 ** 64


def _int_arg(value: int) -> int:
    """A Python int as PyTorch's argument parser takes it: an int64, or a uint64 up to 2**64-1."""
    if value < _I64_LO:
        raise OverflowError("can't convert negative int to unsigned")
    if value >= _U64_END:
        raise OverflowError("int too big to convert")
    return value


def _wrap_int(value: int, npdt) -> int:
    """`value` cast to an integer dtype as C does: two's complement, modulo 2**bits."""
    half = 1 << (npdt.itemsize * 8 - 1)
    return (value + half) % (half << 1) - half


def _check_args(*operands, promote: bool = True) -> None:
    """Python ints PyTorch's argument parser rejects before any other check: beyond uint64
    (OverflowError), or a uint64 one (>= 2**63) promoting with bool tensors only."""
    for v in operands:
        if type(v) is int and not _I64_LO <= v <= _I64_HI:
            _int_arg(v)
            if promote and all(t._data.dtype == np.bool_ for t in operands if isinstance(t, Tensor)):
                raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                                   "attempted to promote Bool and UInt64")


def _checked_int(value, d: dtypes.dtype):
    """Ops that convert a number with an overflow check (fill_, masked_fill, where, clamp,
    alpha, an integer exponent): PyTorch's RuntimeError when it does not fit `d`."""
    if type(value) is not int:
        return value
    _int_arg(value)
    if d._category == 0:
        return bool(value)
    if d._category == 1 and _wrap_int(value, d.np) != value:
        name = "int64_t" if d is dtypes.int64 else "int"
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    return value


def _scalar_as(value, d: dtypes.dtype):
    if isinstance(value, np.generic):  # (np.float64 is a float, but numpy keeps its width)
        value = value.item()
    if isinstance(value, bool) and d._category != 0:
        value = int(value)
    elif type(value) is int and not _I64_LO <= value <= _I64_HI:
        _int_arg(value)  # too big for PyTorch at all: OverflowError
        if d._category == 1:  # a uint64 Scalar (2**63 <= value < 2**64) wraps into int64
            value = _wrap_int(value, np.dtype(np.int64))
    if d._category == 3:  # complex: numpy keeps a Python number weak beside the array
        return value
    if d._category == 2:
        if d is dtypes.bfloat16:  # (a Python float would widen ml_dtypes' bfloat16 to float32)
            return np.array(value, d.np)
        return float(value) if not isinstance(value, float) else value
    if d._category == 1 and type(value) is int and d is not dtypes.int64:
        value = _wrap_int(value, d.np)  # C's cast: int32 + 2**40 adds 0, as in PyTorch
    return value


_FLOAT_KINDS = ("f",)


def _python_number(value):
    """A numpy scalar as the Python object it holds (a number: what PyTorch reads it as;
    anything else then falls to NotImplemented); anything else as is."""
    return value.item() if isinstance(value, np.generic) else value


def binary(op, a, b, float_result: bool = False):
    """Run a binary op with PyTorch's type promotion (a or b may be a Python scalar)."""
    if isinstance(b, Tensor) and isinstance(a, Tensor):
        da, db = a._data.dtype, b._data.dtype
        if da == db and (not float_result or da.kind in "fcV") and a._data.ndim and b._data.ndim:
            return run_op(op, (a, b))
    elif isinstance(a, Tensor) and (type(b) is float or (type(b) is int and _I64_LO <= b <= _I64_HI)) \
            and a._data.dtype.kind == "f":
        return run_scalar(op, a, b)
    elif isinstance(b, np.generic) or isinstance(a, np.generic):
        # PyTorch reads a numpy scalar as the Python number it holds (a weak scalar: a
        # float32 tensor times np.sqrt(2.0) stays float32, as in CS231n's random_weight)
        return binary(op, _python_number(a), _python_number(b), float_result)
    elif not isinstance(b, (Tensor, int, float, bool, complex)) or (
            not isinstance(a, (Tensor, int, float, bool, complex))):
        return NotImplemented
    _check_args(a, b)
    result = dtypes.result_type(a, b)
    if float_result and result._category < 2:  # (bool, integers: the default float)
        result = dtypes.get_default_dtype()
    x, y = _operand_dtype_cast(a, b, result)
    if result is dtypes.bfloat16 and op in _NUMBER_IN_FLOAT32 and not isinstance(b, Tensor):
        # PyTorch holds a right-hand number in float32 ("opmath") for a bfloat16 tensor:
        # the op's bfloat16 kernel computes with it in float32 and rounds once
        y = np.array(float(b), np.float32)
    return run_op(op, (a, b), arrays=(x, y))


def _scalar_alpha(alpha, name: str):
    """alpha as PyTorch's argument parser reads a Scalar: a one-element tensor gives its value
    (L-BFGS passes 0-d tensors), any other tensor is a TypeError."""
    if alpha.__class__ is Tensor:
        if alpha._data.size != 1 or alpha._data.ndim:
            raise TypeError(f"{name}(): argument 'alpha' must be Number, not Tensor")
        return alpha._data.item()
    return alpha


def add(input, other, *, alpha=1, out=None):
    if alpha.__class__ is Tensor:
        alpha = _scalar_alpha(alpha, "add")
    if alpha != 1:
        return _with_alpha(ADD_ALPHA, input, other, alpha)
    if not isinstance(input, Tensor):
        input, other = other, input
    return binary(ADD, input, other)


def _bool_sub_check(a, b) -> None:
    ab = a.dtype is dtypes.bool_ if isinstance(a, Tensor) else isinstance(a, bool)
    bb = b.dtype is dtypes.bool_ if isinstance(b, Tensor) else isinstance(b, bool)
    if ab and bb:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead.")
    if ab or bb:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def sub(input, other, *, alpha=1, out=None):
    if alpha.__class__ is Tensor:
        alpha = _scalar_alpha(alpha, "sub")
    if type(other) is int or type(input) is int or type(alpha) is int:
        _check_args(input, other, alpha, promote=False)  # the bool check comes first
    if (other.__class__ is bool or input.__class__ is bool
            or (isinstance(input, Tensor) and input._data.dtype == np.bool_)
            or (isinstance(other, Tensor) and other._data.dtype == np.bool_)):
        _bool_sub_check(input, other)
    if alpha != 1:
        return _with_alpha(SUB_ALPHA, input, other, alpha)
    return binary(SUB, input, other)


def _with_alpha(op, a, b, alpha):
    result = dtypes.result_type(a, b, alpha)
    _checked_int(alpha, result)
    x, y = _operand_dtype_cast(a, b, result)
    return run_op(op, (a, b), (alpha,), arrays=(x, y))


def rsub(input, other, alpha=1):
    """other - alpha * input: RsubBackward0 for a Tensor `other`, RsubBackward1 for a
    Python scalar."""
    other = _python_number(other)
    if isinstance(other, Tensor):
        _check_args(alpha)
        result = dtypes.result_type(input, other, alpha)
        _checked_int(alpha, result)
        x, y = _operand_dtype_cast(input, other, result)
        return run_op(RSUB_TENSOR, (input, other), (alpha,), arrays=(x, y))
    if alpha != 1:
        _check_args(input, other, alpha)
        result = dtypes.result_type(input, other, alpha)
        _checked_int(alpha, result)
        x, y = _operand_dtype_cast(input, other, result)
        return run_unary(RSUB_ALPHA, input, (y, alpha), x)
    _check_args(input, other, promote=False)
    if input._data.dtype == np.bool_ or other.__class__ is bool:
        _bool_sub_check(other, input)
    result = dtypes.result_type(input, other)
    x, y = _operand_dtype_cast(input, other, result)
    return run_unary(RSUB, input, (y,), x)


def mul(input, other):
    if not isinstance(input, Tensor):
        input, other = other, input
    return binary(MUL, input, other)


def _scalar_operator(op, general, ints: bool = True):
    """The operator method (Tensor.__mul__, ...): a float Tensor with a Python float (or an
    int64 int) goes straight to run_scalar, as binary() would send it; the rest to
    `general`. One call less on the hot path of loops (`y = y * 2`), forward and backward."""

    def method(self, other):
        kind = type(other)
        if (kind is float or (ints and kind is int and _I64_LO <= other <= _I64_HI)) \
                and self._data.dtype.kind == "f":
            return run_scalar(op, self, other)
        return general(self, other)

    method.__name__ = f"__{op.name}__"
    return method


_NO_MODE = object()  # div() called without rounding_mode (an explicit None is DivBackward2)


def div(input, other, *, rounding_mode=_NO_MODE):
    if rounding_mode is _NO_MODE:
        if not isinstance(input, Tensor):
            return reciprocal(other) * input
        return binary(DIV, input, other, float_result=True)
    if rounding_mode is None or rounding_mode in ("floor", "trunc"):
        _check_args(input, other)
        result = dtypes.result_type(input, other)
        if rounding_mode is None:
            if result._category != 2:
                result = dtypes.get_default_dtype()
        else:
            _no_bool_kernel(result, f"div_{rounding_mode}_cpu")
        x, y = _operand_dtype_cast(input, other, result)
        if result._category != 2:
            _check_int_zero(y)
        return run_op(DIV_MODE, (input, other), (rounding_mode,), arrays=(x, y))
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'")


def _check_int_zero(y) -> None:
    arr = np.asarray(y)
    if arr.dtype.kind in "iub" and (arr == 0).any():
        raise RuntimeError("ZeroDivisionError")


def _no_bool_kernel(result: dtypes.dtype, kernel: str) -> None:
    if result is dtypes.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def floor_divide(input, other):
    _check_args(input, other)
    result = dtypes.result_type(input, other)
    _no_bool_kernel(result, "div_floor_cpu")
    x, y = _operand_dtype_cast(input, other, result)
    if result._category != 2:
        _check_int_zero(y)
    return run_op(FLOOR_DIVIDE, (input, other), arrays=(x, y))


def remainder(input, other):
    _check_args(input, other)
    result = dtypes.result_type(input, other)
    _no_bool_kernel(result, "remainder_cpu")
    x, y = _operand_dtype_cast(input, other, result)
    if result._category != 2:
        _check_int_zero(y)
    if isinstance(other, Tensor):
        op = REMAINDER if other.requires_grad else REMAINDER_SELF
    else:
        op = REMAINDER_SCALAR
    if not isinstance(input, Tensor):
        op = RREMAINDER
    return run_op(op, (input, other), arrays=(x, y))


def fmod(input, other):
    if not isinstance(input, Tensor):
        raise TypeError(
            f"fmod() received an invalid combination of arguments - got ({type(input).__name__}, "
            f"{type(other).__name__}), but expected one of:\n"
            " * (Tensor input, Tensor other, *, Tensor out = None)\n"
            " * (Tensor input, Number other, *, Tensor out = None)\n")
    _check_args(input, other)
    result = dtypes.result_type(input, other)
    _no_bool_kernel(result, "fmod_cpu")
    x, y = _operand_dtype_cast(input, other, result)
    if result._category != 2:
        _check_int_zero(y)
    if isinstance(other, Tensor):
        op = FMOD if other.requires_grad else FMOD_SELF
    else:
        op = FMOD_SCALAR
    return run_op(op, (input, other), arrays=(x, y))


def neg(input):
    if input._data.dtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.")
    return run_unary(NEG, input)


def pow(input, exponent):  # noqa: A001 - torch's name
    if type(exponent) is int or type(input) is int:
        _check_args(input, exponent, promote=isinstance(exponent, Tensor))
    result = dtypes.result_type(input, exponent)
    if result is dtypes.bool_:
        if isinstance(exponent, Tensor) or not isinstance(input, Tensor) or exponent not in (0, 1):
            _no_bool_kernel(result, "pow")
        return make(_pow_scalar(input._data, exponent))  # b ** True is b, b ** False is ones
    if isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        result = dtypes.result_type(input, int(exponent) if isinstance(exponent, bool) else exponent)
        if result._category == 1 and isinstance(exponent, int) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        # an exponent beyond int64 fails its conversion to int64 first, whatever the dtype
        if result._category == 1:
            _checked_int(exponent, dtypes.int64 if exponent > _I64_HI else result)
        x = input._data if input._data.dtype == result.np else input._data.astype(result.np)
        # a bool exponent stays bool: its gradient differs (PyTorch's False is not "equal to 0")
        e = float(exponent) if result._category == 2 and type(exponent) is not bool else exponent
        return run_unary(POW_SCALAR, input, (e,), x)
    if not isinstance(input, Tensor):
        result = dtypes.result_type(exponent, input)
        x = exponent._data if exponent._data.dtype == result.np else exponent._data.astype(result.np)
        base = input if type(input) is bool else _scalar_as(input, result)
        return run_op(RPOW, (exponent,), (base,), arrays=(x,))
    x, y = _operand_dtype_cast(input, exponent, result)
    return run_op(POW_TENSOR, (input, exponent), arrays=(x, y))


def square(input):
    return pow(input, 2)


def _float_unary(op):
    """A unary op that, like PyTorch, computes integer inputs in the default float dtype."""

    def fn(input):
        try:
            d = input._data
        except AttributeError:
            raise _not_a_tensor(op, input) from None
        if d.dtype.kind not in "fcV":
            return run_unary(op, input, (), d.astype(dtypes.get_default_dtype().np))
        return run_unary(op, input)

    fn.__name__ = op.name
    return fn


def _same_dtype_unary(op):
    def fn(input):
        if not isinstance(input, Tensor):
            raise _not_a_tensor(op, input)
        return run_unary(op, input)

    fn.__name__ = op.name
    return fn


def _not_a_tensor(op, value) -> TypeError:
    """PyTorch's text for `torch.exp(1)`: a function of tensors given a Python value."""
    return TypeError(f"{op.name}(): argument 'input' (position 1) must be Tensor, not "
                     f"{type(value).__name__}")


exp = _float_unary(EXP)
log = _float_unary(LOG)
log1p = _float_unary(LOG1P)
sqrt = _float_unary(SQRT)
rsqrt = _float_unary(RSQRT)
sin = _float_unary(SIN)
cos = _float_unary(COS)
tan = _float_unary(TAN)
tanh = _float_unary(TANH)
sigmoid = _float_unary(SIGMOID)
reciprocal = _float_unary(RECIPROCAL)
def _no_bool_unary(op, kernel):
    """A unary op PyTorch has no bool kernel for (NotImplementedError, or relu's own text)."""

    def fn(input):
        try:
            is_bool = input._data.dtype == np.bool_
        except AttributeError:
            raise _not_a_tensor(op, input) from None
        if is_bool:
            if kernel == "relu":
                raise RuntimeError("Boolean inputs not supported for relu")
            raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
        return run_unary(op, input)

    fn.__name__ = op.name
    return fn


relu = _no_bool_unary(RELU, "relu")
abs = _no_bool_unary(ABS, "abs_cpu")  # noqa: A001
floor = _no_bool_unary(FLOOR, "floor_vml_cpu")
ceil = _no_bool_unary(CEIL, "ceil_vml_cpu")
trunc = _no_bool_unary(TRUNC, "trunc_vml_cpu")


def sign(input):
    if input._data.dtype == np.bool_:
        return make(input._data.copy())
    return run_unary(SIGN, input)


def round(input, *, decimals=None):  # noqa: A001
    if input._data.dtype == np.bool_:
        raise NotImplementedError('"round_vml_cpu" not implemented for \'Bool\'')
    if decimals is not None:  # the round.decimals overload, even for 0 (RoundBackward1)
        if input._data.dtype.kind not in "fV":
            raise NotImplementedError(
                f'"round_cpu" not implemented for \'{_KERNEL_NAMES[input._data.dtype.name]}\'')
        return run_unary(ROUND_DECIMALS, input, (int(decimals),))
    return run_unary(ROUND, input)


def _type_names(args, kwargs) -> list:
    """Arguments as PyTorch's argument parser names them in errors (keywords last, reversed)."""
    return ([type(a).__name__ for a in args]
            + [f"{k}={type(v).__name__}" for k, v in reversed(list(kwargs.items()))])


def clamp_bounds(name: str, args: tuple, kwargs: dict, method: bool):
    """(min, max) from a clamp call. A Tensor bound with a number bound takes the Number
    overload if the tensor is 0-d without grad (as a number); else it matches neither
    overload: PyTorch's TypeError, as the function or the method spells it."""
    if len(args) > 2 or set(kwargs) - {"min", "max"}:
        raise TypeError(f"{name}() got an unexpected combination of arguments")
    lo = args[0] if args else kwargs.get("min")
    hi = args[1] if len(args) > 1 else kwargs.get("max")
    if lo is None or hi is None or isinstance(lo, Tensor) == isinstance(hi, Tensor):
        return lo, hi
    t = lo if isinstance(lo, Tensor) else hi
    if t._data.ndim == 0 and not t._requires_grad:  # PyTorch reads it as a Number
        return (t.item(), hi) if t is lo else (lo, t.item())
    got = ", ".join(_type_names(args if method else ("x", *args), kwargs))
    if method:
        got = got if args else got + ", "
        if kwargs:
            why = "some of the keywords were incorrect: " + ", ".join(reversed(list(kwargs)))
        else:
            why = "some of the arguments have invalid types: (" + ", ".join(
                f"!{type(a).__name__}!" for a in args) + ")"
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got ({got}), but expected "
            f"one of:\n * (Tensor min = None, Tensor max = None)\n      didn't match because {why}\n"
            f" * (Number min = None, Number max = None)\n      didn't match because {why}\n")
    got = "Tensor" + got[3:]
    raise TypeError(
        f"{name}() received an invalid combination of arguments - got ({got}), but expected one "
        "of:\n * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
        " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n")


def clamp(input, *args, **kwargs):
    """torch.clamp(input, min=None, max=None): number bounds, or tensor bounds (not both kinds)."""
    return clamp_impl(input, *clamp_bounds("clamp", args, kwargs, method=False))


def clip(input, *args, **kwargs):
    """torch.clip: clamp under its own name (as PyTorch's errors spell it)."""
    return clamp_impl(input, *clamp_bounds("clip", args, kwargs, method=False))


def clamp_impl(input, min=None, max=None):  # noqa: A002
    if type(min) is int or type(max) is int:
        _check_args(input, min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        result = dtypes.result_type(input, min, max).np
        arrays = tuple(None if t is None else t._data if t._data.dtype == result
                       else t._data.astype(result) for t in (input, min, max))
        return run_op(CLAMP_TENSOR, (input, min, max), arrays=arrays)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    d = input._data
    result = dtypes.result_type(input, *(v for v in (min, max) if v is not None))
    if result.np != d.dtype:  # e.g. an int tensor with float bounds, a bool one with int bounds
        x = d.astype(result.np)
        return run_unary(CLAMP, input, (_bound(min, x), _bound(max, x)), x)
    return run_unary(CLAMP, input, (_bound(min, d), _bound(max, d)))


def _bound(v, d):
    if v is None:
        return None
    _checked_int(v, dtypes.FROM_NP[d.dtype])
    return d.dtype.type(v) if d.dtype.kind in "fV" else v


def full_like_value(input, value):
    return make(np.full(input._data.shape, value, dtype=input._data.dtype))


def _clamp_one(op, op_tensor, input, bound):
    """clamp_min/clamp_max: the Scalar overload, or the Tensor one (...Backward1), which
    promotes and broadcasts as a binary op."""
    if isinstance(bound, Tensor):
        result = dtypes.result_type(input, bound)
        x, y = _operand_dtype_cast(input, bound, result)
        return run_op(op_tensor, (input, bound), arrays=(x, y))
    if type(bound) is int:
        _check_args(input, bound)
    d = input._data
    result = dtypes.result_type(input, bound)
    if result.np != d.dtype:  # an int tensor with a float bound
        x = d.astype(result.np)
        return run_unary(op, input, (_bound(bound, x),), x)
    return run_unary(op, input, (_bound(bound, d),))


def clamp_min(input, min):  # noqa: A002
    return _clamp_one(CLAMP_MIN, CLAMP_MIN_TENSOR, input, min)


def clamp_max(input, max):  # noqa: A002
    return _clamp_one(CLAMP_MAX, CLAMP_MAX_TENSOR, input, max)


def _tensors_only(name: str, input, other) -> None:
    for arg, pos, value in (("input", 1, input), ("other", 2, other)):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(value).__name__}")


def maximum(input, other):
    _tensors_only("maximum", input, other)
    return binary(MAXIMUM, input, other)


def minimum(input, other):
    _tensors_only("minimum", input, other)
    return binary(MINIMUM, input, other)


def where(condition, input=None, other=None):
    if input is None and other is None:
        return PUBLIC["torch.nonzero"](condition, as_tuple=True)
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype == np.uint8:
        from ..warn_site import warn_once

        warn_once("where_uint8", "where received a uint8 condition tensor. This behavior is "
                  "deprecated and will be removed in a future version of PyTorch. Use a boolean "
                  "condition instead. (Triggered internally at /__w/pytorch/pytorch/aten/src/"
                  "ATen/native/TensorCompare.cpp:621.)")
        cond = cond.astype(np.bool_)
    if cond.dtype != np.bool_:
        from ..tensor import _type_word

        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{_type_word(dtypes.FROM_NP[cond.dtype])}")
    a_t, b_t = isinstance(input, Tensor), isinstance(other, Tensor)
    result = dtypes.result_type(input, other)
    _check_args(input, other)
    for v in (input, other):
        _checked_int(v, result)
    x, y = _operand_dtype_cast(input, other, result)
    if not a_t:
        x = np.asarray(x, dtype=result.np)
    if not b_t:
        y = np.asarray(y, dtype=result.np)
    shapes = (np.shape(cond), np.shape(x), np.shape(y))
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        from .registry import broadcast_error

        broadcast_error(*_first_mismatch(shapes))
    res = run_op(WHERE, (input if a_t else None, other if b_t else None), (cond,), arrays=(x, y))
    if res._data.shape != shape:
        res._data = np.broadcast_to(res._data, shape).copy()
    return keep_index_inputs(res, condition)


def _first_mismatch(shapes):
    """The pair of shapes PyTorch names when several do not broadcast together."""
    acc = shapes[0]
    for s in shapes[1:]:
        try:
            acc = np.broadcast_shapes(acc, s)
        except ValueError:
            return acc, s
    return shapes[0], shapes[1]


# comparisons and logic: no gradient, bool results

_asarray = np.asarray


def _compare(npfn, scalar_op):
    def fn(input, other):
        if type(input) is Tensor and (type(other) is float or (
                type(other) is int and -2147483648 <= other <= 2147483647)):
            d = input._data  # `while y.norm() < 1000:`
            if d.ndim == 0 and d.dtype.kind in "fV":
                # numpy's scalar comparison: the same promotion (NEP 50), a tenth of the time
                return make(_asarray(scalar_op(d[()], other)))
            if d.dtype.kind == "c" and npfn in _ORDERINGS:
                _refuse_complex_order(npfn, d)
            return make(_asarray(npfn(d, other)))
        if not isinstance(other, (Tensor, int, float, bool, complex, np.generic)):
            return NotImplemented
        if npfn in _ORDERINGS:
            for v in (input, other):
                d = v._data if isinstance(v, Tensor) else np.asarray(v)
                if d.dtype.kind == "c":
                    r = dtypes.result_type(input, other)
                    _refuse_complex_order(npfn, np.empty(0, r.np))
        if isinstance(input, Tensor) and isinstance(other, Tensor):
            x, y = input._data, other._data
            if x.dtype != y.dtype:
                result = dtypes.result_type(input, other)
                x, y = _operand_dtype_cast(input, other, result)
        elif (type(other) is int and not -2147483648 <= other <= 2147483647) or type(input) is int:
            # a Python int that may not fit the tensor's dtype: converted (wrapped) as PyTorch does
            _check_args(input, other)
            x, y = _operand_dtype_cast(input, other, dtypes.result_type(input, other))
        else:
            x = input._data if isinstance(input, Tensor) else input
            y = other._data if isinstance(other, Tensor) else other
        try:
            out = npfn(x, y)
        except ValueError:
            _broadcast_error(np.shape(x), np.shape(y))
        return make(np.asarray(out))

    return fn


#: the ordering comparisons, which PyTorch has no complex kernel for
_ORDERINGS = {np.less: "lt", np.less_equal: "le", np.greater: "gt", np.greater_equal: "ge"}


def _refuse_complex_order(npfn, d) -> None:
    kind = "ComplexFloat" if d.dtype == np.complex64 else "ComplexDouble"
    raise NotImplementedError(f'"{_ORDERINGS[npfn]}_cpu" not implemented for \'{kind}\'')


def _broadcast_error(a, b):
    from .registry import broadcast_error

    broadcast_error(a, b)


eq = _compare(np.equal, operator.eq)
ne = _compare(np.not_equal, operator.ne)
lt = _compare(np.less, operator.lt)
le = _compare(np.less_equal, operator.le)
gt = _compare(np.greater, operator.gt)
ge = _compare(np.greater_equal, operator.ge)


def logical_not(input):
    return make(np.logical_not(input._data))


def logical_and(input, other):
    return make(np.logical_and(input._data, _arr(other)))


def logical_or(input, other):
    return make(np.logical_or(input._data, _arr(other)))


def logical_xor(input, other):
    return make(np.logical_xor(input._data, _arr(other)))


def _arr(x):
    return x._data if isinstance(x, Tensor) else x


def isnan(input):
    return make(np.isnan(input._data) if input._data.dtype.kind in "fV" else np.zeros(input._data.shape, bool))


def isinf(input):
    return make(np.isinf(input._data) if input._data.dtype.kind in "fV" else np.zeros(input._data.shape, bool))


def isfinite(input):
    return make(np.isfinite(input._data) if input._data.dtype.kind in "fV" else np.ones(input._data.shape, bool))


def _bitwise(npfn, kernel: str):
    """& | ^ on tensors: logical for bools, bitwise for integers, an error for floats."""

    def fn(input, other):
        if not isinstance(other, (Tensor, int, float, bool)):
            return NotImplemented
        _check_args(input, other)
        result = dtypes.result_type(input, other)
        if result._category == 2:
            raise NotImplementedError(
                f'"{kernel}" not implemented for \'{"Double" if result is dtypes.float64 else "Float"}\'')
        x, y = _operand_dtype_cast(input, other, result)
        return make(np.asarray(npfn(np.asarray(x, dtype=result.np), np.asarray(y, dtype=result.np))))

    return fn


bitwise_and = _bitwise(np.bitwise_and, "bitwise_and_cpu")
bitwise_or = _bitwise(np.bitwise_or, "bitwise_or_cpu")
bitwise_xor = _bitwise(np.bitwise_xor, "bitwise_xor_cpu")


_KERNEL_NAMES = {"float32": "Float", "float64": "Double", "bool": "Bool", "int64": "Long",
                 "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte"}


def _kernel_type_name(d: dtypes.dtype) -> str:
    return {"float32": "Float", "float64": "Double", "bool": "Bool"}.get(d.name, d.name)


def _shift(left: bool):
    """<< and >> as PyTorch's kernels: integers only; a count < 0 or >= the width gives 0
    (<<) or the sign (>>), and << wraps around."""
    kernel = "lshift_cpu" if left else "rshift_cpu"

    def fn(input, other):
        if not isinstance(other, (Tensor, int, float, bool)) or not isinstance(input, (Tensor, int, float, bool)):
            return NotImplemented
        _check_args(input, other)
        result = dtypes.result_type(input, other)
        if result._category != 1:
            raise NotImplementedError(f'"{kernel}" not implemented for \'{_kernel_type_name(result)}\'')
        x, y = _operand_dtype_cast(input, other, result)
        x, y = np.asarray(x, dtype=result.np), np.asarray(y, dtype=result.np)
        try:
            np.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            _broadcast_error(x.shape, y.shape)
        bits = result.np.itemsize * 8
        if left:
            bad = (y < 0) | (y >= bits)
            out = np.where(bad, 0, np.left_shift(x, np.where(bad, 0, y)))
        else:
            bad = (y < 0) | (y >= bits - 1)
            out = np.right_shift(x, np.where(bad, bits - 1, y))
        return make(np.asarray(out, dtype=result.np))

    fn.__name__ = "bitwise_left_shift" if left else "bitwise_right_shift"
    return fn


bitwise_left_shift = _shift(True)
bitwise_right_shift = _shift(False)


def bitwise_not(input):
    if input._data.dtype.kind in "fV":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return make(np.invert(input._data))


# sub's int scalars go through its bool checks first; the commutative ops also serve __r*__
add_operator = _scalar_operator(ADD, add)
sub_operator = _scalar_operator(SUB, sub, ints=False)
mul_operator = _scalar_operator(MUL, mul)
div_operator = _scalar_operator(DIV, div)
