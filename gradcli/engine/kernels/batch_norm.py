"""Batch norm's forward in the order PyTorch's CPU kernel computes it, so that float32
results (BatchNorm1d/2d/3d, F.batch_norm, native_batch_norm) carry PyTorch's bits.

This is PyTorch's formula order, not a vendor library: aten's batch_norm_cpu_collect_stats,
batch_norm_cpu_update_stats_template and batch_norm_cpu_transform_input, as compiled in its
AVX2/AVX-512 kernels (the two agree on every step below; the compiler contracts a*b + c to a
fused multiply-add in the vectorised kernel files, not in Normalization.cpp):

- statistics, input contiguous with an image (N, C, L...) of more than one element: per
  channel, the sum of the float32 inputs in float64, the mean that sum / N rounded to
  float32; the squared deviations (x - mean)**2 each rounded to float32 and summed in
  float64, rounded to float32 (var_sum).
- statistics, one element per image ((N, C), (N, C, 1), (N, C, 1, 1)) or a channels-last
  input: the kernel's row-wise path. The N rows are cut into one piece per thread
  (at::parallel_for's pieces for `torch.get_num_threads()` threads: pieces of ceil(N / T)
  rows; one piece when N <= T); each piece sums its rows in float32, in row order, and the
  pieces' sums are added in float64. The variance sums the same way with
  acc = fma(x - mean, x - mean, acc) in float32.
- invstd (training) = 1 / sqrt(float32(var_sum / N) + eps) in float64, rounded to float32;
  invstd (evaluation) = 1 / sqrt(running_var + float32(eps)), all in float32.
- alpha = invstd * weight, beta = fma(-mean, alpha, bias), out = fma(x, alpha, beta).
- running_mean = 0.1f * mean + 0.9f * running_mean in float32 (momentum as float32),
  running_var = momentum * float32(var_sum / (N - 1)) + float32(0.9f * running_var) in
  float64, rounded to float32.

With GRADCLI_EXACT_KERNELS off, and for other dtypes or layouts, everything is computed in
float64 and rounded once (within torch.testing's tolerances of PyTorch's values). float64
follows the same order without fused multiply-adds (PyTorch's double FMAs would need an
exact double product at every step; float64's last bits are beyond its tolerance anyway).
"""

from __future__ import annotations

import numpy as np

from .. import kernels as _switch
from ..parallel import get_num_threads

_F32, _F64 = np.float32, np.float64
_TIE_BITS = np.uint64((1 << 29) - 1)  # the float64 mantissa bits float32 drops
_TIE = np.uint64(1 << 28)  # ... exactly half of float32's last place


def fma32(a, b, c):
    """a*b + c for float32 arrays, rounded once as a fused multiply-add does: a*b is exact
    in float64; the float64 sum s is off by err (Knuth's two-sum), which matters only when
    s is a float32 halfway point: then the true value lies on err's side of it."""
    p = np.multiply(a, b, dtype=_F64)
    c64 = np.asarray(c, dtype=_F64)
    s = p + c64
    v = s - p
    err = (p - (s - v)) + (c64 - v)
    with np.errstate(invalid="ignore"):
        tie = ((s.view(np.uint64) & _TIE_BITS) == _TIE) & (err != 0)
    if tie.any():
        s = np.where(tie, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s.astype(_F32)


def _fma_squares32(dev: np.ndarray) -> np.ndarray:
    """acc = fma(d, d, acc) over the rows of the float32 `dev`, in row order, from zero: the
    squares are exact in float64, each float64 sum is rounded to float32 (fma32's halfway
    check done only where a sum lands on a float32 halfway point)."""
    squares = np.square(dev, dtype=_F64)
    acc = np.zeros(dev.shape[1], _F64)
    for p in squares:
        s = acc + p
        tie = (s.view(np.uint64) & _TIE_BITS) == _TIE
        if tie.any():
            s32 = fma32(np.sqrt(p), np.sqrt(p), acc.astype(_F32))  # (p is a square of a float32)
            acc = s32.astype(_F64)
        else:
            acc = s.astype(_F32).astype(_F64)
    return acc


def _exact(x: np.ndarray) -> bool:
    return _switch.EXACT and x.dtype in (_F32, _F64)


def _rows_layout(x: np.ndarray):
    """x as (rows, C) when PyTorch's kernel takes its row-wise path: one element per image
    (a contiguous (N, C, 1...)), or a channels-last contiguous 4-d/5-d input. Else None."""
    c = x.shape[1]
    if x.size // (x.shape[0] * c) == 1 and x.flags.c_contiguous:
        return x.reshape(-1, c)
    if x.ndim in (4, 5) and not x.flags.c_contiguous:
        last = np.moveaxis(x, 1, -1)
        if last.flags.c_contiguous:
            return last.reshape(-1, c)
    return None


def _pieces(n: int):
    threads = get_num_threads()
    if n <= threads:
        return [(0, n)]
    step = -(-n // min(threads, n))
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


def _running_sum(rows: np.ndarray) -> np.ndarray:
    """The column sums of `rows` added one row at a time in rows' dtype, from zero."""
    if len(rows) == 0:
        return np.zeros(rows.shape[1], rows.dtype)
    return np.add.accumulate(rows, axis=0)[-1] + rows.dtype.type(0)


def batch_stats(x: np.ndarray):
    """(mean, var_sum) per channel of a training batch, in x's dtype, as PyTorch's
    collect_stats computes them (var_sum: the sum of squared deviations from the mean)."""
    c = x.shape[1]
    n = x.size // c
    dtype = x.dtype
    rows = _rows_layout(x) if _exact(x) else None
    if rows is not None:
        pieces = _pieces(n)
        total = np.zeros(c, _F64)
        for lo, hi in pieces:
            total += _running_sum(rows[lo:hi])
        mean = (total / n).astype(dtype)
        dev = rows - mean
        total = np.zeros(c, _F64)
        for lo, hi in pieces:
            total += (_fma_squares32(dev[lo:hi]) if dtype == _F32
                      else _running_sum(dev[lo:hi] * dev[lo:hi]))
        return mean, total.astype(dtype)
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, c) + (1,) * (x.ndim - 2)
    with np.errstate(over="ignore", invalid="ignore"):
        if _exact(x) and x.flags.c_contiguous:
            mean = (x.sum(axis=axes, dtype=_F64) / n).astype(dtype)
            dev = x - mean.reshape(shape)
            var_sum = np.sum(dev * dev, axis=axes, dtype=_F64).astype(dtype)
        else:
            x64 = x.astype(_F64)
            mean64 = x64.mean(axis=axes)
            dev = x64 - mean64.reshape(shape)
            var_sum = (dev * dev).sum(axis=axes).astype(dtype)
            mean = mean64.astype(dtype)
    return mean, var_sum


def train_invstd(var_sum: np.ndarray, n: int, eps: float) -> np.ndarray:
    """1 / sqrt(var + eps): the biased variance var_sum / n in var_sum's dtype, the rest in
    float64, rounded to var_sum's dtype (0 where var and eps are both 0, as PyTorch's)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        var = (var_sum / var_sum.dtype.type(n)).astype(_F64)
        invstd = 1 / np.sqrt(var + eps)
    if eps == 0:
        invstd = np.where(var == 0, 0.0, invstd)
    return invstd.astype(var_sum.dtype)


def eval_invstd(running_var: np.ndarray, eps: float, dtype) -> np.ndarray:
    """1 / sqrt(running_var + eps) in the input's dtype (float32 throughout for float32)."""
    rv = running_var.astype(dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        if _switch.EXACT and np.dtype(dtype) in (_F32, _F64):
            return (np.dtype(dtype).type(1) / np.sqrt(rv + np.dtype(dtype).type(eps))).astype(dtype)
        return (1 / np.sqrt(rv.astype(_F64) + eps)).astype(dtype)


def transform(x: np.ndarray, weight, bias, mean: np.ndarray, invstd: np.ndarray) -> np.ndarray:
    """weight * (x - mean) * invstd + bias, per channel: alpha = invstd * weight,
    beta = bias - mean * alpha, out = x * alpha + beta (fused multiply-adds for float32)."""
    c = x.shape[1]
    dtype = x.dtype
    shape = (1, c) + (1,) * (x.ndim - 2)
    w = weight.astype(dtype, copy=False) if weight is not None else None
    b = bias.astype(dtype, copy=False) if bias is not None else None
    if not _exact(x):
        mean64 = mean.astype(_F64).reshape(shape)
        with np.errstate(all="ignore"):
            y = (x - mean64) * invstd.astype(_F64).reshape(shape)
            if w is not None:
                y = y * w.reshape(shape)
            if b is not None:
                y = y + b.reshape(shape)
        return (y + 0.0).astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        alpha = invstd * w if w is not None else invstd.astype(dtype)
        zero = np.zeros(c, dtype)
        if dtype == _F32:
            beta = fma32(-mean, alpha, b if b is not None else zero)
            out = fma32(x, alpha.reshape(shape), beta.reshape(shape))
        else:
            beta = (b if b is not None else zero) - mean * alpha
            out = x * alpha.reshape(shape) + beta.reshape(shape)
    return out


def update_running(running_mean, running_var, mean, var_sum, n: int, momentum: float,
                   contiguous: bool = True) -> None:
    """The running statistics after a training batch, written in place (mean, var_sum from
    batch_stats; running_var gets the unbiased variance var_sum / (n - 1))."""
    with np.errstate(all="ignore"):
        if contiguous and _switch.EXACT and var_sum.dtype == _F32:  # (a float32 quotient)
            unbiased = (var_sum / _F32(n - 1) if n > 1 else var_sum * _F32(np.inf)).astype(_F64)
        else:
            unbiased = var_sum.astype(_F64) / (n - 1) if n > 1 else var_sum.astype(_F64) * np.inf
        if running_mean is not None:
            rm = running_mean
            if contiguous and _switch.EXACT and rm.dtype == _F32:
                m = _F32(momentum)
                rm[...] = m * mean.astype(_F32) + (_F32(1) - m) * rm
            else:
                rm[...] = (momentum * mean.astype(_F64) + (1 - momentum) * rm).astype(rm.dtype)
        if running_var is not None:
            rv = running_var
            if contiguous and _switch.EXACT and rv.dtype == _F32:
                m = _F32(momentum)
                rv[...] = (np.float64(m) * unbiased
                           + ((_F32(1) - m) * rv).astype(_F64)).astype(_F32)
            else:
                rv[...] = (momentum * unbiased + (1 - momentum) * rv).astype(rv.dtype)
