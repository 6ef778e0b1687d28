"""A grad_fn's saved values as PyTorch exposes them: `_saved_<name>` (the value, unpacked)
and `_raw_saved_<name>` (a SavedTensor handle whose `register_hooks(pack, unpack)` packs
that one saved tensor, as saved_tensors_hooks does for every tensor an op saves).

Reached through the `node.SavedValue` descriptors installed on Node below (one per name
PyTorch uses), so only those reads pay for it: nothing here is on the op or backward path. A node stores its saved inputs in `saved` (tensors or Python
operands, in the op's argument order), its saved output as `saved_result` (buffer, version
counter), a custom Function's in `__dict__["_saved"]`; a hooked entry becomes a
`saved_hooks._Packed`, which the engine already unpacks around backward.
"""

from __future__ import annotations

import numpy as np

from . import node as node_module
from . import saved_hooks
from .grad_mode import GRAD_MODE
from .node import SECOND_BACKWARD
from .tensor import Tensor, make

#: the name PyTorch gives a node's second saved input (its first is always ``self``)
SECOND_SAVED = {"Pow": "exponent", "Mm": "mat2", "Bmm": "mat2", "Mv": "vec", "Dot": "tensor",
                "Atan2": "other"}

_SIGNATURE = ("register_hooks(): incompatible function arguments. The following argument types "
              "are supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: "
              "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\nInvoked with: ")


class SavedTensor:
    """One saved slot of one node (PyTorch's torch._C._autograd.SavedTensor). The same
    handle is returned on every read of `_raw_saved_x`; the user cannot make one."""

    __slots__ = ("_node", "_slot")

    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")

    def __repr__(self) -> str:
        return f"<torch._C._autograd.SavedTensor object at {id(self):#x}>"

    def register_hooks(self, *args, **kwargs):
        if kwargs or len(args) != 2 or not all(callable(a) for a in args):
            shown = ", ".join([repr(self)] + [repr(a) for a in args]
                              + [f"{k}={v!r}" for k, v in kwargs.items()])
            raise TypeError(_SIGNATURE + shown)
        pack, unpack = args
        node, slot = self._node, self._slot
        if node.freed or node.__dict__.get("_released"):
            raise RuntimeError(SECOND_BACKWARD)
        if isinstance(slot, tuple):  # a custom Function's i-th saved tensor
            entries = node.__dict__["_saved"]
            entry = entries[slot[1]]
            if entry is None:
                raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
            t, version, output_nr = entry
            if version is None:
                raise _already_set()
            if output_nr is not None:
                data, vc = t
                t = make(data, True, node)
                t._vc = vc
                t._output_nr = output_nr
            entries[slot[1]] = (_pack(t, pack, unpack), None, None)
            return None
        if slot == "result":
            saved = node.saved_result
            if saved[0] is saved_hooks.PACKED:
                raise _already_set()
            t = make(saved[0], True, node)
            t._vc = saved[1]
            node.saved_result = (saved_hooks.PACKED, _pack(t, pack, unpack))
        else:
            entry = node.saved[slot]
            if entry is None:
                raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
            if type(entry) is saved_hooks._Packed:
                raise _already_set()
            packed = _pack(entry, pack, unpack)
            node.saved = node.saved[:slot] + (packed,) + node.saved[slot + 1:]
        node.packed = True
        return None


SavedTensor.__module__ = "torch._C._autograd"


def _pack(t: Tensor, pack, unpack):
    """Pack one saved tensor now, with grad mode off as PyTorch calls the pack hook here."""
    prev = GRAD_MODE.enabled
    GRAD_MODE.enabled = False
    try:
        return saved_hooks._Packed(t, pack, unpack)
    finally:
        GRAD_MODE.enabled = prev


def _already_set() -> RuntimeError:
    return RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been "
                        "set. Hint: only one pair of hooks is allowed at a time.")


def _handle(node, slot) -> SavedTensor:
    """The node's one SavedTensor for `slot` (made on first read)."""
    handles = node.__dict__.setdefault("_saved_handles", {})
    h = handles.get(slot)
    if h is None:
        h = object.__new__(SavedTensor)
        h._node = node
        h._slot = slot
        handles[slot] = h
    return h


def _custom_saved(node, raw: bool):
    d = node.__dict__
    entries = d.get("_saved")
    if entries is None:
        if d.get("_released"):
            raise RuntimeError(SECOND_BACKWARD)
        return ()
    if not raw:
        return node.saved_tensors
    return tuple(_handle(node, ("custom", i)) for i in range(len(entries)))


def saved_attr(node, name: str):
    """`node._saved_<key>` / `node._raw_saved_<key>`, or AttributeError as PyTorch's."""
    raw = name.startswith("_raw_saved_")
    key = name[len("_raw_saved_"):] if raw else name[len("_saved_"):]
    kind = type(node).__name__
    missing = AttributeError(f"'{kind}' object has no attribute '{name}'")
    if node.custom:
        if key != "tensors":
            raise missing
        return _custom_saved(node, raw)
    base = kind.rstrip("0123456789")
    base = base[:-len("Backward")] if base.endswith("Backward") else base
    freed = node.freed
    if key == "result":
        saved = node.saved_result
        if saved is None:
            if freed:
                raise RuntimeError(SECOND_BACKWARD)
            raise missing
        return _handle(node, "result") if raw else node.result
    if key == "alpha" and base in ("Add", "Sub") and not raw:
        return 1
    names = ("self", SECOND_SAVED.get(base, "other"))
    saved = node.saved
    if key not in names or (saved is None and not freed):
        raise missing
    i = names.index(key)
    if saved is None or i >= len(saved):
        meta = node.meta or ()
        if base != "Pow" or raw or i != 1 or not meta or type(meta[0]) not in (int, float):
            if saved is None:  # freed: a Python operand survives, a tensor is gone
                raise RuntimeError(SECOND_BACKWARD)
            raise missing
        # a Python exponent lives in the node's meta (PyTorch keeps the Scalar; an integral
        # one is most often written as an int: x ** 2)
        v = meta[0]
        return int(v) if type(v) is float and v.is_integer() else v
    value = saved[i]
    if type(value) in (int, float, bool):
        if raw:
            raise missing
        # (PyTorch saves a Python operand as a wrapped 0-d tensor: int64 or float64)
        return make(np.asarray(value, dtype=np.float64 if type(value) is float else None))
    if raw:
        return _handle(node, i)
    if type(value) is saved_hooks._Packed:
        return value.tensor()
    if value is None and not raw:
        return None  # an operand the formula needed not keep (x * 3 keeps no self): None
    if not isinstance(value, Tensor):
        raise missing
    return value


node_module.ABOVE.install(saved_attr=saved_attr)
# every key saved_attr can answer: a node's first input, its second under each of
# PyTorch's names, its output, add/sub's alpha and a custom Function's tensors (another
# name is an ordinary missing attribute, with Python's own message, the same as PyTorch's)
for _key in dict.fromkeys(("self", "other", "result", "alpha", "tensors", *SECOND_SAVED.values())):
    for _name in (f"_saved_{_key}", f"_raw_saved_{_key}"):
        setattr(node_module.Node, _name, node_module.SavedValue(_name))
