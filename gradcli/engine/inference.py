"""Inference tensors (PyTorch's): a tensor made inside torch.inference_mode() carries no
version counter and may never join a recorded graph. Here the mark is the counter itself:
such a tensor's `_vc` is an `InferenceVersion` instead of a plain list, so a view or a
detach (which share the counter) is one too, a view of a normal tensor taken inside the
mode is not, and a tensor made outside the mode costs nothing (its counter is a list)."""

from __future__ import annotations

from .grad_mode import GRAD_MODE

INPLACE_OUTSIDE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")
SAVED_FOR_BACKWARD = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")
REQUIRES_GRAD_OUTSIDE = (
    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
NO_VERSION = "Inference tensors do not track version counter."


class InferenceVersion(list):
    """The version counter slot of an inference tensor. Every in-place write bumps its
    tensor's counter after writing; outside the mode this counter refuses the bump, so
    the write is refused where PyTorch refuses it (its kernel has run by then, as in
    PyTorch: the values are changed and the error is raised) at no cost to other tensors.
    `_version` refuses to show it, as PyTorch's."""

    __slots__ = ()

    def __setitem__(self, index, value) -> None:
        if not GRAD_MODE.inference:
            raise RuntimeError(INPLACE_OUTSIDE)
        list.__setitem__(self, index, value)


def mark(t) -> None:
    """Make `t` (just made, counter of its own) an inference tensor if this thread is in
    inference mode (`make` calls this only while some thread is)."""
    if GRAD_MODE.inference:
        t._vc = InferenceVersion((0,))


def check_saved(tensors) -> None:
    """A node recorded outside the mode may not save an inference tensor."""
    for x in tensors:
        if getattr(x, "_vc", None).__class__ is InferenceVersion:
            raise RuntimeError(SAVED_FOR_BACKWARD)


def refuse_arguments(name: str, args: tuple, kwargs: dict):
    """PyTorch's TypeError for a method taking no arguments (as its C method words it
    called through a bound method: `Tensor.is_inference() takes no arguments (1 given)`)."""
    if kwargs:
        raise TypeError(f"{name}() takes no keyword arguments")
    raise TypeError(f"{name}() takes no arguments ({len(args)} given)")
