"""softmax and log_softmax (and their backwards) in the order and with the exp and log of
PyTorch's CPU kernels; plain numpy formulas with the switch off."""

from __future__ import annotations

from math import prod

import numpy as np

from .. import kernels as _switch
from ..parallel import POOL, split_elementwise
from .fma import fused_minus_product32, fused_minus_product64
from .sleef import glibc_expf32, rounded_once, vec_exp32, vec_log32
from .summation import LANES, dim_sums_in_order, softmax_row_sums

_exp = rounded_once(split_elementwise(np.exp))

# PyTorch's softmax kernels (aten/src/ATen/native/cpu/SoftMaxKernel.cpp), as measured bit
# for bit against PyTorch 2.13 (AVX2) in tests/test_engine_nn_order.py:
# - over the last dim, row by row: the max; exp(x - max) in vector code (SLEEF: vec_exp32);
#   the row's sum in vec::reduce_all's order (summation.softmax_row_sums); softmax scales
#   by 1/sum, log_softmax subtracts log(sum) (SLEEF's log: vec_log32) from x - max;
# - over another dim (input seen as outer x dim x inner): per (outer, inner) position a
#   running sum from 0 down the dim (summation.dim_sums_in_order); vector code (SLEEF's
#   exp) for blocks of 8 (float32) / 4 (float64) inner positions, scalar code (std::exp:
#   glibc's expf, glibc_expf32) for the rest: the last inner % 8 positions for
#   log_softmax and the backwards, for softmax what its threads' ranges leave over
#   (_softmax_vector_positions); softmax divides by the sum;
# - the backwards: log_softmax's g - exp(y) * sum(g) rounded once for float32 (FMA
#   contraction), softmax's y * (g - sum(g * y)), over another dim with each g*y added
#   by a fused multiply-add (_fused_dim_sums).
# Before this (the rounded-once exp, numpy's log and sums over other dims) ~60-90% of
# float32 softmax / log_softmax outputs of 2x3 to 3x1000 differed from PyTorch's bits and
# 3-7% printed differently. float64 keeps numpy's exp and log (SLEEF's double kernels,
# with their double fused multiply-adds, are not emulated): its last bits still differ.


def _vector_exp(x):
    """exp in the kernels' vector code."""
    return vec_exp32(x) if x.dtype == np.float32 else _exp(x)


def _vector_log(x):
    return vec_log32(x) if x.dtype == np.float32 else np.log(x)


def _exp_with_tail(x, vector):
    """exp of x (..., inner) with SLEEF's exp where `vector` (a bool mask over x's
    leading and inner dims) holds and the scalar code's std::exp (glibc's expf)
    elsewhere."""
    if x.dtype != np.float32:
        return _exp(x)
    if vector.all():
        return vec_exp32(x)
    if not vector.any():
        return glibc_expf32(x)
    out = vec_exp32(x)
    scalar = ~np.broadcast_to(vector, x.shape)
    out[scalar] = glibc_expf32(x[scalar])
    return out


def _exp_chunked(a, dim):
    """exp of a as the kernels that go over a dim that is not the last in chunks of inner
    positions compute it (log_softmax, and both backwards): vector code (SLEEF's exp) for
    all but the last inner % lanes positions, whose scalar code calls std::exp."""
    if a.dtype != np.float32:
        return _exp(a)
    x, inner = _three_dims(a, dim)
    cut = inner - inner % LANES[a.dtype]
    if cut == inner:
        return vec_exp32(a)
    if cut == 0:
        return glibc_expf32(a)
    out = np.empty(x.shape, x.dtype)
    out[..., :cut] = vec_exp32(x[..., :cut])
    out[..., cut:] = glibc_expf32(x[..., cut:])
    return out.reshape(a.shape)


def _three_dims(a, dim):
    """a as (outer, dim, inner), and inner."""
    inner = prod(a.shape[dim + 1:])
    return a.reshape(prod(a.shape[:dim]), a.shape[dim], inner), inner


def _softmax_vector_positions(outer, inner, lanes):
    """Where _vec_softmax (softmax over a dim that is not the last) runs vector code, as
    an (outer, 1, inner) mask: at::parallel_for (grain 0) gives each thread a range of
    the outer*inner positions, which it steps through in blocks of `lanes` that must fit
    in the row of inner positions and in the range; the rest is scalar code."""
    total = outer * inner
    threads = POOL.threads
    ranges = [(0, total)]
    if total > 1 and threads > 1:  # grain 0: every thread gets a range
        size = -(-total // threads)
        ranges = [(b, min(total, b + size)) for b in range(0, total, size)]
    vector = np.empty(total, bool)
    for begin, end in ranges:
        at = np.arange(begin, end)
        row = at - at % inner
        start = np.maximum(row, begin)
        room = np.minimum(row + inner, end) - start
        vector[begin:end] = ((at - start) // lanes + 1) * lanes <= room
    return vector.reshape(outer, 1, inner)


def _row_sums(x, dim):
    """x summed over `dim` (kept) in the order of PyTorch's softmax kernels."""
    if x.dtype not in LANES:
        return np.sum(x, axis=dim, keepdims=True)
    if dim == x.ndim - 1:
        return softmax_row_sums(x)[..., None]
    return dim_sums_in_order(x, dim)


def _exact_softmax(a, dim):
    if a.size == 0:
        return a.copy()
    if a.ndim == 0:
        return _exact_softmax(a.reshape(1), 0).reshape(())
    # PyTorch subtracts the max as it is: a row with inf (or all -inf) is nan throughout
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        shifted = a - np.max(a, axis=dim, keepdims=True)
        if dim == a.ndim - 1 or a.dtype not in LANES:
            e = _vector_exp(shifted)
            return e * (1 / _row_sums(e, dim))  # (PyTorch scales by 1/sum)
        x, inner = _three_dims(shifted, dim)
        vector = _softmax_vector_positions(len(x), inner, LANES[a.dtype])
        e = _exp_with_tail(x, vector)
        return (e / dim_sums_in_order(e, 1)).reshape(a.shape)


def _exact_log_softmax(a, dim):
    if a.size == 0:
        return a.copy()
    if a.ndim == 0:
        return _exact_log_softmax(a.reshape(1), 0).reshape(())
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        shifted = a - np.max(a, axis=dim, keepdims=True)
        last = dim == a.ndim - 1 or a.dtype not in LANES
        e = _vector_exp(shifted) if last else _exp_chunked(shifted, dim)
        return shifted - _vector_log(_row_sums(e, dim))


FMA_STEPS_MAX = 1024  # longest dim whose running sum of fused products is redone step by step


def _fused_dim_sums(g, y, dim):
    """sum(g * y) over a dim that is not the last, as _vec_softmax_backward forms it: a
    running sum from 0 down the dim, each g*y added by a fused multiply-add (FMA
    contraction), one float32 rounding a step. Past FMA_STEPS_MAX steps (a numpy call
    each) the products are rounded first instead."""
    n = y.shape[dim]
    if y.dtype != np.float32 or g.dtype != np.float32 or n > FMA_STEPS_MAX:
        return dim_sums_in_order(g * y, dim)
    gs, ys = np.moveaxis(g, dim, 0), np.moveaxis(y, dim, 0)
    total = np.zeros(ys.shape[1:], np.float32)
    step = np.empty(ys.shape[1:], np.float64)
    for k in range(n):
        np.multiply(gs[k], ys[k], out=step, dtype=np.float64)  # exact
        step += total
        total[...] = step  # rounded once
    return np.expand_dims(total, dim)


def _exact_softmax_backward(g, y, dim):
    """_softmax_backward_data: y * (g - sum(g * y))."""
    if y.ndim == 0:
        return (y * (g - g * y)).astype(y.dtype, copy=False)
    if dim != y.ndim - 1 and y.dtype in LANES:
        return y * (g - _fused_dim_sums(g, y, dim))
    return y * (g - _row_sums(g * y, dim))


def _exact_log_softmax_backward(g, y, dim):
    """_log_softmax_backward_data: g - exp(y) * sum(g). PyTorch's kernel is compiled with
    FMA contraction, so for float32 the difference is rounded once; its exp is SLEEF's
    (glibc's in the scalar tail of a dim that is not the last)."""
    if y.ndim == 0:
        return (g - np.exp(y) * g).astype(y.dtype, copy=False)
    total = _row_sums(g, dim)
    if y.dtype == np.float32 and g.dtype == np.float32:
        e = vec_exp32(y) if dim == y.ndim - 1 else _exp_chunked(y, dim)
        return fused_minus_product32(g, e, total)
    if y.dtype == np.float64 and g.dtype == np.float64:
        return fused_minus_product64(g, np.exp(y), total)
    return g - np.exp(y) * total


def _exp64(x):
    with np.errstate(over="ignore"):
        return np.exp(x)


def softmax_forward(a, dim):
    if _switch.EXACT:
        return _exact_softmax(a, dim)
    if a.size == 0:
        return a.copy()
    if a.ndim == 0:
        return softmax_forward(a.reshape(1), 0).reshape(())
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        e = np.exp(a - np.max(a, axis=dim, keepdims=True))
        return e / np.sum(e, axis=dim, keepdims=True)


def log_softmax_forward(a, dim):
    if _switch.EXACT:
        return _exact_log_softmax(a, dim)
    if a.size == 0:
        return a.copy()
    if a.ndim == 0:
        return log_softmax_forward(a.reshape(1), 0).reshape(())
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        shifted = a - np.max(a, axis=dim, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


def softmax_backward(g, y, dim):
    """_softmax_backward_data: y * (g - sum(g * y))."""
    if _switch.EXACT:
        return _exact_softmax_backward(g, y, dim)
    if y.ndim == 0:
        return (y * (g - g * y)).astype(y.dtype, copy=False)
    return y * (g - np.sum(g * y, axis=dim, keepdims=True))


def log_softmax_backward(g, y, dim):
    """_log_softmax_backward_data: g - exp(y) * sum(g)."""
    if _switch.EXACT:
        return _exact_log_softmax_backward(g, y, dim)
    if y.ndim == 0:
        return (g - _exp64(y) * g).astype(y.dtype, copy=False)
    return g - _exp64(y) * np.sum(g, axis=dim, keepdims=True)
