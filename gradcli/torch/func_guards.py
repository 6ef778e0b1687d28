"""What a function under a torch.func transform may not do, refused with PyTorch's texts:
Tensor.requires_grad_() and Tensor.retain_grad() (functorch owns the autograd state of the
tensors it transforms), and so torch.autograd.functional.* (which calls requires_grad_).

The refusing methods are installed while the outermost transform runs and removed after;
gradcli's own code (backward formulas, the transforms themselves) calls the methods freely,
so the check looks at who called: only code outside gradcli is refused."""

from __future__ import annotations

import sys

from gradcli.engine.tensor import Tensor

REQUIRES_GRAD = (
    "You are attempting to call Tensor.requires_grad_() (or perhaps using "
    "torch.autograd.functional.* APIs) inside of a function being transformed by a functorch "
    "transform. This is unsupported, please attempt to use the functorch transforms (e.g. grad, "
    "vjp, jacrev, jacfwd, hessian) or call requires_grad_() outside of a function being "
    "transformed instead.")
RETAIN_GRAD = (
    "You are attempting to call Tensor.retain_grad() inside of a function being transformed by "
    "a functorch transform. This is unsupported, please attempt to use the functorch transforms "
    "(e.g. grad, vjp, jacrev, jacfwd, hessian) or call retain_grad() outside of a function being "
    "transformed instead.")
_FUNCTIONAL = ("vjp", "jvp", "jacobian", "hessian", "hvp", "vhp")
_SAVED: dict = {}


def _from_outside(depth: int = 2) -> bool:
    """Whether the caller of the function calling this is code outside gradcli."""
    caller = sys._getframe(depth).f_globals.get("__name__", "")
    return not (caller == "gradcli" or caller.startswith("gradcli."))


def _refusing_method(original, message):
    def method(self, *args, **kwargs):
        if _from_outside():
            raise RuntimeError(message)
        return original(self, *args, **kwargs)

    method.__name__ = original.__name__
    method.__qualname__ = original.__qualname__
    method.__doc__ = original.__doc__
    return method


def _refusing_function(name):
    def fn(*args, **kwargs):
        raise RuntimeError(REQUIRES_GRAD)

    fn.__name__ = fn.__qualname__ = name
    return fn


def install() -> None:
    """The outermost transform starts."""
    from gradcli.torch.autograd import functional

    for name, message in (("requires_grad_", REQUIRES_GRAD), ("retain_grad", RETAIN_GRAD)):
        original = Tensor.__dict__[name]
        _SAVED[(Tensor, name)] = original
        setattr(Tensor, name, _refusing_method(original, message))
    for name in _FUNCTIONAL:
        _SAVED[(functional, name)] = functional.__dict__[name]
        setattr(functional, name, _refusing_function(name))


def uninstall() -> None:
    """The outermost transform ended."""
    for (owner, name), original in _SAVED.items():
        setattr(owner, name, original)
    _SAVED.clear()
