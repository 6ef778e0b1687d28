"""torch._weight_norm, its fused node and norm_except_dim: what weight normalisation
(torch.nn.utils.weight_norm and parametrizations.weight_norm) computes w = g * v / |v| with.

PyTorch takes one fused kernel (its node: WeightNormInterfaceBackward0) when the kept dim
is the first or the last; any other dim is composed of ordinary ops (v * (g / norm)), and
dim=-1 (``dim=None`` in the Python API) means one norm over the whole tensor.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .registry import defop, public, run_op


def _other_axes(ndim: int, dim: int) -> tuple:
    return tuple(a for a in range(ndim) if a != dim)


def _weight_norm_array(v, g, dim):
    norms = np.sqrt(np.sum(np.square(v, dtype=np.float64), axis=_other_axes(v.ndim, dim),
                           keepdims=True))
    return (v * (g / norms)).astype(v.dtype, copy=False)


def _weight_norm_backward(c, gw):
    """w = v g / n with n = |v| over the other dims: with s = sum(gw * v) over them,
    dv = (g / n) (gw - v s / n^2) and dg = s / n (written with Tensor ops, so a second
    backward differentiates it)."""
    v, g = c.saved
    dim = c.meta[0]
    axes = list(_other_axes(v.dim(), dim))
    norms = (v * v).sum(axes, keepdim=True).sqrt()
    sums = (gw * v).sum(axes, keepdim=True)
    dv = (g / norms) * (gw - v * (sums / (norms * norms))) if c.needs(0) else None
    dg = (sums / norms).reshape(g.shape) if c.needs(1) else None
    return dv, dg


WEIGHT_NORM = defop("weight_norm_interface", "WeightNormInterfaceBackward0",
                    _weight_norm_array, _weight_norm_backward,
                    "w = g v / |v|: dv = (g/|v|)(gw - v <gw,v>/|v|^2), dg = <gw,v>/|v|",
                    save="inputs",
                    torch_call="torch._weight_norm(a.reshape(1, -1), "
                               "a.reshape(-1)[:1].reshape(1, 1).cos(), 0)")


def _norm_all_array(x, p):
    from .linalg_ext import _vector_norm_array

    return _vector_norm_array(x, float(p), None, False, x.dtype)


def _norm_all_backward(c, g):
    from types import SimpleNamespace

    from .linalg_ext import _vector_norm_backward

    # linalg.vector_norm's formula over every dim (this node is only its ATen name)
    ctx = SimpleNamespace(saved=c.saved, result=c.result, meta=(float(c.meta[0]), None,
                                                               False, None))
    return _vector_norm_backward(ctx, g)


#: ATen's norm(p) over the whole tensor, which C++ callers such as norm_except_dim reach
NORM_ALL = defop("norm_all", "NormBackward0", _norm_all_array, _norm_all_backward,
                 "d ||x||_p/dx over every dim", save="inputs result",
                 torch_call="torch.norm_except_dim(a, 2, -1)")


def _norm_one_dim(v: Tensor, p, dim: int) -> Tensor:
    from .functional_ext import NORM_DIM

    return run_op(NORM_DIM, (v,), (p, dim, False))


@public("torch.norm_except_dim")
def norm_except_dim(v: Tensor, pow=2, dim: int = 0) -> Tensor:
    """The `pow`-norm of `v` over every dim but `dim`, kept as size-1 dims (dim=-1: the
    norm of the whole tensor), composed of views and norm as PyTorch composes it."""
    if dim == -1:
        return run_op(NORM_ALL, (v,), (pow,))
    last = v.dim() - 1
    if dim == 0:
        shape = [v.size(0)] + [1] * last
        return _norm_one_dim(v.contiguous().view(v.size(0), -1), pow, 1).view(shape)
    if dim == last:
        shape = [1] * last + [v.size(last)]
        return _norm_one_dim(v.contiguous().view(-1, v.size(last)), pow, 0).view(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


@public("torch._weight_norm_interface")
def weight_norm_interface(v: Tensor, g: Tensor, dim: int = 0):
    """The fused kernel's pair (w, norms); only the first and the last dim are fused."""
    if not (dim == 0 or dim == v.dim() - 1):
        raise RuntimeError("fused kernels can only be applied for first or last dim")
    w = run_op(WEIGHT_NORM, (v.contiguous(), g.contiguous()), (dim,))
    norms = norm_except_dim(v.detach(), 2, dim).float() if v.dtype.itemsize < 4 else \
        norm_except_dim(v.detach(), 2, dim)
    return w, norms


@public("torch._weight_norm")
def weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """w = g * v / norm_except_dim(v, 2, dim)."""
    if dim < -1:  # (PyTorch wraps negative dims but -1, which means "the whole tensor")
        dim += v.dim()
    if dim == 0 or dim == v.dim() - 1:
        return weight_norm_interface(v, g, dim)[0]
    return v * (g / norm_except_dim(v, 2, dim))
