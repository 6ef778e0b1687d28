"""Small float32 products summed in the order PyTorch's MKL sums them on an Intel CPU, where
MKL runs its Intel kernels (AVX-512, or AVX2 under MKL_ENABLE_INSTRUCTIONS=AVX2), not the
ones mkl.py rebuilds for AMD CPUs. Found by experiment against torch 2.13 (MKL 2024.2) on an
Intel Xeon with AVX-512, 1 and 2 threads: products chosen so that one pair cancels exactly
(+2^60 and -2^60 among ones) show which products share a partial sum, and products that are
not float32 numbers show which additions are fused.

The matrix-vector kernels (a result of one column), the gemm's in-order kernel (k cut into
blocks: _k_blocks) and its small dot-product kernel are rebuilt where their use is known;
every other product returns None here and goes to numpy's BLAS (within float32 rounding of
PyTorch's, not bit for bit). mkl.product() calls `product` when `isa()` says MKL runs its
Intel kernels."""

from __future__ import annotations

import os

import numpy as np

from ..parallel import get_num_threads

_F32, _F64 = np.float32, np.float64

# Where the AVX-512 kernels' orders were checked against PyTorch (elsewhere the same pairs
# share sums but some additions round differently, not found yet: those products go to
# numpy): every result of one column for an inner size up to 4 (W7's Linear(3, 1), d2l's
# linear regression); beyond, the transposed gemv for a multiple of 4 rows, and for the rows
# after the last group of 4 up to an inner size of 32 (past it they take two accumulators in
# a way not pinned down), the plain gemv (a stored column by column) below 16 rows.
_AVX512_ANY_MAX_K = 4
_AVX512_REST_MAX_K = 32
_AVX512_AXPY_MAX_M = 15
# Above this many multiply-adds (m*k) MKL's AVX-512 transposed gemv gives each of 2 threads
# half the rows (the first ceil(m/2)), each grouping its own rows by 4 (measured with
# torch.set_num_threads 1 and 2; with 1 no split; more threads were not measured).
_AVX512_SPLIT_WORK = 8193
# AVX-512's gemm with b stored transposed (x @ W.t(): nn.Linear) sums in order too, except
# for a few rows (small m, large k: a lane kernel like the gemv ones), 2 or 3 columns or a
# small product (6x5 @ 5x8: 8 lanes per element, folded): in order from 6 rows and 4 columns
# (a row-major), from 8 rows (a stored transposed), 64 elements and 1024 products; alpha 1
# only (alpha != 1 joins c otherwise, not found).
_AVX512_T_MIN_M = 8
_AVX512_T_MIN_MN = 64
_AVX512_T_MIN_WORK = 1024

# _axpy_columns' products are made this many (float64) at a time
_AXPY_BLOCK = 32768

# AVX-512's gemm cuts k into blocks (_k_blocks): each block's products summed in order from
# +0, the blocks' sums then added in order (measured on every layout, 1, 2 and 4 threads, k
# up to 3000). Up to this many k it is one block.
_K_BLOCK = 384
# Past 2 * _K_BLOCK, 2 threads split k between them above this many multiply-adds (each
# thread's half cut its own way: _k_blocks), up to it they cut k as one thread does; more
# threads were not measured.
_TWO_THREAD_K_SPLIT_WORK = 192_000
# With b stored transposed and k past 256, only from this many rows (a row-major) is the
# product in order; fewer rows take kernels not pinned down.
_T_WIDE_MIN_M = 16

_isa_cache: list = []


def _cpu_flags() -> tuple[str, set]:
    """The vendor and the feature flags of the first CPU in /proc/cpuinfo ('' and an empty set
    where it cannot be read)."""
    vendor, flags = "", set()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("vendor_id") and not vendor:
                    vendor = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    return vendor, flags


def isa() -> str | None:
    """Which of MKL's kernels PyTorch's products run in this process: "amd" (any CPU not
    Intel's: mkl.py's orders), "avx512" or "avx2" (MKL's Intel kernels, rebuilt here), or None
    (an Intel CPU without AVX2, or one limited to less by MKL_ENABLE_INSTRUCTIONS: not
    measured). MKL reads the variable once, when it starts, so it is read here once too, on
    the first product."""
    if not _isa_cache:
        vendor, flags = _cpu_flags()
        level = "amd"
        if vendor == "GenuineIntel":
            level = None
        if vendor == "GenuineIntel" and {"avx2", "fma"} <= flags:
            level = "avx512" if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags else "avx2"
            limit = os.environ.get("MKL_ENABLE_INSTRUCTIONS", "").strip().upper()
            if limit.startswith("AVX2"):
                level = "avx2"
            elif limit and not limit.startswith("AVX512"):
                level = None  # SSE4_2, AVX: kernels not measured
        _isa_cache.append(level)
    return _isa_cache[0]


def _halved(acc):
    """The lanes (last axis) summed as a vector kernel folds them: the upper half onto the lower
    until one is left."""
    width = acc.shape[-1]
    while width > 1:
        width //= 2
        acc = acc[..., :width] + acc[..., width:2 * width]
    return acc[..., 0]


def _fused_chunks(acc, prods, start: int, stop: int):
    """acc's lanes plus prods[:, start:stop] in vectors of acc's width, lane j taking products
    start+j, start+j+width, ...: each addition one rounding of the exact product (a fused
    multiply-add); acc is updated in place and returned."""
    width = acc.shape[1]
    for at in range(start, stop, width):
        count = min(width, stop - at)
        np.add(acc[:, :count], prods[:, at:at + count], out=acc[:, :count], casting="unsafe")
    return acc


def _rows_avx512_grouped(prods):
    """The rows MKL computes 4 at a time: lane 0 starts with the first product (rounded); the
    products after it go in 16-wide vectors while 16 remain, fused, folded to one sum; that sum
    (else the first product) starts lane 0 of a fresh 16-wide accumulator that takes the rest
    of the products (one partly filled vector), fused, folded."""
    rows, k = prods.shape
    full = (k - 1) // 16 * 16
    first = prods[:, 0].astype(_F32)
    if full:
        acc = np.zeros((rows, 16), _F32)
        acc[:, 0] = first
        first = _halved(_fused_chunks(acc, prods, 1, 1 + full))
        if full == k - 1:
            return first
    acc = np.zeros((rows, 16), _F32)
    acc[:, 0] = first
    return _halved(_fused_chunks(acc, prods, 1 + full, k))


def _rows_avx512_rest(prods):
    """The rows after the last group of 4: the products after the first in 16-wide vectors
    (the last one partly filled), fused, folded, and then the first product (rounded) added."""
    rows, k = prods.shape
    acc = _halved(_fused_chunks(np.zeros((rows, 16), _F32), prods, 1, k))
    return acc + prods[:, 0].astype(_F32)


def _rows_avx2(prods):
    """Every row: all products in 8-wide vectors from the first (the last partly filled),
    fused; the lanes added pairwise (0+1, 2+3, 4+5, 6+7), then (01+45) + (23+67)."""
    acc = _fused_chunks(np.zeros((prods.shape[0], 8), _F32), prods, 0, prods.shape[1])
    pairs = acc[:, 0::2] + acc[:, 1::2]
    return (pairs[:, 0] + pairs[:, 2]) + (pairs[:, 1] + pairs[:, 3])


def _short_rows(a, x, level: str, signed_zero: bool = True):
    """_dot_rows for an inner size of 2 to 4 (W7's Linear(3, 1), d2l's X @ w), column by column
    instead of through the lanes (a fifth of the time for 2000 rows): with at most 3 products
    per lane vector every lane holds one product (rounded: a fused add to +0), and the folds
    reduce to the sums written here. The lanes that hold nothing are +0, so a zero result is
    +0, which the final + 0 gives (left to the caller when `signed_zero` is False: addmm adds
    its bias + 0 instead, the same values in one pass fewer). The columns are first copied
    out side by side (one transposing copy): each then takes part in contiguous, vectorised
    arithmetic, where a column read in place (a's rows are k apart) costs that copy's price
    in every call. Each pass over the rows costs as much as the call itself at a few
    thousand rows, so the sums reuse their buffers (in place: the same roundings) and the
    whole-matrix case takes no slices."""
    m, k = a.shape
    xs = x[:, 0]
    cols = a.T.copy()
    if level == "avx2":  # ((l0 + l1) + (l4 + l5)) + ((l2 + l3) + (l6 + l7)), lane j = product j
        out = cols[0] * xs[0]
        out += cols[1] * xs[1]
        if k == 4:
            out += cols[2] * xs[2] + cols[3] * xs[3]
        elif k == 3:
            out += cols[2] * xs[2]
        if signed_zero:
            out += _F32(0)
        return out
    grouped = m & ~3
    if grouped == m:  # (every row in a group of 4: the columns whole, no slices)
        out = _grouped_short_rows(cols, xs, k)
    else:
        out = np.empty(m, _F32)
        if grouped:
            out[:grouped] = _grouped_short_rows(cols[:, :grouped], xs, k)
        # lanes = products 1..k-1, folded, then + product 0
        r = cols[:, grouped:]
        rest = out[grouped:]
        np.multiply(r[1], xs[1], out=rest)
        if k == 4:
            rest += r[3] * xs[3]
        if k >= 3:
            rest += r[2] * xs[2]
        rest += r[0] * xs[0]
    if signed_zero:
        out += _F32(0)
    return out


def _grouped_short_rows(g, xs, k: int):
    """_short_rows' rows MKL computes 4 at a time (g: their columns, side by side): lane 0 =
    product 0 (rounded), then + product 1 fused (exact in float64, one rounding to float32);
    lane j = product j + 1 after that; the lanes folded."""
    prod = g[0] * xs[0]
    lead = g[1].astype(_F64)
    lead *= _F64(xs[1])  # (exact: a float32 product fits a float64)
    lead += prod
    out = lead.astype(_F32)
    if k == 4:
        out += np.multiply(g[3], xs[3], out=prod)
    if k >= 3:
        out += np.multiply(g[2], xs[2], out=prod)
    return out


def _dot_rows(a, x, level: str, signed_zero: bool = True):
    """a @ x (x one column) as MKL's transposed gemv sums it (a row-major: each element a dot
    product of a row with x), or None where the order is not known here. `signed_zero`:
    see _short_rows (an inner size of 2 to 4 only)."""
    m, k = a.shape
    if k < 2:  # (one product per element: no order to follow; _short_rows reads two)
        return None
    if level == "avx512" and m * k > _AVX512_SPLIT_WORK and get_num_threads() > 1:
        if get_num_threads() > 2:
            return None
        half = (m + 1) // 2
        first = _dot_rows(a[:half], x, level, signed_zero)
        second = _dot_rows(a[half:], x, level, signed_zero)
        return None if first is None or second is None else np.concatenate([first, second])
    if k <= 4:
        return _short_rows(a, x, level, signed_zero)
    prods = a.astype(_F64) * x[:, 0].astype(_F64)
    if level == "avx2":
        return _rows_avx2(prods)
    grouped = m & ~3
    if k > _AVX512_REST_MAX_K and grouped != m:
        return None
    if grouped == m:
        return _rows_avx512_grouped(prods)
    if not grouped:
        return _rows_avx512_rest(prods)
    out = np.empty(m, _F32)
    out[:grouped] = _rows_avx512_grouped(prods[:grouped])
    out[grouped:] = _rows_avx512_rest(prods[grouped:])
    return out


def _axpy_columns(a, x, level: str, c=None):
    """a @ x (x one column) as MKL's plain gemv sums it (a stored column by column: the result
    accumulates x[l] * a[:, l] over l in order), each step a fused multiply-add from +0 (or
    from c, addmm's beta*bias, broadcastable to m x 1); or None where the order is not known
    here."""
    m, k = a.shape
    if level == "avx512" and m > _AVX512_AXPY_MAX_M and k > _AVX512_ANY_MAX_K:
        return None
    acc = np.zeros(m, _F32)
    if c is not None:
        acc += np.broadcast_to(c, (m, 1))[:, 0]
    # the exact products (float32 times float32 is exact in float64) a block of columns at
    # a time, in a's own layout (a column stored column by column stays contiguous), the
    # block small enough to stay in cache; then the fused adds in order, one call a step
    # (three calls a step made a k of 500 crawl)
    xs = x[:, 0].astype(_F64)
    block = max(1, _AXPY_BLOCK // m)
    for start in range(0, k, block):
        prods = a[:, start:start + block].astype(_F64) * xs[start:start + block]
        for column in prods.T:
            np.add(acc, column, out=acc, casting="unsafe")
    return acc


def _k_blocks(m: int, k: int, n: int):
    """How AVX-512 MKL's gemm cuts k, as groups of block sizes in order (each block summed
    in order from +0, a group's blocks added in order, then the groups' sums), or None
    where not known. One thread: one group; one block up to _K_BLOCK, past it blocks of
    _K_BLOCK with the last two sharing what remains evenly (the first of them one larger
    for an odd share: k = 784 gives 384, 200, 200; k = 500 gives 250, 250). Two threads
    past 2 * _K_BLOCK and above _TWO_THREAD_K_SPLIT_WORK: a group for each half of k (the
    first ceil(k/2)), a half up to 2 * _K_BLOCK cut as one thread cuts it, a longer one in
    plain blocks of _K_BLOCK with the rest last."""
    if k <= 2 * _K_BLOCK:
        return (_even_tail_blocks(k),)
    threads = get_num_threads()
    if threads == 1 or threads == 2 and m * k * n <= _TWO_THREAD_K_SPLIT_WORK:
        return (_even_tail_blocks(k),)
    if threads > 2:
        return None
    first = -(-k // 2)
    return tuple(_even_tail_blocks(half) if half <= 2 * _K_BLOCK else _plain_blocks(half)
                 for half in (first, k - first))


def _plain_blocks(k: int) -> tuple:
    whole, rest = divmod(k, _K_BLOCK)
    return (_K_BLOCK,) * whole + ((rest,) if rest else ())


def _even_tail_blocks(k: int) -> tuple:
    if k <= _K_BLOCK:
        return (k,)
    whole, rest = divmod(k, _K_BLOCK)
    if rest == 0:
        return (_K_BLOCK,) * whole
    shared = _K_BLOCK + rest
    return (_K_BLOCK,) * (whole - 1) + (shared - shared // 2, shared // 2)


def _in_order_fused(a, b):
    """a @ b as AVX-512 MKL's gemm sums it for a b stored row by row (either layout of a):
    each element of each k-block (_k_blocks) in order from +0, every step a fused
    multiply-add, the blocks' sums then added as _k_blocks groups them. The exact products of one step at a
    time (memory of two results, not k of them: wide products take this kernel too, see
    wide_in_order)."""
    m, k = a.shape
    n = b.shape[1]
    flip = n < m  # numpy's broadcast loops over the last axis: the longer side there
    left, right = (b.T, a.T) if flip else (a, b)
    left, right = left.astype(_F64), right.astype(_F64)
    step_products = np.empty((left.shape[0], right.shape[1]), _F64)
    total = None
    start = 0
    for group in _k_blocks(m, k, n):
        group_total = None
        for size in group:
            acc = np.zeros(step_products.shape, _F32)
            for step in range(start, start + size):
                np.multiply(left[:, step:step + 1], right[step:step + 1], out=step_products)
                np.add(acc, step_products, out=acc, casting="unsafe")
            group_total = acc if group_total is None else np.add(group_total, acc, out=group_total)
            start += size
        total = group_total if total is None else np.add(total, group_total, out=total)
    return np.ascontiguousarray(total.T) if flip else total


def _avx512_gemm_kernel(a, b, alpha, blas_form):
    """Which rebuilt kernel AVX-512 MKL's gemm runs for a @ b (at least two rows and two
    columns): "in order" (_in_order_fused), "lanes" (_lane_dots) or None where not known."""
    m, k = a.shape
    n = b.shape[1]
    if _k_blocks(m, k, n) is None:
        return None
    _, b_transposed, a_transposed = blas_form(a, b)
    if not b_transposed:
        return "in order"
    if alpha != 1:
        return None
    if k > 256:
        return "in order" if a_transposed or m >= _T_WIDE_MIN_M else None
    small = None if a_transposed else _small_t_kernel(m, k, n)
    if small is not None:
        return small
    if (m * n < _AVX512_T_MIN_MN or m * n * k < _AVX512_T_MIN_WORK
            or (m < _AVX512_T_MIN_M if a_transposed else m < 6 or n < 4)):
        return None
    return "in order"


def wide_in_order(a, b, blas_form) -> bool:
    """Whether AVX-512 MKL sums a larger float32 a @ b in order over each block of k, as
    the small ones (measured up to 256x256x256 in each layout: a makemore MLP's 32x30 @
    30x200 and its backward products; past k = 256 on grids of shapes up to k = 3000)."""
    m, k = a.shape
    return m > 1 and b.shape[1] > 1 and 1 < k and \
        _avx512_gemm_kernel(a, b, 1, blas_form) == "in order"


def _small_t_kernel(m: int, k: int, n: int):
    """Which kernel AVX-512 MKL's gemm runs for a small x @ W.t() (a row-major, b stored
    transposed: nn.Linear's forward) below the sizes _AVX512_T_MIN_* give, measured on every
    m, n up to 40 and k up to 64: "in order" (each element summed in order over k, fused)
    for 2 or 3 columns from 32 elements, from 12 columns, or from 4 columns when there are
    no more columns than rows or than k; else, up to k = 31, "lanes" (_lane_dots: a batch of
    a few rows through a layer of few outputs); None where not pinned down (k of 32 or more
    there, two rows with k from 48)."""
    if not 2 <= k <= 64 or (m == 2 and k >= 48):
        return None
    if (n <= 3 and m * n >= 32) or n >= 12 or (n >= 4 and (n <= m or n < k)):
        return "in order"
    return "lanes" if k <= 31 else None


def _lane_dots(a, b):
    """a @ b as a dot-product kernel sums each element: the products, each rounded, in the
    lanes of a 16-wide vector (product j in lane j % 16, a later one fused into its lane),
    the lanes then folded by halves (_halved)."""
    m, k = a.shape
    n = b.shape[1]
    prods = (a.astype(_F64)[:, None, :] * b.T.astype(_F64)[None, :, :]).reshape(m * n, k)
    acc = _fused_chunks(np.zeros((m * n, 16), _F32), prods, 0, k)
    return _halved(acc).reshape(m, n)


def single_products(a, b, c, alpha, level: str, blas_form):
    """a @ b + c for an inner size of 1 (addmm of a column by a row: nn.Linear(1, n)), or
    None. MKL's gemm (AVX-512 and AVX2 alike) fuses each product with c, a single rounding,
    for a result of at least two columns (from one row only where b is stored row by row);
    its gemv (one column, or one row of x @ W.t()) rounds the product, then adds c, as numpy
    does (measured up to 2000x1 and 1000x50)."""
    m, n = a.shape[0], b.shape[1]
    if level not in ("avx512", "avx2") or c is None or alpha != 1 or n == 1:
        return None
    if m == 1 and blas_form(a, b)[1]:
        return None
    exact = a.astype(_F64) * b.astype(_F64)  # (exact: float32 products fit a float64)
    exact += np.broadcast_to(c, exact.shape)
    return exact.astype(_F32)


def product(a, b, c, alpha, level: str, blas_form):
    """a @ b (+ c) as mkl.product's contract says, on MKL's Intel kernels, or None. AVX-512's
    gemm: _in_order_fused, times alpha, + c, for a b stored row by row and for a b stored
    transposed where _AVX512_T_MIN_M says (elsewhere MKL picks other kernels by the shape in
    ways not found yet: numpy's BLAS). Gemv:
    a result of one column (n == 1, at least two rows) or of one row (m == 1, at least two
    columns: MKL computes its transpose, b.T @ a.T); a 1x1 result is a dot product of a's row
    with the column: the transposed gemv for a b that PyTorch passes as a row (its column's
    stride past k, as for b.t() of a (1, k) row), else the plain one. A matrix (a; for a row, b.T)
    stored row by row goes to the transposed gemv (its dot products, then + c; alpha == 1
    only), one stored column by column to the plain gemv (the sum starts from c, the vector
    scaled by alpha first)."""
    m, k = a.shape
    n = b.shape[1]
    if n == 1 and m > 1:
        matrix, vector = a, b
        _, dot_rows, _ = blas_form(a, b)  # a row-major (or copied so)
    elif m == 1 and n > 1:
        matrix, vector = b.T, a.T
        _, dot_rows, _ = blas_form(a, b)  # b stored transposed: b.T row-major
    elif m == 1 and n == 1:  # a dot product: the kernel follows b's stride past its one column
        matrix, vector = a, b
        _, _, b_strided = blas_form(a, b)
        dot_rows = not b_strided
        if b_strided and alpha != 1:  # (the plain one scales a, not b, by alpha)
            matrix, alpha = a * _F32(alpha), 1
    elif m > 1 and n > 1 and level == "avx512":
        kernel = _avx512_gemm_kernel(a, b, alpha, blas_form)
        if kernel is None:
            return None
        out = _lane_dots(a, b) if kernel == "lanes" else _in_order_fused(a, b)
        if alpha != 1:
            out *= _F32(alpha)
        if c is not None:
            out += c
        return out
    else:
        return None
    if dot_rows:
        # (alpha != 1: MKL fuses alpha*sum + c when beta != 1 and does something else when
        # beta == 1; c arrives here already scaled by beta, so such products go to numpy)
        # (an inner size of 2 to 4 with a bias: the rows' final + 0 is the bias's, c + 0;
        # (r + 0) + c and r + (c + 0) are the same float32 values, zeros' signs included)
        short = k <= 4 and c is not None
        out = _dot_rows(matrix, vector, level, not short) if alpha == 1 else None
        if out is None:
            return None
        if short:
            c = c + _F32(0)
    else:
        out = _axpy_columns(matrix, vector if alpha == 1 else vector * _F32(alpha), level,
                            None if c is None else np.broadcast_to(c, (m, n)).reshape(-1, 1))
        if out is None:
            return None
        c = None
    out = out.reshape(m, n)
    if c is not None:
        out += c
    return out
