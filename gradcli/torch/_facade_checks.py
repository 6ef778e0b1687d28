"""The functions gradcli.torch defines itself, with PyTorch's argument errors.

torch.is_grad_enabled, get_default_dtype, result_type... come from the engine's own
modules, not from the op table, so the op table's wrapping (ops/out_variants.py) never
sees them and a bad argument used to give Python's wording of the engine function's
arity ("takes 0 positional arguments but 1 was given") or be taken silently
(`torch.result_type(3)` answered a dtype). Each is given here the check PyTorch's own
function makes: the argument-less builtins count arguments themselves (no extra call:
their body is the engine's one line), the two-argument ones test their arguments'
kinds inline and ask the signature table (arg_checks) only when that test fails.
"""

from __future__ import annotations

import numbers

from gradcli.engine import dtypes as _dtypes
from gradcli.engine.grad_mode import GRAD_MODE as _GRAD_MODE
from gradcli.engine.parallel import POOL as _POOL
from gradcli.engine.tensor import Tensor as _Tensor


def _refuse(public_name: str, args: tuple, kwargs: dict) -> TypeError:
    """The TypeError of a PyTorch builtin declared without parameters, given some."""
    if kwargs:
        return TypeError(f"{public_name}() takes no keyword arguments")
    return TypeError(f"{public_name}() takes no arguments ({len(args)} given)")


def is_grad_enabled(*args, **kwargs) -> bool:
    if args or kwargs:
        raise _refuse("torch.is_grad_enabled", args, kwargs)
    return _GRAD_MODE.enabled


def is_inference_mode_enabled(*args, **kwargs) -> bool:
    """True inside torch.inference_mode() (and not inside an inner inference_mode(False))."""
    if args or kwargs:
        raise _refuse("torch.is_inference_mode_enabled", args, kwargs)
    return _GRAD_MODE.inference


def get_default_dtype(*args, **kwargs):
    if args or kwargs:
        raise _refuse("torch.get_default_dtype", args, kwargs)
    return _dtypes.get_default_dtype()


def get_num_threads(*args, **kwargs) -> int:
    if args or kwargs:
        raise _refuse("torch.get_num_threads", args, kwargs)
    return _POOL.threads


_PLAIN_NUMBERS = (float, int, bool)


def _operand(obj) -> bool:
    return type(obj) in _PLAIN_NUMBERS or isinstance(obj, _Tensor) or isinstance(
        obj, numbers.Number)


def result_type(*args, **kwargs):
    """torch.result_type(tensor, other): the dtype an op over both would compute in (each
    a tensor or a Python number)."""
    if len(args) == 2 and not kwargs and _operand(args[0]) and _operand(args[1]):
        return _dtypes.result_type(*args)
    return _dtypes.result_type(*_bound("torch.result_type", args, kwargs))


def promote_types(*args, **kwargs):
    """torch.promote_types(type1, type2): the dtype both promote to."""
    if len(args) == 2 and not kwargs and isinstance(args[0], _dtypes.dtype) and \
            isinstance(args[1], _dtypes.dtype):
        return _dtypes.promote(*args)
    a, b = _bound("torch.promote_types", args, kwargs)
    return _dtypes.promote(_dtypes.to_dtype(a), _dtypes.to_dtype(b))


def _bound(public_name: str, args: tuple, kwargs: dict) -> tuple:
    """The arguments by position, as PyTorch's first fitting signature binds them; its
    TypeError when none fits."""
    from gradcli.engine.ops.arg_checks import diagnose, rebind

    error = diagnose(public_name, args, kwargs)
    if error is not None:
        raise error
    call = rebind(public_name, args, kwargs)
    return tuple(call[0]) if call is not None else tuple(args)


#: name -> the checked function, for gradcli.torch to take over the engine's own
FUNCTIONS = {f.__name__: f for f in (is_grad_enabled, is_inference_mode_enabled,
                                      get_default_dtype, get_num_threads, result_type,
                                      promote_types)}
