"""Which tensors vmap's function sees as batched, so that reading one's value raises as
PyTorch's BatchedTensor does.

gradcli's vmap calls the function once per slice, so a slice is a plain tensor whose
.item() would just work; PyTorch's vmap runs the function once over the whole batch and
refuses to turn a batched value into a Python number (.item(), float(), int(), an index),
a truth value (`if t > 0:`) or host memory (.tolist(), .numpy()). Here each slice is
marked, every op's result is marked when one of its inputs is (through the op hook that
forward AD uses, forward_ad.set_op_watcher), and the Tensor methods concerned ask
func_guards.guard, which checks the mark. A tensor made without a batched input
(torch.tensor(2.0)) stays unbatched and converts as PyTorch's does.

The marks, like the running vmap calls, belong to the calling thread (func_guards.STATE).
What is process-wide while any thread runs a vmap is only how results get marked: the op
and in-place hooks, and the few functions computed without the op table (comparisons,
logical ops, predicates, index results), whose Tensor methods and torch functions are
wrapped to mark what they return; each looks at the calling thread's state, so another
thread's calls compute exactly what they would without the vmap.
"""

from __future__ import annotations

import sys
import threading
import weakref

from gradcli.engine import forward_ad as _fwad
from gradcli.engine.tensor import Tensor

from . import func_guards as _guards
from .func_guards import CONTROL_FLOW, EITHER, ITEM, NO_STORAGE, STATE, depth, is_batched  # noqa: F401

INPLACE = ("vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
           "Tensor `other` in extra_args that has more elements than `self`. This happened due "
           "to `other` being vmapped over but `self` not being vmapped over in a vmap. Please "
           "try to use out-of-place operators instead of inplace arithmetic. If said operator "
           "is being called inside the PyTorch framework, please file a bug report instead.")
# threads inside a vmap now: the marking hooks and wrappers are installed while not 0
_VMAP_THREADS = [0]
_LOCK = threading.Lock()


def mark(t: Tensor, token=None) -> None:
    """t is batched by the calling thread's vmap call `token` (its innermost by default)."""
    state = STATE
    marks = state.marks
    key = id(t)

    def forget(ref, key=key, marks=marks):
        entry = marks.get(key)
        if entry is not None and entry[0] is ref:
            del marks[key]

    marks[key] = (weakref.ref(t, forget), state.vmaps[-1] if token is None else token)


def carry(source, target) -> None:
    """target (a transform's copy of source) is batched as source is."""
    state = STATE
    entry = state.marks.get(id(source))
    if entry is not None and entry[1] in state.vmaps and entry[0]() is source:
        mark(target, entry[1])


def _watch(op, inputs, meta, res):
    """The op hook while a vmap runs (in any thread): a result with an input batched by the
    calling thread's vmap is batched (at the innermost level among its inputs), then
    forward AD's tangent hook if one is set."""
    state = STATE
    vmaps = state.vmaps
    if vmaps:
        marks = state.marks
        token = None
        for x in inputs:
            entry = marks.get(id(x))
            if entry is not None and entry[0]() is x and entry[1] in vmaps:
                if token is None or vmaps.index(entry[1]) > vmaps.index(token):
                    token = entry[1]
        if token is not None and isinstance(res, Tensor):
            mark(res, token)
    tangent_hook = _fwad.TANGENT_HOOK[0]
    if tangent_hook is not None:
        tangent_hook(op, inputs, meta, res)


_depth = depth  # (func_randomness's name)


def _called_by_user(levels: int = 5) -> bool:
    """Whether the in-place op was called by the user's code: one of the few frames above
    the hook (the Tensor method, its op wrapper) is neither the engine's nor the facade's.
    gradcli's own formulas write batched values into buffers they made (unmarked), which is
    no error; a .grad program's code (gradcli.lang) is the user's."""
    frame = sys._getframe(2)
    for _ in range(levels):
        if frame is None:
            return False
        name = frame.f_globals.get("__name__", "")
        if not name.startswith(("gradcli.engine", "gradcli.torch")):
            return True
        frame = frame.f_back
    return False


def _watch_inplace(target, compute):
    """tensor.py's in-place hook while a vmap runs (in any thread): writing a value batched
    deeper by the calling thread's vmap than the tensor written into is refused (PyTorch's
    text); then forward AD's hook if any."""
    tangent_hook = _fwad.INPLACE_TANGENT_HOOK[0]
    inner = compute if tangent_hook is None else tangent_hook(target, compute)
    if not STATE.vmaps or not _called_by_user():
        return inner

    def checked(old, *others):
        mine = depth(target)
        if any(depth(o) > mine for o in others):
            raise RuntimeError(INPLACE)
        result = inner(old, *others)
        if depth(result) > mine:  # (an operand the op's closure holds was batched)
            raise RuntimeError(INPLACE)
        return result

    return checked


# name -> (whether Tensor's own dict held it, the original) of the wrapped Tensor methods
_ORIGINALS: dict = {}
# ops computed without the op table (comparisons, logical ops, predicates, index results):
# while a vmap runs, their Tensor methods and torch functions mark what they return
_MARKING = ("all", "any", "argmax", "argmin", "argsort", "argwhere", "count_nonzero", "detach",
            "eq", "ge", "greater", "greater_equal", "gt", "histc", "isclose", "isfinite",
            "isinf", "isnan", "isneginf", "isposinf", "isreal", "le", "less", "less_equal",
            "logdet", "logical_and", "logical_not", "logical_or", "logical_xor", "lt",
            "matrix_power", "ne", "not_equal", "signbit", "where", "empty_like", "zeros_like",
            "ones_like", "full_like", "rand_like", "randn_like", "randint_like")
_DYNAMIC = ("vmap: We do not support batching operators that can output dynamic shape. "
            "Attempted to vmap over aten::{}. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues if you need this feature.")
_NO_RULE = "Batching rule not implemented for aten::{}. We could not generate a fallback."


def _nonzero_refusal(args, kwargs):
    return _NO_RULE.format("nonzero_numpy") if kwargs.get("as_tuple") else _DYNAMIC.format("nonzero")


def _where_refusal(args, kwargs):
    return _DYNAMIC.format("where") if len(args) + len(kwargs) == 1 else None


def _masked_select_refusal(args, kwargs):
    mask = args[1] if len(args) > 1 else kwargs.get("mask")
    if not is_batched(mask):
        return None
    return ("vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot "
            "support this because for each batch this would return a differently shaped Tensor. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues if you need this "
            "feature.")


# ops whose result's shape depends on the values (or that return a Python bool): PyTorch's
# vmap refuses them on a batched input
_REFUSED_OPS = {
    "nonzero": _nonzero_refusal, "where": _where_refusal,
    "unique": lambda a, k: _DYNAMIC.format("_unique2"),
    "unique_consecutive": lambda a, k: _DYNAMIC.format("unique_consecutive"),
    "masked_select": _masked_select_refusal, "equal": lambda a, k: _NO_RULE.format("equal"),
}


def _refusing_op(original, refusal):
    marking = _marking(original)

    def fn(*args, **kwargs):
        if _innermost_token(args, kwargs) is not None:
            message = refusal(args, kwargs)
            if message is not None:
                raise RuntimeError(message)
        return marking(*args, **kwargs)

    fn.__name__ = getattr(original, "__name__", "fn")
    fn.__qualname__ = getattr(original, "__qualname__", fn.__name__)
    fn.__doc__ = getattr(original, "__doc__", None)
    return fn


# (Tensor methods only: a new tensor of a batched one is batched, as PyTorch's)
_MARKING_METHODS = ("new_empty", "new_zeros", "new_ones", "new_full")
_MARKING_DUNDERS = ("__gt__", "__lt__", "__ge__", "__le__", "__eq__", "__ne__", "__and__",
                    "__or__", "__xor__", "__invert__", "__rand__", "__ror__", "__rxor__")
# name -> the original, of the wrapped torch functions
_TORCH_ORIGINALS: dict = {}


def _innermost_token(args, kwargs):
    """The calling thread's innermost vmap call batching one of the arguments (or None)."""
    state = STATE
    vmaps = state.vmaps
    if not vmaps:
        return None  # (another thread's vmap: its wrappers change nothing here)
    marks = state.marks
    token = None
    for x in (*args, *kwargs.values()):
        for leaf in (x if isinstance(x, (tuple, list)) else (x,)):
            entry = marks.get(id(leaf))
            if entry is not None and entry[0]() is leaf and entry[1] in vmaps and (
                    token is None or vmaps.index(entry[1]) > vmaps.index(token)):
                token = entry[1]
    return token


def _marking(original):
    def fn(*args, **kwargs):
        res = original(*args, **kwargs)
        token = _innermost_token(args, kwargs)
        if token is not None:
            for leaf in (res if isinstance(res, tuple) else (res,)):
                if isinstance(leaf, Tensor):
                    mark(leaf, token)
        return res

    fn.__name__ = getattr(original, "__name__", "fn")
    fn.__qualname__ = getattr(original, "__qualname__", fn.__name__)
    fn.__doc__ = getattr(original, "__doc__", None)
    return fn


def _wrapped(name, original):
    refusal = _REFUSED_OPS.get(name)
    return _marking(original) if refusal is None else _refusing_op(original, refusal)


def _install() -> None:
    """The first thread entered a vmap: the marking hooks and wrappers go in."""
    # (a name in two of the lists, such as where, is wrapped once: wrapping it again would
    # record the first wrapper as the original, left installed after the vmap)
    for name in dict.fromkeys((*_MARKING, *_MARKING_METHODS, *_MARKING_DUNDERS, *_REFUSED_OPS)):
        original = Tensor.__dict__.get(name)
        if original is None:
            original = getattr(Tensor, name, None)
            if original is None:
                continue
            _ORIGINALS[name] = (False, original)
        else:
            _ORIGINALS[name] = (True, original)
        setattr(Tensor, name, _wrapped(name, original))
    import gradcli.torch as torch_facade

    for name in dict.fromkeys((*_MARKING, *_REFUSED_OPS)):
        original = torch_facade.__dict__.get(name)
        if callable(original):
            _TORCH_ORIGINALS[name] = original
            setattr(torch_facade, name, _wrapped(name, original))
    _fwad.set_op_watcher(_watch)
    _fwad.set_inplace_watcher(_watch_inplace)


def _uninstall() -> None:
    """The last thread left its vmap: every Tensor attribute and torch function is back."""
    _fwad.set_op_watcher(None)
    _fwad.set_inplace_watcher(None)
    for name, (own, original) in _ORIGINALS.items():
        if own:
            setattr(Tensor, name, original)
        else:
            delattr(Tensor, name)
    _ORIGINALS.clear()
    import gradcli.torch as torch_facade

    for name, original in _TORCH_ORIGINALS.items():
        setattr(torch_facade, name, original)
    _TORCH_ORIGINALS.clear()


class Tracking:
    """Within: one vmap call's function runs on the calling thread; `mark(t)` marks its
    slices batched."""

    __slots__ = ("token",)

    def __enter__(self):
        self.token = object()
        state = STATE
        if not state.vmaps:
            with _LOCK:
                _VMAP_THREADS[0] += 1
                if _VMAP_THREADS[0] == 1:
                    _install()
        state.vmaps.append(self.token)
        _guards.push("vmap")
        return self

    def mark(self, t) -> None:
        if isinstance(t, Tensor):
            mark(t, self.token)

    def __exit__(self, *exc):
        state = STATE
        _guards.pop()
        state.vmaps.remove(self.token)
        if not state.vmaps:
            state.marks.clear()
            with _LOCK:
                _VMAP_THREADS[0] -= 1
                if not _VMAP_THREADS[0]:
                    _uninstall()
