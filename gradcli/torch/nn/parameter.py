"""nn.Parameter: a Tensor that a Module registers as one of its parameters.

It is a real subclass of the engine's Tensor (same slots, so every op reads it as a
tensor): ops on it return plain Tensors, as in PyTorch; only the way it prints and the
registration rule of Module.__setattr__ tell it apart.
"""

from __future__ import annotations

import weakref

from gradcli.engine.grad_mode import is_inference_mode_enabled
from gradcli.engine.inference import REQUIRES_GRAD_OUTSIDE
from gradcli.engine.tensor import Tensor, _init

__all__ = ["Buffer", "Parameter"]


def _share(cls, data: Tensor, requires_grad: bool):
    """A `cls` instance over data's storage and version counter, as a leaf."""
    if not isinstance(data, Tensor):
        raise TypeError(f"Parameter(): argument 'data' (position 1) must be Tensor, not "
                        f"{type(data).__name__}")
    if requires_grad and data._data.dtype.kind not in "fcV":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    if requires_grad and data.is_inference() and not is_inference_mode_enabled():
        raise RuntimeError(REQUIRES_GRAD_OUTSIDE)  # (it shares the inference counter)
    t = object.__new__(cls)
    _init(t, data._data, bool(requires_grad), None)
    t._vc = data._vc
    return t


class Parameter(Tensor):
    """A tensor that is a module's parameter: assigning one to a Module attribute
    registers it (plain tensors assigned there stay plain attributes)."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from gradcli.engine.ops.creation import empty

            data = empty(0)
        return _share(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass  # all done in __new__ (Tensor.__init__ is the legacy constructor)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__

    def __reduce_ex__(self, proto):  # pragma: no cover - deepcopy support only
        raise TypeError("gradcli Parameters cannot be pickled")

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result


Parameter.__module__ = "torch.nn.parameter"  # (type(p) prints as PyTorch's)


#: id(tensor) -> (weak reference, persistent) for the tensors nn.Buffer made: PyTorch marks
#: them with Python attributes, which a gradcli Tensor (slots only) has no room for
_BUFFERS: dict = {}


def buffer_persistence(value):
    """None for a tensor nn.Buffer did not make, else its persistent flag."""
    entry = _BUFFERS.get(id(value))
    if entry is None or entry[0]() is not value:
        return None
    return entry[1]


class _BufferMeta(type):
    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, Tensor) and buffer_persistence(instance) is not None


class Buffer(Tensor, metaclass=_BufferMeta):
    """nn.Buffer(t, persistent=True): a detached copy-free alias of t (keeping whether it
    requires grad) that registers itself as a buffer when assigned to a Module attribute
    (non-persistent ones stay out of state_dict). What it gives is a plain torch.Tensor,
    as in PyTorch."""

    __slots__ = ()

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from gradcli.engine.ops.creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise AttributeError(f"'{type(data).__name__}' object has no attribute 'detach'")
        t = data.detach().requires_grad_(data.requires_grad)
        key = id(t)
        _BUFFERS[key] = (weakref.ref(t, lambda _ref, key=key: _BUFFERS.pop(key, None)),
                         persistent)
        return t


Buffer.__module__ = "torch.nn.parameter"
