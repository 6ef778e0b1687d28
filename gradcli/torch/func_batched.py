"""Which tensors vmap's function sees as batched, so that reading one's value raises as
PyTorch's BatchedTensor does.

gradcli's vmap calls the function once per slice, so a slice is a plain tensor whose
.item() would just work; PyTorch's vmap runs the function once over the whole batch and
refuses to turn a batched value into a Python number (.item(), float(), int(), an index),
a truth value (`if t > 0:`) or host memory (.tolist(), .numpy()). Here each slice is
marked, every op's result is marked when one of its inputs is (through the op hook that
forward AD uses, forward_ad.set_op_watcher), and while a vmap runs those Tensor methods
check the mark. A tensor made without a batched input (torch.tensor(2.0)) stays unbatched
and converts as PyTorch's does.
"""

from __future__ import annotations

import sys
import weakref

from gradcli.engine import forward_ad as _fwad
from gradcli.engine.tensor import Tensor

ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
        "calling .item() on a Tensor, please try to rewrite what you're doing with other "
        "operations. If error is occurring somewhere inside PyTorch internals, please file a "
        "bug report.")
CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent "
                "control flow. We don't support that yet, please file an issue at "
                "https://github.com/pytorch/pytorch/issues .")
# a grad/jvp transform between the vmap and the tensor: PyTorch cannot tell which it was
EITHER = ("vmap: It looks like you're either (1) calling .item() on a Tensor or (2) attempting "
          "to use a Tensor in some data-dependent control flow or (3) encountering this error "
          "in PyTorch internals. For (1): we don't support vmap over calling .item() on a "
          "Tensor, please try to rewrite what you're doing with other operations. For (2): we "
          "don't support data-dependent control flow in vmap yet, please file an issue at "
          "https://github.com/pytorch/pytorch/issues . For (3): please file an issue.")
INPLACE = ("vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
           "Tensor `other` in extra_args that has more elements than `self`. This happened due "
           "to `other` being vmapped over but `self` not being vmapped over in a vmap. Please "
           "try to use out-of-place operators instead of inplace arithmetic. If said operator "
           "is being called inside the PyTorch framework, please file a bug report instead.")
NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"

# id(tensor) -> (weak reference to it, the token of the vmap call that batched it)
_MARKS: dict = {}
# tokens of the running vmap calls (outermost first)
_ACTIVE: list = []
# the running transforms, innermost last: "vmap" or "other" (grad, vjp, jvp, jacrev...)
KINDS: list = []


def is_batched(t) -> bool:
    entry = _MARKS.get(id(t))
    return entry is not None and entry[1] in _ACTIVE and entry[0]() is t


def mark(t: Tensor, token=None) -> None:
    key = id(t)

    def forget(ref, key=key):
        entry = _MARKS.get(key)
        if entry is not None and entry[0] is ref:
            del _MARKS[key]

    _MARKS[key] = (weakref.ref(t, forget), _ACTIVE[-1] if token is None else token)


def carry(source, target) -> None:
    """target (a transform's copy of source) is batched as source is."""
    entry = _MARKS.get(id(source))
    if entry is not None and entry[1] in _ACTIVE and entry[0]() is source:
        mark(target, entry[1])


def _watch(op, inputs, meta, res):
    """The op hook while a vmap runs: a result with a batched input is batched (at the
    innermost level among its inputs), then forward AD's tangent hook if one is set."""
    marks = _MARKS
    token = None
    for x in inputs:
        entry = marks.get(id(x))
        if entry is not None and entry[0]() is x and entry[1] in _ACTIVE:
            if token is None or _ACTIVE.index(entry[1]) > _ACTIVE.index(token):
                token = entry[1]
    if token is not None and isinstance(res, Tensor):
        mark(res, token)
    tangent_hook = _fwad.TANGENT_HOOK[0]
    if tangent_hook is not None:
        tangent_hook(op, inputs, meta, res)


def _depth(t) -> int:
    """How deep the vmap that batched t is (0: t is not batched)."""
    entry = _MARKS.get(id(t))
    if entry is None or entry[0]() is not t or entry[1] not in _ACTIVE:
        return 0
    return _ACTIVE.index(entry[1]) + 1


def _called_by_user(levels: int = 5) -> bool:
    """Whether the in-place op was called by code outside gradcli: one of the few frames
    above the hook (the Tensor method, its op wrapper) is not gradcli's. gradcli's own
    formulas write batched values into buffers they made (unmarked), which is no error."""
    frame = sys._getframe(2)
    for _ in range(levels):
        if frame is None:
            return False
        name = frame.f_globals.get("__name__", "")
        if not (name == "gradcli" or name.startswith("gradcli.")):
            return True
        frame = frame.f_back
    return False


def _watch_inplace(target, compute):
    """tensor.py's in-place hook while a vmap runs: writing a value batched deeper than the
    tensor written into is refused (PyTorch's text); then forward AD's hook if any."""
    tangent_hook = _fwad.INPLACE_TANGENT_HOOK[0]
    inner = compute if tangent_hook is None else tangent_hook(target, compute)
    if not _called_by_user():
        return inner

    def checked(old, *others):
        mine = _depth(target)
        if any(_depth(o) > mine for o in others):
            raise RuntimeError(INPLACE)
        result = inner(old, *others)
        if _depth(result) > mine:  # (an operand the op's closure holds was batched)
            raise RuntimeError(INPLACE)
        return result

    return checked


def _refusing(name: str, original, message):
    def method(self, *args, **kwargs):
        if is_batched(self):
            raise RuntimeError(message() if callable(message) else message)
        return original(self, *args, **kwargs)

    method.__name__ = name
    method.__qualname__ = "Tensor." + name
    method.__doc__ = original.__doc__
    return method


def _number_message() -> str:
    return ITEM if KINDS and KINDS[-1] == "vmap" else EITHER


def _truth_message() -> str:
    return CONTROL_FLOW if KINDS and KINDS[-1] == "vmap" else EITHER


_REFUSED = {"item": _number_message, "__float__": _number_message, "__int__": _number_message,
            "__index__": _number_message, "__bool__": _truth_message,
            "tolist": NO_STORAGE, "numpy": NO_STORAGE}
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
_TORCH_ORIGINALS: dict = {}


def _innermost_token(args, kwargs):
    token = None
    for x in (*args, *kwargs.values()):
        for leaf in (x if isinstance(x, (tuple, list)) else (x,)):
            entry = _MARKS.get(id(leaf))
            if entry is not None and entry[0]() is leaf and entry[1] in _ACTIVE and (
                    token is None or _ACTIVE.index(entry[1]) > _ACTIVE.index(token)):
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


def _index_method(original):
    def __index__(self):  # noqa: N807
        if is_batched(self) and self._data.dtype.kind in "iub":
            raise RuntimeError(_number_message())
        return original(self)

    return __index__


def _wrapped(name, original):
    refusal = _REFUSED_OPS.get(name)
    return _marking(original) if refusal is None else _refusing_op(original, refusal)


class Tracking:
    """Within: one vmap call's function runs; `mark(t)` marks its slices batched."""

    __slots__ = ("token",)

    def __enter__(self):
        self.token = object()
        if not _ACTIVE:
            for name, message in _REFUSED.items():
                original = Tensor.__dict__.get(name) or getattr(Tensor, name)
                _ORIGINALS[name] = (name in Tensor.__dict__, original)
                refusing = (_index_method(original) if name == "__index__"
                            else _refusing(name, original, message))
                setattr(Tensor, name, refusing)
            # (a name in two of the lists, such as where, is wrapped once: wrapping it again
            # would record the first wrapper as the original, left installed after the vmap)
            for name in dict.fromkeys((*_MARKING, *_MARKING_METHODS, *_MARKING_DUNDERS,
                                       *_REFUSED_OPS)):
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
        _ACTIVE.append(self.token)
        KINDS.append("vmap")
        return self

    def mark(self, t) -> None:
        if isinstance(t, Tensor):
            mark(t, self.token)

    def __exit__(self, *exc):
        KINDS.pop()
        _ACTIVE.remove(self.token)
        if not _ACTIVE:
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
            _MARKS.clear()
