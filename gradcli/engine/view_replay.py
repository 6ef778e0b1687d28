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
            if views.is_view_forward(op.forward):
                _OPS_BY_FORWARD.setdefault(op.forward, op)
    return _OPS_BY_FORWARD.get(forward)


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
