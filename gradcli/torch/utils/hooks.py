"""torch.utils.hooks: the type of the handle every register_*hook returns (scripts name it in
annotations and isinstance checks)."""

from __future__ import annotations

from gradcli.engine.node import RemovableHandle as _TensorHandle
from gradcli.torch.nn.modules.module import RemovableHandle as _ModuleHandle

__all__ = ["RemovableHandle"]


class _EitherHandle(type):
    """PyTorch has one handle class; gradcli's tensor hooks and module hooks keep their
    hooks differently, so each has its own: an instance of either is a RemovableHandle."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, (_TensorHandle, _ModuleHandle))

    def __subclasscheck__(cls, sub) -> bool:
        return issubclass(sub, (_TensorHandle, _ModuleHandle))


class RemovableHandle(metaclass=_EitherHandle):
    """What Tensor.register_hook and Module.register_*_hook return: `.remove()` takes the
    hook out again, and `with handle:` removes it on leaving the block."""

    __module__ = "torch.utils.hooks"

    def __new__(cls, *args, **kwargs):
        raise TypeError("torch.utils.hooks.RemovableHandle is made by the register_*hook "
                        "methods in gradcli")
