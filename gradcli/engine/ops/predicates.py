"""Elementwise tests that answer with booleans: `torch.isin` and `torch.signbit`.

Neither is differentiable (a bool result never requires grad, whatever its inputs do), so
they are plain functions over numpy, not table ops: no node is ever recorded.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from ..tensor import Tensor, make
from .registry import public

_ISIN_OPTIONS = (
    " * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, bool invert = "
    "False, Tensor out = None)\n"
    " * (Number element, Tensor test_elements, *, bool assume_unique = False, bool invert = "
    "False, Tensor out = None)\n"
    " * (Tensor elements, Number test_element, *, bool assume_unique = False, bool invert = "
    "False, Tensor out = None)\n")


def _is_number(value) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, Tensor)


def _shown(value) -> str:
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def _invalid_isin(args: tuple, kwargs: dict) -> TypeError:
    words = [_shown(a) for a in args] + [f"{k}={_shown(v)}" for k, v in kwargs.items()]
    return TypeError("isin() received an invalid combination of arguments - got "
                     f"({', '.join(words)}), but expected one of:\n{_ISIN_OPTIONS}")


def _isin_operands(args: tuple, kwargs: dict):
    """(elements, test_elements) by PyTorch's three overloads, or its TypeError: the
    second argument is `test_element` when it is a number, the first `element`."""
    rest = dict(kwargs)
    for key in ("assume_unique", "invert"):
        if key in rest and type(rest.pop(key)) is not bool:
            raise _invalid_isin(args, kwargs)
    if len(args) > 2:
        raise _invalid_isin(args, kwargs)
    first = args[0] if args else None
    second = args[1] if len(args) > 1 else None
    for key in ("elements", "element"):
        if key in rest:
            if first is not None:
                raise _invalid_isin(args, kwargs)
            first = rest.pop(key)
            if (key == "element") != _is_number(first):
                raise _invalid_isin(args, kwargs)
    for key in ("test_elements", "test_element"):
        if key in rest:
            if second is not None:
                raise _invalid_isin(args, kwargs)
            second = rest.pop(key)
            if (key == "test_element") != _is_number(second):
                raise _invalid_isin(args, kwargs)
    if rest or first is None or second is None:
        raise _invalid_isin(args, kwargs)
    if not (isinstance(first, Tensor) or _is_number(first)) or \
            not (isinstance(second, Tensor) or _is_number(second)) or \
            not (isinstance(first, Tensor) or isinstance(second, Tensor)):
        raise _invalid_isin(args, kwargs)
    return first, second


@public("torch.isin")
def isin(*args, **kwargs) -> Tensor:
    """Whether each element of `elements` occurs in `test_elements`, compared in the dtype
    both promote to (an int tensor against 1.5 compares as float). The result has the shape
    of `elements` (0-d when it is a number)."""
    elements, test = _isin_operands(args, kwargs)
    invert = bool(kwargs.get("invert", False))
    for side in (elements, test):  # (each side on its own: isin(ints, True) is refused too)
        if (side._data.dtype == np.bool_) if isinstance(side, Tensor) else type(side) is bool:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    common = dtypes.result_type(elements, test)
    left = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    right = test._data if isinstance(test, Tensor) else np.asarray(test)
    found = np.isin(left.astype(common.np), right.astype(common.np).reshape(-1),
                    invert=invert)
    return make(np.asarray(found, dtype=np.bool_).reshape(left.shape))


@public("torch.signbit", "Tensor.signbit")
def signbit(input) -> Tensor:
    """Whether the sign bit is set: true for -0.0 and for a NaN with its sign bit set, as
    the C function; integers are negative, booleans never."""
    if not isinstance(input, Tensor):
        raise TypeError(f"signbit(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    data = input._data
    if data.dtype.kind in "fV":
        result = np.signbit(data)
    elif data.dtype.kind == "b":
        result = np.zeros(data.shape, np.bool_)
    else:
        result = data < 0
    return make(np.asarray(result, dtype=np.bool_))
