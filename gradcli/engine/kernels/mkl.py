"""Small float32 matrix products summed in the order PyTorch's MKL sums them (sgemm and
sgemv on an AMD CPU, AVX2, as measured), so their last bits and what float32 prints
agree; ops/linalg.py sends a product here when `applies` says so (never with the
switch off), everything else goes to numpy's BLAS."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import kernels as _switch
from ..dtypes import float32, float64
from ..parallel import get_num_threads
from . import mkl_intel

_F32, _F64 = float32.np, float64.np
# Where float32 products are rebuilt in MKL's order (see product): the inner size, and
# the products m*k*n (a temporary of that many floats). The fused multiply-add kernel runs a
# numpy call per step of k (about 1.5 us each), so it gets a smaller inner size.
_ORDER_MAX_K = 128
_ORDER_MAX_WORK = 16384
# Larger products AVX-512 MKL sums in order (mkl_intel.wide_in_order), rebuilt up to this
# many multiply-adds: two numpy calls a step of k, ~1 ms for 32x30 @ 30x200 (makemore's
# MLP), ~2 ms at the bound, where MKL takes microseconds; past it numpy's BLAS.
_WIDE_MAX_WORK = 1 << 18
_FMA_MAX_K = 8


def _in_order(terms, start: bool = True):
    """The sum over the first axis one term at a time, in order, from +0 (start) or from the
    first term. numpy's reduce over a leading axis adds whole slices in order, except when each
    term is a single number: the axis is then contiguous and numpy sums it pairwise, so that
    case accumulates instead."""
    if terms.size == len(terms):
        total = np.add.accumulate(terms, axis=0)[-1]
        return total + 0.0 if start else total
    return np.add.reduce(terms, axis=0, initial=0.0) if start else np.add.reduce(terms, axis=0)


def _products(a, b, lead=None, dtype=_F32):
    """The products terms[l, i, j] = a[i, l] * b[l, j] (rounded to dtype), after `lead` (an
    m x n first term) when given, so that _in_order sums each element's products in order.
    Stored (k, n, m) when n < m: numpy's broadcast runs its inner loop over the last axis."""
    m, k = a.shape
    n = b.shape[1]
    first = 0 if lead is None else 1
    if n == 1:  # one column: the products of each step of k written as one contiguous row
        # (a transposed a times a column of b in one broadcast call; a three-axis broadcast
        # into the same memory runs numpy's slower strided loops)
        terms = np.empty((first + k, m, 1), dtype)
        np.multiply(a.T, b, out=terms[first:, :, 0], dtype=dtype)
        if first:
            terms[0] = lead
        return terms
    if n >= m:
        terms = np.empty((first + k, m, n), dtype)
    else:
        terms = np.empty((first + k, n, m), dtype).transpose(0, 2, 1)
    np.multiply(a.T[:, :, None], b[:, None, :], out=terms[first:], dtype=dtype)
    if first:
        terms[0] = lead
    return terms


def _ended(out, c):
    """out + c; out is always a fresh result of this module's own, so c is added into it
    (c is float32 and broadcasts to out's shape: the same additions, no new array)."""
    if c is not None:
        out += c
    return out


def _rows(c, count: int):
    """The first rows of addmm's bias term c (broadcastable to the result), or c itself."""
    return c[:count] if c is not None and c.ndim == 2 and len(c) > 1 else c


def _times(x, alpha):
    return x if alpha == 1 else x * np.float32(alpha)


@lru_cache(maxsize=128)
def _peeled(m: int, n: int):
    """Which elements of an m x n float32 result MKL computes before the aligned part of its
    row: the row starts (i*n floats in) until 16 bytes align, when 4 or more remain; None if none."""
    rows = np.arange(m)[:, None]
    peel = (-(rows * n)) % 4
    peel = np.where(n - peel >= 4, peel, 0)
    mask = np.arange(n)[None, :] < peel
    return mask if mask.any() else None


def _fma_rows(a, b):
    """Each element as MKL's fused kernel sums it: in order over k, every step one rounding
    (float32(acc + a*b), the product exact in float64; the first step float32(a*b))."""
    prods = _products(a, b, dtype=_F64)
    acc = prods[0].astype(_F32)
    for step in range(1, a.shape[1]):
        np.add(acc, prods[step], out=acc, casting="unsafe")
    return acc


def _fused_whole(m: int, k: int, n: int) -> bool:
    """Where MKL's fused kernel (n >= 12 and m >= 4) covers the whole result, not only the
    rows of the groups of 4 rows (which are all rows when m is a multiple of 4). Only MKL's
    second thread leaves some rows to another kernel: with one thread (torch.set_num_threads,
    which gradcli's mirrors) it covers all. (Measured with 1 and 2 threads, PyTorch's default
    on the 2-CPU machine these orders come from.)"""
    return m >= 12 or m % 4 == 0 or k <= 4 or (n <= 16 and k <= 16) or get_num_threads() == 1


def _fused_rows(m: int, k: int, n: int):
    """The rows MKL's fused kernel (n >= 12 and m >= 4) computes: all m where it covers the
    whole result (_fused_whole), else those of the groups of 4 rows; 0 where it is not used;
    None where it is used with k > _FMA_MAX_K (not emulated)."""
    if n < 12 or m < 4:
        return 0
    if k > _FMA_MAX_K:
        return None
    return m if _fused_whole(m, k, n) else m & ~3


def _mkl_order_f32(a, b, m: int, k: int, n: int, c=None, alpha=1):
    """a @ b for float32 as PyTorch's MKL sgemm sums it when b goes to BLAS as stored ('N'), bit
    for bit, or None where its order is not known here (the peeled elements below for k >= 12,
    the fused kernel for k > _FMA_MAX_K); c: addmm's beta*bias (broadcastable to m x n) or
    None, alpha its scale. Found by experiment against torch (MKL 2024.2, AVX2, 2 threads):
      - plain kernel: c (else 0) + a0*b0 + a1*b1 + ... in order, each product and sum rounded,
        a scaled by alpha first;
      - fused kernel (n >= 12 and m >= 4): the same order with fused multiply-adds, b scaled
        by alpha first, c added to the sum; it covers the whole result when _fused_whole, else
        the rows of the groups of 4 rows, the other rows plain;
      - in plain rows, the elements peeled for alignment (_peeled) sum blocks of 4 products
        in order (c starts the first), the block sums in order, then add the products after
        the last full block (k = 8..11; the same as plain below 8)."""
    fused_rows = _fused_rows(m, k, n)
    if fused_rows is None:
        return None
    if fused_rows == m:
        return _ended(_fma_rows(a, _times(b, alpha)), c)
    peeled = _peeled(m, n) if k >= 8 else None
    if peeled is not None and fused_rows:
        peeled = peeled.copy()
        peeled[:fused_rows] = False
        if not peeled.any():
            peeled = None
    if peeled is not None and k >= 12:
        return None
    terms = _products(_times(a, alpha), b, c)
    out = _in_order(terms, start=c is None)
    if fused_rows:
        out[:fused_rows] = _ended(_fma_rows(a[:fused_rows], _times(b, alpha)), _rows(c, fused_rows))
    if peeled is not None:
        lead = 0 if c is None else 1
        blocks = _in_order(terms[:lead + 4], start=False) + _in_order(terms[lead + 4:lead + 8], start=False)
        for step in range(lead + 8, lead + k):
            blocks += terms[step]
        np.copyto(out, blocks, where=peeled)
    return out


def _lane_plan(kind, k: int):
    """One element's order in MKL's kernels for a first operand passed transposed ('T', each
    element a dot product of two unit-stride rows): (head, vectors, tail) of product indices.
    The head is summed in order into lane 0; each vector adds a product to each of 8 lanes (k:
    none); the lanes add as ((0+4)+(2+6))+((1+5)+(3+7)); the tail adds in order after that.
      ("dot", p, w): gemm, w = 4 in the result's columns of the groups of 4 columns, else 8:
        the first p (until the row of a is 16-byte aligned) in the head, then w-wide vectors,
        when at least w remain (else all in order);
      ("block",): gemv (a result of one row or column), its groups of 4: 4-wide vectors that
        end at k, the 1..4 products before them the head (k <= 4: all in order);
      ("even",) / ("odd",): gemv, the others (0th, 2nd / 1st): a head of 4, then 8-wide
        vectors, even as pairs of 4-wide ones; the rest the tail (k < 12: all in order)."""
    in_order = (tuple(range(k)), (), ())
    if kind[0] == "dot":
        _, head, width = kind
        if k - head < width:
            return in_order
        count = (k - head) // width
    elif kind[0] == "block":
        if k <= 4:
            return in_order
        head, width = (k - 1) % 4 + 1, 4
        count = (k - head) // 4
    else:
        if k < 12:
            return in_order
        head, width = 4, 8 if kind[0] == "even" else 4
        count = (k - 4) // 8 * (8 // width)
    vectors = tuple(tuple(head + v * width + lane if lane < width else k for lane in range(8))
                    for v in range(count))
    return tuple(range(head)), vectors, tuple(range(head + count * width, k))


@lru_cache(maxsize=128)
def _lane_frame(m: int, k: int, n: int, start: int, step: int, gemv: bool):
    """Where each product goes in _lanes' common frame for all elements: a flat index into the
    k+1 products (the last a zero; stored as _products does) for each of rows*8 lane slots, one
    for the lanes' sum and the tail's slots (an element with fewer adds zeros: no sum changes).
    a's row i starts start + i*step floats past a 16-byte boundary. None when no element has
    a vector (small k): each is then its products in order from 0."""
    if gemv:
        count = max(m, n)
        kinds = [("block",) if j < count & ~3 else ("odd",) if (j - (count & ~3)) % 2 else ("even",)
                 for j in range(count)]
        grid = [kinds] if m == 1 else [[kind] for kind in kinds]
    else:
        grid = [[("dot", -(start + i * step) % 4, 4 if j < n & ~3 else 8) for j in range(n)]
                for i in range(m)]
    plans = {kind: _lane_plan(kind, k) for row in grid for kind in row}
    if not any(vectors for _, vectors, _ in plans.values()):
        return None  # every element in order (_lanes sums them so, without a frame)
    rows = max(len(head) + len(vectors) for head, vectors, _ in plans.values())
    tail = max(len(t) for _, _, t in plans.values())
    kinds = list(plans)
    slots = []
    for kind in kinds:
        head, vectors, rest = plans[kind]
        frame = [(h,) + (k,) * 7 for h in head] + list(vectors)
        frame += [(k,) * 8] * (rows - len(frame))
        slots.append([s for vector in frame for s in vector] + [k] + list(rest) + [k] * (tail - len(rest)))
    table = np.array(slots).T
    which = np.array([[kinds.index(kind) for kind in row] for row in grid])
    place = np.arange(m * n).reshape(m, n) if n >= m else np.arange(m * n).reshape(n, m).T
    index = table[:, which] * (m * n) + place
    return index.reshape(-1), rows, tail


def _lanes(a, b, m: int, k: int, n: int, gemv: bool = False):
    """a @ b summed as _lane_plan says. Where a's rows start (mod 16 bytes) is taken from
    numpy's arrays: their allocations are aligned (16 bytes at least, torch's 64) and a view
    sits at the same offset in both."""
    if gemv and k <= 4:  # every kind of element sums in order (_lane_plan): no frame to look up
        return _in_order(_products(a, b))
    start, step = 0, k % 4  # PyTorch copies an a of another layout to a fresh row-major one
    item = a.itemsize
    if not gemv and a.strides[1] == item and a.strides[0] >= k * item:
        start = 0 if a.base is None else a.ctypes.data // item % 4
        step = a.strides[0] // item % 4
    frame = _lane_frame(m, k, n, start, step, gemv)
    if frame is None:  # as the frame would sum them (lane 0 from 0, the others +0), cheaply
        return _in_order(_products(a, b))
    index, rows, tail = frame
    if n >= m:  # as _products stores them, and a zero last
        terms = np.empty((k + 1, m, n), _F32)
        np.multiply(a.T[:, :, None], b[:, None, :], out=terms[:k])
    else:
        terms = np.empty((k + 1, n, m), _F32)
        np.multiply(a.T[:, None, :], b[:, :, None], out=terms[:k])
    terms[k] = 0
    frame = terms.reshape(-1).take(index).reshape(-1, m, n)
    lanes = _in_order(frame[:rows * 8].reshape(rows, 8, m, n))
    half = lanes[:4] + lanes[4:]
    half = half[:2] + half[2:]
    np.add(half[0], half[1], out=frame[rows * 8])
    return _in_order(frame[rows * 8:], start=False) if tail else frame[rows * 8]


def _mkl_t_order_f32(a, b, m: int, k: int, n: int, a_transposed: bool, c=None, alpha=1):
    """a @ b as MKL sums it when b goes to BLAS transposed ('T': b = w.t() of a row-major w),
    or None (the fused kernel for k > _FMA_MAX_K); c and alpha as for _mkl_order_f32. Found
    by experiment as _mkl_order_f32's:
      - one row (m == 1): the gemv kernels of _lane_plan;
      - the fused kernel (n >= 12 and m >= 4) as for 'N' (b scaled first, then + c), its other
        rows as below;
      - a row-major a: the lane kernels of _lane_plan ("dot"), per element;
      - a stored transposed too: every element in order, plainly;
    the sums of the last three scaled by alpha, then + c."""
    if m == 1:
        return _ended(_times(_lanes(a, b, m, k, n, gemv=True), alpha), c)
    rest = _fused_rows(m, k, n)
    if rest is None:
        return None
    if rest == m:
        return _ended(_fma_rows(a, _times(b, alpha)), c)
    if a_transposed:
        out = _in_order(_products(a, b))
    elif rest:
        out = np.empty((m, n), _F32)
        out[rest:] = _lanes(a[rest:], b, m - rest, k, n)
    else:
        out = _lanes(a, b, m, k, n)
    out = _times(out, alpha)
    if rest:
        out[:rest] = _fma_rows(a[:rest], _times(b, alpha))
    return _ended(out, c)


def _blas_form(a, b):
    """How PyTorch's addmm hands a @ b (into a fresh row-major result) to column-major BLAS:
    whether it swaps the operands (computing (a@b)^T = b^T a^T, which it does unless the result
    is one column), and whether its first and second BLAS operands go transposed. An operand
    in neither layout is copied row-major, which goes as a row-major one does."""
    m, k = a.shape
    n = b.shape[1]
    item = a.itemsize
    a0, a1 = a.strides[0] // item, a.strides[1] // item
    b0, b1 = b.strides[0] // item, b.strides[1] // item
    if n != 1:
        first_t = not (b1 == 1 and b0 >= n) and b0 == 1 and b1 >= k
        second_t = not (a1 == 1 and a0 >= k) and a0 == 1 and a1 >= m
        return True, first_t, second_t
    first_t = not (a0 == 1 and a1 >= m)
    second_t = not (b0 == 1 and b1 >= k)
    return False, first_t, second_t


_level: list = []  # mkl_intel.isa(), once the first product has asked


def _detected_level():
    _level.append(mkl_intel.isa())
    return _level[0]


def _current_level():
    """mkl_intel.isa() of this process, asked once, on the first product."""
    return _level[0] if _level else _detected_level()


def product(a, b, c=None, alpha=1):
    """a @ b for float32 as PyTorch's MKL sums it, bit for bit, C-contiguous as torch's result
    is, or None where its order is not known here. For addmm, c is beta*bias (broadcastable to
    m x n) and alpha its scale: PyTorch copies the bias into the result and has gemm add
    alpha*a@b to it, and where that enters the sum depends on MKL's kernel (see
    _mkl_order_f32, _mkl_t_order_f32).
    Which kernel runs follows how PyTorch passes the operands to BLAS (_blas_form): b stored
    ('N'): _mkl_order_f32; b transposed ('T'): _mkl_t_order_f32; a result of one column (n == 1)
    is a gemv: a row-major a (or, for a 1x1 result, b of stride 1 along k) as one row of
    _mkl_t_order_f32, then alpha*sum + c; an a stored transposed in order from c, the vector
    (b; for a 1x1 result a) scaled by alpha first.
    On an Intel CPU MKL runs other kernels: mkl_intel's orders where known, else the AMD one."""
    level = _current_level()
    if level is None:
        return None
    if a.shape[1] == 1:
        return mkl_intel.single_products(a, b, c, alpha, level, _blas_form)
    if level != "amd":
        out = mkl_intel.product(a, b, c, alpha, level, _blas_form)
        if out is not None:
            return out
        # an Intel shape whose order was not measured: the AMD order, as before the Intel
        # orders were known (neither is Intel's; the AMD one keeps what programs printed)
    m, k = a.shape
    n = b.shape[1]
    swap, first_t, second_t = _blas_form(a, b)
    if swap and first_t:
        out = _mkl_t_order_f32(a, b, m, k, n, second_t, c, alpha)
    elif swap:
        out = _mkl_order_f32(a, b, m, k, n, c, alpha)
    elif (not second_t) if m == 1 else first_t:
        # (_ended(_times(_lanes(..., gemv=True), alpha), c) without three frames: Linear's
        # one-output forward takes this branch every step)
        out = _in_order(_products(a, b)) if k <= 4 else _lanes(a, b, m, k, n, gemv=True)
        if alpha != 1:
            out = out * np.float32(alpha)
        if c is not None:
            out += c
    elif m == 1:
        out = _in_order(_products(_times(a, alpha), b, c), start=c is None)
    else:
        out = _in_order(_products(a, _times(b, alpha), c), start=c is None)
    if out is not None and not out.flags.c_contiguous:
        out = np.ascontiguousarray(out)
    return out


def matrix_vector(a, v):
    """a @ v (mv: v 1-d) for float32 as PyTorch's MKL sums it, or None (numpy's BLAS then). On
    MKL's Intel kernels mv sums as mm with v as one column does (measured bit for bit); on the
    AMD ones its order was never measured, so None there."""
    if not _switch.EXACT or a.dtype is not _F32 or v.dtype is not _F32:
        return None
    level = _current_level()
    if level is None or level == "amd":
        return None
    column = v[:, None]
    if not applies(a, column):
        return None
    out = mkl_intel.product(a, column, None, 1, level, _blas_form)
    return None if out is None else out[:, 0]


def applies(a, b) -> bool:
    """Whether a @ b (2-d) is summed in MKL's order here (small float32 products, switch on;
    an inner size of 1, one product per element, at any size: see single_products; larger
    ones where AVX-512 MKL sums in order, up to _WIDE_MAX_WORK)."""
    if not _switch.EXACT:
        return False
    m, k = a.shape
    if a.dtype is not _F32 or b.dtype is not _F32:
        return False
    work = m * k * b.shape[1]
    if k == 1 or 1 < k <= _ORDER_MAX_K and work <= _ORDER_MAX_WORK:
        return True
    if work > _WIDE_MAX_WORK:
        return False
    level = _current_level()
    return level == "avx512" and mkl_intel.wide_in_order(a, b, _blas_form)
