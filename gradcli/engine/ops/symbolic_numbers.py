"""torch.sym_max / sym_min / sym_float / sym_int / sym_not / sym_sqrt / sym_sum / sym_ite /
sym_fresh_size: PyTorch's shape-arithmetic helpers, which tracing compilers overload for
symbolic sizes. gradcli has no symbolic sizes, so each is what PyTorch does with plain
Python numbers, numpy scalars and tensors (sym_max(1, 2.0) promotes to float; a tensor
goes where Python's own float(), int(), not and math.sqrt take it)."""

from __future__ import annotations

import builtins
import math

import numpy as np

from .registry import PUBLIC, public

_ALL_TYPES = (np.integer, np.floating, builtins.int, builtins.float)
_FLOAT_TYPES = (np.floating, builtins.float)


def _check_number(a) -> None:
    if not isinstance(a, _ALL_TYPES):
        raise AssertionError(f"expected {_ALL_TYPES}, got {type(a)}")


def _extreme(pick, a, b):
    _check_number(a)
    _check_number(b)
    if isinstance(a, _FLOAT_TYPES) or isinstance(b, _FLOAT_TYPES):
        return builtins.float(pick(a, b))
    return pick(a, b)


@public("torch.sym_max")
def sym_max(a, b):
    """max of two numbers, a float if either is one (max(1, 1.0) is 1.0 either way round)."""
    return _extreme(builtins.max, a, b)


@public("torch.sym_min")
def sym_min(a, b):
    """min of two numbers, a float if either is one."""
    return _extreme(builtins.min, a, b)


@public("torch.sym_float")
def sym_float(a):
    return builtins.float(a)


@public("torch.sym_int")
def sym_int(a):
    return builtins.int(a)


@public("torch.sym_not")
def sym_not(a):
    return not a


@public("torch.sym_sqrt")
def sym_sqrt(a):
    """math.sqrt (of a one-element tensor too: its float)."""
    return math.sqrt(a)


@public("torch.sym_sum")
def sym_sum(*args):
    """Python's sum of the arguments, given as sym_sum(a, b, c) or sym_sum([a, b, c])."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)


@public("torch.sym_ite")
def sym_ite(b, t, f):
    """t if b else f, for a bool b and t, f of one type."""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


@public("torch.sym_fresh_size")
def sym_fresh_size(expr):
    """torch.tensor(expr).item(): a plain number stays one."""
    return PUBLIC["torch.tensor"](expr).item()



