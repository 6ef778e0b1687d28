"""The in-place view ops: t_, transpose_, swapdims_, swapaxes_, squeeze_, unsqueeze_,
as_strided_. The tensor itself takes the new geometry (the same storage seen another
way) and, where autograd records, the in-place variant's node (TBackward1,
TransposeBackward1, SqueezeBackward3/4/5, UnsqueezeBackward1, AsStridedBackward1: the
out-of-place rule under PyTorch's other name) over its old history.

As any in-place op they are refused on a view that may not be modified in place (made
in no_grad mode, by an op returning several views, inside a custom Function) and on a
leaf that requires grad; the view keeps how it was made, so a later in-place op sees it
too. The version counter moves, as PyTorch's does.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, _wrap_dim
from . import views as V
from .registry import defop, public


def _twin(op, node: str, name: str, torch_call: str):
    """`op` under the in-place variant's node name (same forward, so the same view step)."""
    return defop(name, node, op.forward, op.backward, op.rule, torch_call=torch_call)


T1 = _twin(V.T, "TBackward1", "t_", "(a * 1).t_()")
TRANSPOSE1 = _twin(V.TRANSPOSE, "TransposeBackward1", "transpose_", "(a * 1).transpose_(0, -1)")
UNSQUEEZE1 = _twin(V.UNSQUEEZE, "UnsqueezeBackward1", "unsqueeze_", "(a * 1).unsqueeze_(0)")
SQUEEZE3 = _twin(V.SQUEEZE["SqueezeBackward0"], "SqueezeBackward3", "squeeze_",
                 "(a.unsqueeze(0) * 1).squeeze_()")
SQUEEZE4 = V.SQUEEZE["SqueezeBackward4"]  # (squeeze_(dim): the node matmul's squeeze has)
SQUEEZE5 = _twin(V.SQUEEZE["SqueezeBackward2"], "SqueezeBackward5", "squeeze_dims_",
                 "(a.unsqueeze(0) * 1).squeeze_((0,))")
AS_STRIDED1 = _twin(V.AS_STRIDED, "AsStridedBackward1", "as_strided_",
                    "(a * 1).as_strided_((1,), (1,))")


#: forward-mode AD's hook while a dual level is active (engine/forward_ad.py fills it):
#: FORWARD_AD_GEOMETRY(self, view) gives self the view's tangent
FORWARD_AD_GEOMETRY = None


def _take_geometry(self: Tensor, view: Tensor) -> Tensor:
    """`self` becomes `view` (a view of it just made): data, view chain, node; its
    creation kind stays. Returns self."""
    if FORWARD_AD_GEOMETRY is not None:
        FORWARD_AD_GEOMETRY(self, view)
    self._data = view._data
    if self._base is not None:
        self._view_fn = view._view_fn
    if view._grad_fn is not None:
        self._grad_fn = view._grad_fn
        self._output_nr = view._output_nr
    self._vc[0] += 1
    if self._base is not None:
        self._attr_version = self._vc[0]  # (its new node is current: nothing to regenerate)
    return self


def _apply(self: Tensor, op, meta: tuple) -> Tensor:
    self._check_inplace()
    return _take_geometry(self, V.view_op(op, self, meta))


@public("Tensor.t_")
def t_(self: Tensor) -> Tensor:
    if self._data.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self._data.ndim}D")
    return _apply(self, T1, ())


@public("Tensor.transpose_", "Tensor.swapdims_", "Tensor.swapaxes_")
def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    n = self._data.ndim
    return _apply(self, TRANSPOSE1, (_wrap_dim(dim0, n), _wrap_dim(dim1, n)))


@public("Tensor.unsqueeze_")
def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    d = self._data
    ax = _wrap_dim(dim, d.ndim + 1)
    return _apply(self, UNSQUEEZE1, (d.shape[:ax] + (1,) + d.shape[ax:], d.shape, ax))


@public("Tensor.squeeze_")
def squeeze_(self: Tensor, dim=None) -> Tensor:
    d = self._data
    if dim is None:
        removed, op = tuple(i for i, s in enumerate(d.shape) if s == 1), SQUEEZE3
    elif isinstance(dim, (tuple, list)):
        dims = V.dim_set(dim, d.ndim)
        removed, op = tuple(i for i, s in enumerate(d.shape) if i in dims and s == 1), SQUEEZE5
    else:
        ax = _wrap_dim(dim, d.ndim)
        removed, op = ((ax,) if d.ndim and d.shape[ax] == 1 else ()), SQUEEZE4
    shape = tuple(s for i, s in enumerate(d.shape) if i not in removed)
    return _apply(self, op, (shape, d.shape, removed))


@public("Tensor.as_strided_")
def as_strided_(self: Tensor, size, stride, storage_offset=None) -> Tensor:
    """The tensor takes the given geometry over its storage (PyTorch's AsStridedBackward1)."""
    from .breadth import strided_result

    self._check_inplace()
    view, meta = strided_result("as_strided_", AS_STRIDED1, self, size, stride, storage_offset)
    if not view._data.size:
        view._data = np.empty(view._data.shape, view._data.dtype)
    return _take_geometry(self, V._as_view(view, self, AS_STRIDED1, meta))
