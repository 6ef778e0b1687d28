"""Float sums in PyTorch's order, so `x.sum()`, `x.sum(dim)` and the means give its bits.

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

Sums over dims (`torch_order_sum_dims`, for `x.sum(dim)` / `x.mean(dim)`; the mean is
that sum divided by the count, in the dtype), as measured against PyTorch 2.13 bit for
bit on contiguous, transposed, permuted and stepped float32/float64 inputs:

- the iterator orders the loop dims innermost first: the reduced dims by their stride,
  then the kept dims in the (contiguous) output's order; size-1 dims vanish and
  neighbours where one continues the other in memory merge. The innermost reduced dim
  (n elements, stride s0) is the kernel's "row";
- a row that is contiguous and at least one vector long is added as a whole-tensor
  chunk above (vectors into four accumulators, then tail, then lanes);
- else, with one reduced dim whose rows are not contiguous and the innermost kept dim
  (stride s1) contiguous and a vector wide or more, columns in blocks of 4*lanes each
  get the plain cascade down the reduced dim, the columns after the last block
  row_sum's order (element 4g+k into accumulator k, each a cascade, leftovers into 0,
  then 0+1+2+3); if s0 > s1 otherwise: blocks of 4 columns the cascade, the rest
  row_sum; if s0 < s1: row_sum for every column;
- several reduced dims that do not merge: each output is 0 + its rows in loop order,
  each row summed as above (contiguous: the chunk order, else row_sum);
- threads: with 32,768 elements or more, a single output is cut into one range of the
  iteration per thread (pieces of rows summed on their own, buffers added from 0); more
  outputs are split along the outermost kept dim, which changes the column blocks only
  when that dim is the innermost kept one and not contiguous (contiguous columns are
  rounded to 128 bytes, a whole number of blocks).

numpy's sum stays for what is not float32/float64 (and for all with the switch of
gradcli.engine.kernels off), empty inputs, sums over no dim, and
inputs with negative or zero (broadcast) strides.

"In order" sums here are numpy reductions over a non-innermost axis, which numpy runs
as a plain loop (its pairwise summation applies only along the innermost axis), plus
0.0 so that a sum of negative zeros is +0.0 as one started from 0; along an innermost
axis, accumulate (always a plain loop) or a copy that moves the axis out.
tests/test_engine_summation.py and tests/test_engine_dim_summation.py compare the
results with PyTorch's on many sizes and layouts.
"""

from __future__ import annotations

import numpy as np

from .. import kernels as _switch
from ..dtypes import float32, float64

_F32, _F64 = float32.np, float64.np
LANES = {_F32: 8, _F64: 4}  # an AVX2 vector of each
GRAIN = 32768  # at::internal::GRAIN_SIZE: below it a reduction stays on one thread
_add_reduce = np.add.reduce
_add_accumulate = np.add.accumulate  # always in order, along any axis


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
    # elements) long; with the j-th rows of all runs brought together it is a reduce over
    # the first axis, in order over long rows (a 512x512 float64 sum: 0.25 ms, not 0.35)
    by_j = _moved_first(grouped.reshape(whole, step, -1), 1)
    return _in_order(by_j.reshape((step, whole) + rows.shape[1:]))


def _moved_first(x, axis: int):
    """A C-contiguous copy (or view) of x with `axis` moved to the front, the others in order. x's
    last axis must be contiguous; each of its rows is copied as one opaque element (a
    row of floats copied element by element costs as much as the additions it saves)."""
    shape = x.shape
    if x.flags.c_contiguous and all(size == 1 for size in shape[:axis]):  # nothing moves
        return x.reshape(shape[axis:axis + 1] + shape[:axis] + shape[axis + 1:])
    block = np.dtype((np.void, shape[-1] * x.itemsize))
    order = (axis, *range(axis), *range(axis + 1, x.ndim))
    moved = np.ascontiguousarray(x.view(block).transpose(order))
    return moved.view(x.dtype).reshape(moved.shape[:-1] + x.shape[-1:])


def _cascade(rows):
    """The four-level cascade over `rows` (its first axis), each row's elements apart."""
    size = len(rows)
    step = 1 << max(4, (size - 1).bit_length() // 4 if size > 1 else 0)
    if size < step:  # no run completes: every row goes to the first level, in order
        return _in_order(rows)
    level1 = _runs(rows, step)
    total = _in_order(rows[len(level1) * step:])
    # a level with no complete run leaves the ones above it empty: their sums, +0, would
    # change nothing (total, started from +0, is never -0), so they are not computed
    if len(level1) < step:
        total += _in_order(level1)
        return total
    level2 = _runs(level1, step)
    total += _in_order(level1[len(level2) * step:])
    if len(level2) < step:
        total += _in_order(level2)
        return total
    level3 = _runs(level2, step)
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


_ROW_PLANS: dict = {}


def _row_plan(n: int, dtype):
    """_row_one_level's cuts for a row of n elements of `dtype` (shape arithmetic only, so
    kept per (n, dtype)), or None where the cascade has not one level: lanes, the width of
    a group of four vectors, the whole runs of 16 groups and where they end, the groups
    after the last run and where they end, the vectors after the last group (fewer than
    four) and where the whole vectors end; the table's shape and maker (zeros where
    leftover vectors fill only accumulator 0's lanes of their rows), the dtype's zero."""
    plan = _ROW_PLANS.get((n, dtype))
    if plan is None:
        lanes = LANES[dtype]
        whole = n // lanes
        groups = whole // 4
        plan = False
        if 2 <= groups < 256:
            width = 4 * lanes
            runs = groups // 16
            rest = groups - runs * 16
            extra = whole - groups * 4
            plan = (lanes, width, runs, runs * 16 * width, rest, groups * width, extra,
                    whole * lanes, (runs + (rest > 0) + extra, width),
                    np.zeros if extra else np.empty, dtype.type(0))
        if len(_ROW_PLANS) > 4096:
            _ROW_PLANS.clear()
        _ROW_PLANS[(n, dtype)] = plan
    return plan or None


def _row_one_level(flat):
    """_chunk / _lane_rows of a 1-D contiguous row whose cascade has one level (2 to 255
    groups of four vectors: 64 to 8,191 float32, 32 to 4,095 float64), in a handful of
    numpy calls; None for other rows. (A loss's sum and a bias gradient of a few thousand
    elements: bench W7.)

    The four accumulators are the four vectors of a 4*lanes wide row, so each numpy
    reduce below adds all four at once. Each accumulator's runs of 16 groups are summed
    in one reduce over the middle axis, the groups after the last run in another (both
    plain loops in numpy, unlike reduceat, which adds a slice in another order), each
    into its own row of a small table; the leftover vectors (into accumulator 0) are rows
    of that table too, zero in the other accumulators' lanes. One reduce over the table's
    rows (in order: the leading axis) then adds the run sums in order, the rest's sum (its
    sum with the runs' total is the cascade's last addition, and addition commutes) and
    the leftover vectors. Adding +0 to the other accumulators changes no value, and the
    sign of a zero needs no care: every sum here ends in the final chain from +0, which
    is +0 whenever the other orders would give a zero."""
    plan = _row_plan(len(flat), flat.dtype)
    if plan is None:
        return None
    lanes, width, runs, cut, rest, used, extra, end, table_shape, alloc, zero = plan
    # (the runs and the rest cut from the row directly, a view each: no grouped view first)
    if runs == 0:  # no run completes: each accumulator its groups in order
        acc = _add_reduce(flat[:used].reshape(rest, width), axis=0)
        for j in range(used, end, lanes):  # the leftover vectors, into accumulator 0
            acc[:lanes] += flat[j:j + lanes]
    else:
        table = alloc(table_shape, flat.dtype)
        _add_reduce(flat[:cut].reshape(runs, 16, width), axis=1, out=table[:runs])
        if rest:
            _add_reduce(flat[cut:used].reshape(rest, width), axis=0, out=table[runs])
        if extra:
            table[-extra:, :lanes] = flat[used:end].reshape(extra, lanes)
        acc = _add_reduce(table, axis=0) if len(table) > 1 else table[0]
    # ((acc0 + acc1) + acc2) + acc3 in one call: a reduce over the leading axis adds the
    # rows in order (see mkl._in_order)
    vector = _add_reduce(acc.reshape(4, lanes), axis=0)
    if end < len(flat):
        vector = np.concatenate((flat[end:], vector))
    return _add_accumulate(vector)[-1] + zero


def _chunk(flat):
    """One thread's share (at least one element)."""
    fast = _row_one_level(flat)
    if fast is not None:
        return fast
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
    if a.dtype not in LANES or not _switch.EXACT:
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


# ------------------------------------------------------------ sums over dims
def _zero_started(x, axis):
    """x summed along `axis` in order from 0 (x's `axis` must not be its innermost one
    in memory: numpy adds along that one pairwise)."""
    return _add_reduce(x, axis=axis, initial=0.0)


def _chain(x, order):
    """0 + x[order[0]] + x[order[1]] + ... along x's axis 0, in that order."""
    total = x[order[0]] + 0.0
    for i in order[1:]:
        total += x[i]
    return total


def _scalar_rows(x):
    """row_sum along x's axis 0 (each column apart): element 4g+k into accumulator k
    (each the cascade), the leftover elements into accumulator 0, then 0+1+2+3."""
    size = len(x)
    groups = size // 4
    columns = x.size // size if size else 0
    if groups < 2:  # at most one element per accumulator: a chain of the elements
        order = range(size) if groups == 0 else (0, *range(4, size), 1, 2, 3)
        if columns < 2:
            return _chain(x, order)
        # a copy with the elements in chain order as its outer axis: added in order
        return _in_order(x.take(order, axis=0))
    grouped = x[: groups * 4].reshape((groups, 4) + x.shape[1:])
    acc = _cascade(grouped)  # (under 16 groups the cascade is the in-order sum)
    first = acc[0]
    for row in x[groups * 4:]:
        first += row
    if columns < 2:
        return ((first + acc[1]) + acc[2]) + acc[3]
    return _add_reduce(acc, axis=0)  # acc is contiguous: in order


def _lane_rows(y):
    """Each row of y (its last axis, contiguous, at least one vector long) as the
    vectorized inner sum adds it: vector 4g+k into vector accumulator k (each the
    cascade), the leftover vectors into accumulator 0, then 0+1+2+3 lane-wise; then
    from 0 the tail elements past the last vector and the lanes, in order."""
    if y.ndim == 1:
        fast = _row_one_level(y)
        if fast is not None:
            return fast
    lead, n = y.shape[:-1], y.shape[-1]
    lanes = LANES[y.dtype]
    whole = n // lanes
    groups = whole // 4
    tail = n - whole * lanes
    chain = np.zeros(lead + (1 + tail + lanes,), y.dtype)  # 0, the tail, the lanes
    if tail:
        chain[..., 1:1 + tail] = y[..., whole * lanes:]
    vector = chain[..., 1 + tail:]
    if groups == 0:  # accumulator 0 alone: the vectors in order
        vector[...] = y[..., :lanes]
        for j in range(1, whole):
            vector += y[..., j * lanes:(j + 1) * lanes]
    else:
        grouped = y[..., : groups * 4 * lanes].reshape(lead + (groups, 4 * lanes))
        if groups < 16:  # no run of the cascade completes: in order
            acc = _zero_started(grouped, -2)
        else:
            acc = _cascade(_moved_first(grouped, len(lead)))
        acc = acc.reshape(lead + (4, lanes))
        for j in range(groups * 4, whole):
            acc[..., 0, :] += y[..., j * lanes:(j + 1) * lanes]
        _add_reduce(acc, axis=-2, out=vector)  # in order: the lanes are the inner loop
    return _add_accumulate(chain, axis=-1)[..., -1]


def _coalesce(dims):
    """Loop dims (size, stride, axis), innermost first, merged where one continues the
    other: [size, stride, axes (outermost first)] each."""
    merged = []
    for size, stride, axis in dims:
        if merged and merged[-1][0] * merged[-1][1] == stride:
            merged[-1][0] *= size
            merged[-1][2].insert(0, axis)
        else:
            merged.append([size, stride, [axis]])
    return merged


def _split_chunks(sizes, threads, total, numel_out):
    """Which loop dim PyTorch splits across threads (an index into the output dims
    `sizes`, innermost first), or None when the reduction stays on one thread."""
    if total < GRAIN or threads < 2 or numel_out < 2:
        return None
    best = len(sizes) - 1
    for d in range(len(sizes) - 1, -1, -1):
        if sizes[d] >= threads:
            return d
        if sizes[d] > sizes[best]:
            best = d
    return best


def _column_kinds(m, s0, s1, itemsize, lanes, chunks):
    """For the outer reductions (the reduced dim not contiguous): the columns of the
    innermost output dim that the cascade adds (summed 4 or 4*lanes columns at a time)
    and those row_sum adds, as (kind, start, stop) runs."""
    runs = []
    for begin, end in chunks:
        count = end - begin
        if s1 == itemsize and count >= lanes:
            block = 4 * lanes
        elif s0 < s1:
            block = None
        else:
            block = 4
        cut = begin if block is None else begin + count // block * block
        for kind, lo, hi in ((_cascade, begin, cut), (_scalar_rows, cut, end)):
            if hi > lo:
                if runs and runs[-1][0] is kind and runs[-1][2] == lo:
                    runs[-1] = (kind, runs[-1][1], hi)
                else:
                    runs.append((kind, lo, hi))
    return runs


def _thread_ranges(count, threads, round_to):
    """at::parallel_for's ranges over `count` columns (grain 1), each start and (but the
    last) end rounded down to a multiple of `round_to`; empty ranges dropped."""
    tasks = min(threads, count)
    size = -(-count // tasks)
    ranges = []
    for begin in range(0, count, size):
        end = min(count, begin + size)
        if round_to > 1:
            begin -= begin % round_to
            if end != count:
                end -= end % round_to
        if end > begin:
            ranges.append((begin, end))
    return ranges


def _segment(row, vector_ok):
    """One piece of a row (1-D) as one call of the kernel's loop sums it."""
    if vector_ok and len(row) >= LANES[row.dtype]:
        return _lane_rows(row)
    return _scalar_rows(row)


def _two_pass(rows, vector_ok, threads):
    """A single output of GRAIN elements or more: the iteration (rows of the innermost
    reduced dim, in order) cut into one range per thread, each summed into its own
    buffer from 0 (pieces of rows on their own), the buffers added in order from 0."""
    count, width = rows.shape
    total_size = count * width
    tasks = min(threads, -(-total_size // GRAIN))
    size = -(-total_size // tasks)
    total = np.zeros((), rows.dtype)
    for begin in range(0, total_size, size):
        end = min(total_size, begin + size)
        values = []
        pos = begin
        while pos < end:
            r, c = divmod(pos, width)
            if c == 0 and end - pos >= width:
                full = (end - pos) // width
                block = rows[r:r + full]
                sums = _lane_rows(block) if vector_ok and width >= LANES[rows.dtype] else \
                    _scalar_rows(block.T)
                values.append(sums)
                pos += full * width
            else:
                stop = min(end, (r + 1) * width)
                values.append(_segment(rows[r, c:stop - r * width], vector_ok).reshape(1))
                pos = stop
        part = _add_accumulate(np.concatenate([np.zeros(1, rows.dtype)] + values))[-1]
        total = total + part
    return total


_PLANS: dict = {}
_MISSING = object()


def _viewer(ndim, perm, shape):
    """a.transpose(perm).reshape(shape) as a function, doing only what it must."""
    if perm == tuple(range(ndim)):
        return lambda a: a.reshape(shape)
    return lambda a: a.transpose(perm).reshape(shape)


def _make_plan(shape, strides, itemsize, dims, threads):
    """A function computing the sum over `dims` (not keepdim) as PyTorch's iterator and
    kernel add it, for arrays of this shape, strides and dtype; None for numpy's sum."""
    ndim = len(shape)
    if 0 in shape or any(strides[i] <= 0 and shape[i] > 1 for i in range(ndim)):
        return None
    lanes = LANES[np.dtype("f%d" % itemsize)]
    kept = [i for i in range(ndim) if i not in dims]
    out_shape = tuple(shape[i] for i in kept)
    numel_out = int(np.prod(out_shape, dtype=np.int64))
    total = int(np.prod(shape, dtype=np.int64))
    red = sorted((strides[i], i) for i in dims if shape[i] > 1)
    if len({s for s, _ in red}) != len(red):
        return None
    # the iterator's loop dims, innermost first: the reduced ones (by stride), then the
    # kept ones (the output's order); neighbours merged where one continues the other
    red_dims = _coalesce([(shape[i], s, i) for s, i in red])
    out_dims = _coalesce([(shape[i], strides[i], i) for i in reversed(kept) if shape[i] > 1])
    k, p = len(red_dims), len(out_dims)
    ones = [i for i in dims if shape[i] == 1]
    inner = red_dims[0][2] if k else []
    outer = [i for d in reversed(red_dims[1:]) for i in d[2]]
    out_view = tuple(d[0] for d in reversed(out_dims))
    red_view = tuple(d[0] for d in reversed(red_dims))
    # views of `a`: the kept dims then the reduced ones (rows), or the innermost reduced
    # dim first (columns)
    rows = _viewer(ndim, tuple(ones + kept + outer + inner), out_view + red_view)
    columns = _viewer(ndim, tuple(inner + ones + kept + outer), red_view[-1:] + out_view + red_view[:-1])
    shaped = (lambda r: r) if out_view == out_shape else (lambda r: r.reshape(out_shape))

    if k == 0:  # nothing of size > 1 reduced: each element on its own, added to 0
        return lambda a: shaped(rows(a) + 0.0)
    n0, s0 = red_dims[0][:2]
    vector_ok = s0 == itemsize
    vector = vector_ok and n0 >= lanes
    if p == 0 and total >= GRAIN and threads > 1:
        return lambda a: _two_pass(rows(a).reshape(-1, n0), vector_ok, threads).reshape(out_shape)
    if k >= 2:  # each output: 0 + the rows of the innermost reduced dim, in order
        rows_shape = out_view + (-1,)

        def plan(a):
            each = _lane_rows(rows(a)) if vector else _scalar_rows(columns(a))
            return shaped(_add_accumulate(each.reshape(rows_shape), axis=-1)[..., -1])
        return plan
    if vector:
        return _lane_plan(ndim, tuple(ones + kept + outer + inner), out_view + red_view,
                          None if out_view == out_shape else out_shape)
    if p == 0:
        return lambda a: shaped(_scalar_rows(columns(a)))
    m, s1 = out_dims[0][:2]
    chunks = [(0, m)]
    if _split_chunks([d[0] for d in out_dims], threads, total, numel_out) == 0:
        chunks = _thread_ranges(m, threads, 128 // itemsize if s1 == itemsize else 1)
    runs = _column_kinds(m, s0, s1, itemsize, lanes, chunks)
    if len(runs) == 1:
        kind = runs[0][0]
        return lambda a: shaped(kind(columns(a)))

    def plan_runs(a):
        x = columns(a)
        return shaped(np.concatenate([kind(x[..., lo:hi]) for kind, lo, hi in runs], axis=-1))
    return plan_runs


def _lane_plan(ndim, perm, view, out_shape):
    """shaped(_lane_rows(rows(a))) of _make_plan as one function (a bias gradient's sum
    back over its rows runs it every step): the transpose only where it moves an axis,
    the reshape to out_shape only where it is needed (None)."""
    if perm == tuple(range(ndim)):
        if out_shape is None:
            return lambda a: _lane_rows(a.reshape(view))
        return lambda a: _lane_rows(a.reshape(view)).reshape(out_shape)
    if out_shape is None:
        return lambda a: _lane_rows(a.transpose(perm).reshape(view))
    return lambda a: _lane_rows(a.transpose(perm).reshape(view)).reshape(out_shape)


def torch_order_sum_dims(a: np.ndarray, dims: tuple, threads: int):
    """The sum of `a` (float32 or float64) over `dims` (sorted axes; the result not
    keepdim) in PyTorch's order with `threads` threads; None where numpy's sum stands."""
    if a.dtype not in LANES or not _switch.EXACT:
        return None
    key = (a.shape, a.strides, a.dtype.char, dims, threads)
    plan = _PLANS.get(key, _MISSING)
    if plan is _MISSING:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        plan = _PLANS[key] = _make_plan(a.shape, a.strides, a.itemsize, dims, threads)
    return None if plan is None else plan(a)


# ------------------------------------------------------- the softmax kernels' row sums
def _folded(acc):
    """A vector's lanes added as PyTorch's vec_reduce_all adds them. float32 (AVX2 has a
    shuffle version for it) folds them: each lane i of the lower half plus lane i of the
    upper half, again until one is left (((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7))). float64
    takes the generic version: the lanes in order (((a0+a1)+a2)+a3); folding them instead
    gave other bits for 36% of random rows (log_softmax's backward shows the sum)."""
    if acc.dtype == _F64:
        out = acc[..., 0]
        for lane in range(1, acc.shape[-1]):
            out = out + acc[..., lane]
        return out
    while acc.shape[-1] > 1:
        half = acc.shape[-1] // 2
        acc = acc[..., :half] + acc[..., half:]
    return acc[..., 0]


def softmax_row_sums(x: np.ndarray):
    """The sums along x's last axis (float32 or float64) as PyTorch's softmax and
    log_softmax kernels add a row (vec::reduce_all, AVX2): a row shorter than a vector
    from its first element on, in order; else one vector accumulator that takes the whole
    vectors in turn, the tail element-wise into its first lanes, then the lanes folded.
    Measured bit for bit against PyTorch's softmax backward (tests/test_engine_nn_order.py)."""
    lanes = LANES[x.dtype]
    n = x.shape[-1]
    if n == 0:
        return np.zeros(x.shape[:-1], x.dtype)
    if n < lanes:
        total = x[..., 0].copy()
        for i in range(1, n):
            total += x[..., i]
        return total
    whole = n - n % lanes
    acc = x[..., :lanes] + 0.0 if whole == lanes else _add_reduce(
        x[..., :whole].reshape(x.shape[:-1] + (whole // lanes, lanes)), axis=-2)
    if whole < n:
        acc[..., : n - whole] += x[..., whole:]
    return _folded(acc)


def dim_sums_in_order(x: np.ndarray, axis: int):
    """0 + x[0] + x[1] + ... along `axis` (kept, as size 1): one rounding per addition,
    in index order, as PyTorch's softmax and log_softmax kernels over a dim that is not
    the last add it (a running sum per position of the dims inside it)."""
    moved = np.moveaxis(x, axis, 0)
    n = moved.shape[0]
    if n == 0:
        return np.zeros(x.shape[:axis] + (1,) + x.shape[axis + 1:], x.dtype)
    rows = moved.reshape(n, -1)
    if rows.shape[1] >= 2:  # reduced over the outer axis: numpy's plain loop, in order
        # (C order, or numpy might take the summed axis as its inner, pairwise, loop)
        total = _add_reduce(np.ascontiguousarray(rows), axis=0) + 0.0
    else:  # one column would be numpy's innermost (pairwise) axis: accumulate instead
        total = _add_accumulate(rows[:, 0])[-1:] + 0.0
    return np.expand_dims(total.reshape(moved.shape[1:]), axis)


def _run_sums(items: np.ndarray, starts: np.ndarray, ends: np.ndarray):
    """0 + items[start] + ... + items[end - 1] for each run, in order (runs back to back)."""
    lengths = ends - starts
    count, longest = len(starts), int(lengths.max())
    body = int(ends[0])
    if count > 2 and (lengths[1:] == longest).all():  # (no target ignored: runs of 16)
        grid = items[body:int(ends[-1])].reshape(count - 1, longest).T.copy()
        return np.concatenate((_add_accumulate(items[:body])[-1:] + 0.0, _in_order(grid)))
    if count < 2 or count * longest > 4 * int(ends[-1]) + 4096:  # one run, or a very ragged set
        return np.array([_add_accumulate(items[a:b])[-1] + 0.0 for a, b in zip(starts, ends)],
                        items.dtype)
    # the runs as columns of a (longest, count) array, zero-padded: added down the columns
    grid = np.zeros((longest, count), items.dtype)
    column = np.repeat(np.arange(count), lengths)
    covered = int(ends[-1])
    grid[np.arange(covered) - np.repeat(starts, lengths), column] = items[:covered]
    return _add_reduce(grid, axis=0) + 0.0


def nll_cascade_sum(values: np.ndarray, positions: np.ndarray):
    """The sum PyTorch's nll_loss forms of its terms (its loss, and its total weight):
    values[k], the term at batch position positions[k] (increasing; the positions of
    ignored targets are missing: they neither add nor flush), added in order into level
    0 of 8 partial sums; after the term at a position that is a multiple of 16^j, level
    j-1 is added into level j and cleared, for j = 1, 2, ..., 7 while it is; at the end
    0 + level 0 + level 1 + ... + level 7. One rounding per addition, in values' dtype.
    (16 = 2^max(4, ceil(log2(n)) / 8): 16 for any batch below 2^40.)"""
    if not _switch.EXACT:
        return np.sum(values, dtype=values.dtype)
    zero = values.dtype.type(0)
    levels = [zero] * 8
    n = len(values)
    if 0 < n <= 256 and positions[-1] == n - 1:  # every target kept, one flush level
        # [0] goes up to level 7; runs 1-16, 17-32, ... into level 1; the rest in level 0
        runs = (n - 1) // 16
        tail = values[1 + 16 * runs:]
        level0 = _add_accumulate(tail)[-1] + 0.0 if len(tail) else zero
        level1 = zero
        if runs:
            sums = _in_order(values[1:1 + 16 * runs].reshape(runs, 16).T.copy()) if runs > 1 \
                else _add_accumulate(values[1:17])[-1:] + 0.0
            level1 = _add_accumulate(sums)[-1] + 0.0
        return _scalars_in_order(values.dtype, [level0, level1, values[0]])
    items, where = values, positions
    for j in range(7):
        if len(items) == 0 or (len(items) == 1 and where[0] == 0):
            break  # (the term at position 0 is carried up to the last level)
        flush = np.flatnonzero(where % (16 ** (j + 1)) == 0)
        rest = items[flush[-1] + 1 if len(flush) else 0:]
        if len(rest):
            levels[j] = _add_accumulate(rest)[-1] + 0.0
        if len(flush) == 0:
            return _scalars_in_order(values.dtype, levels)
        ends = flush + 1
        starts = np.concatenate((ends[:0], [0], ends[:-1]))
        items, where = _run_sums(items, starts, ends), where[flush]
    if len(items):
        levels[7] = _add_accumulate(items)[-1] + 0.0
    return _scalars_in_order(values.dtype, levels)
