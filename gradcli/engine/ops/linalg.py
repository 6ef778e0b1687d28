"""Linear algebra: mm, mv, dot, bmm, addmm, matmul (dispatching by rank as
PyTorch does, so `@` gives MmBackward0, MvBackward0, DotBackward0,
SqueezeBackward4 or UnsafeViewBackward0), and outer."""

from __future__ import annotations

import math

import numpy as np

from .. import autocast_state as _autocast
from ..grad_mode import GRAD_MODE
from ..kernels import batched, mkl
from ..limits import MAX_ELEMENTS, check_count
from ..parallel import blas_called, blas_product
from ..tensor import Tensor, _c_name, _type_word, make
from . import registry as _registry
from .registry import broadcast_error, defop, run_op
from .views import squeeze, squeeze_internal, t, transpose, unsafe_view, unsqueeze


def _product_count(arrays, meta) -> int:
    """Elements of a matrix product (mm, bmm, addmm: the last two arrays), for --max-elements."""
    a, b = arrays[-2], arrays[-1]
    return math.prod(a.shape[:-1]) * b.shape[-1]


def _column_major(d) -> bool:
    """PyTorch's test, in mm's and addmm's backward, for an input stored column by column (the
    .t() of a row-major matrix): its gradient is then computed transposed, which sums the
    products in another order (see kernels/mkl.py)."""
    item = d.itemsize
    return d.strides[0] == item and d.strides[1] == d.shape[0] * item


def _mat1_grad(g, b, column_major: bool):
    return t(_product(b, False, g, True)) if column_major else _product(g, False, b, True)


def _mat2_grad(g, a, column_major: bool):
    return t(_product(g, True, a, False)) if column_major else _product(a, True, g, False)


def _product(x: Tensor, x_t: bool, y: Tensor, y_t: bool) -> Tensor:
    """(x.t() if x_t else x).mm(y.t() if y_t else y) for mm's and addmm's backward formulas.

    When nothing is recorded (a backward without create_graph: grad mode off, no dual
    level, no autocast) and the two are float matrices of one dtype that multiply, mm's
    forward runs on the arrays directly: the same kernel and the same result Tensor (no
    node, no view) as the Tensor calls, without their two transposed view Tensors and mm's
    dispatch (about twenty Python calls a product: bench W7). A size limit
    (--max-elements) is checked as mm's own check would, before the product allocates."""
    xd, yd = x._data, y._data
    if (not GRAD_MODE.enabled and _registry.FORWARD_AD is None and not _autocast.ENABLED
            and type(xd) is np.ndarray and type(yd) is np.ndarray
            and xd.dtype is yd.dtype and xd.dtype.kind == "f" and xd.ndim == 2 and yd.ndim == 2):
        xd = xd.T if x_t else xd
        yd = yd.T if y_t else yd
        if xd.shape[1] == yd.shape[0]:
            limit = MAX_ELEMENTS[0]
            if limit is not None and xd.shape[0] * yd.shape[1] > limit:
                check_count(xd.shape[0] * yd.shape[1])
            out = MM.forward(xd, yd)
            return make(out if type(out) is np.ndarray else np.asarray(out))
    return (x.t() if x_t else x).mm(y.t() if y_t else y)


def _mm_grads(c, g):
    a, b = c.saved
    a_columns, b_columns = c.meta
    return (_mat1_grad(g, b, a_columns) if c.needs(0) else None,
            _mat2_grad(g, a, b_columns) if c.needs(1) else None)


def _product_tangent(res, bias_t, beta, alpha, product, a, b, at, bt):
    """derivatives.yaml's forward formula of a matrix product (mm, bmm, mv, dot and their
    add- forms): beta*bias_t + alpha*product(a_t, b) + alpha*product(a, b_t), each factor
    only when it is not 1. PyTorch gives a missing tangent as an efficient zero tensor,
    whose terms add nothing (a present term's zeros keep their signs), so its term is left
    out here; forward AD puts PyTorch's AddBackward0 over a single term that a primal
    needing a gradient would have joined (forward_ad._product_rule_graph). NotImplemented
    (the generic rule) for what the formula does not cover: another dtype than the
    result's, complex, or a bias tangent with a graph alone that must broadcast to the
    result."""
    kind = res._data.dtype
    if kind.kind not in "fV":
        return NotImplemented
    for x in (a, b, at, bt, bias_t):
        if x is not None and x._data.dtype != kind:
            return NotImplemented
    total = None
    if bias_t is not None:
        total = bias_t if beta == 1 else bias_t * beta
        if at is None and bt is None and bias_t._data.shape != res._data.shape:
            if total.requires_grad:
                return NotImplemented
            return total.expand(res.shape).contiguous()  # (PyTorch's copy, the result's shape)
    for term in (product(at, b) if at is not None else None,
                 product(a, bt) if bt is not None else None):
        if term is not None:
            if alpha != 1:
                term = term * alpha
            total = term if total is None else total + term
    return total


def _mm_jvp(inputs, meta, res, tangents):
    if type(meta[0]) is not bool:  # (a sparse operand: its own meta, the generic rule)
        return NotImplemented
    return _product_tangent(res, None, 1, 1, mm, *inputs, *tangents)


def _addmm_jvp(inputs, meta, res, tangents):
    return _product_tangent(res, tangents[0], meta[0], meta[1], mm, inputs[1], inputs[2],
                            tangents[1], tangents[2])


def _mv_jvp(inputs, meta, res, tangents):
    return _product_tangent(res, None, 1, 1, mv, *inputs, *tangents)


def _dot_jvp(inputs, meta, res, tangents):
    return _product_tangent(res, None, 1, 1, dot, *inputs, *tangents)


def _bmm_jvp(inputs, meta, res, tangents):
    return _product_tangent(res, None, 1, 1, bmm, *inputs, *tangents)


def _blas_dot(a, b):
    """np.dot of two vectors, telling engine/parallel about the BLAS call (never split:
    that would change the order of the sum)."""
    out = np.dot(a, b)
    blas_called(a.size)
    return out


def _mm_fwd(a, b, a_columns=False, b_columns=False):
    """a @ b. An inner dimension of 1 with both outer ones above 1 is an outer product where
    PyTorch (BLAS gemm) keeps the sign of zero products (-0.), as a plain multiply does and
    numpy's matmul does not; with an outer dimension of 1 (gemv) zeros come out as +0.
    Small float32 products are summed in the order PyTorch's MKL uses (kernels/mkl.py), so
    the last bits, and what float32 prints, agree; everything else is numpy's BLAS.
    (a_columns, b_columns: _column_major of each, for the backward.)"""
    m, k = a.shape
    n = b.shape[1]
    if k == 1 and m > 1 and n > 1:
        return a * b
    if mkl.applies(a, b):
        out = mkl.product(a, b)
        if out is not None:
            return out
    return blas_product(a, b)


MM = defop("mm", "MmBackward0", _mm_fwd, _mm_grads, "d(A@B)/dA = G@B^T, d(A@B)/dB = A^T@G",
           save="inputs", save_for=((1,), (0,)), out_size=_product_count, check_order=(1, 0),
           torch_call="a.reshape(a.shape[0], -1) @ a.reshape(a.shape[0], -1).t()", jvp=_mm_jvp)
def _mv_fwd(a, v):
    """a @ v: small float32 ones in MKL's order where kernels/mkl.py knows it, else numpy's BLAS."""
    out = mkl.matrix_vector(a, v)
    return blas_product(a, v) if out is None else out


MV = defop("mv", "MvBackward0", _mv_fwd,
           lambda c, g: (g.unsqueeze(1) * c.saved[1].unsqueeze(0) if c.needs(0) else None,
                         c.saved[0].t().mv(g) if c.needs(1) else None),
           "d(A@v)/dA = g v^T, d(A@v)/dv = A^T g", save="inputs", save_for=((1,), (0,)),
           torch_call="a.reshape(2, -1) @ b.reshape(-1)", jvp=_mv_jvp)
DOT = defop("dot", "DotBackward0", _blas_dot,
            lambda c, g: (g * c.saved[1] if c.needs(0) else None, g * c.saved[0] if c.needs(1) else None),
            "d(a.b)/da = b, d(a.b)/db = a", save="inputs", save_for=((1,), (0,)),
            torch_call="a.reshape(-1) @ a.reshape(-1)", jvp=_dot_jvp)
def _bmm_fwd(a, b):
    """Per batch a @ b: ATen's own loop's order for small products (kernels/batched.py),
    else numpy's BLAS."""
    if batched.applies(a, b):
        return batched.product(a, b)
    return blas_product(a, b)


BMM = defop("bmm", "BmmBackward0", _bmm_fwd,
            lambda c, g: (g.bmm(c.saved[1].transpose(1, 2)) if c.needs(0) else None,
                          c.saved[0].transpose(1, 2).bmm(g) if c.needs(1) else None),
            "d(A@B)/dA = G@B^T, d(A@B)/dB = A^T@G (per batch)", save="inputs",
            save_for=((1,), (0,)), out_size=_product_count, check_order=(1, 0),
            torch_call="a.reshape(1, 1, -1).bmm(a.reshape(1, -1, 1))", jvp=_bmm_jvp)
def _addmm_forward(bias, a, b, beta, alpha, a_columns=False, b_columns=False):
    """beta*bias + alpha*(a@b); as in PyTorch, beta == 0 ignores bias and alpha == 0 the
    product (nan or inf there does not leak), and integer tensors truncate beta and alpha."""
    if a.dtype.kind not in "fV":
        beta, alpha = int(beta), int(alpha)
    if alpha != 0 and bias.dtype is a.dtype and mkl.applies(a, b):
        # small float32 products in MKL's order, the bias added where MKL adds it (kernels/mkl.py)
        c = None if beta == 0 else bias if beta == 1 else bias * np.float32(beta)
        out = mkl.product(a, b, c, alpha)
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
              torch_call="torch.addmm(b.sum().reshape(1, 1), a.reshape(1, -1), a.reshape(-1, 1))",
              jvp=_addmm_jvp)




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


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's lower-precision list)
        return _autocast.lower(mm, input, mat2)
    _tensors("mm", ("input", input), ("mat2", mat2))
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(input._data.shape)} and {_shape_str(mat2._data.shape)})")
    _same_dtype(input, mat2)
    _no_bool(input, "addmm_impl_cpu_")
    return run_op(MM, (input, mat2), (_column_major(input._data), _column_major(mat2._data)))


def mv(input: Tensor, vec: Tensor) -> Tensor:
    _tensors("mv", ("input", input), ("vec", vec))
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {input._data.ndim}, {vec._data.ndim}")
    if input._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({input._data.shape[0]}), mat ({_shape_str(input._data.shape)}), vec ({vec._data.shape[0]})")
    if input._data.dtype != vec._data.dtype:  # the result (addmv's self) takes the vector's dtype
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {_word(vec)}, {_word(input)}, and {_word(vec)}")
    _no_bool(input, "addmv_impl_cpu")
    return run_op(MV, (input, vec))


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    _tensors("dot", ("input", input), ("tensor", tensor))
    if input._data.ndim != 1 or tensor._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input._data.ndim}D and {tensor._data.ndim}D tensors")
    if input._data.dtype != tensor._data.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {_word(input)} and {_word(tensor)}")
    if input._data.shape[0] != tensor._data.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input._data.shape[0]}] and src [{tensor._data.shape[0]}] "
            "to have the same number of elements, but got "
            f"{input._data.shape[0]} and {tensor._data.shape[0]} elements respectively")
    _no_bool(input, "dot")
    return run_op(DOT, (input, tensor))


vdot = dot
inner = dot


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's lower-precision list)
        return _autocast.lower(bmm, input, mat2)
    _tensors("bmm", ("input", input), ("mat2", mat2))
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    sa, sb = input._data.shape, mat2._data.shape
    if sb[0] != sa[0] or sb[1] != sa[2]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{sa[0]}, {sa[2]}] "
            f"but got: [{sb[0]}, {sb[1]}].")
    _no_bool(input, "bmm")
    if input._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"expected scalar type {_word(input)} but found {_word(mat2)}")
    return run_op(BMM, (input, mat2))


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


def addmm(input, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta*bias + alpha*(a@b), with PyTorch's checks in its order: dtypes, ranks, shapes, bias."""
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's lower-precision list)
        return _autocast.lower(addmm, input, mat1, mat2, beta=beta, alpha=alpha)
    if not (isinstance(input, Tensor) and isinstance(mat1, Tensor) and isinstance(mat2, Tensor)):
        _tensors("addmm", ("input", input), ("mat1", mat1), ("mat2", mat2))
    bias, a, b = input._data, mat1._data, mat2._data
    if bias.dtype is not b.dtype and bias.dtype != b.dtype:  # (identity first: cheap)
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_word(input)} and {_word(mat2)}")
    if a.dtype is not b.dtype and a.dtype != b.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_word(mat1)} and {_word(mat2)}")
    if a.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {a.ndim}-D tensor")
    if b.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {b.ndim}-D tensor")
    m, k = a.shape
    k2, n = b.shape
    if k != k2:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(a.shape)} and {_shape_str(b.shape)})")
    have = bias.shape
    if have != (n,) and have != (m, n):  # (a Linear's bias, or a whole matrix: nothing to expand)
        _bias_expands(input, (m, n))
    if a.dtype.kind == "b":
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    item = a.itemsize  # (_column_major of each, inline: every Linear forward passes here)
    return run_op(ADDMM, (input, mat1, mat2),
                  (beta, alpha, a.strides[0] == item and a.strides[1] == m * item,
                   b.strides[0] == item and b.strides[1] == k * item))


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


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """a @ b with PyTorch's rank dispatch (and so its node names): dot, mv, mm, a folded
    mm/mv for an N-D operand against a 1-D/2-D one, else a broadcast bmm."""
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's lower-precision list)
        return _autocast.lower(matmul, input, other)
    _tensors("matmul", ("input", input), ("other", other))
    na, nb = input._data.ndim, other._data.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D")
    if na == 1 and nb == 1:
        return dot(input, other)
    if na == 2 and nb == 1:
        return mv(input, other)
    if na == 1 and nb == 2:
        return squeeze_internal(mm(unsqueeze(input, 0), other), 0)
    if na == 2 and nb == 2:
        return mm(input, other)
    if _should_fold(input, other):
        flip = nb > na
        t1 = transpose(other, -2, -1) if flip else input
        t2 = (t(input) if na == 2 else input) if flip else other
        sizes = t1._data.shape
        out_shape = sizes[:-1]
        folded = t1.reshape(int(np.prod(out_shape)), sizes[-1])
        if t2._data.ndim == 2:
            out = unsafe_view(mm(folded, t2), out_shape + (t2._data.shape[1],))
            return transpose(out, -2, -1).contiguous() if flip else out
        return unsafe_view(mv(folded, t2), out_shape)
    # batched: broadcast the batch dims, fold them into one, bmm, unfold
    sa, sb = input._data.shape, other._data.shape
    n = sa[-2] if na > 1 else 1
    m1 = sa[-1]
    m2 = sb[-2] if nb > 1 else sb[0]
    p = sb[-1] if nb > 1 else 1
    batch1, batch2 = sa[:max(na - 2, 0)], sb[:max(nb - 2, 0)]
    if na == 3 and nb == 3 and batch1[0] != batch2[0]:
        # a batch of one that needs a gradient is squeezed, so the fold above applies
        if batch1[0] == 1 and input.requires_grad:
            return matmul(squeeze(input, 0), other)
        if batch2[0] == 1 and other.requires_grad:
            return matmul(input, squeeze(other, 0))
    try:
        batch = tuple(np.broadcast_shapes(batch1, batch2))
    except ValueError:
        broadcast_error(batch1, batch2)
    count = int(np.prod(batch))
    ae = input.expand(batch + (n, m1)).reshape(count, n, m1)
    if nb == 1:
        be = unsqueeze(other.expand(batch + (m2,)).reshape(count, m2), 2)
    else:
        be = other.expand(batch + (m2, p)).reshape(count, m2, p)
    out_shape = batch + ((n,) if na > 1 else ()) + ((p,) if nb > 1 else ())
    out = bmm(ae, be)
    if nb == 1:
        out = squeeze(out, -1)
    return unsafe_view(out, out_shape)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    _tensors("outer", ("input", input), ("vec2", vec2))
    for arg, x in (("self", input), ("vec2", vec2)):
        if x._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {arg}, but got {x._data.ndim}-D")
    return input.reshape(-1, 1) * vec2


ger = outer
