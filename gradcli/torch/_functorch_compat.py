"""The `functorch` package of PyTorch 2.x, as the forward-AD tutorial still imports it:
torch.func's transforms under their old names (each call warns, as functorch's do, that it
is deprecated) and make_functional / make_functional_with_buffers, which split a module
into a function of (params, [buffers,] *inputs) and those tensors."""

from __future__ import annotations

import warnings

from . import func as _func

__all__ = ["grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "make_functional", "make_functional_with_buffers", "vjp", "vmap"]

_MOVED = ("We've integrated functorch into PyTorch. As the final step of the integration, "
          "`functorch.{old}` is deprecated as of PyTorch 2.0 and will be deleted in a future "
          "version of PyTorch >= 2.3. Please use `{new}` instead; see the PyTorch 2.0 release "
          "notes and/or the `torch.func` migration guide for more details "
          "https://pytorch.org/docs/main/func.migrating.html")


def _moved(name: str, new: str):
    target = getattr(_func, name, None)  # (make_functional*: defined here)

    def call(*args, **kwargs):
        warnings.warn(_MOVED.format(old=name, new=new), FutureWarning, stacklevel=2)
        return (target or globals()["_" + name])(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__module__ = "functorch"
    return call


class FunctionalModule:
    """make_functional's function: module(params, *inputs) with params in its order."""

    def __init__(self, module, names, buffer_names=()):
        self._module = module
        self._names = tuple(names)
        self._buffer_names = tuple(buffer_names)

    def __call__(self, params, *args, **kwargs):
        given = dict(zip(self._names, params, strict=True))
        return _func.functional_call(self._module, given, args, kwargs)


class FunctionalModuleWithBuffers(FunctionalModule):
    """make_functional_with_buffers's function: module(params, buffers, *inputs)."""

    def __call__(self, params, buffers, *args, **kwargs):
        given = dict(zip(self._names, params, strict=True))
        given.update(zip(self._buffer_names, buffers, strict=True))
        return _func.functional_call(self._module, given, args, kwargs)


FunctionalModule.__module__ = FunctionalModuleWithBuffers.__module__ = \
    "functorch._src.make_functional"


def _params(module, disable_autograd_tracking: bool):
    names, params = [], []
    for name, p in module.named_parameters():
        names.append(name)
        params.append(p.detach() if disable_autograd_tracking else p)
    return names, tuple(params)


def _make_functional(model, disable_autograd_tracking=False):
    names, params = _params(model, disable_autograd_tracking)
    return FunctionalModule(model, names), params


def _make_functional_with_buffers(model, disable_autograd_tracking=False):
    names, params = _params(model, disable_autograd_tracking)
    buffer_names, buffers = [], []
    for name, b in model.named_buffers():
        buffer_names.append(name)
        buffers.append(b)
    return FunctionalModuleWithBuffers(model, names, buffer_names), params, tuple(buffers)


jvp = _moved("jvp", "torch.func.jvp")
vjp = _moved("vjp", "torch.func.vjp")
grad = _moved("grad", "torch.func.grad")
grad_and_value = _moved("grad_and_value", "torch.func.grad_and_value")
jacrev = _moved("jacrev", "torch.func.jacrev")
jacfwd = _moved("jacfwd", "torch.func.jacfwd")
hessian = _moved("hessian", "torch.func.hessian")
vmap = _moved("vmap", "torch.func.vmap")
make_functional = _moved("make_functional", "torch.func.functional_call")
make_functional_with_buffers = _moved("make_functional_with_buffers",
                                      "torch.func.functional_call")
