"""Linear algebra: mm, mv, dot, bmm, addmm, matmul (dispatching by rank as
PyTorch does, so `@` gives MmBackward0, MvBackward0, DotBackward0,
SqueezeBackward4 or UnsafeViewBackward0), and outer."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from .registry import defop, run_op
from .views import squeeze_internal, t, transpose, unsafe_view, unsqueeze


def _mm_grads(c, g):
    a, b = c.saved
    return (g.mm(b.t()) if c.needs(0) else None, a.t().mm(g) if c.needs(1) else None)


MM = defop("mm", "MmBackward0", np.matmul, _mm_grads, "d(A@B)/dA = G@B^T, d(A@B)/dB = A^T@G",
           save="inputs", save_for=((1,), (0,)), torch_call="a.reshape(a.shape[0], -1) @ a.reshape(a.shape[0], -1).t()")
MV = defop("mv", "MvBackward0", np.matmul,
           lambda c, g: (g.unsqueeze(1) * c.saved[1].unsqueeze(0) if c.needs(0) else None,
                         c.saved[0].t().mv(g) if c.needs(1) else None),
           "d(A@v)/dA = g v^T, d(A@v)/dv = A^T g", save="inputs", save_for=((1,), (0,)),
           torch_call="a.reshape(2, -1) @ b.reshape(-1)")
DOT = defop("dot", "DotBackward0", np.dot,
            lambda c, g: (g * c.saved[1] if c.needs(0) else None, g * c.saved[0] if c.needs(1) else None),
            "d(a.b)/da = b, d(a.b)/db = a", save="inputs", save_for=((1,), (0,)),
            torch_call="a.reshape(-1) @ a.reshape(-1)")
BMM = defop("bmm", "BmmBackward0", np.matmul,
            lambda c, g: (g.bmm(c.saved[1].transpose(1, 2)) if c.needs(0) else None,
                          c.saved[0].transpose(1, 2).bmm(g) if c.needs(1) else None),
            "d(A@B)/dA = G@B^T, d(A@B)/dB = A^T@G (per batch)", save="inputs",
            save_for=((1,), (0,)), torch_call="a.reshape(1, 1, -1).bmm(a.reshape(1, -1, 1))")
ADDMM = defop("addmm", "AddmmBackward0",
              lambda bias, a, b, beta, alpha: beta * bias + alpha * (a @ b) if (beta != 1 or alpha != 1) else bias + a @ b,
              lambda c, g: (g * c.meta[0] if c.needs(0) else None,
                            g.mm(c.saved[2].t()) * c.meta[1] if c.needs(1) else None,
                            c.saved[1].t().mm(g) * c.meta[1] if c.needs(2) else None),
              "d(bias + A@B): bias gets G, A gets G@B^T, B gets A^T@G", save="inputs", broadcast=True,
              save_for=((), (2,), (1,)),
              torch_call="torch.addmm(b.sum().reshape(1, 1), a.reshape(1, -1), a.reshape(-1, 1))")


def _same_dtype(a: Tensor, b: Tensor, name: str):
    if a._data.dtype != b._data.dtype:
        from ..tensor import _c_name

        da, db = dtypes.FROM_NP[a._data.dtype], dtypes.FROM_NP[b._data.dtype]
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_c_name(da)} != {_c_name(db)}")


def _no_bool(x: Tensor, kernel: str) -> None:
    if x._data.dtype == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _shape_str(shape) -> str:
    return "x".join(str(s) for s in shape)


def mm(a: Tensor, b: Tensor) -> Tensor:
    if a._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(a._data.shape)} and {_shape_str(b._data.shape)})")
    _same_dtype(a, b, "mm")
    _no_bool(a, "addmm_impl_cpu_")
    return run_op(MM, (a, b))


def mv(a: Tensor, v: Tensor) -> Tensor:
    if a._data.ndim != 2 or v._data.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {a._data.ndim}, {v._data.ndim}")
    if a._data.shape[1] != v._data.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a._data.shape[0]}), mat ({_shape_str(a._data.shape)}), vec ({v._data.shape[0]})")
    _same_dtype(a, v, "mv")
    _no_bool(a, "addmv_impl_cpu")
    return run_op(MV, (a, v))


def dot(a: Tensor, b: Tensor) -> Tensor:
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    if a._data.shape[0] != b._data.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a._data.shape[0]}] and src [{b._data.shape[0]}] "
            "to have the same number of elements, but got "
            f"{a._data.shape[0]} and {b._data.shape[0]} elements respectively")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {_dt(a)} and {_dt(b)}")
    _no_bool(a, "dot")
    return run_op(DOT, (a, b))


def _dt(t):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "bool": "Bool"}[t.dtype.name]


vdot = dot
inner = dot


def bmm(a: Tensor, b: Tensor) -> Tensor:
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
    return run_op(BMM, (a, b))


def addmm(bias, a: Tensor, b: Tensor, *, beta=1, alpha=1) -> Tensor:
    _no_bool(a, "addmm_impl_cpu_")
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(a._data.shape)} and {_shape_str(b._data.shape)})")
    return run_op(ADDMM, (bias, a, b), (beta, alpha))


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
    """a @ b with PyTorch's rank dispatch (and so its node names)."""
    if not isinstance(b, Tensor) or not isinstance(a, Tensor):
        raise TypeError(
            f"matmul(): argument 'other' (position 1) must be Tensor, not {type(b).__name__}")
    na, nb = a._data.ndim, b._data.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D")
    if na == 1 and nb == 1:
        return dot(a, b)
    if na == 2 and nb == 1:
        return mv(a, b)
    if na == 1 and nb == 2:
        if a._data.shape[0] != b._data.shape[0]:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied (1x{a._data.shape[0]} and {_shape_str(b._data.shape)})")
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
    # batched: broadcast the batch dims, fold them, bmm, unfold
    n = a._data.shape[-2] if na > 1 else 1
    m1 = a._data.shape[-1]
    m2 = b._data.shape[-2] if nb > 1 else b._data.shape[0]
    p = b._data.shape[-1] if nb > 1 else 1
    batch = tuple(np.broadcast_shapes(a._data.shape[:-2], b._data.shape[:-2]))
    count = int(np.prod(batch))
    ae = a.expand(batch + ((n, m1) if na > 1 else (m1,))).reshape(count, n, m1)
    be = b.expand(batch + ((m2, p) if nb > 1 else (m2,))).reshape(count, m2, p)
    out_shape = batch + ((n,) if na > 1 else ()) + ((p,) if nb > 1 else ())
    return unsafe_view(bmm(ae, be), out_shape)


def outer(a: Tensor, b: Tensor) -> Tensor:
    return a.reshape(-1, 1) * b


ger = outer
