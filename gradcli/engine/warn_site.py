"""Warnings attributed to the user's line, as PyTorch's C++ warnings are.

A warning PyTorch raises inside an op (TORCH_WARN) reaches Python's `warnings` with the
caller's frame as its location: the line of the program that called the op. gradcli's
ops are Python, called through one or more wrappers (the public-boundary check, out=
variants, Tensor methods), so no fixed `stacklevel` points there; this walks out of the
engine and the torch facade instead. Imports nothing of gradcli (any module may use it).
"""

from __future__ import annotations

import os
import sys
import warnings

_GRADCLI = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INSIDE = (os.path.join(_GRADCLI, "engine") + os.sep, os.path.join(_GRADCLI, "torch") + os.sep)


def warn_at_caller(message: str, category=UserWarning) -> None:
    """warnings.warn(message) located at the first frame outside gradcli's engine and
    torch facade (the code that called the public function)."""
    frame = sys._getframe(1)  # (stacklevel 1 is this function, 2 its caller)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_INSIDE):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


#: torch.set_warn_always's flag: while it is on, a once-per-process warning is given every time
WARN_ALWAYS = [False]
#: the keys of the once-per-process warnings given already in this process (or this program:
#: a new program file starts with none given, as a new Python process does)
_GIVEN: set = set()


def first_time(key: str) -> bool:
    """Whether PyTorch's TORCH_WARN_ONCE warning named `key` is due now: the first time in
    the process, or every time under torch.set_warn_always(True)."""
    if WARN_ALWAYS[0]:
        return True
    if key in _GIVEN:
        return False
    _GIVEN.add(key)
    return True


def warn_once(key: str, message: str, category=UserWarning) -> None:
    """warn_at_caller(message), as PyTorch's TORCH_WARN_ONCE gives it (see first_time)."""
    if first_time(key):
        warn_at_caller(message, category)


def forget_given() -> None:
    """Start again with no once-per-process warning given (a new program)."""
    _GIVEN.clear()
