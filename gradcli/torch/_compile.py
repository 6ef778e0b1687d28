"""torch.compile's results: scripts compile a model or a function and then use it as
before. gradcli has no compiler, so compiling changes nothing about what runs; what it
keeps is the shape of PyTorch's result: a compiled Module is an `OptimizedModule` that
holds the original as its child `_orig_mod` (so its repr nests it and its state_dict keys
carry the `_orig_mod.` prefix) and forwards attribute reads to it; a compiled function is
a wrapper with the function's name."""

from __future__ import annotations

import functools

from .nn.modules.module import Module

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


#: the attributes an OptimizedModule keeps for itself; every other write goes to the
#: original module, as PyTorch's does (so `compiled.training = False` reaches it)
_OWN = frozenset({"_orig_mod", "forward", "_forward", "__dict__", "_building"})


class OptimizedModule(Module):
    """The module torch.compile gives back for a Module: the original runs unchanged."""

    def __init__(self, mod: Module):
        object.__setattr__(self, "_building", True)
        super().__init__()
        self._orig_mod = mod
        # reads of training & co fall through to the original, which holds them
        self.__dict__.pop("training", None)
        object.__setattr__(self, "_building", False)

    def __setattr__(self, name: str, value) -> None:
        if self.__dict__.get("_building") or name in _OWN or hasattr(type(self), name):
            return super().__setattr__(name, value)
        return setattr(self._orig_mod, name, value)

    def __len__(self) -> int:
        original = self._orig_mod
        if hasattr(type(original), "__len__"):
            return len(original)
        raise TypeError(f"{type(original).__name__} does not support len()")

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name.startswith("__") or name == "_orig_mod":
                raise
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)


def compile_model(model, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
                  options=None, disable=False):
    """torch.compile(model, ...) after its argument checks (aliases_and_config.compile)."""
    if model is None:
        def decorate(fn):
            return compile_model(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)

        return decorate
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)

    return compiled
