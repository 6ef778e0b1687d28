"""View ops (share storage and the version counter with their base), indexing,
and the history rewrite an in-place write through a view causes (CopySlices).

Each view remembers how it was made from its base as a chain of
(numpy forward, meta) steps, so the same region can be found again in a
gradient buffer of the base's shape.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from .. import tensor as tensor_module
from ..grad_mode import GRAD_MODE
from ..node import Node, keep_given, keep_index_inputs, packs_index_first
from ..tensor import (
    VIEW_DEFAULT,
    VIEW_INFERENCE,
    VIEW_NO_GRAD,
    Tensor,
    _wrap_dim,
    has_internal_overlap,
    make,
)
from . import registry as _registry
from .registry import PUBLIC, defop, edge_of, reduce_to_inputs, run_op, run_unary

# ----------------------------------------------------------------- helpers

_ndarray = np.ndarray


def replay(chain: tuple, arr: np.ndarray) -> np.ndarray:
    """Apply a view chain to an array of the base's shape."""
    for fwd, meta in chain:
        arr = fwd(arr, *meta)
    return arr


def region_index(chain: tuple, base: np.ndarray) -> np.ndarray:
    """For each element of the view, its flat (row-major) position in the base."""
    positions = np.empty_like(base, dtype=np.int64)  # same memory layout as the base
    positions[...] = np.arange(base.size, dtype=np.int64).reshape(base.shape)
    return np.asarray(replay(chain, positions))


def _contiguous_strides(shape) -> list:
    strides, step = [], 1
    for s in reversed(shape):
        strides.insert(0, step)
        step *= max(s, 1)
    return strides


def view_strides(t: Tensor) -> tuple:
    """PyTorch's strides for a view: its view steps applied to its base's strides, by
    PyTorch's rules (numpy's strides of size-1 and empty dimensions are its own)."""
    arr = t._base._data
    strides = (_contiguous_strides(arr.shape) if arr.size == 0
               else [s // arr.itemsize for s in arr.strides])
    for fwd, meta in t._view_fn:
        rule = _STRIDE_RULES.get(fwd)
        if rule is None:  # as_strided: its data has the strides it was given
            d = t._data
            return tuple(s // d.itemsize for s in d.strides) if d.size else tuple(
                _contiguous_strides(d.shape))
        shape = arr.shape
        arr = fwd(arr, *meta)
        strides = list(rule(strides, shape, arr.shape, *meta))
    return tuple(strides)


def _view_strides(old_shape, old_strides, new_shape):
    """PyTorch's computeStride: the strides of a view of another shape (it is viewable)."""
    if not old_shape or int(np.prod(old_shape)) == 0:
        return old_strides if tuple(old_shape) == tuple(new_shape) else _contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_strides[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1
                             and old_strides[tensor_d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if tensor_d > 0:
                chunk_base = old_strides[tensor_d - 1]
                tensor_numel = view_numel = 1
    return new_strides


def _unsqueeze_strides(st, shape, out, new_shape, in_shape, dim):
    return st[:dim] + [shape[dim] * st[dim] if dim < len(shape) else 1] + st[dim:]


def _expand_strides(st, shape, out, new_shape, in_shape):
    lead = len(new_shape) - len(in_shape)
    return [0] * lead + [st[i] if in_shape[i] == new_shape[lead + i] else 0 for i in range(len(in_shape))]


def _permute(st, dims):
    return [st[d] for d in dims]


def _swap(st, d0, d1):
    st = list(st)
    if st:
        st[d0], st[d1] = st[d1], st[d0]
    return st


_STRIDE_RULES = {}  # forward function -> (strides, in shape, out shape, *meta) -> strides


def is_view_forward(forward) -> bool:
    """Whether `forward` makes a view (it has a stride rule). A view's chain is keyed by its
    forward functions, and a view moves no numbers, so its forward stays unwrapped."""
    return forward in _STRIDE_RULES


def _as_view(res: Tensor, x: Tensor, op, meta: tuple) -> Tensor:
    """Mark `res` (made by `op` from `x`) as a view: same storage, counter and base."""
    res._vc = x._vc
    res._attr_version = x._vc[0]
    step = ((op.forward, meta),)
    if x._base is None:
        res._base = x
        res._view_fn = step
        res._creation = VIEW_DEFAULT
    else:
        res._base = x._base
        res._view_fn = x._view_fn + step
        res._creation = x._creation  # a view of a no_grad or split view is one too
    if not GRAD_MODE.enabled:
        mark_no_grad_view(res, x)
    return res


def mark_no_grad_view(res: Tensor, x: Tensor) -> None:
    """A view made under no_grad (PyTorch): it cannot be written in place with grad mode
    on, and if `x` requires grad it does too (through its base), as a leaf whose
    gradients go nowhere (ops on it are recorded, with no edge back to it)."""
    res._creation = VIEW_INFERENCE if GRAD_MODE.inference else VIEW_NO_GRAD
    root = x if x._base is None else x._base  # PyTorch asks the base, not `x` itself
    if root._requires_grad:
        res._requires_grad = True
        res._accumulator = False


def view_op(op, x: Tensor, meta: tuple) -> Tensor:
    """`op` (a view op) applied to `x`: run_unary's result (node and all) marked a view by
    _as_view (and mark_no_grad_view under no_grad), done here in one call for the usual
    case (the backward formulas' .t() and reshapes, Linear's weight.t(), Flatten): no
    forward-mode AD, no size limit to check, no broadcasting bookkeeping."""
    if _registry.FORWARD_AD is not None or op.out_size is not None or op.broadcast:
        return _as_view(run_unary(op, x, meta), x, op, meta)
    try:
        d = x._data
    except AttributeError:
        return _as_view(run_unary(op, x, meta), x, op, meta)  # (run_unary's TypeError)
    try:
        out = op.forward(d, *meta)
    except ValueError as err:
        raise _registry._translate(err, (d,)) from None
    if type(out) is not _ndarray:
        out = np.asarray(out)
    base = x._base
    enabled = GRAD_MODE.enabled
    if enabled and (x._requires_grad or (base is not None and base._requires_grad)) \
            and op.backward is not None:
        kind = out.dtype.kind
        if kind in "fV":
            res = _registry._record_one(op, x, (x,), meta, out)  # (swappable: saved hooks)
        elif kind == "c":  # (a complex view records its twin's node: run_unary's branch)
            return _as_view(run_unary(op, x, meta), x, op, meta)
        else:
            res = make(out, False, None)
    else:
        res = make(out, False, None)
    vc = res._vc = x._vc
    res._attr_version = vc[0]
    step = ((op.forward, meta),)
    if base is None:
        res._base = base = x
        res._view_fn = step
        res._creation = VIEW_DEFAULT
    else:
        res._base = base
        res._view_fn = x._view_fn + step
        res._creation = x._creation  # a view of a no_grad or split view is one too
    if not enabled:  # (mark_no_grad_view: PyTorch asks the base, not `x` itself)
        res._creation = VIEW_INFERENCE if GRAD_MODE.inference else VIEW_NO_GRAD
        if base._requires_grad:
            res._requires_grad = True
            res._accumulator = False
    return res


def _embed(g: np.ndarray, shape: tuple, key) -> np.ndarray:
    out = np.zeros(shape, dtype=g.dtype)
    out[key] = g
    return out


def _select_key(dim: int, index: int) -> tuple:
    return (slice(None),) * dim + (index,)


def _slice_key(dim: int, start, stop, step) -> tuple:
    return (slice(None),) * dim + (slice(start, stop, step),)


# ------------------------------------------------------------ the op table
def _reshape_view(a, shape, in_shape):
    """Reshape that never copies (a view of the same memory, or ValueError)."""
    try:
        return a.reshape(shape, copy=False)  # (the method: np.reshape adds three Python calls)
    except TypeError:  # numpy < 2.1 has no copy=
        out = a.view()
        out.shape = shape
        return out


def _reshape_back(c, g):
    """The gradient of a reshape: g reshaped to the input's shape (c.meta[1], whole sizes
    that fit g, so Tensor.reshape's argument parsing and checks have nothing to do)."""
    d = g._data
    if d.flags.c_contiguous:  # (_reshape_to's first case, without the call)
        return (view_op(VIEW, g, (c.meta[1], d.shape)),)
    return (_reshape_to(g, c.meta[1]),)


VIEW = defop("view", "ViewBackward0", _reshape_view, _reshape_back,
             "d view(a)/da: reshape the gradient back", torch_call="a.view(-1)")
RESHAPE_ALIAS = defop("reshape_alias", "ReshapeAliasBackward0", _reshape_view, _reshape_back,
                      "d reshape(a)/da (a view of a non-contiguous a): reshape the gradient back",
                      torch_call="a.unsqueeze(-1).expand(*a.shape, 2).reshape(*a.shape, 2)")
UNSAFE_VIEW = defop("unsafe_view", "UnsafeViewBackward0", lambda a, shape, in_shape: a.reshape(shape),
                    _reshape_back, "d reshape(a)/da: reshape the gradient back",
                    torch_call="a.transpose(0, -1).reshape(-1)")
ALIAS = defop("alias", "AliasBackward0", lambda a: a.view(), lambda c, g: (g,), "d alias(a)/da = 1",
              torch_call="a[...]")
def _squeeze_fwd(a, shape, in_shape, removed):
    return _reshape_view(a, shape, in_shape)


def _unsqueeze_fwd(a, shape, in_shape, dim):
    return _reshape_view(a, shape, in_shape)


def _unsqueeze_removed(c, g):
    """squeeze's backward as PyTorch's unsqueeze_to: one unsqueeze per removed dim, in order
    (so a create_graph gradient shows UnsqueezeBackward0 nodes)."""
    for dim in c.meta[2]:
        g = g.unsqueeze(dim)
    return (g,)


SQUEEZE = {
    name: defop(f"squeeze{i}", name, _squeeze_fwd, _unsqueeze_removed,
                "d squeeze(a)/da: unsqueeze the gradient back", torch_call=call)
    for i, (name, call) in enumerate((
        ("SqueezeBackward0", "a.unsqueeze(0).squeeze()"),
        ("SqueezeBackward1", "a.unsqueeze(0).squeeze(0)"),
        ("SqueezeBackward2", "a.unsqueeze(0).squeeze((0,))"),
        ("SqueezeBackward4", "a.reshape(-1) @ a.reshape(-1, 1)")))
}
UNSQUEEZE = defop("unsqueeze", "UnsqueezeBackward0", _unsqueeze_fwd,
                  lambda c, g: (g.squeeze(c.meta[2]),), "d unsqueeze(a)/da: squeeze the gradient",
                  torch_call="a.unsqueeze(0)")
TRANSPOSE = defop("transpose", "TransposeBackward0",
                  lambda a, d0, d1: np.swapaxes(a, d0, d1) if a.ndim else a.view(),
                  lambda c, g: (g.transpose(c.meta[0], c.meta[1]),),
                  "d transpose(a)/da: transpose the gradient back", torch_call="a.transpose(0, -1)")
# (the backward's g has the output's at most two dims: the view op itself, without
# Tensor.t's argument-checking wrapper; Linear's weight gradient runs it every step)
T = defop("t", "TBackward0", lambda a: a.T, lambda c, g: (view_op(T, g, ()),),
          "d a.t()/da: transpose the gradient back",
          torch_call="a.t()")
PERMUTE = defop("permute", "PermuteBackward0", lambda a, dims: np.transpose(a, dims),
                lambda c, g: (g.permute(tuple(np.argsort(c.meta[0]))),),
                "d permute(a)/da: permute the gradient back", torch_call="a.permute(*reversed(range(a.dim())))")
EXPAND = defop("expand", "ExpandBackward0", lambda a, shape, in_shape: np.broadcast_to(a, shape),
               lambda c, g: (_sum_to(g, c.meta[1]),), "d expand(a)/da: sum the gradient over the copies",
               torch_call="a.expand(2, *a.shape)",
               out_size=lambda arrays, meta: math.prod(meta[0]))  # a view, but ops on it allocate that much


def _sum_to(g, shape):
    from .registry import sum_to

    return sum_to(g, shape)


SELECT = defop("select", "SelectBackward0",
               lambda a, dim, index, in_shape: a[_select_key(dim, index) + (Ellipsis,)],
               lambda c, g: (select_backward(g, c.meta[2], _select_key(c.meta[0], c.meta[1])),),
               "d a[i]/da: the gradient placed at i, zeros elsewhere", torch_call="a[0]")
SLICE = defop("slice", "SliceBackward0",
              lambda a, dim, start, stop, step, in_shape: a[_slice_key(dim, start, stop, step)],
              lambda c, g: (slice_backward(g, c.meta[4], _slice_key(*c.meta[:4])),),
              "d a[i:j]/da: the gradient placed at i:j, zeros elsewhere", torch_call="a[1:]")
SELECT_BACKWARD = defop("select_backward", "SelectBackwardBackward0", _embed,
                        lambda c, g: (g[c.meta[1]],), "d embed(g)/dg: take the same slot back")
SLICE_BACKWARD = defop("slice_backward", "SliceBackwardBackward0", _embed,
                       lambda c, g: (g[c.meta[1]],), "d embed(g)/dg: take the same slice back")


def select_backward(g: Tensor, shape, key) -> Tensor:
    return run_op(SELECT_BACKWARD, (g,), (shape, key))


def slice_backward(g: Tensor, shape, key) -> Tensor:
    return run_op(SLICE_BACKWARD, (g,), (shape, key))


def _index_put_acc(g, shape, key):
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, key, g)
    return out


INDEX = defop("index", "IndexBackward0", lambda a, key, in_shape: a[key],
              lambda c, g: (index_backward(g, c.meta[1], c.meta[0]),),
              "d a[idx]/da: the gradient added at idx (repeats accumulate)", save="meta",
              torch_call="a[torch.tensor([0, 0])]")
INDEX_BACKWARD = defop("index_backward", "IndexPutBackward0", _index_put_acc,
                       lambda c, g: (g[_key_as_tensors(c.meta[1])],),
                       "d index_put(g)/dg: take the same elements back")


def index_backward(g: Tensor, shape, key) -> Tensor:
    return run_op(INDEX_BACKWARD, (g,), (shape, key))


def _key_as_tensors(key):
    return tuple(make(k) if isinstance(k, np.ndarray) else k for k in key)


def _region_take(g, index, base_shape):
    taken = g.reshape(-1)[index]
    if index.size and index.min() < 0:  # (-1: storage outside the input, no gradient there)
        taken[index < 0] = 0
    return taken


def _region_put(g, index, base_shape):
    out = np.zeros(int(np.prod(base_shape)), dtype=g.dtype)
    flat_index = index.reshape(-1)
    values = np.broadcast_to(g, index.shape).reshape(-1)
    if flat_index.size and flat_index.min() < 0:
        # as_strided of a view reading its storage beyond the view (-1): PyTorch's
        # as_strided_backward drops those elements' gradients (no input element is there)
        inside = flat_index >= 0
        flat_index, values = flat_index[inside], values[inside]
    np.add.at(out, flat_index, values)
    return out.reshape(base_shape)


# A view regenerated after an in-place change of its storage: its gradient is placed in
# its region of the base (the forward is the same take, used when differentiating twice).
AS_STRIDED = defop("as_strided", "AsStridedBackward0", _region_take,
                   lambda c, g: (run_op(REGION_PUT, (g,), c.meta),),
                   "d view(base)/dbase: the gradient placed in the view's region",
                   torch_call="(c := a * 1, v := c[..., :1], c.mul_(2))[1]")
REGION_PUT = defop("region_put", "AsStridedScatterBackward0", _region_put,
                   lambda c, g: (run_op(AS_STRIDED, (g,), c.meta),),
                   "d embed(g)/dg: take the view's region back")


def _copy_slices_backward(c, g):
    index, fn, base_shape = c.meta
    if GRAD_MODE.enabled:  # create_graph: the graph PyTorch's CopySlices records
        geometry = _strided_geometry(index)
        if geometry is not None:
            return _copy_slices_recorded(g, fn, geometry, base_shape)
    region = run_op(AS_STRIDED, (g,), (index, base_shape))
    fn.saved_tensors_check()
    fn_grads = list(Node.apply(fn, [region]))  # (the op's rule, for a custom node too)
    if fn.input_meta is not None:
        fn_grads = reduce_to_inputs(fn, fn_grads)
    keep = np.ones(g._data.size, dtype=bool)
    keep[index.reshape(-1)] = False
    from .elementwise import where

    grad_base = where(make(keep.reshape(base_shape)), g, 0.0)
    first = fn_grads[0]
    if first is not None:
        grad_base = grad_base + run_op(REGION_PUT, (first,), (index, base_shape))
    return (grad_base, *fn_grads[1:])


def _strided_geometry(index: np.ndarray):
    """(size, stride, offset) of the view whose flat base positions are `index`, when they
    are an as_strided region of a contiguous buffer (every view op's are); else None."""
    if index.size == 0:
        return None
    offset = int(index.flat[0])
    strides, expected = [], np.full(index.shape, offset, dtype=np.int64)
    for d, n in enumerate(index.shape):
        step = 1
        if n > 1:
            step = int(index[(0,) * d + (1,) + (0,) * (index.ndim - d - 1)]) - offset
            if step < 0:
                return None
            expected = expected + (np.arange(n, dtype=np.int64) * step).reshape(
                (n,) + (1,) * (index.ndim - d - 1))
        strides.append(step)
    if not np.array_equal(expected, index):
        return None
    return tuple(index.shape), tuple(strides), offset


def _copy_slices_recorded(g, fn, geometry, base_shape):
    """CopySlices' backward as PyTorch runs it when the graph is recorded: the gradient
    copied into a fresh buffer (CopyBackwards), the view's region of it (AsStridedBackward0)
    cloned into the wrapped node, whose first gradient is copied back into that region in
    place (the buffer's grad_fn becomes CopySlices): so a double backward meets the same
    nodes, e.g. ThresholdBackwardBackward0 under CopySlices for threshold_ on a view."""
    size, stride, offset = geometry
    result = run_op(COPY, (make(np.zeros(base_shape, g._data.dtype)), g))
    grad_slice = PUBLIC["torch.as_strided"](result, size, stride, offset)
    fn.saved_tensors_check()
    fn_grads = list(Node.apply(fn, [grad_slice.clone()]))
    if fn.input_meta is not None:
        fn_grads = reduce_to_inputs(fn, fn_grads)
    first = fn_grads[0]
    if first is not None:
        grad_slice.copy_(first)
    else:
        grad_slice.zero_()
    return (result, *fn_grads[1:])


COPY_SLICES = defop("copy_slices", "CopySlices", None, _copy_slices_backward,
                    "in-place write through a view: the written region's gradient goes to the new values",
                    torch_call="(c := a * 1).__setitem__((..., 0), b.sum() * 2) or c")


#: hook slot filled by engine/view_replay.py: VIEW_NODE_HOOK[0](view) gives the
#: (node, output_nr) a view written in place (or whose base was) gets, or None for the
#: default AsStridedBackward0 over its region of the base
VIEW_NODE_HOOK: list = [None]


def rewrite_base_history(view: Tensor, result: Tensor) -> None:
    """After an in-place op on `view`, its base's grad_fn becomes CopySlices."""
    from ..tensor import move_retain_hook

    base = view._base
    fn = result._grad_fn
    index = region_index(view._view_fn, base._data)
    edges = (edge_of(base),) + fn.next_functions[1:]
    node = COPY_SLICES.node_class()(COPY_SLICES, edges, None, None, None,
                                (index, fn, base._data.shape), None)
    old_base_fn, old_view_fn = base._grad_fn, view._grad_fn
    base._grad_fn = node
    base._output_nr = 0
    base._requires_grad = True
    replayed = VIEW_NODE_HOOK[0](view) if VIEW_NODE_HOOK[0] is not None else None
    if replayed is None:
        vnode = AS_STRIDED.node_class()(AS_STRIDED, ((node, 0),), None, None, None,
                                    (index, base._data.shape), None)
        replayed = (vnode, 0)
    view._grad_fn, view._output_nr = replayed
    view._requires_grad = True
    view._attr_version = view._vc[0]
    move_retain_hook(base, old_base_fn)
    move_retain_hook(view, old_view_fn)


def regenerate_grad_fn(view: Tensor) -> None:
    """The view's storage changed under it: its history is now its region of the base."""
    from ..tensor import move_retain_hook

    base = view._base
    old_fn = view._grad_fn
    replayed = VIEW_NODE_HOOK[0](view) if VIEW_NODE_HOOK[0] is not None else None
    if replayed is None:
        index = region_index(view._view_fn, base._data)
        replayed = (AS_STRIDED.node_class()(AS_STRIDED, (edge_of(base),), None, None, None,
                                            (index, base._data.shape), None), 0)
    view._grad_fn, view._output_nr = replayed
    view._requires_grad = True
    view._attr_version = view._vc[0]
    move_retain_hook(view, old_fn)


_STRIDE_RULES.update({
    _reshape_view: lambda st, shape, out, new_shape, in_shape: _view_strides(shape, st, out),
    _squeeze_fwd: lambda st, shape, out, new_shape, in_shape, removed: [
        s for i, s in enumerate(st) if i not in removed],
    _unsqueeze_fwd: _unsqueeze_strides,
    ALIAS.forward: lambda st, shape, out: st,
    TRANSPOSE.forward: lambda st, shape, out, d0, d1: _swap(st, d0, d1),
    T.forward: lambda st, shape, out: st[::-1],
    PERMUTE.forward: lambda st, shape, out, dims: _permute(st, dims),
    EXPAND.forward: _expand_strides,
    SELECT.forward: lambda st, shape, out, dim, index, in_shape: st[:dim] + st[dim + 1:],
    SLICE.forward: lambda st, shape, out, dim, start, stop, step, in_shape: (
        st[:dim] + [st[dim] * (step or 1)] + st[dim + 1:]),
})

# ------------------------------------------------------------ entry points


def alias(x: Tensor) -> Tensor:
    return view_op(ALIAS, x, ())


def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def infer_shape(shape: tuple, numel: int) -> tuple:
    """Resolve one -1 as PyTorch does, with its error text."""
    shape = tuple(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for i, s in enumerate(shape):
        if s != -1:
            if s < 0:
                raise RuntimeError(
                    f"invalid shape dimension {s} at index {i} of shape [{', '.join(map(str, shape))}]")
            known *= s
    if -1 in shape:
        if known == 0 and numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape [{', '.join(map(str, shape))}] because "
                "the unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
    return shape


def view(x: Tensor, *shape) -> Tensor:
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        from .view_dtype import view_as_dtype  # (the bytes read as another dtype)

        return view_as_dtype(x, shape[0])
    d = x._data
    target = infer_shape(_shape_arg(shape), d.size)
    if not _viewable(d, target):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return view_op(VIEW, x, (target, d.shape))


def _viewable(d: np.ndarray, target: tuple) -> bool:
    if d.flags.c_contiguous or target == d.shape:
        return True
    try:
        _reshape_view(d, target, None)
    except (ValueError, AttributeError):
        return False
    return True


def reshape(input: Tensor, *shape_args, shape=None) -> Tensor:
    """Tensor.reshape(*shape) and torch.reshape(input, shape) (keywords as PyTorch's)."""
    shape = shape_args if shape is None else (shape,)
    return _reshape_to(input, infer_shape(_shape_arg(shape), input._data.size))


def _reshape_to(input: Tensor, target: tuple) -> Tensor:
    """reshape to `target`, a tuple of whole sizes with input's number of elements."""
    d = input._data
    if d.flags.c_contiguous:  # (_viewable's first answer, without the call)
        return view_op(VIEW, input, (target, d.shape))
    if _viewable(d, target):
        # PyTorch: a view of a contiguous tensor is ViewBackward0, of another one an alias
        return view_op(RESHAPE_ALIAS, input, (target, d.shape))
    return run_op(UNSAFE_VIEW, (PUBLIC["torch.clone"](input),), (target, d.shape))


def unsafe_view(x: Tensor, shape) -> Tensor:
    return run_op(UNSAFE_VIEW, (x,), (tuple(shape), x._data.shape))


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    d = input._data
    if d.ndim == 0:
        return reshape(input, 1)
    n = d.ndim  # (_wrap_dim's answer for plain ints in range, without its two calls)
    s = start_dim % n if type(start_dim) is int and -n <= start_dim < n else _wrap_dim(start_dim, n)
    e = end_dim % n if type(end_dim) is int and -n <= end_dim < n else _wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = d.shape[:s] + (math.prod(d.shape[s:e + 1]),) + d.shape[e + 1:]
    return _reshape_to(input, shape)


def dim_set(dims, ndim: int) -> set:
    """The wrapped dims of a dim list, each once (PyTorch refuses a repeated one)."""
    found = set()
    for i in dims:
        ax = _wrap_dim(int(i), ndim)
        if ax in found:
            raise RuntimeError(f"dim {ax} appears multiple times in the list of dims")
        found.add(ax)
    return found


def squeeze(input: Tensor, dim=None) -> Tensor:
    d = input._data
    if dim is None:
        removed = tuple(i for i, s in enumerate(d.shape) if s == 1)
        name = "SqueezeBackward0"
    elif isinstance(dim, (tuple, list)):
        dims = dim_set(dim, d.ndim)
        removed = tuple(i for i, s in enumerate(d.shape) if i in dims and s == 1)
        name = "SqueezeBackward2"
    else:
        ax = _wrap_dim(dim, d.ndim)
        removed = (ax,) if d.ndim and d.shape[ax] == 1 else ()
        name = "SqueezeBackward1"
    shape = tuple(s for i, s in enumerate(d.shape) if i not in removed)
    return view_op(SQUEEZE[name], input, (shape, d.shape, removed))


def squeeze_internal(x: Tensor, dim: int) -> Tensor:
    """The squeeze matmul uses for vector operands (PyTorch names it SqueezeBackward4)."""
    d = x._data
    shape = tuple(s for i, s in enumerate(d.shape) if i != dim)
    return view_op(SQUEEZE["SqueezeBackward4"], x, (shape, d.shape, (dim,)))


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    d = input._data
    ax = _wrap_dim(dim, d.ndim + 1)
    shape = d.shape[:ax] + (1,) + d.shape[ax:]
    return keep_given(view_op(UNSQUEEZE, input, (shape, d.shape, ax)), UNSQUEEZE, dim)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    n = input._data.ndim
    return keep_given(view_op(TRANSPOSE, input, (_wrap_dim(dim0, n), _wrap_dim(dim1, n))), TRANSPOSE,
                      dim0, dim1)


def t(input: Tensor) -> Tensor:
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input._data.ndim}D")
    return view_op(T, input, ())


def permute(input: Tensor, *dims_args, dims=None) -> Tensor:
    """Tensor.permute(*dims) and torch.permute(input, dims) (keywords as PyTorch's)."""
    dims = dims_args if dims is None else (dims,)
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _shape_arg(dims)
    n = input._data.ndim
    if len(dims) != n:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal "
            f"to len(dims) = {len(dims)}")
    given, dims = dims, tuple(_wrap_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return keep_given(view_op(PERMUTE, input, (dims,)), PERMUTE, given)


def numpy_T(x: Tensor) -> Tensor:  # noqa: N802
    n = x._data.ndim
    if n != 2:
        from ..warn_site import warn_once

        if n:
            warn_once("T_not_2d", "The use of `x.T` on tensors of dimension other than 2 to "
                      "reverse their shape is deprecated and it will throw an error in a future "
                      "release. Consider `x.mT` to transpose batches of matrices or "
                      "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions "
                      "of a tensor. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/"
                      "native/TensorShape.cpp:4314.)")
        else:
            warn_once("T_0d", "Tensor.T is deprecated on 0-D tensors. This function is the "
                      "identity in these cases. (Triggered internally at /__w/pytorch/pytorch/"
                      "aten/src/ATen/native/TensorShape.cpp:4321.)")
    return permute(x, tuple(reversed(range(n))))


def mT(x: Tensor) -> Tensor:  # noqa: N802
    if x._data.ndim == 0:
        return x  # as PyTorch does
    if x._data.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return transpose(x, -2, -1)


def _type_string(x: Tensor) -> str:
    """How PyTorch's C++ messages name a tensor's type (Tensor::toString)."""
    return "CPUBoolType" if x._data.dtype == np.bool_ else f"torch.{x.dtype._legacy}"


def expand(x: Tensor, *sizes) -> Tensor:
    sizes = _shape_arg(sizes)
    d = x._data
    if len(sizes) < d.ndim:
        raise RuntimeError(
            f"expand({_type_string(x)}{{[{', '.join(map(str, d.shape))}]}}, size=[{', '.join(map(str, sizes))}]): "
            "the number of sizes provided "
            f"({len(sizes)}) must be greater or equal to the number of dimensions in the tensor ({d.ndim})")
    lead = len(sizes) - d.ndim
    shape = list(sizes)
    for i in range(len(sizes) - 1, -1, -1):  # PyTorch checks from the last dimension
        s = sizes[i]
        if i < lead:
            if s == -1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing dimension {i}")
            continue
        have = d.shape[i - lead]
        if s == -1:
            shape[i] = have
        elif have != 1 and s != have:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                f"non-singleton dimension {i}.  Target sizes: [{', '.join(map(str, sizes))}].  "
                f"Tensor sizes: [{', '.join(map(str, d.shape))}]")
    if any(s < 0 for s in shape):
        raise RuntimeError("numel: integer multiplication overflow")
    return view_op(EXPAND, x, (tuple(shape), d.shape))


def expand_as(x: Tensor, other: Tensor) -> Tensor:
    return expand(x, other._data.shape)


def select(x: Tensor, dim: int, index: int, report_dim=None) -> Tensor:
    d = x._data
    if d.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    ax = _wrap_dim(dim, d.ndim)
    size = d.shape[ax]
    index = int(index)
    if not -size <= index < size:
        if report_dim is None:  # (torch.select / Tensor.select: the op's own words)
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"[{', '.join(map(str, d.shape))}] at dimension {ax}")
        raise IndexError(f"index {index} is out of bounds for dimension {report_dim} with size "
                         f"{size}")
    given = index
    if index < 0:
        index += size
    return keep_given(view_op(SELECT, x, (ax, index, d.shape)), SELECT, dim, given)


def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    if x._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if isinstance(start, Tensor):  # narrow.Tensor: a 0-d integer tensor
        start = int(start._data)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    dim = _wrap_dim(dim, x._data.ndim)
    size = x._data.shape[dim]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return slice_dim(x, dim, start, start + length, 1)


def slice_dim(x: Tensor, dim: int, start, stop, step) -> Tensor:
    if step is not None and step <= 0:
        raise ValueError("step must be greater than zero")
    return view_op(SLICE, x, (dim, start, stop, step, x._data.shape))


def _is_advanced(k) -> bool:
    if isinstance(k, Tensor):  # (a 0-d byte tensor is a mask too, as PyTorch reads uint8)
        return k._data.ndim > 0 or k._data.dtype == np.bool_ or k._data.dtype == np.uint8
    # (a range or a tuple inside the key is a sequence of indices, as a list: d2l's
    # y_hat[range(len(y_hat)), y])
    return isinstance(k, (list, np.ndarray, bool, range, tuple))


def _np_index(k):
    if isinstance(k, Tensor):
        arr = k._data
    elif isinstance(k, range):
        arr = np.arange(k.start, k.stop, k.step, dtype=np.int64)
    elif isinstance(k, (list, tuple)):
        arr = np.asarray([_np_index(v) if isinstance(v, Tensor) else v for v in k])
    elif isinstance(k, bool):
        return np.asarray(k)
    else:
        return k
    if arr.dtype.kind in "fV" or (arr.dtype.kind not in "iub" and arr.size) or (
            arr.dtype.kind in "iu" and arr.dtype.itemsize < 4 and arr.dtype != np.uint8
            and isinstance(k, Tensor)):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if arr.dtype == np.uint8 and isinstance(k, Tensor):
        if not arr.ndim:  # (a 0-d byte tensor is read as a Python bool is: no warning)
            return arr.astype(np.bool_)
        from ..warn_site import warn_at_caller

        warn_at_caller("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                       "torch.bool instead. (Triggered internally at /__w/pytorch/pytorch/aten/"
                       "src/ATen/native/IndexingUtils.h:37.)")
        return arr.astype(np.bool_)  # (PyTorch reads a byte index as a mask)
    if arr.dtype.kind != "b":
        arr = arr.astype(np.int64, copy=False)
    return arr


def _refuse_byte_mask_fill(keys, v: Tensor, accumulate: bool = False) -> None:
    """PyTorch hands index_put_ of a 0-d value through a single mask to masked_fill_, which
    refuses a byte (uint8) mask, before any indexing warning."""
    if (len(keys) == 1 and isinstance(keys[0], Tensor) and keys[0]._data.dtype == np.uint8
            and keys[0]._data.ndim and not v._data.shape and not accumulate):
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           "unsigned char")


def _is_mask(k) -> bool:
    return isinstance(k, np.ndarray) and k.dtype == np.bool_ and k.ndim > 0


def _full_slice(k: slice, size: int) -> bool:
    return k.start in (None, 0) and k.step in (None, 1) and (k.stop is None or k.stop >= size)


def _walk_key(x: Tensor, key: tuple):
    """PyTorch's applySlicing: the basic parts of `key` (ints, slices, None, ..., bools)
    applied to `x` as views, in order; the advanced ones (index arrays, bool masks) kept
    as (dimension of the result, array). A bad int names its position in the key; a
    bool adds a dimension of size 1, indexed by [0] (True) or [] (False)."""
    ndim = x._data.ndim
    consumed = 0
    for k in key:
        if k is None or k is Ellipsis:
            continue
        consumed += k.ndim if type(k) is np.ndarray and k.dtype == np.bool_ else 1
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    res = x
    dim = 0  # where the next index applies in the result so far
    advanced = []
    for pos, k in enumerate(key):
        if k is None:
            res = unsqueeze(res, dim)
            dim += 1
        elif k is Ellipsis:
            dim += ndim - consumed
        elif isinstance(k, slice):
            # inside a tuple, a slice that keeps the whole dimension is skipped (PyTorch)
            n = res._data.ndim
            if not _full_slice(k, res._data.shape[dim] if dim < n else 0):
                if dim >= n:  # several ... can step past the last dimension
                    _wrap_dim(dim, n)
                res = slice_dim(res, dim, _int_or_none(k.start), _int_or_none(k.stop),
                                _int_or_none(k.step))
            dim += 1
        elif isinstance(k, np.ndarray):
            if k.dtype == np.bool_ and k.ndim == 0:
                res = unsqueeze(res, dim)
                advanced.append((dim, np.zeros(1 if k else 0, dtype=np.int64)))
                dim += 1
            else:
                advanced.append((dim, k))
                dim += k.ndim if k.dtype == np.bool_ else 1
        else:
            if dim >= res._data.ndim:  # several ... can step past the last dimension
                raise IndexError(f"index {k} is out of bounds for dimension {pos} with size 0")
            res = select(res, dim, k, pos)
    if advanced and advanced[-1][0] >= res._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {res._data.ndim} "
                         f"(got {advanced[-1][0] + 1})")
    return res, advanced


def _plan_advanced(shape: tuple, advanced: list):
    """Masks must match the shape they index, the index arrays (a mask counts as one per
    dimension it spans) must broadcast, and none may index a dimension of size 0 (unless
    empty). Returns the integer arrays [(dimension, array)] and their broadcast shape."""
    arrays = []
    for at, k in advanced:
        if k.dtype == np.bool_:
            for j, size in enumerate(k.shape):
                if size != shape[at + j]:
                    raise IndexError(
                        f"The shape of the mask [{', '.join(map(str, k.shape))}] at index {j} "
                        "does not match the shape of the indexed tensor "
                        f"[{', '.join(map(str, shape))}] at index {at + j}")
            arrays.extend((at + j, nz) for j, nz in enumerate(np.nonzero(k)))
        else:
            arrays.append((at, k))
    try:
        common = np.broadcast_shapes(*(a.shape for _, a in arrays))
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(f"[{', '.join(map(str, a.shape))}]" for _, a in arrays)) from None
    if 0 not in common:
        for at, _ in arrays:
            if shape[at] == 0:
                raise IndexError("index is out of bounds for dimension with size 0")
    return arrays, common


def _advanced_result_shape(shape: tuple, arrays: list, common: tuple) -> tuple:
    """The shape of x[key]: the broadcast index shape in place of the indexed dimensions
    if they are adjacent, else in front (numpy's and PyTorch's rule)."""
    dims = sorted(at for at, _ in arrays)
    rest = [s for i, s in enumerate(shape) if i not in dims]
    if dims[-1] - dims[0] + 1 == len(dims):
        return tuple(shape[:dims[0]]) + tuple(common) + tuple(shape[dims[-1] + 1:])
    return tuple(common) + tuple(rest)


def _residual_key(shape: tuple, advanced: list, arrays: list, common: tuple) -> tuple:
    """The numpy key for the sliced tensor; unless the result is empty, each index must be
    in range: the first bad element in broadcast order names its array by number (PyTorch
    checks no value when nothing is read or written: numpy would, so zeros stand in)."""
    indexed = {at for at, _ in arrays}
    empty = 0 in common or any(s == 0 for i, s in enumerate(shape) if i not in indexed)
    if not empty and any(a.size and (a.max() >= shape[at] or a.min() < -shape[at]) for at, a in arrays):
        flat = [np.broadcast_to(a, common).reshape(-1) for _, a in arrays]
        sizes = [shape[at] for at, _ in arrays]
        bad = [(f >= n) | (f < -n) for f, n in zip(flat, sizes, strict=True)]
        anywhere = np.logical_or.reduce(bad)
        if anywhere.any():
            first = int(np.argmax(anywhere))
            nth = next(i for i, b in enumerate(bad) if b[first])
            raise IndexError(f"index {int(flat[nth][first])} is out of bounds for dimension {nth} "
                             f"with size {sizes[nth]}")
    key = []
    placed = dict(advanced)
    dim = 0
    while dim < len(shape):
        k = placed.get(dim)
        if k is None:
            key.append(slice(None))
            dim += 1
            continue
        key.append(np.zeros_like(k) if empty and k.dtype != np.bool_ else k)
        dim += k.ndim if k.dtype == np.bool_ else 1
    return tuple(key)


def _numpy_key(key: tuple) -> tuple:
    return tuple(_np_index(k) for k in key)


def _normalize_key(key: tuple) -> tuple:
    """Each entry as _walk_key reads it: None, ..., a slice, an int, or a numpy index array."""
    out = []
    for k in key:
        if k is None or k is Ellipsis or type(k) is slice or type(k) is int:
            out.append(k)
        elif _is_advanced(k):
            out.append(_np_index(k))
        else:
            out.append(_plain_index(k))
    return tuple(out)


def _plain_index(k):
    """A basic index: None, Ellipsis, a slice or an int (0-d integer tensors are ints)."""
    if k is None or k is Ellipsis or isinstance(k, slice):
        return k
    if isinstance(k, Tensor):
        return int(k._data)
    if isinstance(k, (int, np.integer)):
        return int(k)
    raise IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
        f"valid indices (got {type(k).__name__})")


def _sequence_as_tuple(key):
    """PyTorch reads a short list holding tensors, lists, slices, None or ... as a tuple
    (with its deprecation warning, every time)."""
    if isinstance(key, list) and len(key) < 32 and any(
            isinstance(k, (Tensor, list, tuple, slice, range)) or k is None or k is Ellipsis
            for k in key):
        from ..warn_site import warn_at_caller

        warn_at_caller(NON_TUPLE_INDEX)
        return tuple(key)
    return key


NON_TUPLE_INDEX = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
    "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error or "
    "a different result (Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/"
    "python_variable_indexing.cpp:349.)")


def getitem(x: Tensor, key) -> Tensor:
    """Tensor indexing as PyTorch: the basic indices give a chain of views, then the
    advanced ones (if any) an IndexBackward0 on that."""
    key = _sequence_as_tuple(key)
    d = x._data
    if not isinstance(key, tuple):
        if isinstance(key, slice):
            if d.ndim == 0:
                raise IndexError("slice() cannot be applied to a 0-dim tensor.")
            # a lone slice is always a SliceBackward0 in PyTorch, even x[:]
            return slice_dim(x, 0, _int_or_none(key.start), _int_or_none(key.stop),
                             _int_or_none(key.step))
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if d.ndim:
                return select(x, 0, key, 0)
            if key != 0:
                raise IndexError(f"index {key} is out of bounds for dimension 0 with size 0")
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        key = (key,)
    given, key = key, _normalize_key(key)
    res, advanced = _walk_key(x, key)
    if not advanced:
        return alias(x) if res is x else res
    shape = res._data.shape
    arrays, common = _plan_advanced(shape, advanced)
    npkey = _residual_key(shape, advanced, arrays, common)
    return keep_index_inputs(run_op(INDEX, (res,), (npkey, shape)), *_index_tensors(given))


def _index_tensors(key: tuple) -> list:
    """The tensors of an index that PyTorch saves with the indexing node (a 0-d integer
    tensor is a plain integer index there: not saved)."""
    return [k for k in key if isinstance(k, Tensor) and k._data.ndim]


def _int_or_none(v):
    return None if v is None else int(v)


def _index_put_fwd(a, v, key, v_shape, accumulate=False):
    out = a.copy()
    if accumulate:  # repeated indices add up
        np.add.at(out, key, v)
    else:
        out[key] = v
    return out


def _index_put_backward(c, g):
    key = c.meta[0]
    ga = None
    if c.needs(0) and len(c.meta) > 2 and c.meta[2]:
        ga = g
    elif c.needs(0):
        mask = np.ones(g._data.shape, dtype=bool)
        mask[key] = False
        ga = g * make(mask).to(g.dtype)
    gv = None
    if c.needs(1):
        gv = g[_key_as_tensors(key)]
        v_shape = c.meta[1]
        if gv._data.shape != v_shape:
            from .registry import sum_to

            gv = sum_to(gv, v_shape)
    return ga, gv


INDEX_PUT = defop("index_put", "IndexPutBackward0", _index_put_fwd, _index_put_backward,
                  "d index_put(a, v)/da = 1 off the indices, d/dv = the gradient at the indices",
                  torch_call="(c := a * 1).__setitem__(torch.tensor([0]), b.sum() * 2) or c")
packs_index_first(INDEX, INDEX_PUT)  # (their nodes save the index tensors first)
COPY = defop("copy", "CopyBackwards", lambda a, b: dtypes.cast(np.broadcast_to(b, a.shape), a.dtype),
             lambda c, g: (g * 0 if c.needs(0) else None, g if c.needs(1) else None),
             "d copy_(a, b)/db = 1", broadcast=True, torch_call="(a * 1).copy_(b)")


def copy_(x: Tensor, src, non_blocking=False) -> Tensor:
    if not isinstance(src, Tensor):
        src = make(np.asarray(src, dtype=x._data.dtype))
    dst, shape = x._data.shape, src._data.shape
    try:
        ok = np.broadcast_shapes(dst, shape) == dst
    except ValueError:
        from .registry import broadcast_error

        broadcast_error(dst, shape)
    if not ok:
        raise RuntimeError(
            f"output with shape [{', '.join(map(str, dst))}] doesn't match the broadcast shape "
            f"[{', '.join(map(str, np.broadcast_shapes(dst, shape)))}]")
    return x._apply_inplace(lambda old, s: run_op(COPY, (old, s)), src)


def _type_name(value) -> str:
    t = type(value)
    if t.__module__ == "builtins":
        return t.__name__
    return f"{t.__module__.split('.')[0]}.{t.__name__}" if t.__module__.startswith("numpy") else t.__name__


def _setitem_value(x: Tensor, value) -> Tensor:
    """The value of x[key] = value as a tensor: numbers take x's dtype; other non-tensors
    are refused, as PyTorch does."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return make(np.asarray(value, dtype=x._data.dtype))
    if isinstance(value, (complex, np.complexfloating)) and x._data.dtype.kind == "c":
        return make(np.asarray(value, dtype=x._data.dtype))
    raise TypeError(f"can't assign a {_type_name(value)} to a torch.{x.dtype._legacy}")


def _strip_leading_ones(v: Tensor) -> Tensor:
    """PyTorch drops the value's leading size-1 dimensions before broadcasting it."""
    shape = v._data.shape
    n = 0
    while n < len(shape) and shape[n] == 1:
        n += 1
    return view(v, shape[n:]) if n else v


def _copy_to(dst: Tensor, v: Tensor) -> None:
    """x[basic key] = v as PyTorch: copy_ if the shapes match, fill_ with a 0-d value, else
    copy_ of v viewed without its leading 1s and expanded to the target."""
    shape = v._data.shape
    if shape != dst._data.shape:
        if not shape:
            dst.fill_(v)
            return
        n = 0
        while n < len(shape) and shape[n] == 1:
            n += 1
        v = view(v, shape[n:])
        if shape[n:] != dst._data.shape:
            v = expand(v, dst._data.shape)
    copy_(dst, v)


def setitem(x: Tensor, key, value) -> None:
    """x[key] = value as PyTorch: the basic indices select a view (or x itself), then a
    copy into it, or index_put_ on it for the advanced indices."""
    v = _setitem_value(x, value)
    if key is False:
        return
    if key is True or key is None:
        _copy_to(unsqueeze(x, 0), v)
        return
    if key is Ellipsis:
        _copy_to(x, v)
        return
    key = _sequence_as_tuple(key)
    if isinstance(key, slice) and x._data.ndim and _full_slice(key, x._data.shape[0]):
        _copy_to(x, v)  # (x[:] = v writes x itself; reading x[:] makes a slice view)
        return
    if not isinstance(key, tuple) and not _is_advanced(key):
        _copy_to(getitem(x, key), v)
        return
    if not isinstance(key, tuple):
        key = (key,)
    _refuse_byte_mask_fill(key, v)
    given, key = key, _normalize_key(key)
    sliced, advanced = _walk_key(x, key)
    if not advanced:
        _copy_to(sliced, v)
        return
    _put(sliced, advanced, _strip_leading_ones(v), False, True, _index_tensors(given))


def _put(x: Tensor, advanced: list, v: Tensor, accumulate: bool, inplace: bool,
         index_tensors: list) -> Tensor:
    """index_put(_) of `v` at the advanced indices of `x`, with PyTorch's checks in its order
    (`index_tensors`: the tensors among the indices, kept with the node as PyTorch saves
    them)."""
    shape = x._data.shape
    arrays, common = _plan_advanced(shape, advanced)
    target = _advanced_result_shape(shape, arrays, common)
    vs = v._data.shape
    if len(vs) > len(target) or any(a not in (1, b) for a, b in zip(vs[::-1], target[::-1], strict=False)):
        raise RuntimeError(
            f"shape mismatch: value tensor of shape [{', '.join(map(str, vs))}] cannot be "
            f"broadcast to indexing result of shape [{', '.join(map(str, target))}]")
    masked_fill = len(advanced) == 1 and _is_mask(advanced[0][1]) and not vs and not accumulate
    if v._data.dtype != x._data.dtype and not masked_fill:
        from ..tensor import _type_word

        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_type_word(x.dtype)} for the destination and {_type_word(v.dtype)} for the source.")
    npkey = _residual_key(shape, advanced, arrays, common)
    meta = (npkey, vs, True) if accumulate else (npkey, vs)
    if inplace and has_internal_overlap(x._data):
        from ..warn_site import warn_at_caller

        uses = [("index_put_", "tensor[indices] = tensor", 976)]
        if masked_fill:  # (index_put_ hands a bool mask and a scalar to masked_fill_)
            uses.append(("masked_fill_", "tensor[mask] = scalar", 2450))
        for which, example, line in uses:
            warn_at_caller(
                f"Use of {which} on expanded tensors is deprecated. Please clone() the tensor before "
                f"performing this operation. This also applies to advanced indexing e.g. {example} "
                f"(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                f"TensorAdvancedIndexing.cpp:{line}.)")

    def compute(old, val):
        arr = val._data if val._data.dtype == old._data.dtype else val._data.astype(old._data.dtype)
        return keep_index_inputs(run_op(INDEX_PUT, (old, val), meta, arrays=(old._data, arr)),
                                 *index_tensors)

    if inplace:
        return x._apply_inplace(compute, v, overlap_ok=True)
    return compute(x, v)


def _index_put_args(name: str, indices, values, accumulate, first: int) -> list:
    """index_put(_)'s argument checks (`first`: the position of `indices`, 1 for the Tensor
    method, 2 for the torch function); the indices as (dimension, array) pairs."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{name}(): argument 'indices' (position {first}) must be tuple of Tensors, "
                        f"not {type(indices).__name__}")
    for i, k in enumerate(indices):
        if not isinstance(k, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {first - 1}, but got "
                            f"{type(k).__name__}")
    if not isinstance(values, Tensor):
        raise TypeError(f"{name}(): argument 'values' (position {first + 1}) must be Tensor, "
                        f"not {type(values).__name__}")
    if not isinstance(accumulate, (bool, np.bool_)):
        raise TypeError(f"{name}(): argument 'accumulate' must be bool, not {type(accumulate).__name__}")
    if not indices:
        raise RuntimeError("sym_strides() called on an undefined Tensor")
    _refuse_byte_mask_fill(indices, values, bool(accumulate))
    advanced, dim = [], 0
    for k in indices:
        arr = _np_index(k)
        advanced.append((dim, arr))
        dim += arr.ndim if arr.dtype == np.bool_ else 1
    return advanced, dim


def _index_put_entry(name: str, x: Tensor, indices, values, accumulate, first: int, inplace: bool):
    advanced, count = _index_put_args(name, indices, values, accumulate, first)
    if count > x._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x._data.ndim} (got {count})")
    return _put(x, advanced, values, bool(accumulate), inplace, list(indices))


def index_put_(x: Tensor, indices, values, accumulate=False) -> Tensor:
    """torch.index_put_(x, indices, values, accumulate=False): in place, IndexPutBackward0."""
    return _index_put_entry("index_put_", x, indices, values, accumulate, 2, True)


def index_put(x: Tensor, indices, values, accumulate=False) -> Tensor:
    """torch.index_put(x, indices, values, accumulate=False): a new tensor."""
    return _index_put_entry("index_put", x, indices, values, accumulate, 2, False)


def tensor_index_put_(x: Tensor, indices, values, accumulate=False) -> Tensor:
    """Tensor.index_put_ (its error messages count arguments from `indices`)."""
    return _index_put_entry("index_put_", x, indices, values, accumulate, 1, True)


def tensor_index_put(x: Tensor, indices, values, accumulate=False) -> Tensor:
    """Tensor.index_put (its error messages count arguments from `indices`)."""
    return _index_put_entry("index_put", x, indices, values, accumulate, 1, False)


tensor_module.ABOVE.install(view_strides=view_strides, rewrite_base_history=rewrite_base_history,
                            regenerate_grad_fn=regenerate_grad_fn, region_index=region_index)
