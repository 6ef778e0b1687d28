"""The autograd profiler's recorder: which ops ran, for how long, nested how.

PyTorch's profiler sees every ATen call through its dispatcher. gradcli has no
dispatcher on its hot path, and adds none: while a profile is active (and only then)
every function of the PUBLIC registry is swapped, where the facade modules, the
Tensor class and its defining module hold it, for a wrapper that records an event
named as PyTorch names the op ("aten::mul" for `x * 2` and `torch.mul`,
"aten::linear" for `F.linear`); leaving the profile puts the originals back. Code
that never profiles pays nothing. Calls nested inside a recorded call (linear's
matmul, a backward formula's mul) are recorded as its children, as ATen's are.

Events are plain lists `[name, start_ns, end_ns, input_shapes, thread, parent]`
(parent: index of the enclosing event or -1); gradcli.torch.autograd.profiler turns
them into PyTorch's FunctionEvent objects. `record_function` ranges go through
`enter_range` / `exit_range`. The backward engine reports its nodes through the
`NODE_HOOK` slot of engine/autograd.py, filled while a profile records.
"""

from __future__ import annotations

import sys
import threading
import time
import types

#: the Recorder collecting events now, or None (one profile at a time)
ACTIVE: list = [None]

_perf_ns = time.perf_counter_ns

# Tensor operators -> the ATen op PyTorch's profiler names for them
_DUNDER_OPS = {
    "add": "add", "radd": "add", "iadd": "add_", "sub": "sub", "rsub": "rsub", "isub": "sub_",
    "mul": "mul", "rmul": "mul", "imul": "mul_", "truediv": "div", "rtruediv": "reciprocal",
    "itruediv": "div_", "rdiv": "reciprocal", "floordiv": "floor_divide",
    "rfloordiv": "floor_divide", "ifloordiv": "floor_divide_", "mod": "remainder",
    "rmod": "remainder", "imod": "remainder_", "pow": "pow", "rpow": "pow", "ipow": "pow_",
    "matmul": "matmul", "rmatmul": "matmul", "neg": "neg", "abs": "abs", "invert": "bitwise_not",
    "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",
    "and": "__and__", "or": "__or__", "xor": "__xor__", "rand": "__and__", "ror": "__or__",
    "rxor": "__xor__", "iand": "__iand__", "ior": "__ior__", "ixor": "__ixor__",
    "lshift": "__lshift__", "rshift": "__rshift__", "rlshift": "__lshift__",
    "rrshift": "__rshift__", "ilshift": "__ilshift__", "irshift": "__irshift__",
    "setitem": "copy_",
}
# never wrapped: they return the tensor itself or are not ops
_SKIP = frozenset({"Tensor.__pos__", "Tensor.__getitem__"})


class Recorder:
    """The events of one profile, and the stack of calls open right now."""

    def __init__(self, record_shapes: bool):
        self.record_shapes = record_shapes
        self.events: list = []
        self.open: list = []  # indices into events of the calls not yet returned
        self.thread = threading.get_ident()

    def enter(self, name: str, args=(), kwargs=None, fn=None) -> int:
        shapes = _shapes_of(_bound(fn, args, kwargs)) if self.record_shapes else []
        parent = self.open[-1] if self.open else -1
        index = len(self.events)
        self.events.append([name, _perf_ns(), 0, shapes, self.thread, parent])
        self.open.append(index)
        return index

    def exit(self, index: int) -> None:
        self.events[index][2] = _perf_ns()
        # a range closed out of order (record_function exited inside another) is taken
        # off wherever it is, as PyTorch tolerates
        if self.open and self.open[-1] == index:
            self.open.pop()
        elif index in self.open:
            self.open.remove(index)


_SIGNATURES: dict = {}


def _bound(fn, args, kwargs) -> tuple:
    """Every argument of the call, defaults included (PyTorch's input_shapes lists each
    argument of the op's schema: `linear(x, w)` has [] for its bias)."""
    if fn is None:
        return args
    sig = _SIGNATURES.get(fn)
    if sig is None:
        import inspect

        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            sig = False
        _SIGNATURES[fn] = sig
    if sig is False:
        return args
    try:
        bound = sig.bind(*args, **(kwargs or {}))
    except TypeError:
        return args
    bound.apply_defaults()
    out = []
    for param in sig.parameters.values():
        value = bound.arguments.get(param.name)
        if param.kind is param.VAR_POSITIONAL:
            out += list(value or ())
        elif param.kind is not param.VAR_KEYWORD:
            out.append(value)
    return tuple(out)


def _shapes_of(args) -> list:
    """PyTorch's record_shapes view of the arguments: a tensor's sizes, [] for the rest."""
    from .tensor import Tensor

    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(list(a._data.shape))
        elif isinstance(a, (list, tuple)) and a and all(isinstance(x, Tensor) for x in a):
            out.append([list(x._data.shape) for x in a])  # (PyTorch: a TensorList's sizes)
        else:
            out.append([])
    return out


def aten_name(public_name: str) -> str:
    """"Tensor.__rmul__" -> "aten::mul", "torch.nn.functional.linear" -> "aten::linear",
    "torch.linalg.inv" -> "aten::linalg_inv", "torch.special.expit" -> "aten::special_expit"."""
    head, _, short = public_name.rpartition(".")
    if short.startswith("__") and short.endswith("__"):
        short = _DUNDER_OPS.get(short[2:-2], short)
    elif head in ("torch.linalg", "torch.special"):
        short = head[6:] + "_" + short
    return "aten::" + short


def _wrapper(fn, name: str):
    def recorded(*args, **kwargs):
        rec = ACTIVE[0]
        if rec is None or threading.get_ident() != rec.thread:
            return fn(*args, **kwargs)
        index = rec.enter(name, args, kwargs, fn)
        try:
            return fn(*args, **kwargs)
        finally:
            rec.exit(index)

    recorded.__name__ = getattr(fn, "__name__", name)
    recorded.__qualname__ = getattr(fn, "__qualname__", name)
    recorded.__doc__ = getattr(fn, "__doc__", None)
    recorded._profiled = fn
    return recorded


# (owner, attribute, original) of every slot swapped while a profile records
_SWAPPED: list = []


def _owners(public_name: str):
    """Where the facade installs `public_name`: the Tensor class or a facade module."""
    head, _, short = public_name.rpartition(".")
    if head == "Tensor":
        from .tensor import Tensor

        return [(Tensor, short)]
    mod = sys.modules.get("gradcli." + head)
    return [(mod, short)] if mod is not None else []


_FACADES = ("torch", "torch.nn.functional", "torch.linalg", "torch.special")


def _install() -> None:
    from .ops.registry import PUBLIC

    names_of: dict = {}

    def add(pname, fn):
        if isinstance(fn, types.FunctionType) and pname not in _SKIP:
            names_of.setdefault(id(fn), (fn, []))[1].append(pname)
            # the function an argument-check wrapper calls: engine code (nn.Linear) calls
            # it directly, through its defining module's slot
            inner = getattr(fn, "_without_out", None)
            if inner is not None:
                add(pname, inner)

    for pname, fn in PUBLIC.items():
        add(pname, fn)
    for path in _FACADES:  # names a facade imports from the op modules directly
        mod = sys.modules.get("gradcli." + path)
        for attr, fn in list(vars(mod).items()) if mod is not None else ():
            if not attr.startswith("_") and \
                    (getattr(fn, "__module__", None) or "").startswith("gradcli.engine.ops"):
                add(path + "." + attr, fn)
    for fn, pnames in names_of.values():
        # the defining module's own slot (F.linear reached as `nn.linear` inside the engine)
        # is named after the function's torch.* spelling where it has one
        first = sorted(pnames, key=lambda n: (not n.startswith("torch."), n.startswith("Tensor.__"),
                                              len(n)))[0]
        slots = []
        for pname in dict.fromkeys(pnames):
            slots += [(owner, attr, aten_name(pname)) for owner, attr in _owners(pname)]
        home = sys.modules.get(getattr(fn, "__module__", "") or "")
        if home is not None and getattr(fn, "__name__", "") and home.__dict__.get(fn.__name__) is fn:
            slots.append((home, fn.__name__, aten_name(first)))
        for owner, attr, name in slots:
            if owner.__dict__.get(attr) is fn:
                _SWAPPED.append((owner, attr, fn))
                setattr(owner, attr, _wrapper(fn, name))


def _uninstall() -> None:
    while _SWAPPED:
        owner, attr, fn = _SWAPPED.pop()
        setattr(owner, attr, fn)


def start(record_shapes: bool = False) -> Recorder:
    """Begin recording. A profile opened inside another takes the recording over (the
    outer one records nothing more), as PyTorch's one profiler session per process."""
    rec = Recorder(record_shapes)
    if ACTIVE[0] is not None:
        stop(ACTIVE[0])
    _install()
    from . import autograd

    autograd.NODE_HOOK[0] = _node_range
    ACTIVE[0] = rec
    return rec


def stop(rec: Recorder) -> None:
    """Stop recording into `rec` (its open ranges end now); nothing if it is not the one
    recording."""
    if ACTIVE[0] is not rec:
        return
    ACTIVE[0] = None
    from . import autograd

    autograd.NODE_HOOK[0] = None
    _uninstall()
    now = _perf_ns()
    for index in rec.open:
        rec.events[index][2] = now
    rec.open.clear()


def enabled() -> bool:
    return ACTIVE[0] is not None


class _NodeRange:
    """The two events PyTorch records for a backward node: the engine's
    "autograd::engine::evaluate_function: MulBackward0" around the node's own
    "MulBackward0" (AccumulateGrad is "torch::autograd::AccumulateGrad")."""

    __slots__ = ("rec", "outer", "inner")

    def __init__(self, rec: Recorder, node):
        name = type(node).__name__
        if name == "AccumulateGrad":
            name = "torch::autograd::AccumulateGrad"
        self.rec = rec
        self.outer = rec.enter("autograd::engine::evaluate_function: " + name)
        self.inner = rec.enter(name)

    def close(self) -> None:
        self.rec.exit(self.inner)
        self.rec.exit(self.outer)


def _node_range(node):
    """NODE_HOOK: called by the backward loop before a node runs; returns what to close."""
    rec = ACTIVE[0]
    if rec is None or threading.get_ident() != rec.thread:
        return None
    return _NodeRange(rec, node)


def enter_range(name: str):
    """record_function's start: an event around whatever runs until exit_range; the
    handle is (recorder, event index), None when no profile records."""
    rec = ACTIVE[0]
    if rec is None:
        return None
    return (rec, rec.enter(name))


def exit_range(handle) -> None:
    if handle is not None:
        rec, index = handle
        if rec.events[index][2] == 0:
            rec.exit(index)
