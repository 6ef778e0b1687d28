"""`torch.ops.aten.<op>` and its overloads (`.default`, `.Tensor`, ...) over gradcli's ops.

PyTorch's aten ops take the tensor first, as its torch.* functions and Tensor methods do,
so an aten name gradcli has maps onto the function of that name: `torch.<name>`, else the
Tensor method (`aten.view(x, [2, 2])`), else `torch.nn.functional.<name>`, and the
`linalg_`/`special_` prefixes onto those modules. Every overload name runs the same
function (gradcli's functions take all of PyTorch's overloads' arguments); a name gradcli
lacks says so. The results are the ops' own, so grad_fn names are PyTorch's.
"""

from __future__ import annotations

import numbers

import numpy as np

from .registry import OPS, PUBLIC, defop, public, run_op


def _sub_scalar_fwd(a, s):
    out = a - s
    return out if out.dtype == a.dtype else out.astype(a.dtype)


# aten.sub.Scalar (tensor - number through the Scalar overload): SubBackward1
SUB_SCALAR = defop("sub_scalar", "SubBackward1", _sub_scalar_fwd, lambda c, g: (g,),
                   "d(a-s)/da = 1", torch_call="torch.ops.aten.sub.Scalar(a, 1.5)")
#: the Scalar overloads whose nodes are PyTorch's Backward1 ones (the functions' own
#: tensor-and-number path records the Tensor overload's Backward0)
_SCALAR_OPS = {"add": "add_scalar", "sub": "sub_scalar", "mul": "mul_scalar",
               "div": "div_scalar"}


def _scalar_overload(op: str, fn):
    """aten.<op>.Scalar: a float tensor with a number runs the Scalar op (its Backward1
    node); anything else the function (ints promote as PyTorch's)."""
    table_name = _SCALAR_OPS[op]

    def call(self, other, alpha=1):
        from ..tensor import Tensor

        if isinstance(self, Tensor) and self._data.dtype.kind in "fV" and isinstance(
                other, numbers.Real) and not isinstance(other, bool):
            if alpha != 1:
                other = other * alpha
            return run_op(OPS[table_name], (self,), (np.float64(other),))
        return fn(self, other) if alpha == 1 else fn(self, other, alpha=alpha)

    return call


#: names that reach the process rather than a tensor's values (addresses, files): never
#: aten ops here, so a program cannot get through torch.ops what its attribute rules deny
_NOT_OPS = frozenset({"storage", "untyped_storage", "data_ptr", "numpy", "save", "load",
                      "tofile", "from_file"})


def _function_for(name: str):
    """The gradcli function the aten op `name` runs, or None."""
    if name in _NOT_OPS:
        return None
    # (`aten.<name>`: an aten op with no torch.*, Tensor or F name, as aten.slice)
    for key in (f"torch.{name}", f"Tensor.{name}", f"torch.nn.functional.{name}",
                f"aten.{name}"):
        fn = PUBLIC.get(key)
        if fn is not None:
            return fn
    for prefix, module in (("linalg_", "torch.linalg."), ("special_", "torch.special.")):
        if name.startswith(prefix):
            fn = PUBLIC.get(module + name[len(prefix):])
            if fn is not None:
                return fn
    from ..tensor import Tensor

    method = Tensor.__dict__.get(name)
    return method if callable(method) and not name.startswith("__") else None


class OpOverload:
    """One overload of an aten op: callable, printed as PyTorch prints it."""

    __module__ = "torch._ops"
    __slots__ = ("_op", "_overload", "_fn")

    def __init__(self, op: str, overload: str, fn):
        self._op, self._overload, self._fn = op, overload, fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def name(self) -> str:
        return f"aten::{self._op}"

    @property
    def overloadpacket(self):
        return OpOverloadPacket(self._op, self._fn)

    def __repr__(self) -> str:
        return f"<OpOverload(op='aten.{self._op}', overload='{self._overload}')>"

    def __str__(self) -> str:
        return f"aten.{self._op}.{self._overload}"


class OpOverloadPacket:
    """An aten op with all its overloads: callable itself, `.default` and the named
    overloads are OpOverloads."""

    __module__ = "torch._ops"
    __slots__ = ("_op", "_fn")

    def __init__(self, op: str, fn):
        self._op, self._fn = op, fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __getattr__(self, overload: str):
        if overload.startswith("_"):
            raise AttributeError(overload)
        fn = self._fn
        if overload == "Scalar" and self._op in _SCALAR_OPS:
            fn = _scalar_overload(self._op, fn)
        return OpOverload(self._op, overload, fn)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='aten.{self._op}')>"

    def __str__(self) -> str:
        return f"aten.{self._op}"


class AtenNamespace:
    """torch.ops.aten: the aten ops gradcli has; any other says it is not supported."""

    __module__ = "torch._ops"
    __slots__ = ()

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        fn = _function_for(name)
        if fn is None:
            raise AttributeError(f"torch.ops.aten.{name} is not supported by gradcli")
        return OpOverloadPacket(name, fn)

    def __repr__(self) -> str:
        return "<module 'torch.ops.aten' from 'torch.ops'>"


public("torch.ops.aten")(AtenNamespace())
