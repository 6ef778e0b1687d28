"""Which zero, +0. or -0., max()/min()/amax/amin return when zeros of both signs tie for
the result: it follows the order of PyTorch's reduction kernels (AVX2 max/min keep one
operand on a tie, the scalar code the other) and it prints. With the switch off, numpy's
max/min stand.

engine/ops/reductions.py builds the forwards of those ops with extreme_all and
zero_as_kernel.
"""

from __future__ import annotations

import builtins as _builtins
from math import prod as _prod

import numpy as np

from .. import kernels as _switch
from ..parallel import POOL
from .summation import GRAIN, LANES

# vec_reduce_all's lane shuffles for float32 (AVX2); float64 lanes are combined in order
_FOLDS = ([4, 5, 6, 7, 0, 1, 2, 3], [2, 3, 0, 1, 6, 7, 4, 5], [1, 0, 3, 2, 5, 4, 7, 6])


def _picked_in_order(values, prefer_first):
    """values[0] against each next one in turn, the next one kept on a tie (a vector op)."""
    acc = values[0]
    for x in values[1:]:
        acc = acc if prefer_first(acc, x) else x
    return acc


def _zero_as_reduce_all(flat, prefer_first):
    """Which zero (+0. or -0.) PyTorch's max()/min() return when the result is a zero:
    vec::reduce_all's order, where maximum(a, b)/minimum(a, b) (AVX2 max/min) give b on a
    tie: lanes of a vector accumulator, the tail into the first lanes, then the lanes
    folded by halves (float32) or taken in order (float64). 32,768 elements or more are
    cut into one range per thread, whose results the scalar op combines in order, keeping
    the first on a tie. `prefer_first(a, b)`: a strictly wins."""
    n = flat.size
    lanes = LANES[flat.dtype]
    tasks = _builtins.min(POOL.threads, -(-n // GRAIN)) if n > GRAIN else 1
    size = -(-n // tasks)
    result = None
    for start in range(0, n, size):
        part = flat[start:start + size]
        if part.size < lanes:
            acc = _picked_in_order(part, prefer_first)
        else:
            full = part.size - part.size % lanes
            acc = part[:lanes]
            for d in range(lanes, full, lanes):
                acc = np.where(prefer_first(acc, part[d:d + lanes]), acc, part[d:d + lanes])
            tail = part[full:]
            if tail.size:
                head = acc[:tail.size]
                acc = np.concatenate([np.where(prefer_first(head, tail), head, tail), acc[tail.size:]])
            if lanes == 8:
                for shuffle in _FOLDS:
                    acc = np.where(prefer_first(acc, acc[shuffle]), acc, acc[shuffle])
                acc = acc[0]
            else:
                acc = _picked_in_order(acc, prefer_first)
        result = acc if result is None or prefer_first(acc, result) else result
    return result


def extreme_all(reduce, prefer_first):
    """max()/min(): numpy's result, unless it is a zero and zeros of both signs tie for it."""
    def forward(a, shape, dims, keepdim):
        out = reduce(a)
        if out == 0 and a.dtype in LANES and _switch.EXACT:
            signs = np.signbit(a[a == 0])
            if signs.any() and not signs.all():
                return np.asarray(_zero_as_reduce_all(np.ascontiguousarray(a).reshape(-1),
                                                      prefer_first))
        return out

    return forward


def _inner_extremum(x, vector_pick, scalar_pick):
    """Each row of x (M, n) reduced as binary_kernel_reduce_vec reduces a contiguous dim:
    four vector accumulators over blocks of 4 vectors, combined (0 with 1, 2 with 3, then
    the two), their lanes in order, then the elements after the last block one by one."""
    lanes = LANES[x.dtype]
    block = 4 * lanes
    count = x.shape[1] // block
    if count:
        acc = x[:, :block].reshape(-1, 4, lanes)
        for i in range(1, count):
            acc = vector_pick(acc, x[:, i * block:(i + 1) * block].reshape(-1, 4, lanes))
        acc = vector_pick(vector_pick(acc[:, 0], acc[:, 1]), vector_pick(acc[:, 2], acc[:, 3]))
        out = acc[:, 0]
        for j in range(1, lanes):
            out = scalar_pick(out, acc[:, j])
    else:
        out = x[:, 0]
    for k in range(_builtins.max(1, count * block), x.shape[1]):
        out = scalar_pick(out, x[:, k])
    return out


def _outer_extremum(x, vector_pick, scalar_pick):
    """x (A, R, C) reduced over R as vectorized_outer_reduction does: columns in blocks of
    4 vectors run down the rows with vector ops, the remaining columns one by one."""
    cut = x.shape[2] // (4 * LANES[x.dtype]) * (4 * LANES[x.dtype])
    vec, one = x[:, 0, :cut], x[:, 0, cut:]
    for r in range(1, x.shape[1]):
        vec = vector_pick(vec, x[:, r, :cut])
        one = scalar_pick(one, x[:, r, cut:])
    return np.concatenate([vec, one], axis=-1)


def _in_memory_order(a, dims):
    """a with its axes in memory order (largest stride first), as PyTorch's iterator walks
    it, contiguous; the reduced dims renumbered; and the permutation that undoes it."""
    order = sorted(range(a.ndim), key=lambda ax: -a.strides[ax])
    x = np.ascontiguousarray(np.transpose(a, order))
    return x, tuple(order.index(ax) for ax in dims), np.argsort(order)


def zero_as_kernel(greater):
    """amax/amin as PyTorch's reduction kernels give a zero result: +0. and -0. compare
    equal, and which one is returned follows the kernel's order, where a vector op (AVX2
    max/min) keeps its second operand on a tie and the scalar op its first. Emulated for
    a reduction over one block of neighbouring dims of a contiguous array (inner or outer
    reduction; a whole-tensor one of 32,768 elements or more in one range per thread, the
    ranges' results combined in order); otherwise the first zero along the dims."""
    def vector_pick(a, b):
        return np.where(greater(a, b), a, b)

    def scalar_pick(a, b):
        return np.where(greater(b, a), b, a)

    def forward(a, shape, dims, keepdim):
        out = reduce(a, axis=dims, keepdims=keepdim)
        if not _switch.EXACT or a.dtype not in LANES or a.size <= 1 or np.all(out):  # (nan counts as nonzero)
            return out
        x, dims, back = _in_memory_order(a, dims)
        lo, hi = (_builtins.min(dims), _builtins.max(dims)) if dims else (0, -1)
        if sorted(dims) != list(range(lo, hi + 1)):
            kept = [ax for ax in range(x.ndim) if ax not in dims]
            rows = np.transpose(x, kept + list(dims)).reshape([x.shape[ax] for ax in kept] + [-1])
            picked = np.take_along_axis(rows, np.argmax(rows == 0, axis=-1)[..., None], -1)
        else:
            before, size = _prod(x.shape[:lo]), _prod(x.shape[lo:hi + 1])
            after = _prod(x.shape[hi + 1:])
            if after > 1:
                picked = _outer_extremum(x.reshape(before, size, after), vector_pick, scalar_pick)
            elif before == 1 and size >= GRAIN and POOL.threads > 1:
                flat = x.reshape(1, -1)
                step = -(-size // _builtins.min(POOL.threads, -(-size // GRAIN)))
                picked = None
                for begin in range(0, size, step):
                    part = _inner_extremum(flat[:, begin:begin + step], vector_pick, scalar_pick)
                    picked = part if picked is None else scalar_pick(picked, part)
            else:
                picked = _inner_extremum(x.reshape(before, size), vector_pick, scalar_pick)
        kept_shape = [1 if ax in dims else n for ax, n in enumerate(x.shape)]
        picked = np.transpose(picked.reshape(kept_shape), back).reshape(out.shape)
        return np.where(out == 0, picked, out)

    reduce = np.max if greater is np.greater else np.min
    return forward
