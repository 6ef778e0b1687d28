"""Bare math functions that take Python numbers (docs/language.md: bare `exp(1)` is e).

`torch.exp(1)` raises PyTorch's TypeError, so a program that writes the torch-qualified
name behaves as under PyTorch. A *bare* name is gradcli's convenience: the session's
bare functions are wrapped by `bare_function`, which first calls the function as it is
and, only when that fails on a Python number, retries with the numbers as tensors,
provided the function is elementwise.

Nothing here is a hand list: which functions are wrapped comes from the names the facade
modules export, and whether one is elementwise is learnt from the function itself, the
first time it is called with a number (a probe on a two-element tensor, compared element
by element with the same function on each element alone). So every function the op
modules declare with `@public(...)` gets the convenience without an entry here.

`calculus_names()` adds what `gradcli grad` offers on top (docs/commands.md): the constants
`pi`, `e`, `inf`, `nan` and the bare functions of torch.nn.functional and torch.special.
"""

from __future__ import annotations

import math
import types

_NUMBERS = (int, float)
_UNKNOWN = object()
#: how many leading arguments the probe found the function to treat elementwise
#: (0: not elementwise), per function
_ARITY: dict = {}

CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}


def bare_function(fn, name: str):
    """`fn` as called by its bare name: also takes Python numbers.

    `exp(1)` gives the Python float e (computed in float64), `atan2(1, x)` a tensor. A
    closure rather than an object with `__call__`: it costs ~0.15 us per call instead of
    ~0.25 us, and the sandbox gives a program no attribute of a function."""

    def bare(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (TypeError, AttributeError) as first:
            for a in args:
                if type(a) in _NUMBERS:
                    break
            else:
                raise
            result = _with_numbers(fn, args, kwargs)
            if result is _UNKNOWN:
                raise _clear(name, args, first) from None
            return result

    bare.__name__ = getattr(fn, "__name__", name)
    bare.__qualname__ = getattr(fn, "__qualname__", name)
    bare.__doc__ = getattr(fn, "__doc__", None)
    bare.__wrapped__ = fn
    return bare


def _clear(name, args, err):
    """An engine AttributeError on a Python number ('int' object has no attribute ...)
    as the TypeError PyTorch raises; any other error as it was."""
    if isinstance(err, AttributeError):
        for i, a in enumerate(args):
            if type(a) in _NUMBERS:
                return TypeError(f"{name}(): argument 'input' (position {i + 1}) must be "
                                 f"Tensor, not {type(a).__name__}")
    return err


def _with_numbers(fn, args, kwargs):
    arity = _ARITY.get(fn)
    if arity is None:
        arity = _ARITY[fn] = _elementwise_arity(fn)
    if not arity or len(args) < arity:
        return _UNKNOWN
    import gradcli.torch as torch

    head = args[:arity]
    tensors = [a for a in head if isinstance(a, torch.Tensor)]
    if tensors:
        dtype = tensors[0].dtype
        if not dtype.is_floating_point:
            dtype = torch.get_default_dtype()
    else:
        dtype = torch.float64  # all numbers: a math function, computed at full precision
    converted = [torch.tensor(a, dtype=dtype) if type(a) in _NUMBERS else a for a in head]
    try:
        out = fn(*converted, *args[arity:], **kwargs)
    except (TypeError, RuntimeError):
        # bitwise and integer functions: the numbers in their own dtypes
        converted = [torch.tensor(a) if type(a) in _NUMBERS else a for a in head]
        try:
            out = fn(*converted, *args[arity:], **kwargs)
        except (TypeError, RuntimeError, AttributeError):
            return _UNKNOWN
    if not tensors and isinstance(out, torch.Tensor) and out.dim() == 0:
        return out.item()
    return out


def _elementwise_arity(fn) -> int:
    """1, 2 or 3 when fn(a[, b[, c]]) computes each element of its result from the same
    element of its inputs alone (checked on two elements, and on 0-d inputs); 0 otherwise.
    The probe runs without grad, warnings or random draws leaking out of it."""
    import warnings

    import gradcli.torch as torch
    from gradcli.engine import random as rnd

    saved = rnd.get_rng_state()  # a probe must not move the program's random stream
    probes = [torch.tensor([0.25, 0.5], dtype=torch.float64),
              torch.tensor([0.75, 0.125], dtype=torch.float64),
              torch.tensor([0.375, 0.625], dtype=torch.float64)]
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            for arity in (1, 2, 3):
                try:
                    if _same_elementwise(fn, probes[:arity], torch):
                        return arity
                except Exception:  # noqa: BLE001 - any failure means "not with this arity"
                    continue
            return 0
    finally:
        rnd.set_rng_state(saved)


def _same_elementwise(fn, inputs, torch) -> bool:
    whole = fn(*inputs)
    if not isinstance(whole, torch.Tensor) or tuple(whole.shape) != (2,):
        return False
    for i in range(2):
        alone = fn(*[t[i] for t in inputs])
        if not isinstance(alone, torch.Tensor) or alone.dim() != 0:
            return False
        a, b = whole[i].item(), alone.item()
        if not (a == b or (a != a and b != b)):
            return False
    return True


def bare_functions(namespace: dict) -> dict:
    """{name: bare function} for each plain function among a bare-name namespace's values
    (classes, dtypes, modules and Python's own builtins are left as they are)."""
    out = {}
    for name, value in namespace.items():
        if isinstance(value, types.FunctionType) and _from_facade(value):
            out[name] = bare_function(value, name)
    return out


def _from_facade(fn) -> bool:
    mod = getattr(fn, "__module__", "") or ""
    return mod.startswith("gradcli.engine") or mod.startswith("gradcli.torch")


def calculus_names(builtins: dict) -> dict:
    """What `gradcli grad` adds to a session's builtins: the constants, and the functions of
    torch.nn.functional and torch.special by bare name (the torch names and Python's
    builtins keep theirs)."""
    from gradcli.lang.runtime import facade_module, module_names

    out = dict(CONSTANTS)
    for dotted in ("torch.special", "torch.nn.functional"):
        try:
            mod = facade_module(dotted)
        except LookupError:
            continue
        extra = {}
        for name in sorted(module_names(mod)):
            if name in builtins or name in out or name.startswith("_"):
                continue
            value = getattr(mod, name, None)
            if value is not None:
                extra[name] = value
        out.update(extra)
        out.update(bare_functions(extra))
    return out


#: a name a calculus user types -> gradcli's (shown as a hint when the name is unbound)
ALIASES = {
    "ln": "log", "lg": "log10", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
    "arctan2": "atan2", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh",
    "arsinh": "asinh", "arcosh": "acosh", "artanh": "atanh", "power": "pow",
    "sqr": "square", "sgn": "sign", "fabs": "abs", "absolute": "abs", "PI": "pi", "Pi": "pi",
    "E": "e", "Inf": "inf", "infinity": "inf", "NaN": "nan", "NAN": "nan",
    "logistic": "sigmoid", "expit": "sigmoid", "heaviside_step": "heaviside",
}


def alias_hint(name: str, known) -> str | None:
    """'`ln` is written `log` here' when `name` is a common spelling of a known name."""
    target = ALIASES.get(name)
    if target is None or target not in known:
        return None
    return f"`{name}` is written `{target}` in gradcli (as in PyTorch)"
