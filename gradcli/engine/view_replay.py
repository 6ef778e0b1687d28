"""View replay (torch.autograd._force_original_view_tracking): a view written in place,
or whose base was, gets a grad_fn made by replaying the view ops that made it on the
base's new history (ViewBackward0, SelectBackward0, ...) instead of the default
AsStridedBackward0 over its region of the base. Off by default, as PyTorch's.

engine/ops/views.py asks through its VIEW_NODE_HOOK slot, which this module fills when
it is imported (by torch.autograd); the flag is per process, as PyTorch's is global.
"""

from __future__ import annotations

from .grad_mode import GRAD_MODE
from .ops import views
from .ops.registry import OPS, run_op

ENABLED = [False]
_OPS_BY_FORWARD: dict = {}


def _op_of(forward):
    """The view op whose forward is `forward` (the first declared where several share
    one: view before reshape's alias, squeeze's plain form)."""
    if not _OPS_BY_FORWARD:
        for op in OPS.values():
            if views.is_view_forward(op.forward) or op.name in _COMPUTED_VIEWS:
                _OPS_BY_FORWARD.setdefault(op.forward, op)
    return _OPS_BY_FORWARD.get(forward)


#: view ops whose forward is an ordinary op forward (no stride rule): replayable too
_COMPUTED_VIEWS = ("diagonal", "unfold")


def replayed_node(view):
    """VIEW_NODE_HOOK: the view's chain of view ops run again from its base, with grad
    mode on; the last one's node and output number. None when replay is off or a step
    is not a replayable view op."""
    if not ENABLED[0]:
        return None
    steps = []
    for forward, meta in view._view_fn or ():
        op = _op_of(forward)
        if op is None:
            return None
        steps.append((op, meta))
    prev = GRAD_MODE.enabled
    GRAD_MODE.enabled = True
    try:
        t = view._base
        for op, meta in steps:
            t = run_op(op, (t,), meta)
    finally:
        GRAD_MODE.enabled = prev
    if t._grad_fn is None:
        return None
    return t._grad_fn, t._output_nr


class _force_original_view_tracking:  # noqa: N801 - torch's name
    """Set view replay on or off now; as a context manager, put back what it was on exit
    (also usable as a decorator, as PyTorch's)."""

    def __init__(self, mode: bool):
        self.prev = ENABLED[0]
        self.mode = bool(mode)
        ENABLED[0] = self.mode

    def __enter__(self):
        return None

    def __exit__(self, *exc) -> None:
        ENABLED[0] = self.prev

    def __call__(self, fn):
        import functools

        ENABLED[0] = self.prev  # (a decorator changes nothing until the function runs)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _force_original_view_tracking(self.mode):
                return fn(*args, **kwargs)

        return wrapper

    def clone(self):
        return _force_original_view_tracking(self.mode)


def is_view_replay_enabled() -> bool:
    return ENABLED[0]


views.VIEW_NODE_HOOK[0] = replayed_node


# ------------------------------------------------ Tensor._view_func / _view_func_unsafe
# A view made again on another base. With view replay on, each view op of the view's
# chain runs again (so the result's nodes are SelectBackward0, ViewBackward0...), and a
# `symint_visitor_fn` may change the integers PyTorch keeps as SymInts in its view
# functions (select's index, slice's start/end/step, view's and expand's sizes), in chain
# order; without replay, the result is the view's geometry as_strided over the new base.
# No view op of gradcli keeps a tensor (PyTorch's slice_inverse does), so
# `tensor_visitor_fn` is never called. (PyTorch decides replay when the view is made;
# gradcli, when `_view_func` is called.)

_INT64_MAX = 9223372036854775807
_PYBIND_CAST = ("Unable to cast Python instance of type {} to C++ type '?' (#define "
                "PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)")


def _step_symints(name: str, meta: tuple) -> list:
    if name in ("view", "reshape_alias", "expand"):
        return list(meta[0])
    if name == "select":
        return [meta[1]]
    if name == "slice":
        _, start, stop, step, _ = meta
        return [0 if start is None else start, _INT64_MAX if stop is None else stop,
                1 if step is None else step]
    return []


def _without(shape: tuple, removed) -> tuple:
    return tuple(n for i, n in enumerate(shape) if i not in removed)


def _replay_step(t, op, meta: tuple, symints: list):
    """Run one view op of a chain on `t` (its shape may differ from the recorded one)."""
    from .ops.registry import PUBLIC

    name, shape = op.name, tuple(t._data.shape)
    if name in ("view", "reshape_alias"):
        return t.view(*symints)
    if name == "expand":
        return t.expand(*symints)
    if name == "select":
        return t.select(meta[0], symints[0])
    if name == "slice":
        return views.slice_dim(t, meta[0], *symints)
    if name.startswith("squeeze"):
        removed = meta[2]
        return views.view_op(op, t, (_without(shape, removed), shape, removed))
    if name.startswith("unsqueeze"):
        ax = meta[2]
        return views.view_op(op, t, (shape[:ax] + (1,) + shape[ax:], shape, ax))
    if name == "diagonal":
        return PUBLIC["torch.diagonal"](t, *meta[:3])
    if name == "unfold":
        return t.unfold(*meta[:3])
    if len(meta) and isinstance(meta[-1], tuple) and meta[-1] != shape:
        raise RuntimeError(f"{name}: the view cannot be made again on a base of another shape")
    return views.view_op(op, t, meta)


def _storage_geometry(t) -> tuple:
    """(sizes, strides, storage offset, storage size) as has_same_meta compares them."""
    from .ops.breadth import _storage_positions

    found = _storage_positions(t)
    offset, numel = (None, None) if found is None else (found[1], found[0].size)
    return tuple(t._data.shape), tuple(t.stride()), offset, numel


def _view_func_impl(self, args, kwargs, check_meta: bool, name: str):
    from .tensor import Tensor

    params = ("new_base", "symint_visitor_fn", "tensor_visitor_fn")
    if not args and "new_base" not in kwargs and all(k in params for k in kwargs):
        raise TypeError(f'{name}() missing 1 required positional arguments: "new_base"')
    if len(args) > 3 or any(k not in params for k in kwargs) or any(
            p in kwargs for p in params[:len(args)]):
        raise TypeError(f"{name}() received an invalid combination of arguments - expected "
                        f"(Tensor new_base, object symint_visitor_fn = None, "
                        f"object tensor_visitor_fn = None)")
    bound = dict(zip(params, args), **kwargs)
    new_base = bound.get("new_base")
    if not isinstance(new_base, Tensor):
        raise TypeError(f"{name}(): argument 'new_base' (position 1) must be Tensor, not "
                        f"{type(new_base).__name__}")
    visitor = bound.get("symint_visitor_fn")
    base = self._base
    if base is None:
        return None
    if check_meta and _storage_geometry(new_base) != _storage_geometry(base):
        return None
    steps = []
    for forward, meta in self._view_fn or ():
        op = _op_of(forward)
        if op is None:
            break
        steps.append((op, meta))
    else:
        if ENABLED[0]:
            return _replay(new_base, steps, visitor)
    sizes, strides, offset, _ = _storage_geometry(self)
    return new_base.as_strided(sizes, strides, offset)


def _replay(t, steps: list, visitor):
    symints = [_step_symints(op.name, meta) for op, meta in steps]
    if visitor is not None:
        changed = []
        for values in symints:
            new = []
            for v in values:
                out = visitor(v)
                if isinstance(out, bool) or not isinstance(out, int):
                    raise RuntimeError(_PYBIND_CAST.format(type(out)))
                new.append(out)
            changed.append(new)
        symints = changed
    for (op, meta), values in zip(steps, symints):
        t = _replay_step(t, op, meta, values)
    return t


def _view_func(self, *args, **kwargs):
    """The view made again on `new_base` (None unless self is a view, and with
    `_view_func` also None when new_base's geometry is not the base's)."""
    return _view_func_impl(self, args, kwargs, True, "_view_func")


def _view_func_unsafe(self, *args, **kwargs):
    """As _view_func, without comparing new_base's geometry with the base's."""
    return _view_func_impl(self, args, kwargs, False, "_view_func_unsafe")


def _install_view_funcs() -> None:
    from .ops.registry import public
    from .tensor import Tensor

    for fn in (_view_func, _view_func_unsafe):
        public("Tensor." + fn.__name__)(fn)
        setattr(Tensor, fn.__name__, fn)


_install_view_funcs()
