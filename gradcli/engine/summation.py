"""Whole-tensor float sums in PyTorch's order, so `x.sum()` and `x.mean()` give its bits.

Float addition is not associative, and numpy and PyTorch add in different orders: on
random float32 vectors of 5 to 1,000 elements numpy's pairwise sum gave PyTorch's last
bit only 17-50% of the time, and a printed `tensor(1234.5677)` differed in 62% of sums
of 100 values of size 100. PyTorch's CPU kernel (2.x, AVX2: 8 float32 or 4 float64
lanes) adds, as measured against it bit for bit:

- the whole vectors (`lanes` elements each) with four vector accumulators taking turns
  (vector 4g+k goes to accumulator k), each a cascade: runs of `step` = 2^max(4,
  ceil(log2(groups)) // 4) groups summed in order from 0, those run sums summed `step`
  at a time into a second level, those into a third, the rest into a fourth; at the end
  the leftover runs and the levels are added to the first; the leftover vectors (fewer
  than four) go to accumulator 0; then accumulators 0+1+2+3;
- then, from 0, the tail elements past the last whole vector, then the lanes in order;
- fewer elements than one vector: the same four-accumulator scheme on the elements;
- 32,768 elements or more on several threads: one chunk per thread (at most one per
  32,768 elements), each summed as above, and the chunks added in order from 0.

"In order" sums here are numpy reductions over a non-innermost axis, which numpy runs
as a plain loop (its pairwise summation applies only along the innermost axis), plus
0.0 so that a sum of negative zeros is +0.0 as one started from 0.
tests/test_engine_summation.py compares the result with PyTorch's on many sizes.
"""

from __future__ import annotations

import numpy as np

from .dtypes import float32, float64

_F32, _F64 = float32.np, float64.np
LANES = {_F32: 8, _F64: 4}  # an AVX2 vector of each
GRAIN = 32768  # at::internal::GRAIN_SIZE: below it a reduction stays on one thread
_add_reduce = np.add.reduce


def _in_order(rows):
    """rows[0] + rows[1] + ... from 0, left to right, for each element of a row."""
    if len(rows) == 0:
        return np.zeros(rows.shape[1:], rows.dtype)
    return _add_reduce(rows, axis=0) + 0.0


def _runs(rows, step: int):
    """Each run of `step` consecutive rows summed in order: len(rows) // step rows."""
    whole = len(rows) // step
    grouped = rows[: whole * step].reshape((whole, step) + rows.shape[1:])
    if whole < 64 or not rows.flags.c_contiguous:
        return _add_reduce(grouped, axis=1) + 0.0
    # many runs: reduced over the middle axis, numpy's inner loop is one row (16-32
    # elements) long. Regrouped so the j-th rows of all runs lie together, the sum is a
    # reduce over the first axis, in order over long rows. The regrouping copies each row
    # as one opaque element (a row of floats copied element-wise costs as much as the
    # additions it saves): a 512x512 float64 sum takes 0.25 ms instead of 0.35 here.
    block = np.dtype((np.void, rows.itemsize * (rows.size // max(len(rows), 1))))
    by_j = grouped.reshape(whole, step, -1).view(block).transpose(1, 0, 2)
    by_j = np.ascontiguousarray(by_j).view(rows.dtype).reshape((step, whole) + rows.shape[1:])
    return _in_order(by_j)


def _cascade(rows):
    """The four-level cascade over `rows` (its first axis), each row's elements apart."""
    size = len(rows)
    step = 1 << max(4, (size - 1).bit_length() // 4 if size > 1 else 0)
    if size < step:  # no run completes: every row goes to the first level, in order
        return _in_order(rows)
    level1 = _runs(rows, step)
    level2 = _runs(level1, step)
    level3 = _runs(level2, step)
    total = _in_order(rows[len(level1) * step:])
    total += _in_order(level1[len(level2) * step:])
    total += _in_order(level2[len(level3) * step:])
    total += _in_order(level3)
    return total


def _four_accumulators(items):
    """items[4g+k] summed into accumulator k (the cascade), leftovers into 0, then 0+1+2+3."""
    groups = len(items) // 4
    if groups < 2 and items.ndim == 1:  # under 8 elements: at most one group of four
        order = range(len(items)) if groups == 0 else (0, *range(4, len(items)), 1, 2, 3)
        return _scalars_in_order(items.dtype, [items[i] for i in order])
    acc = _cascade(items[: groups * 4].reshape((groups, 4) + items.shape[1:]))
    first = acc[0]
    for item in items[groups * 4:]:
        first = first + item
    return ((first + acc[1]) + acc[2]) + acc[3]


def _chunk(flat):
    """One thread's share (at least one element)."""
    lanes = LANES[flat.dtype]
    whole = len(flat) // lanes
    if whole == 0:
        return _four_accumulators(flat)
    vector = _four_accumulators(flat[: whole * lanes].reshape(whole, lanes))
    return _scalars_in_order(flat.dtype, [*flat[whole * lanes:], *vector])


def _scalars_in_order(dtype, values):
    """0 + values[0] + values[1] + ... in numpy scalars: one rounding per addition, in
    the dtype (a handful of values: cheaper than any array call)."""
    total = dtype.type(0)
    for value in values:
        total = total + value
    return total


def _memory_order(a: np.ndarray):
    """`a`'s elements as a 1-D view in the order they lie in memory (the order PyTorch's
    iterator walks a dense tensor in, transposed or permuted); None when `a` does not
    fill one block of memory (a slice with steps, an expanded view)."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return a.ravel(order="K")
    if min(a.strides) < 0:
        return None
    dense = a.transpose(sorted(range(a.ndim), key=lambda i: -a.strides[i]))
    return dense.reshape(-1) if dense.flags.c_contiguous else None


def torch_order_sum(a: np.ndarray, threads: int):
    """The sum of all of `a` (float32 or float64, filling one block of memory) as
    PyTorch's CPU kernel adds it with `threads` threads; None for other arrays (numpy's
    sum then)."""
    if a.dtype not in LANES:
        return None
    flat = _memory_order(a)
    if flat is None:
        return None
    n = len(flat)
    if n == 0:
        return np.zeros((), flat.dtype)
    if n >= GRAIN and threads > 1:
        tasks = min(threads, -(-n // GRAIN))
        size = -(-n // tasks)
        total = np.zeros((), flat.dtype)
        for start in range(0, n, size):  # (in turn: on threads of ours it was no faster)
            total = total + _chunk(flat[start:start + size])
        return np.asarray(total)
    return np.asarray(_chunk(flat))
