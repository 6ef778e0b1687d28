"""torch.sym_max / sym_min / sym_float / sym_int / sym_not / sym_sqrt / sym_sum / sym_ite /
sym_fresh_size / sym_constrain_range(_for_size): PyTorch's shape-arithmetic helpers, which tracing compilers overload for
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


_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def _constrained_size(name: str, size, min, max, unexpected: dict) -> int:
    """The size as an int, after PyTorch's argument checks in its order (a number or a 0-d
    tensor; min and max ints or None; then no unknown keyword)."""
    if hasattr(size, "item") and not isinstance(size, (np.generic,)):
        if getattr(size, "ndim", 0) != 0:
            raise TypeError(f"{name}(): argument 'size' (position 1) must be Number, not Tensor")
        size = size.item()
    if not isinstance(size, _ALL_TYPES):
        raise TypeError(f"{name}(): argument 'size' (position 1) must be Number, "
                        f"not {type(size).__name__}")
    for arg, value in (("min", min), ("max", max)):
        if value is not None and not isinstance(value, (builtins.int, np.integer)):
            raise TypeError(f"{name}(): argument '{arg}' must be int, not {type(value).__name__}")
    for keyword in unexpected:
        raise TypeError(f"{name}() got an unexpected keyword argument '{keyword}'")
    return builtins.int(size)


def _check_range(size: int, low: int, high: int) -> None:
    if not low <= size <= high:
        raise RuntimeError(f"Invalid value range for {size} between [{low}, {high}].")


@public("torch.sym_constrain_range")
def sym_constrain_range(size, *, min=None, max=None, **unexpected):
    """Checks that an (unbacked) size lies in [min, max]; with plain numbers, as in
    PyTorch's eager mode, a check and nothing else."""
    size = _constrained_size("sym_constrain_range", size, min, max, unexpected)
    low = _INT64_MIN if min is None else builtins.int(min)
    high = _INT64_MAX if max is None else builtins.int(max)
    if high < low:
        raise RuntimeError(f"Max must be greater than or equal to min. Got min={low} max={high}")
    _check_range(size, low, high)


@public("torch.sym_constrain_range_for_size")
def sym_constrain_range_for_size(size, *, min=None, max=None, **unexpected):
    """sym_constrain_range for a size: min defaults to 0, and a max must be above 2 (PyTorch
    assumes sizes 0 and 1 apart)."""
    size = _constrained_size("sym_constrain_range_for_size", size, min, max, unexpected)
    if max is not None and max <= 2:
        raise RuntimeError(f"Max value to constrain_range_for_size must be greater than 2. got: {max}")
    low = 0 if min is None else builtins.int(min)
    _check_range(size, low, _INT64_MAX if max is None else builtins.int(max))
