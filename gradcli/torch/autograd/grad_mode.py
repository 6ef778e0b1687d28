"""torch.autograd.grad_mode: the grad-mode context managers under their module's own name,
plus set_multithreading_enabled and enforce_grad_layout_policy.

Those two set per-thread flags scripts may read back (torch.autograd.
is_multithreading_enabled); gradcli's backward always runs on the calling thread and its
gradients always take their parameter's layout, so neither flag changes what it computes.
"""

from __future__ import annotations

import threading

from gradcli.engine.grad_mode import (  # noqa: F401
    _decorate,
    enable_grad,
    inference_mode,
    no_grad,
    set_grad_enabled,
)

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "set_multithreading_enabled", "enforce_grad_layout_policy"]


class _Flags(threading.local):
    def __init__(self):
        self.multithreading = True
        self.grad_layout = True


_FLAGS = _Flags()


def is_multithreading_enabled() -> bool:
    """Whether backward may run on per-device worker threads (this thread's flag)."""
    return _FLAGS.multithreading


class _FlagContext:
    """Sets its flag at construction, restores it on exit; also a decorator."""

    _name: str

    def __init__(self, value: bool) -> None:
        self.prev = getattr(_FLAGS, self._name)
        setattr(_FLAGS, self._name, bool(value))
        self._value = value

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        setattr(_FLAGS, self._name, self.prev)

    def __call__(self, fn):
        # (unlike set_grad_enabled, PyTorch's flag contexts do not undo their construction
        # when used as a decorator: the flag stays set from the decoration on)
        return _decorate(fn, self.clone)

    def clone(self):
        return type(self)(self._value)


class set_multithreading_enabled(_FlagContext):  # noqa: N801
    """Enables or disables multithreaded backward (a per-thread flag)."""

    _name = "multithreading"

    def __init__(self, mode: bool) -> None:
        super().__init__(mode)
        self.mode = mode


class enforce_grad_layout_policy(_FlagContext):  # noqa: N801
    """Whether accumulated gradients must take their parameter's strides (a per-thread
    flag; gradcli's always do)."""

    _name = "grad_layout"

    def __init__(self, enable: bool = True) -> None:
        super().__init__(enable)
        self.enable = enable


for _cls in (set_multithreading_enabled, enforce_grad_layout_policy):
    _cls.__module__ = "torch.autograd.grad_mode"
