"""The one-level row sum of engine/kernels/summation.py (`_row_one_level`, the path of a loss's
sum and a bias gradient of a few thousand elements) was rewritten to take fewer numpy calls.
These tests pin that it gives the same bits as before: the earlier implementation is kept
below as the reference, and both are compared, and with the module's general cascade
(`_four_accumulators`), over every length it covers, both float dtypes, zero signs,
infinities, NaNs and overflowing sums; then whole sums and dim sums over lengths up to
70,000 and several layouts agree with a reference built from the general path."""

import numpy as np
import pytest

from gradcli.engine.kernels import summation

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (inf - inf, overflow)

_add_reduce = np.add.reduce
_add_accumulate = np.add.accumulate


def _reference_row_one_level(flat):
    """The implementation before the rewrite (gradcli 2026-11, main at s19), verbatim in
    its arithmetic: runs of 16 groups reduced over the middle axis, their sums in order,
    the rest's sum added, leftover vectors added into accumulator 0, lanes combined in
    order, then the tail and the lanes chained from 0."""
    lanes = summation.LANES[flat.dtype]
    whole = len(flat) // lanes
    groups = whole // 4
    if not 2 <= groups < 256:
        return None
    grouped = flat[: groups * 4 * lanes].reshape(groups, 4 * lanes)
    if groups < 16:
        acc = _add_reduce(grouped, axis=0)
    else:
        runs = groups // 16
        cut = runs * 16
        sums = _add_reduce(grouped[:cut].reshape(runs, 16, 4 * lanes), axis=1)
        level = sums[0] if runs == 1 else _add_reduce(sums, axis=0)
        acc = _add_reduce(grouped[cut:], axis=0) + level if cut < groups else level
    acc = acc.reshape(4, lanes)
    if whole > groups * 4:
        first = acc[0]
        for j in range(groups * 4, whole):
            first += flat[j * lanes:(j + 1) * lanes]
    vector = _add_reduce(acc, axis=0)
    tail = flat[whole * lanes:]
    chain = np.concatenate((tail, vector)) if len(tail) else vector
    return _add_accumulate(chain)[-1] + flat.dtype.type(0)


def _general(flat):
    """The module's general path for one chunk (the cascade of _four_accumulators), which
    the one-level shortcut must agree with."""
    lanes = summation.LANES[flat.dtype]
    whole = len(flat) // lanes
    if whole == 0:
        return summation._four_accumulators(flat)
    vector = summation._four_accumulators(flat[: whole * lanes].reshape(whole, lanes))
    return summation._scalars_in_order(flat.dtype, [*flat[whole * lanes:], *vector])


def _data(n, dtype, rng, kind):
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-4, 5)
    if kind == "mixed":  # wildly different magnitudes: every order gives other bits
        x *= 10.0 ** rng.integers(-6, 7, n)
    elif kind == "zeros":  # signed zeros, some exact cancellations
        x = rng.choice([0.0, -0.0, 1.5, -1.5], n)
    elif kind == "special":
        x[rng.integers(0, n, 3)] = rng.choice([np.inf, -np.inf, np.nan], 3)
    elif kind == "overflow":  # partial sums that overflow in float32 (not float64)
        x = rng.choice([3.0e38, -3.0e38, 1.0e38], n)
    return x.astype(dtype)


def _same(a, b):
    """The same bits, a NaN being any NaN (which NaN a sum of infinities of both signs
    gives is not observable in a tensor's printing or comparisons)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    nan = np.isnan(a)
    return bool((nan == np.isnan(b)).all()) and a[~nan].tobytes() == b[~nan].tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_length_the_shortcut_covers_gives_the_earlier_bits(dtype):
    rng = np.random.default_rng(23)
    lanes = summation.LANES[np.dtype(dtype)]
    lengths = range(1, 256 * 4 * lanes + 3 * lanes)  # up to past the last one-level length
    covered = 0
    for n in lengths:
        kind = ("normal", "mixed", "zeros", "special", "overflow")[n % 5]
        flat = _data(n, dtype, rng, kind)
        want = _reference_row_one_level(flat)
        got = summation._row_one_level(flat)
        if want is None:
            assert got is None, n
            continue
        covered += 1
        assert _same(got, want), (n, kind, got, want)
        if n % 7 == 0:  # (the general cascade is slow in Python: a sample of lengths)
            assert _same(got, _general(flat)), (n, kind)
    assert covered == (256 - 2) * 4 * lanes  # 2 to 255 groups of four vectors, every tail


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_row_inside_a_bigger_buffer_and_repeated_calls(dtype):
    """A row that is a slice of a bigger array (the shortcut must read only its own
    elements), and a second call on the same length (the cached cuts) with other data."""
    rng = np.random.default_rng(5)
    for n in (64, 100, 511, 512, 515, 2000, 2047, 4096, 7000, 8191):
        base = _data(n + 40, dtype, rng, "mixed")
        for flat in (base[17:17 + n], _data(n, dtype, rng, "normal")):
            want = _reference_row_one_level(flat)
            if want is None:
                continue
            assert _same(summation._row_one_level(flat), want), n


def _reference_whole_sum(a, threads):
    """torch_order_sum with the one-level shortcut replaced by the earlier implementation."""
    flat = summation._memory_order(a)
    n = len(flat)
    if n == 0:
        return np.zeros((), flat.dtype)

    def chunk(part):
        fast = _reference_row_one_level(part)
        return fast if fast is not None else _general(part)
    if n >= summation.GRAIN and threads > 1:
        tasks = min(threads, -(-n // summation.GRAIN))
        size = -(-n // tasks)
        total = np.zeros((), flat.dtype)
        for start in range(0, n, size):
            total = total + chunk(flat[start:start + size])
        return np.asarray(total)
    return np.asarray(chunk(flat))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2])
def test_whole_sums_up_to_70000_elements(dtype, threads):
    rng = np.random.default_rng(7)
    lengths = sorted(set(rng.integers(1, 70000, 40).tolist()) | {
        1, 7, 8, 63, 64, 65, 2000, 8191, 8192, 32767, 32768, 32769, 65536, 65600, 69999})
    for n in lengths:
        a = _data(n, dtype, rng, ("normal", "mixed", "special")[n % 3])
        for layout in (a, a.reshape(-1, 1) if n % 2 else a.reshape(2, -1).T):
            got = summation.torch_order_sum(layout, threads)
            assert _same(got, _reference_whole_sum(layout, threads)), (n, threads, layout.shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dim_sums_through_the_shortcut(dtype):
    """x.sum(0) of an (n, 1) column and x.sum(1) of (rows, n): the dim-sum plans reach the
    shortcut for each 1-D row; each output equals the reference row sum."""
    rng = np.random.default_rng(11)
    for n in (64, 200, 2000, 2001, 3000, 8191):
        column = _data(n, dtype, rng, "mixed").reshape(n, 1)
        got = summation.torch_order_sum_dims(column, (0,), 2)
        want = _reference_row_one_level(column[:, 0])
        if want is None:
            want = _general(column[:, 0])
        assert _same(got.reshape(()), want), n
        rows = _data(3 * n, dtype, rng, "normal").reshape(3, n)
        got = summation.torch_order_sum_dims(rows, (1,), 1)
        for i in range(3):
            want = _reference_row_one_level(rows[i])
            if want is None:
                want = _general(rows[i])
            assert _same(got[i], want), (n, i)
