"""The in-place comparisons (eq_, ne_, lt_, le_, gt_, ge_ and their aliases greater_,
greater_equal_, less_, less_equal_, not_equal_): self becomes the comparison's truth in
its own dtype. As in PyTorch the write is recorded (EqBackward0 against a number,
EqBackward1 against a tensor, ...) with zero gradients for both operands, so forward AD
gives a zero tangent."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, make
from .registry import defop, public, run_op

_COMPARISONS = (("eq", np.equal, ()), ("ne", np.not_equal, ("not_equal",)),
                ("lt", np.less, ("less",)), ("le", np.less_equal, ("less_equal",)),
                ("gt", np.greater, ("greater",)), ("ge", np.greater_equal, ("greater_equal",)))


def _zeros_for_both(c, g):
    other_shape, = c.meta
    return (make(np.zeros_like(g._data)) if c.needs(0) else None,
            make(np.zeros(other_shape, g._data.dtype)) if c.needs(1) else None)


def _declare(name: str, npfn, aliases: tuple):
    title = name.capitalize()
    by_number = defop(f"{name}_scalar_", f"{title}Backward0",
                      lambda a, other: npfn(a, other).astype(a.dtype),
                      lambda c, g: (make(np.zeros_like(g._data)),),
                      f"d {name}_(a, number)/da = 0", torch_call=f"(a * 1).{name}_(0.25)")
    by_tensor = defop(f"{name}_tensor_", f"{title}Backward1",
                      lambda a, b, other_shape: npfn(a, b).astype(a.dtype), _zeros_for_both,
                      f"d {name}_(a, b)/da = d/db = 0", torch_call=f"(a * 1).{name}_(b)")

    def method(self: Tensor, other) -> Tensor:
        if isinstance(other, Tensor):
            return self._apply_inplace(
                lambda old: run_op(by_tensor, (old, other), (tuple(other._data.shape),)))
        if isinstance(other, (bool, int, float)):
            return self._apply_inplace(lambda old: run_op(by_number, (old,), (other,)))
        raise TypeError(
            f"{name}_() received an invalid combination of arguments - got "
            f"({type(other).__name__}), but expected one of:\n * (Tensor other)\n      didn't "
            f"match because some of the arguments have invalid types: "
            f"(!{type(other).__name__}!)\n * (Number other)\n      didn't match because some "
            f"of the arguments have invalid types: (!{type(other).__name__}!)\n")

    method.__name__ = method.__qualname__ = name + "_"
    public(f"Tensor.{name}_", *(f"Tensor.{alias}_" for alias in aliases))(method)


for _name, _npfn, _aliases in _COMPARISONS:
    _declare(_name, _npfn, _aliases)
del _name, _npfn, _aliases
