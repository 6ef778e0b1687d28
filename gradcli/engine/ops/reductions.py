"""Reductions: sum, mean, prod, max/min (with and without dim), amax/amin,
argmax/argmin, norm, std/var, logsumexp, cumsum, cumprod, all/any.

The overloads get PyTorch's distinct node names: `sum()` is SumBackward0 and
`sum(dim)` SumBackward1, `max()` MaxBackward1 and `max(dim)` MaxBackward0.
"""

from __future__ import annotations

import builtins as _builtins
import struct as _struct
from collections import namedtuple
from math import inf as _INF
from math import sqrt as _sqrt

import numpy as np

from .. import autocast_state as _autocast
from .. import dtypes
from ..kernels.extrema import extreme_all, zero_as_kernel
from ..kernels.summation import torch_order_sum, torch_order_sum_dims
from ..node import keep_given
from ..parallel import POOL
from ..tensor import Tensor, _wrap_dim, make
from .elementwise import DIV_SCALAR, MUL_SCALAR, _exp, log_rounded_once
from .registry import PUBLIC, defop, run_op, run_unary


def _dims(dim, ndim: int) -> tuple:
    """Normalise dim (int, list, tuple or None) to a sorted tuple of axes."""
    if dim is None:
        return tuple(range(ndim))
    if ndim == 0:  # a 0-d tensor accepts dim 0 / -1 and reduces nothing
        for d in dim if isinstance(dim, (list, tuple)) else (dim,):
            _wrap_dim(int(d), 0)
        return ()
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return tuple(range(ndim))
        wrapped = [_wrap_dim(int(d), ndim) for d in dim]
        seen = set()
        for d in wrapped:
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
        return tuple(sorted(wrapped))
    return (_wrap_dim(int(dim), ndim),)


def _unsqueeze_to(g: Tensor, dims: tuple, keepdim: bool) -> Tensor:
    """Re-insert reduced dims into a gradient so it broadcasts against the input."""
    if keepdim or not dims:
        return g
    for d in dims:  # ascending, as PyTorch's unsqueeze_multiple: UnsqueezeBackward0 nodes
        g = g.unsqueeze(d)
    return g


def _expand_back(g: Tensor, shape: tuple, dims: tuple, keepdim: bool) -> Tensor:
    return _unsqueeze_to(g, dims, keepdim).expand(shape)


# ------------------------------------------------------------ the op table
def _sum_all(a):
    """The whole-tensor sum: PyTorch's order for float32/float64 (engine/kernels/summation.py);
    a view with steps is added as a sum over all its dims, as PyTorch's iterator does."""
    total = torch_order_sum(a, POOL.threads)
    if total is None and a.dtype.kind in "fV" and a.ndim:
        if a.dtype.kind == "V":  # bfloat16: PyTorch sums in float32, rounds once at the end
            return np.asarray(_sum_all(a.astype(np.float32))).astype(a.dtype)
        total = torch_order_sum_dims(a, tuple(range(a.ndim)), POOL.threads)
    return np.sum(a) if total is None else total


SUM = defop("sum", "SumBackward0", lambda a, shape: _sum_all(a), lambda c, g: (g.expand(c.meta[0]),),
            "d sum(a)/da = 1 (the gradient is broadcast back)", torch_call="a.sum()")


def _sum_dims(a, dims, keepdim):
    """The sum over dims: PyTorch's order for float32/float64 (engine/kernels/summation.py)."""
    total = torch_order_sum_dims(a, dims, POOL.threads) if dims else None
    if total is None:
        if a.dtype.kind == "V":  # bfloat16: summed in float32, rounded once (as PyTorch's)
            return np.asarray(_sum_dims(a.astype(np.float32), dims, keepdim)).astype(a.dtype)
        return np.sum(a, axis=dims, keepdims=keepdim)
    if keepdim:
        return total.reshape(tuple(1 if i in dims else n for i, n in enumerate(a.shape)))
    return np.asarray(total)


SUM_DIM = defop("sum_dim", "SumBackward1",
                lambda a, shape, dims, keepdim: _sum_dims(a, dims, keepdim),
                lambda c, g: (_expand_back(g, *c.meta),), "d sum(a, dim)/da = 1 along dim",
                torch_call="a.sum(0)")


def _mean_fwd(a, dims=None, keepdim=False):
    if a.dtype.itemsize == 2 and a.dtype.kind in "fV":  # float16, bfloat16: PyTorch sums and
        # divides in float32, rounded once at the end
        return np.asarray(_mean_fwd(a.astype(np.float32), dims, keepdim)).astype(a.dtype)
    if a.size:
        if dims is None:  # PyTorch: the sum (in its order), divided by the count
            if a.dtype.kind in "fV":
                return np.true_divide(_sum_all(a), a.size)
        elif dims and a.dtype.kind in "fV":
            return np.true_divide(_sum_dims(a, dims, keepdim), _count(a.shape, dims))
        return np.mean(a, axis=dims, keepdims=keepdim)
    with np.errstate(invalid="ignore"):  # empty: nan, without numpy's warning (as PyTorch)
        return np.sum(a, axis=dims, keepdims=keepdim) / 0


MEAN = defop("mean", "MeanBackward0", lambda a, shape: _mean_fwd(a),
             lambda c, g: (run_op(DIV_SCALAR, (g.expand(c.meta[0]),), (_numel(c.meta[0]),)),),
             "d mean(a)/da = 1/N", torch_call="a.mean()")
MEAN_DIM = defop("mean_dim", "MeanBackward1",
                 lambda a, shape, dims, keepdim: _mean_fwd(a, dims, keepdim),
                 lambda c, g: (run_op(DIV_SCALAR, (_expand_back(g, *c.meta),),
                                      (float(_count(c.meta[0], c.meta[1])),)),),
                 "d mean(a, dim)/da = 1/N along dim", torch_call="a.mean(0)")


def _numel(shape) -> float:
    n = 1
    for k in shape:
        n *= k
    return float(n)


def _reduced_shape(shape, dims, keepdim) -> tuple:
    return tuple(1 if i in dims else n for i, n in enumerate(shape) if keepdim or i not in dims)


def _count(shape, dims) -> int:
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _safe_zeros_backward(g: Tensor, a: Tensor, dim: int) -> Tensor:
    """The gradient of a product along dim that is exact with zeros: the product of the
    elements before each one (an exclusive cumprod from the left: cat of ones and all but
    the last, cumprod) times the product of those after it (the same from the right, on
    the flipped input); its second order runs through CumprodBackward0."""
    from .shape import cat

    shape = a._data.shape
    n = shape[dim]
    if a._data.size == 0:
        return g.expand_as(a)
    ones = make(np.ones(shape[:dim] + (1,) + shape[dim + 1:], dtype=g._data.dtype))
    left = cat([ones, a.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    right = cat([ones, a.narrow(dim, 1, n - 1).flip([dim])], dim).cumprod(dim).flip([dim])
    return g * (left * right)


def _prod_backward(c, g):
    """PyTorch's prod_backward: a 0-d input passes the gradient through; no zeros:
    result / input; zeros: the product of the others from exclusive cumprods over the
    flattened input, or plain zeros when there are several and no graph is being made
    (create_graph=False). prod(dtype=...) differentiates the input cast to the result's
    dtype and casts the gradient back (ToCopyBackward0 nodes, as PyTorch)."""
    a = c.saved[0]
    if a._data.dtype != g._data.dtype:
        return (_prod_all_grad(c, g, a.to(g.dtype)).to(a.dtype),)
    return (_prod_all_grad(c, g, a),)


def _prod_all_grad(c, g, a):
    from ..grad_mode import GRAD_MODE

    if not a._data.ndim:
        return g
    zeros = np.count_nonzero(a._data == 0)
    if not zeros:
        return g * (c.result / a)
    if zeros > 1 and not GRAD_MODE.enabled:
        return make(np.zeros(a._data.shape, dtype=g._data.dtype))
    if a._data.size == 1:  # the product of no others: the gradient itself
        return g.view(a._data.shape)
    return _safe_zeros_backward(g, a.contiguous().view(-1), 0).view_as(a)  # ViewBackward0


PROD = defop("prod", "ProdBackward0", lambda a: np.prod(a), _prod_backward,
             "d prod(a)/da_i = prod of the other elements", save="inputs result",
             torch_call="a.prod()")


def _prod_dim_backward(c, g):
    a = c.saved[0]
    if a._data.dtype != g._data.dtype:  # prod(dim, dtype=...): as prod()
        return (_prod_dim_grad(c, g, a.to(g.dtype)).to(a.dtype),)
    return (_prod_dim_grad(c, g, a),)


def _prod_dim_grad(c, g, a):
    dim, keepdim = c.meta
    if not a._data.ndim:
        return g
    g = _unsqueeze_to(g, (dim,), keepdim)
    if not (a._data == 0).any():
        return g * (_unsqueeze_to(c.result, (dim,), keepdim) / a)
    if a._data.shape[dim] == 1:  # the product of no others: the gradient itself
        return g
    return _safe_zeros_backward(g, a, dim)


PROD_DIM = defop("prod_dim", "ProdBackward1",
                 lambda a, dim, keepdim: np.prod(a, axis=dim if a.ndim else None, keepdims=keepdim),
                 _prod_dim_backward, "d prod(a, dim)/da_i = prod of the others along dim",
                 save="inputs result", torch_call="a.prod(0)")


def _evenly_to_ties(c, g):
    """max()/min()/amax/amin: the gradient is split evenly among tied extrema."""
    a = c.saved[0]
    shape, dims, keepdim = c.meta
    res = _unsqueeze_to(c.result, dims, keepdim)
    mask = (a == res).logical_or(a.isnan().logical_and(res.isnan())).to(g.dtype)
    count = mask.sum(dims, keepdim=True) if dims else mask
    return (_unsqueeze_to(g, dims, keepdim) * mask / count,)


def _scale_grad_by_count(c, g):
    """amax/amin: PyTorch's scale_grad_by_count, (g / count) * (a == result): a nan maximum
    matches nothing, so its slice gets 0/0 = nan."""
    a = c.saved[0]
    shape, dims, keepdim = c.meta
    mask = (a == _unsqueeze_to(c.result, dims, keepdim)).to(g.dtype)
    count = mask.sum(dims, keepdim=True) if dims else mask.sum()
    return ((_unsqueeze_to(g, dims, keepdim) / count) * mask,)


MAX_ALL = defop("max", "MaxBackward1", extreme_all(np.max, np.greater),
                _evenly_to_ties, "d max(a)/da = 1 at the maximum (split among ties)",
                save="inputs result", torch_call="a.max()")
MIN_ALL = defop("min", "MinBackward1", extreme_all(np.min, np.less),
                _evenly_to_ties, "d min(a)/da = 1 at the minimum (split among ties)",
                save="inputs result", torch_call="a.min()")
AMAX = defop("amax", "AmaxBackward0", zero_as_kernel(np.greater),
             _scale_grad_by_count, "d amax(a, dim)/da = 1 at the maxima (split among ties)",
             save="inputs result", torch_call="a.amax(0)")
AMIN = defop("amin", "AminBackward0", zero_as_kernel(np.less),
             _scale_grad_by_count, "d amin(a, dim)/da = 1 at the minima (split among ties)",
             save="inputs result", torch_call="a.amin(0)")


def _scatter_fwd(g, idx, dim, shape):
    out = np.zeros(shape, dtype=g.dtype)
    np.put_along_axis(out, idx, g, axis=dim)
    return out


# The backward of max(dim)/min(dim) and its own backward (a gather), so that
# differentiating twice works: zeros with the gradient placed at the chosen indices.
SCATTER = defop("scatter", "ScatterBackward0", _scatter_fwd,
                lambda c, g: (run_op(GATHER, (g,), c.meta[:2]),),
                "d scatter(g)/dg: take the chosen elements back")
GATHER = defop("gather", "GatherBackward0",
               lambda a, idx, dim: np.take_along_axis(a, idx, axis=dim),
               lambda c, g: (run_op(SCATTER, (g,), (c.meta[0], c.meta[1], c.saved[0]._data.shape)),),
               "d gather(a)/da: the gradient placed at the gathered indices", save="inputs")


def _scatter_back(c, g):
    """max(dim)/min(dim): the gradient goes to the chosen index only."""
    shape, dim, keepdim, indices = c.meta
    if not shape:
        return (g,)
    idx = indices if keepdim else np.expand_dims(indices, dim)
    return (run_op(SCATTER, (_unsqueeze_to(g, (dim,), keepdim),), (idx, dim, shape)),)


def _values_at(a, shape, dim, keepdim, indices):
    if a.ndim == 0:
        return a.copy()
    idx = indices if keepdim else np.expand_dims(indices, dim)
    out = np.take_along_axis(a, idx, axis=dim)
    return out if keepdim else np.squeeze(out, axis=dim)


MAX_DIM = defop("max_dim", "MaxBackward0", _values_at, _scatter_back,
                "d max(a, dim)/da = 1 at the argmax", save="meta", torch_call="a.max(0)[0]")
MIN_DIM = defop("min_dim", "MinBackward0", _values_at, _scatter_back,
                "d min(a, dim)/da = 1 at the argmin", save="meta", torch_call="a.min(0)[0]")


_array = np.array
_F32, _F64 = dtypes.float32.np, dtypes.float64.np
_pack_f32, _unpack_f32 = _struct.Struct("f").pack, _struct.Struct("f").unpack


def _norm2_small(a):
    """The 2-norm of a 1-D float32/float64 array of under 8 elements (`while y.norm() < k`
    on a 3-vector), in about half the time of the ufunc calls: the same rounding as
    numpy's (each square rounded to the dtype, summed left to right as np.add.reduce does
    below 8 elements, one square root), with Python floats for the sums. Python floats are
    doubles: float32 sums are rounded back to float32 each step (struct), and the square
    root of a float32 sum, taken in double and rounded once, is the float32 one (53 >=
    2*24+2 bits)."""
    if a.dtype is _F64:
        s = 0.0
        for v in a.tolist():
            s += v * v
        return _array(_sqrt(s))
    s = 0.0
    for v in (a * a).tolist():  # squares rounded to float32 by numpy
        s += v  # exact in double, unless 2^29 apart (then float32 drops the smaller anyway)
        try:
            s = _unpack_f32(_pack_f32(s))[0]
        except OverflowError:  # past float32's largest: inf, as numpy's float32 sum
            s = _INF
    return _array(_sqrt(s), _F32)


def _norm_fwd(a, p, dims, keepdim, full):
    if p == 2 and a.ndim == 1 and 1 < a.shape[0] < 8 and not keepdim and (
            a.dtype is _F32 or a.dtype is _F64):
        return _norm2_small(a)  # `while y.norm() < k:` on a small vector, the loops' case
    if p != 0 and a.size and _count(a.shape, dims) == 1:
        # one element per result: PyTorch gives |x| itself, with no power taken (the norm
        # of a float32 1e-30 is 1e-30, not the 0 its underflowing square would give)
        return np.abs(a).reshape(_reduced_shape(a.shape, dims, keepdim))
    if p == 2:  # ufunc calls only (np.sum's wrapper costs more here)
        return np.sqrt(np.add.reduce(a * a, axis=dims, keepdims=keepdim))
    absa = np.abs(a)
    if p == np.inf:
        return np.max(absa, axis=dims, keepdims=keepdim) if absa.size else np.zeros(())
    if p == -np.inf:
        return np.min(absa, axis=dims, keepdims=keepdim)
    if p == 0:
        return np.sum(absa != 0, axis=dims, keepdims=keepdim).astype(a.dtype)
    if p == 1:
        return np.sum(absa, axis=dims, keepdims=keepdim)
    return np.power(np.sum(np.power(absa, p), axis=dims, keepdims=keepdim), 1.0 / p)


def _norm_backward(c, g):
    """PyTorch's norm_backward, term for term (so the rounding and node names match too)."""
    a = c.saved[0]
    p, dims, keepdim, full = c.meta
    spread = () if full or not a._data.ndim else dims  # no dim given: the 0-d norm broadcasts
    norm = _unsqueeze_to(c.result, spread, keepdim)
    g = _unsqueeze_to(g, spread, keepdim)
    if p == 0:
        return (None,)  # no gradient at all for the 0-"norm"
    if p == 1:
        return (a.sign() * g,)
    if p == 2:
        return (g * (a / norm).masked_fill(norm == 0, 0),)  # 0 at the origin
    if p in (np.inf, -np.inf):
        absa = a.abs()
        mask = (absa == norm).logical_or(absa.isnan()).to(a.dtype)
        return (a.sign() * ((g / mask.sum(dims, keepdim=True)) * mask),)
    if p < 1:
        scaled = a.sign() * (a.abs() ** (p - 1)).masked_fill(a == 0, 0)
        return (scaled * g * norm ** (1 - p),)
    scale = (g / norm ** (p - 1)).masked_fill(norm == 0, 0)
    if p < 2:
        return (a.sign() * a.abs() ** (p - 1) * scale,)
    return (a * a.abs() ** (p - 2) * scale,)


NORM = defop("norm", "LinalgVectorNormBackward0", _norm_fwd, _norm_backward,
             "d ||a||_p/da = a*|a|^(p-2) / ||a||^(p-1)", save="inputs result",
             torch_call="a.norm()")


def _var64(a, dims, correction, keepdim):
    """The variance accumulated in float64 whatever the input dtype (PyTorch's CPU kernel
    accumulates float32 in double: no overflow or underflow of the squared deviations).
    A one-element result is PyTorch's std_var_all_cpu: the mean is the tensor's own mean,
    in its dtype (a float32 sum of huge values overflows there, and the variance is inf)."""
    n = _count(a.shape, dims)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # empty: nan, as PyTorch
        if a.dtype.kind == "c":  # (complex: the mean of the squared magnitudes, real)
            a = a.astype(np.complex128, copy=False)
            dev = a - np.sum(a, axis=dims, keepdims=True) / n
            sq = dev.real * dev.real + dev.imag * dev.imag
            return np.sum(sq, axis=dims, keepdims=keepdim) / _builtins.max(n - correction, 0)
        if n == a.size and n > 0 and a.dtype.kind in "fV":
            mean = _mean_fwd(a).astype(np.float64)
            a = a.astype(np.float64, copy=False)
        else:
            a = a.astype(np.float64, copy=False)
            mean = np.sum(a, axis=dims, keepdims=True) / n
        dev = a - mean
        return np.sum(dev * dev, axis=dims, keepdims=keepdim) / _builtins.max(n - correction, 0)


def _real_of(npdt):
    """The dtype of std/var of an input of dtype npdt: complex gives its real dtype."""
    return npdt if npdt.kind != "c" else np.empty(0, npdt).real.dtype


def _var_fwd(a, dims, correction, keepdim, full):
    return np.asarray(_var64(a, dims, correction, keepdim)).astype(_real_of(a.dtype))


def _std_fwd(a, dims, correction, keepdim, full):
    return np.sqrt(_var64(a, dims, correction, keepdim)).astype(_real_of(a.dtype))


def _var_backward_of(g, a, dims, correction, keepdim, full):
    """PyTorch's var_backward, term for term (node names and rounding)."""
    if full or not a._data.ndim:
        dof = a._data.size - correction
        if dof <= 0:
            # 2 / dof is inf: nan where a equals its mean (inf * 0), inf elsewhere, in the
            # default dtype (a dimensioned tensor: it decides the product's dtype)
            from .elementwise import where

            with np.errstate(invalid="ignore", divide="ignore"):
                at_mean = a._data == np.sum(a._data) / a._data.size
            out = g * where(make(np.asarray(at_mean)), float("nan"), float("inf"))
            return out.to(a.dtype) if out._data.dtype != a._data.dtype else out
        return run_op(MUL_SCALAR, (g,), (2.0 / dof,)) * (a - a.mean())
    if not keepdim and a._data.ndim > 1:
        for d in dims:
            g = g.unsqueeze(d)
    with np.errstate(divide="ignore"):
        scale = float(np.divide(2.0, np.float64(_count(a._data.shape, dims) - correction)))
    return run_op(MUL_SCALAR, (g,), (scale,)) * (a - a.mean(dims, keepdim=True))


def _var_backward(c, g):
    return (_var_backward_of(g, c.saved[0], *c.meta),)


def _std_backward(c, g):
    # PyTorch: var's backward of grad / (2 std), that being 0 where std is 0
    std = c.result
    gv = (g / run_op(MUL_SCALAR, (std,), (2,))).masked_fill(make(std._data == 0), 0)
    return (_var_backward_of(gv, c.saved[0], *c.meta),)


VAR = defop("var", "VarBackward0", _var_fwd, _var_backward,
            "d var(a)/da = 2(a - mean)/(N - correction)", save="inputs", torch_call="a.var()")
STD = defop("std", "StdBackward0",
            _std_fwd,
            _std_backward, "d std(a)/da = (a - mean)/((N - correction) std)", save="inputs result",
            torch_call="a.std()")


def _logsumexp_fwd(a, dims, keepdim):
    """PyTorch's logsumexp, op for op: the max over dims (an infinite one taken as 0),
    exp(a - max), summed over dims in PyTorch's order (_sum_dims), log, plus the max.
    Its float32 exp and log are MKL's (vsExp, vsLn): the rounded-once exp and log here
    match them on ~99% and ~97% of values (numpy's float32 kernels: ~60% and ~95%)."""
    if a.size == 0:
        return np.log(np.sum(np.exp(a), axis=dims, keepdims=keepdim))
    if a.dtype.kind == "c":  # (shifted by the real parts' max, as PyTorch's complex kernel)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            m = np.max(a.real, axis=dims, keepdims=True)
            m = np.where(np.abs(m) == np.inf, m.dtype.type(0), m)
            out = (np.log(np.sum(np.exp(a - m), axis=dims, keepdims=True)) + m).astype(a.dtype)
        return out if keepdim else np.squeeze(out, axis=dims)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        m = np.max(a, axis=dims, keepdims=True)
        m = np.where(np.abs(m) == np.inf, m.dtype.type(0), m)  # (a nan max stays)
        out = log_rounded_once(_sum_dims(_exp(a - m), dims, True)) + m
    return out if keepdim else np.squeeze(out, axis=dims)


LOGSUMEXP = defop("logsumexp", "LogsumexpBackward0", _logsumexp_fwd,
                  lambda c, g: (_unsqueeze_to(g, c.meta[0], c.meta[1])
                                * (c.saved[0] - _unsqueeze_to(c.result, c.meta[0], c.meta[1])).exp(),),
                  "d logsumexp(a)/da = softmax(a)", save="inputs result", torch_call="a.logsumexp(0)")
def _acc_dtype(a: np.ndarray):
    """PyTorch's CPU scans accumulate float32 in double and float16 in float: each output
    is the rounded running value, not a running value in the narrow type."""
    return {np.dtype(np.float32): np.float64, np.dtype(np.float16): np.float32}.get(a.dtype)


def _cumsum(a, dim):
    if not a.ndim:
        return a.copy()  # a 0-d cumsum is a copy, -0. included
    acc = _acc_dtype(a)
    out = np.cumsum(a, axis=dim) if acc is None else np.cumsum(a, axis=dim, dtype=acc).astype(a.dtype)
    if out.dtype.kind in "fV":
        out += 0.0  # PyTorch accumulates from +0., so a running sum of -0. is +0.
    return out


CUMSUM = defop("cumsum", "CumsumBackward0", _cumsum,
               lambda c, g: (g.flip([c.meta[0]]).cumsum(c.meta[0]).flip([c.meta[0]]),),
               "d cumsum(a)/da_i = sum of the gradients from i on", torch_call="a.cumsum(0)")


def _cumprod(a, dim):
    if not a.ndim:
        return a.copy()
    acc = _acc_dtype(a)
    return np.cumprod(a, axis=dim) if acc is None else np.cumprod(a, axis=dim, dtype=acc).astype(a.dtype)


def _cumprod_backward(c, g):
    """PyTorch's cumprod_backward. No zeros: the reversed cumsum of result * grad over the
    input. Zeros and no graph being made: only the elements up to the first zero of each
    slice get a gradient (computed directly). Zeros with create_graph: for each k the
    products that leave out element k (prods before it times cumprods after it) are
    written into select(dim, k) of a zero tensor (CopySlices nodes)."""
    from ..grad_mode import GRAD_MODE

    a = c.saved[0]
    dim = c.meta[0]
    if a._data.size <= 1 or a._data.shape[dim] == 1:
        return (g,)
    if g._data.dtype != a._data.dtype:
        g = g.to(a.dtype)
    if not (a._data == 0).any():
        w = c.result * g
        res = w.flip([dim]).cumsum(dim).flip([dim]).div(a)
        return (res if res._data.dtype == a._data.dtype else res.to(a.dtype),)  # cumprod(dtype=)
    if not GRAD_MODE.enabled:
        return (make(_cumprod_zeros_grad(a._data, g._data, c.result._data, dim)),)
    return (_cumprod_zeros_graph(a, g, dim),)


def _cumprod_zeros_grad(x, g, out, dim):
    """The gradient of cumprod with zeros, no graph: before the first zero of a slice the
    reversed cumsum of out * grad (kept there) over x; at the first zero the product of the
    elements before it times the sum of grad_j * the product of the elements after it up
    to j, for j up to the second zero; zero after it."""
    x, g, out = (np.moveaxis(t, dim, -1) for t in (x, g, out))
    count = np.cumsum(x == 0, axis=-1)
    before = count == 0
    w = np.where(before, out * g, 0).astype(g.dtype)
    rsum = np.flip(_cumsum(np.flip(w, -1), w.ndim - 1), -1)
    # (divided only before the first zero: no 0/0 warning from the positions left at 0)
    res = np.divide(rsum, x, out=np.zeros(rsum.shape, g.dtype), where=before)
    between = count == 1
    first = between.copy()
    first[..., 1:] &= ~between[..., :-1]
    between &= ~first
    prods = _cumprod(np.where(between, x, 1).astype(x.dtype), x.ndim - 1)
    total = np.sum(prods * np.where(count == 1, g, 0).astype(g.dtype), axis=-1, keepdims=True)
    prev = np.concatenate([np.ones_like(out[..., :1]), out[..., :-1]], axis=-1)
    res = np.where(first, total * prev, res).astype(g.dtype)
    return np.ascontiguousarray(np.moveaxis(res, -1, dim))


def _cumprod_zeros_graph(a: Tensor, g: Tensor, dim: int) -> Tensor:
    from .shape import cat

    shape = a._data.shape
    n = shape[dim]
    ones = make(np.ones((1,), dtype=g._data.dtype)).expand(shape[:dim] + (1,) + shape[dim + 1:])
    out = make(np.zeros(shape, dtype=g._data.dtype))
    for k in range(n):
        if k == 0:
            omitted = cat([ones, a.narrow(dim, 1, n - 1).cumprod(dim)], dim)
        else:
            until = a.narrow(dim, 0, k).prod(dim, keepdim=True)
            if k == n - 1:
                omitted = until
            else:
                after = a.narrow(dim, k + 1, n - k - 1).cumprod(dim)
                omitted = cat([until, until.expand_as(after) * after], dim)
        out.select(dim, k).copy_((g.narrow(dim, k, n - k) * omitted).sum(dim))
    return out


CUMPROD = defop("cumprod", "CumprodBackward0", _cumprod, _cumprod_backward,
                "d cumprod(a)_j/da_i = prod of a_0..a_j without a_i (j >= i)",
                save="inputs result", torch_call="a.cumprod(0)")

# ------------------------------------------------------------ entry points

MaxMin = namedtuple("MaxMin", "values indices")


class return_type(tuple):  # noqa: N801
    """torch.return_types.max / min: a named (values, indices) pair."""

    __slots__ = ()

    def __new__(cls, kind, values, indices):
        return tuple.__new__(RETURN_TYPES[kind], (values, indices))

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self) -> str:
        return (f"torch.return_types.{type(self).__name__}(\nvalues={self[0]!r},\n"
                f"indices={self[1]!r})")

    __str__ = __repr__


# one class per function, named as PyTorch names them (type(r).__name__ == "max")
RETURN_TYPES = {kind: type(kind, (return_type,), {"__slots__": (), "__module__": "torch.return_types",
                                                  "__new__": tuple.__new__})
                for kind in ("max", "min")}


def _sum_dtype(input: Tensor, dtype):
    if dtype is not None:
        return dtypes.to_dtype(dtype).np
    if input._data.dtype.kind in "biu":
        return np.int64
    return None


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    d = input._data
    npdt = _sum_dtype(input, dtype)
    array = d.astype(npdt) if npdt is not None and d.dtype != npdt else None
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0 and not keepdim and dim is None):
        return run_unary(SUM, input, (d.shape,), array)
    dims = _dims(dim, d.ndim)
    return keep_given(run_unary(SUM_DIM, input, (d.shape, dims, bool(keepdim)), array), SUM_DIM, dim)


def _float_check(input: Tensor, name: str, dtype=None):
    if dtype is not None:
        return input._data.astype(dtypes.to_dtype(dtype).np)
    if input._data.dtype.kind not in "fcV":
        kind = dtypes.FROM_NP[input._data.dtype]._legacy.replace("Tensor", "")
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {kind}")
    return None


def mean(input, dim=None, keepdim=False, *, dtype=None):
    array = _float_check(input, "mean", dtype)
    d = input._data
    if dim is None:
        return run_unary(MEAN, input, (d.shape,), array)
    dims = _dims(dim, d.ndim)
    return keep_given(run_unary(MEAN_DIM, input, (d.shape, dims, bool(keepdim)), array), MEAN_DIM, dim)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(prod, input, dim, keepdim, dtype=dtype)
    npdt = _sum_dtype(input, dtype)
    array = input._data.astype(npdt) if npdt is not None and input._data.dtype != npdt else None
    if dim is None:
        return run_unary(PROD, input, (), array)
    return run_unary(PROD_DIM, input, (_wrap_dim(dim, input._data.ndim), bool(keepdim)), array)


def _empty_reduction_check(input: Tensor, name: str, dims=None):
    d = input._data
    if d.size == 0:
        if dims is None:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument.")
        for ax in dims:
            if d.shape[ax] == 0:
                raise IndexError(
                    f"{name}(): Expected reduction dim {ax} to have non-zero size.")


def _extremum(input, dim, keepdim, kind: str):
    """max/min: with no dim the value (MaxBackward1); with dim (values, indices)."""
    if isinstance(dim, Tensor):
        from .elementwise import maximum, minimum

        return (maximum if kind == "max" else minimum)(input, dim)
    d = input._data
    if dim is None:
        _empty_reduction_check(input, kind)
        op = MAX_ALL if kind == "max" else MIN_ALL
        return run_unary(op, input, (d.shape, tuple(range(d.ndim)), False))
    ax = _wrap_dim(dim, d.ndim)
    if d.ndim == 0:
        op = MAX_DIM if kind == "max" else MIN_DIM
        values = run_unary(op, input, ((), 0, bool(keepdim), np.zeros((), np.int64)))
        return return_type(kind, values, make(np.zeros((), np.int64)))
    _empty_reduction_check(input, kind, (ax,))
    arg = _nan_aware_arg(d, ax, kind)
    indices = arg if not keepdim else np.expand_dims(arg, ax)
    op = MAX_DIM if kind == "max" else MIN_DIM
    values = run_unary(op, input, (d.shape, ax, bool(keepdim), indices))
    return return_type(kind, values, make(np.asarray(indices, dtype=np.int64)))


def _alias(input):
    from .views import alias

    return alias(input)


def _nan_aware_arg(d: np.ndarray, ax: int, kind: str) -> np.ndarray:
    """argmax/argmin as PyTorch: NaN wins; among ties, the first index. numpy's argmax and
    argmin already pick a slice's first NaN, slice by slice."""
    if d.dtype == np.bool_:
        d = d.astype(np.int8)
    return np.asarray(np.argmax(d, axis=ax) if kind == "max" else np.argmin(d, axis=ax))


def max(input, dim=None, keepdim=False):  # noqa: A001
    return _extremum(input, dim, keepdim, "max")


def min(input, dim=None, keepdim=False):  # noqa: A001
    return _extremum(input, dim, keepdim, "min")


def amax(input, dim=(), keepdim=False):
    d = input._data
    dims = _dims(dim if dim != () else None, d.ndim)
    _empty_reduction_check(input, "amax", dims if dim not in ((), None) else None)
    return keep_given(run_unary(AMAX, input, (d.shape, dims, bool(keepdim))), AMAX, dim)


def amin(input, dim=(), keepdim=False):
    d = input._data
    dims = _dims(dim if dim != () else None, d.ndim)
    _empty_reduction_check(input, "amin", dims if dim not in ((), None) else None)
    return keep_given(run_unary(AMIN, input, (d.shape, dims, bool(keepdim))), AMIN, dim)


def argmax(input, dim=None, keepdim=False):
    return _arg(input, dim, keepdim, "max")


def argmin(input, dim=None, keepdim=False):
    return _arg(input, dim, keepdim, "min")


def _arg(input, dim, keepdim, kind):
    d = input._data
    if d.dtype == np.bool_:
        raise RuntimeError(f"arg{kind}(): does not support bool input")
    if dim is None:
        if d.size == 0:
            raise IndexError(
                f"arg{kind}(): Expected reduction dim to be specified for input.numel() == 0.")
        flat = d.reshape(-1)
        idx = _nan_aware_arg(flat, 0, kind)
        out = np.asarray(idx, dtype=np.int64)
        if keepdim:
            out = out.reshape((1,) * d.ndim)
        return make(out)
    ax = _wrap_dim(dim, d.ndim)
    if d.ndim == 0:
        return make(np.zeros((), np.int64))
    _empty_reduction_check(input, f"arg{kind}", (ax,))
    idx = _nan_aware_arg(d, ax, kind).astype(np.int64)
    if keepdim:
        idx = np.expand_dims(idx, ax)
    return make(idx)


_FULL_NORM2_META = {n: (2.0, tuple(range(n)), False, True) for n in range(8)}


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if p == "fro" and dim is None and dtype is None and not keepdim:  # `while y.norm() < k:`
        d = input._data
        if d.dtype.kind in "fV" and d.ndim < 8:
            return run_unary(NORM, input, _FULL_NORM2_META[d.ndim])
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str):  # torch.norm hands any other string to linalg.matrix_norm
        dims = list(range(input._data.ndim)) if dim is None else (
            [dim] if isinstance(dim, int) else list(dim))
        return PUBLIC["torch.linalg.matrix_norm"](input, p, dims, keepdim, dtype=dtype)
    if dtype is None and input._data.dtype.kind not in "fV":
        from ..tensor import _type_word

        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{_type_word(input.dtype)}")
    array = _float_check(input, "linalg.vector_norm", dtype)
    d = input._data
    dims = _dims(dim, d.ndim)
    if p in (np.inf, -np.inf) and d.size == 0 and (dim is None or any(d.shape[i] == 0 for i in dims)):
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {'-' if p < 0 else ''}inf norm on an empty tensor "
            "because the operation does not have an identity")
    return run_unary(NORM, input, (float(p), dims, bool(keepdim), dim is None), array)


def _correction(unbiased, correction) -> int:
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def _var_args(input, dim, unbiased, keepdim, correction, name):
    """(dims, correction, keepdim, full): full when no dim was given (PyTorch's backward
    then uses the whole-tensor mean). Warns as PyTorch when the correction leaves no
    degrees of freedom."""
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    d = input._data
    dims = _dims(dim, d.ndim)
    corr = _correction(unbiased, correction)
    out_numel = 1
    for i, n in enumerate(d.shape):
        if i not in dims:
            out_numel *= n
    if corr >= d.size / _builtins.max(out_numel, 1):
        from ..warn_site import warn_at_caller

        # (PyTorch's TORCH_WARN: its text ends with the C++ place that raised it)
        warn_at_caller(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel). (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1861.)")
    return dims, corr, bool(keepdim), dim is None


def given_correction(dim, unbiased, keepdim, correction) -> tuple:
    """(dim, correction) as PyTorch's var/std node saves what the call gave: the overload
    a call picks decides it (no argument: None; a dim or unbiased: 1 or 0; a correction:
    itself)."""
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    if correction is None and (dim is not None or unbiased is not None or keepdim):
        correction = 0 if unbiased is False else 1
    return dim, correction


def _std_var_check(input):
    if input._data.dtype.kind not in "fVc":
        raise RuntimeError("std and var only support floating point and complex dtypes")


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    _std_var_check(input)
    return keep_given(run_unary(VAR, input, _var_args(input, dim, unbiased, keepdim, correction, "var")),
                      VAR, *given_correction(dim, unbiased, keepdim, correction))


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    _std_var_check(input)
    return keep_given(run_unary(STD, input, _var_args(input, dim, unbiased, keepdim, correction, "std")),
                      STD, *given_correction(dim, unbiased, keepdim, correction))


def logsumexp(input, dim, keepdim=False):
    d = input._data
    array = d.astype(dtypes.get_default_dtype().np) if d.dtype.kind not in "fVc" else None
    return keep_given(run_unary(LOGSUMEXP, input, (_dims(dim, d.ndim), bool(keepdim)), array),
                      LOGSUMEXP, dim)


def cumsum(input, dim, *, dtype=None):
    npdt = _sum_dtype(input, dtype)
    d = input._data
    array = d.astype(npdt) if npdt is not None and d.dtype != npdt else None
    return keep_given(run_unary(CUMSUM, input, (_wrap_dim(dim, d.ndim),), array), CUMSUM, dim)


def cumprod(input, dim, *, dtype=None):
    npdt = _sum_dtype(input, dtype)
    d = input._data
    array = d.astype(npdt) if npdt is not None and d.dtype != npdt else None
    return run_unary(CUMPROD, input, (_wrap_dim(dim, d.ndim),), array)


def _logical_reduce(reduce, input, dim, keepdim):
    """all/any: over everything, one dim, or a dim tuple (each dim once; () reduces
    nothing: the values as bools). uint8 input gives uint8, as PyTorch's does."""
    d = input._data
    if dim is None:
        result = reduce(d)
    elif isinstance(dim, (tuple, list)):
        axes = []
        for i in dim:
            ax = _wrap_dim(int(i), d.ndim)
            if ax in axes:
                raise RuntimeError(f"dim {ax} appears multiple times in the list of dims")
            axes.append(ax)
        if not axes:
            result = d != 0
        elif d.ndim == 0:
            result = reduce(d)
        else:
            result = reduce(d, axis=tuple(axes), keepdims=bool(keepdim))
    elif d.ndim == 0:
        _wrap_dim(dim, 0)
        result = reduce(d)
    else:
        result = reduce(d, axis=_wrap_dim(dim, d.ndim), keepdims=bool(keepdim))
    result = np.asarray(result)
    return make(result.astype(np.uint8) if d.dtype == np.uint8 else result)


def all(input, dim=None, keepdim=False):  # noqa: A001
    return _logical_reduce(np.all, input, dim, keepdim)


def any(input, dim=None, keepdim=False):  # noqa: A001
    return _logical_reduce(np.any, input, dim, keepdim)


def count_nonzero(input, dim=None):
    d = input._data
    return make(np.asarray(np.count_nonzero(d, axis=None if dim is None else _dims(dim, d.ndim)), dtype=np.int64))
