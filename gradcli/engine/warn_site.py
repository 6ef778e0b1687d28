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
#: gradcli's counterparts of PyTorch's Python modules that call ops (nn.Module forwards, the
#: optimizers): a warning of an op they call points at their line in PyTorch, not the user's
_OP_CALLERS = (os.path.join(_GRADCLI, "torch", "nn", "modules") + os.sep,
               os.path.join(_GRADCLI, "torch", "optim") + os.sep)
_HERE = os.path.abspath(__file__)
if _HERE.endswith((".pyc", ".pyo")):
    _HERE = _HERE[:-1]


def _caller_level() -> int:
    """The stacklevel, counted from warn_at_caller's caller, of the frame PyTorch's warning
    would point at: past the warning's issuer, past gradcli's engine and torch facade, but
    stopping at an nn.Module forward or an optimizer (PyTorch's own Python calling the op)."""
    frame = sys._getframe(2)
    level = 2
    while frame is not None and frame.f_code.co_filename == _HERE:  # warn_once and kin
        frame = frame.f_back
        level += 1
    issuer = True
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(_INSIDE) or (not issuer and name.startswith(_OP_CALLERS)):
            break
        issuer = False
        frame = frame.f_back
        level += 1
    return level


def warn_at_caller(message: str, category=UserWarning) -> None:
    """warnings.warn(message) located at the code that called the public function: the first
    frame outside gradcli's engine and torch facade, or the nn.Module / optimizer line that
    called it (as a TORCH_WARN in an op PyTorch's module code calls points there)."""
    warnings.warn(message, category, stacklevel=_caller_level())


def warn_inside(message: str, category=UserWarning) -> None:
    """warnings.warn(message) located inside gradcli, at the caller of warn_inside: for the
    warnings PyTorch locates in its own Python files whatever the user's line (a
    `warnings.warn` without stacklevel there, or a TORCH_WARN under a Python wrapper such
    as torch.functional's stft/meshgrid/lu)."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_code.co_filename == _HERE:
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


def warn_once(key: str, message: str, category=UserWarning, *, inside: bool = False) -> None:
    """warn_at_caller(message) (warn_inside with inside=True), as PyTorch's TORCH_WARN_ONCE
    gives it (see first_time)."""
    if first_time(key):
        if inside:
            warn_inside(message, category)
        else:
            warn_at_caller(message, category)


def forget_given() -> None:
    """Start again with no once-per-process warning given (a new program)."""
    _GIVEN.clear()
