"""CPU autocast's state and the check its listed functions make at the call.

PyTorch's CPU autocast lists the ops that run in the lower-precision dtype (matrix
products, convolutions) and those that run in float32 (losses, prod, cdist...). Here each
listed function declares its policy in its own first lines:

    if autocast_state.ENABLED and autocast_state.wanted():
        return autocast_state.lower(linear, input, weight, bias)      # or .fp32(...)

`ENABLED` counts the enabled autocast regions open in the whole process: while it is 0
(always, in a program that never enters autocast) a listed function pays one read of it
and no other function anything. The region itself is per thread, as PyTorch's state is
(`STATE`, a threading.local): another thread, or a REPL's next input after the region
closed, sees its own. `wanted()` is true in an enabled region of this thread outside any
listed function (PyTorch excludes autocast while a listed op runs, so a product inside a
float32 loss is not cast down); `lower`/`fp32` cast the floating tensors and run the
function with `inside` raised. The casts themselves (recorded `to` copies, the weight
cache) are amp.py's, reached through `ABOVE`."""

from __future__ import annotations

import threading

from . import dtypes
from .late import Slots

#: amp.cast(value, target_dtype, lower) -> the value to call with (ops/amp.py fills it)
ABOVE = Slots("gradcli.engine.autocast_state", "cast")

#: the enabled CPU autocast regions open now, over every thread (see the top)
ENABLED = 0
_COUNT_LOCK = threading.Lock()


class _ThreadState(threading.local):
    """One thread's CPU autocast state (PyTorch's thread-local one)."""

    def __init__(self):
        self.enabled = False
        self.dtype = dtypes.bfloat16
        self.cache_enabled = True
        self.nesting = 0
        self.cache: dict = {}  # id(leaf) -> (leaf, its cast): a weight is cast once a region
        self.inside = 0  # > 0 while a listed function runs (its inner calls are left alone)


STATE = _ThreadState()


def count_enabled(step: int) -> None:
    """An enabled region opened (+1) or closed (-1) in some thread."""
    global ENABLED
    with _COUNT_LOCK:
        ENABLED += step


def wanted() -> bool:
    """Whether a listed function called now casts its inputs (asked only while ENABLED)."""
    state = STATE
    return state.enabled and not state.inside


def _run(fn, target, lower: bool, args: tuple, kwargs: dict):
    cast = ABOVE.cast
    args = tuple([cast(a, target, lower) for a in args])
    kwargs = {k: cast(v, target, lower) for k, v in kwargs.items()}
    state = STATE
    state.inside += 1
    try:
        return fn(*args, **kwargs)
    finally:
        state.inside -= 1


def lower(fn, *args, **kwargs):
    """fn called with its floating tensors in the region's dtype (bfloat16 unless told)."""
    return _run(fn, STATE.dtype, True, args, kwargs)


def fp32(fn, *args, **kwargs):
    """fn called with its floating tensors in float32."""
    return _run(fn, dtypes.float32, False, args, kwargs)
