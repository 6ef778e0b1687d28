"""Linear algebra: mm, mv, dot, bmm, addmm, matmul (dispatching by rank as
PyTorch does, so `@` gives MmBackward0, MvBackward0, DotBackward0,
SqueezeBackward4 or UnsafeViewBackward0), and outer."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..dtypes import float32, float64
from ..parallel import blas_called, blas_product, get_num_threads
from ..tensor import Tensor, _c_name, _type_word
from .registry import defop, run_op
from .shape import broadcast_error
from .views import squeeze, squeeze_internal, t, transpose, unsafe_view, unsqueeze


def _product_count(arrays, meta) -> int:
    """Elements of a matrix product (mm, bmm, addmm: the last two arrays), for --max-elements."""
    a, b = arrays[-2], arrays[-1]
    return math.prod(a.shape[:-1]) * b.shape[-1]


def _column_major(d) -> bool:
    """PyTorch's test, in mm's and addmm's backward, for an input stored column by column (the
    .t() of a row-major matrix): its gradient is then computed transposed, which sums the
    products in another order (see _mkl_product)."""
    item = d.itemsize
    return d.strides[0] == item and d.strides[1] == d.shape[0] * item


def _mat1_grad(g, b, column_major: bool):
    return b.mm(g.t()).t() if column_major else g.mm(b.t())


def _mat2_grad(g, a, column_major: bool):
    return g.t().mm(a).t() if column_major else a.t().mm(g)


def _mm_grads(c, g):
    a, b = c.saved
    a_columns, b_columns = c.meta
    return (_mat1_grad(g, b, a_columns) if c.needs(0) else None,
            _mat2_grad(g, a, b_columns) if c.needs(1) else None)


def _blas_dot(a, b):
    """np.dot of two vectors, telling engine/parallel about the BLAS call (never split:
    that would change the order of the sum)."""
    out = np.dot(a, b)
    blas_called(a.size)
    return out


_F32, _F64 = float32.np, float64.np
# Where float32 products are rebuilt in MKL's order (see _mkl_product): the inner size, and
# the products m*k*n (a temporary of that many floats). The fused multiply-add kernel runs a
# numpy call per step of k (about 1.5 us each), so it gets a smaller inner size.
_ORDER_MAX_K = 128
_ORDER_MAX_WORK = 16384
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
    if n >= m:
        terms = np.empty((first + k, m, n), dtype)
    else:
        terms = np.empty((first + k, n, m), dtype).transpose(0, 2, 1)
    np.multiply(a.T[:, :, None], b[:, None, :], out=terms[first:], dtype=dtype)
    if first:
        terms[0] = lead
    return terms


def _ended(out, c):
    return out if c is None else out + c


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
    a's row i starts start + i*step floats past a 16-byte boundary."""
    if gemv:
        count = max(m, n)
        kinds = [("block",) if j < count & ~3 else ("odd",) if (j - (count & ~3)) % 2 else ("even",)
                 for j in range(count)]
        grid = [kinds] if m == 1 else [[kind] for kind in kinds]
    else:
        grid = [[("dot", -(start + i * step) % 4, 4 if j < n & ~3 else 8) for j in range(n)]
                for i in range(m)]
    plans = {kind: _lane_plan(kind, k) for row in grid for kind in row}
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
    start, step = 0, k % 4  # PyTorch copies an a of another layout to a fresh row-major one
    item = a.itemsize
    if not gemv and a.strides[1] == item and a.strides[0] >= k * item:
        start = 0 if a.base is None else a.ctypes.data // item % 4
        step = a.strides[0] // item % 4
    index, rows, tail = _lane_frame(m, k, n, start, step, gemv)
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


def _mkl_product(a, b, c=None, alpha=1):
    """a @ b for float32 as PyTorch's MKL sums it, bit for bit, C-contiguous as torch's result
    is, or None where its order is not known here. For addmm, c is beta*bias (broadcastable to
    m x n) and alpha its scale: PyTorch copies the bias into the result and has gemm add
    alpha*a@b to it, and where that enters the sum depends on MKL's kernel (see
    _mkl_order_f32, _mkl_t_order_f32).
    Which kernel runs follows how PyTorch passes the operands to BLAS (_blas_form): b stored
    ('N'): _mkl_order_f32; b transposed ('T'): _mkl_t_order_f32; a result of one column (n == 1)
    is a gemv: a row-major a (or, for a 1x1 result, b of stride 1 along k) as one row of
    _mkl_t_order_f32, then alpha*sum + c; an a stored transposed in order from c, the vector
    (b; for a 1x1 result a) scaled by alpha first."""
    m, k = a.shape
    n = b.shape[1]
    swap, first_t, second_t = _blas_form(a, b)
    if swap and first_t:
        out = _mkl_t_order_f32(a, b, m, k, n, second_t, c, alpha)
    elif swap:
        out = _mkl_order_f32(a, b, m, k, n, c, alpha)
    elif (not second_t) if m == 1 else first_t:
        out = _ended(_times(_lanes(a, b, m, k, n, gemv=True), alpha), c)
    elif m == 1:
        out = _in_order(_products(_times(a, alpha), b, c), start=c is None)
    else:
        out = _in_order(_products(a, _times(b, alpha), c), start=c is None)
    if out is not None and not out.flags.c_contiguous:
        out = np.ascontiguousarray(out)
    return out


def _emulated(a, b) -> bool:
    m, k = a.shape
    return a.dtype is _F32 and b.dtype is _F32 and 1 < k <= _ORDER_MAX_K \
        and m * k * b.shape[1] <= _ORDER_MAX_WORK


def _mm_fwd(a, b, a_columns=False, b_columns=False):
    """a @ b. An inner dimension of 1 with both outer ones above 1 is an outer product where
    PyTorch (BLAS gemm) keeps the sign of zero products (-0.), as a plain multiply does and
    numpy's matmul does not; with an outer dimension of 1 (gemv) zeros come out as +0.
    Small float32 products are summed in the order PyTorch's MKL uses (_mkl_product), so
    the last bits, and what float32 prints, agree; everything else is numpy's BLAS.
    (a_columns, b_columns: _column_major of each, for the backward.)"""
    m, k = a.shape
    n = b.shape[1]
    if k == 1 and m > 1 and n > 1:
        return a * b
    if _emulated(a, b):
        out = _mkl_product(a, b)
        if out is not None:
            return out
    return blas_product(a, b)


MM = defop("mm", "MmBackward0", _mm_fwd, _mm_grads, "d(A@B)/dA = G@B^T, d(A@B)/dB = A^T@G",
           save="inputs", save_for=((1,), (0,)), out_size=_product_count, check_order=(1, 0),
           torch_call="a.reshape(a.shape[0], -1) @ a.reshape(a.shape[0], -1).t()")
MV = defop("mv", "MvBackward0", blas_product,
           lambda c, g: (g.unsqueeze(1) * c.saved[1].unsqueeze(0) if c.needs(0) else None,
                         c.saved[0].t().mv(g) if c.needs(1) else None),
           "d(A@v)/dA = g v^T, d(A@v)/dv = A^T g", save="inputs", save_for=((1,), (0,)),
           torch_call="a.reshape(2, -1) @ b.reshape(-1)")
DOT = defop("dot", "DotBackward0", _blas_dot,
            lambda c, g: (g * c.saved[1] if c.needs(0) else None, g * c.saved[0] if c.needs(1) else None),
            "d(a.b)/da = b, d(a.b)/db = a", save="inputs", save_for=((1,), (0,)),
            torch_call="a.reshape(-1) @ a.reshape(-1)")
BMM = defop("bmm", "BmmBackward0", blas_product,
            lambda c, g: (g.bmm(c.saved[1].transpose(1, 2)) if c.needs(0) else None,
                          c.saved[0].transpose(1, 2).bmm(g) if c.needs(1) else None),
            "d(A@B)/dA = G@B^T, d(A@B)/dB = A^T@G (per batch)", save="inputs",
            save_for=((1,), (0,)), out_size=_product_count, check_order=(1, 0),
            torch_call="a.reshape(1, 1, -1).bmm(a.reshape(1, -1, 1))")
def _addmm_forward(bias, a, b, beta, alpha, a_columns=False, b_columns=False):
    """beta*bias + alpha*(a@b); as in PyTorch, beta == 0 ignores bias and alpha == 0 the
    product (nan or inf there does not leak), and integer tensors truncate beta and alpha."""
    if a.dtype.kind != "f":
        beta, alpha = int(beta), int(alpha)
    if alpha != 0 and bias.dtype is a.dtype and _emulated(a, b):
        # small float32 products in MKL's order, the bias added where MKL adds it (_mkl_product)
        c = None if beta == 0 else bias if beta == 1 else bias * np.float32(beta)
        out = _mkl_product(a, b, c, alpha)
        if out is not None:
            return out
    out = blas_product(a, b) if alpha != 0 else np.zeros((a.shape[0], b.shape[1]), a.dtype)
    if alpha != 1 and alpha != 0:
        out = out * alpha
    if beta != 0:
        out = out + (bias if beta == 1 else bias * beta)
    return out.astype(a.dtype, copy=False)


def _scaled(g, k):
    return g if k == 1 else g * k


ADDMM = defop("addmm", "AddmmBackward0", _addmm_forward,
              lambda c, g: (_scaled(g, c.meta[0]) if c.needs(0) else None,
                            _scaled(_mat1_grad(g, c.saved[2], c.meta[2]), c.meta[1]) if c.needs(1) else None,
                            _scaled(_mat2_grad(g, c.saved[1], c.meta[3]), c.meta[1]) if c.needs(2) else None),
              "d(beta*bias + alpha*A@B): bias gets beta*G, A gets alpha*G@B^T, B gets alpha*A^T@G",
              save="inputs", broadcast=True, save_for=((), (2,), (1,)), out_size=_product_count,
              torch_call="torch.addmm(b.sum().reshape(1, 1), a.reshape(1, -1), a.reshape(-1, 1))")




def _word(x: Tensor) -> str:
    """PyTorch's ScalarType name of x's dtype (Double, Float, Long, Int, Bool)."""
    return _type_word(x.dtype)


def _same_dtype(a: Tensor, b: Tensor):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_c_name(a.dtype)} != {_c_name(b.dtype)}")


def _no_bool(x: Tensor, kernel: str) -> None:
    if x._data.dtype == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _shape_str(shape) -> str:
    return "x".join(str(s) for s in shape)


def _tensors(name: str, *args) -> None:
    """PyTorch's argument check: every operand of a linear-algebra op is a Tensor."""
    for i, (arg_name, x) in enumerate(args):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"{name}(): argument '{arg_name}' (position {i + 1}) must be Tensor, not {type(x).__name__}")


def mm(a: Tensor, b: Tensor) -> Tensor:
    _tensors("mm", ("input", a), ("mat2", b))
    if a._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(a._data.shape)} and {_shape_str(b._data.shape)})")
    _same_dtype(a, b)
    _no_bool(a, "addmm_impl_cpu_")
    return run_op(MM, (a, b), (_column_major(a._data), _column_major(b._data)))


def mv(a: Tensor, v: Tensor) -> Tensor:
    _tensors("mv", ("input", a), ("vec", v))
    if a._data.ndim != 2 or v._data.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {a._data.ndim}, {v._data.ndim}")
    if a._data.shape[1] != v._data.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a._data.shape[0]}), mat ({_shape_str(a._data.shape)}), vec ({v._data.shape[0]})")
    if a._data.dtype != v._data.dtype:  # the result (addmv's self) takes the vector's dtype
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {_word(v)}, {_word(a)}, and {_word(v)}")
    _no_bool(a, "addmv_impl_cpu")
    return run_op(MV, (a, v))


def dot(a: Tensor, b: Tensor) -> Tensor:
    _tensors("dot", ("input", a), ("tensor", b))
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {_word(a)} and {_word(b)}")
    if a._data.shape[0] != b._data.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a._data.shape[0]}] and src [{b._data.shape[0]}] "
            "to have the same number of elements, but got "
            f"{a._data.shape[0]} and {b._data.shape[0]} elements respectively")
    _no_bool(a, "dot")
    return run_op(DOT, (a, b))


vdot = dot
inner = dot


def bmm(a: Tensor, b: Tensor) -> Tensor:
    _tensors("bmm", ("input", a), ("mat2", b))
    if a._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    sa, sb = a._data.shape, b._data.shape
    if sb[0] != sa[0] or sb[1] != sa[2]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{sa[0]}, {sa[2]}] "
            f"but got: [{sb[0]}, {sb[1]}].")
    _no_bool(a, "bmm")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected scalar type {_word(a)} but found {_word(b)}")
    return run_op(BMM, (a, b))


def _tensor_type(x: Tensor) -> str:
    """How PyTorch prints a tensor's type inside expand's error (torch.DoubleTensor, CPUBoolType)."""
    return "CPUBoolType" if x._data.dtype == np.bool_ else f"torch.{x.dtype._legacy}"


def _bias_expands(bias: Tensor, size: tuple) -> None:
    """addmm expands its `self` to the product's shape: PyTorch's expand errors."""
    have = bias._data.shape
    if len(size) < len(have):
        raise RuntimeError(
            f"expand({_tensor_type(bias)}{{[{', '.join(map(str, have))}]}}, size=[{', '.join(map(str, size))}]): "
            f"the number of sizes provided ({len(size)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(have)})")
    lead = len(size) - len(have)
    for i, s in enumerate(have):
        if s != 1 and s != size[lead + i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({size[lead + i]}) must match the existing size ({s}) at "
                f"non-singleton dimension {lead + i}.  Target sizes: [{', '.join(map(str, size))}].  "
                f"Tensor sizes: [{', '.join(map(str, have))}]")


def addmm(bias, a: Tensor, b: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta*bias + alpha*(a@b), with PyTorch's checks in its order: dtypes, ranks, shapes, bias."""
    _tensors("addmm", ("input", bias), ("mat1", a), ("mat2", b))
    if bias._data.dtype != b._data.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_word(bias)} and {_word(b)}")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_word(a)} and {_word(b)}")
    if a._data.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {a._data.ndim}-D tensor")
    if b._data.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {b._data.ndim}-D tensor")
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(a._data.shape)} and {_shape_str(b._data.shape)})")
    _bias_expands(bias, (a._data.shape[0], b._data.shape[1]))
    _no_bool(a, "addmm_impl_cpu_")
    return run_op(ADDMM, (bias, a, b), (beta, alpha, _column_major(a._data), _column_major(b._data)))


def _strides(t: Tensor) -> tuple:
    return tuple(st // t._data.itemsize for st in t._data.strides)


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """PyTorch's rule for running a batched matmul as one mm/mv on a folded matrix."""
    na, nb = a._data.ndim, b._data.ndim
    larger = na >= nb
    if not (max(na, nb) >= 3 and min(na, nb) <= 2):
        return False
    if (b if larger else a).requires_grad:
        return True
    if na == 2:
        return False
    t1 = a if larger else transpose(b, -2, -1)
    if t1._data.size == 0:
        return True
    shape, strides = t1._data.shape, _strides(t1)
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(t1._data.ndim - 2))


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """a @ b with PyTorch's rank dispatch (and so its node names): dot, mv, mm, a folded
    mm/mv for an N-D operand against a 1-D/2-D one, else a broadcast bmm."""
    _tensors("matmul", ("input", a), ("other", b))
    na, nb = a._data.ndim, b._data.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D")
    if na == 1 and nb == 1:
        return dot(a, b)
    if na == 2 and nb == 1:
        return mv(a, b)
    if na == 1 and nb == 2:
        return squeeze_internal(mm(unsqueeze(a, 0), b), 0)
    if na == 2 and nb == 2:
        return mm(a, b)
    if _should_fold(a, b):
        flip = nb > na
        t1 = transpose(b, -2, -1) if flip else a
        t2 = (t(a) if na == 2 else a) if flip else b
        sizes = t1._data.shape
        out_shape = sizes[:-1]
        folded = t1.reshape(int(np.prod(out_shape)), sizes[-1])
        if t2._data.ndim == 2:
            out = unsafe_view(mm(folded, t2), out_shape + (t2._data.shape[1],))
            return transpose(out, -2, -1).contiguous() if flip else out
        return unsafe_view(mv(folded, t2), out_shape)
    # batched: broadcast the batch dims, fold them into one, bmm, unfold
    sa, sb = a._data.shape, b._data.shape
    n = sa[-2] if na > 1 else 1
    m1 = sa[-1]
    m2 = sb[-2] if nb > 1 else sb[0]
    p = sb[-1] if nb > 1 else 1
    batch1, batch2 = sa[:max(na - 2, 0)], sb[:max(nb - 2, 0)]
    if na == 3 and nb == 3 and batch1[0] != batch2[0]:
        # a batch of one that needs a gradient is squeezed, so the fold above applies
        if batch1[0] == 1 and a.requires_grad:
            return matmul(squeeze(a, 0), b)
        if batch2[0] == 1 and b.requires_grad:
            return matmul(a, squeeze(b, 0))
    try:
        batch = tuple(np.broadcast_shapes(batch1, batch2))
    except ValueError:
        broadcast_error(batch1, batch2)
    count = int(np.prod(batch))
    ae = a.expand(batch + (n, m1)).reshape(count, n, m1)
    if nb == 1:
        be = unsqueeze(b.expand(batch + (m2,)).reshape(count, m2), 2)
    else:
        be = b.expand(batch + (m2, p)).reshape(count, m2, p)
    out_shape = batch + ((n,) if na > 1 else ()) + ((p,) if nb > 1 else ())
    out = bmm(ae, be)
    if nb == 1:
        out = squeeze(out, -1)
    return unsafe_view(out, out_shape)


def outer(a: Tensor, b: Tensor) -> Tensor:
    _tensors("outer", ("input", a), ("vec2", b))
    for arg, x in (("self", a), ("vec2", b)):
        if x._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {arg}, but got {x._data.ndim}-D")
    return a.reshape(-1, 1) * b


ger = outer
