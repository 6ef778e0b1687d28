"""Functions a lower engine module calls from a module above it.

The engine's imports point one way: dtypes and node at the bottom, then the tensor,
the op table, the op modules, autograd and printing on top. Some calls still go
upwards at run time: a tensor prints itself with the formatter, a node runs its
backward through the engine, `where` with one argument is `nonzero`. Such a module
declares what it needs in a `Slots` (its names, nothing else) and the module that
owns each function fills the slot when it loads (`SLOTS.install(name=function)`),
so the dependency is written down at both ends without an import cycle. Everything
that makes tensors goes through `gradcli.engine.ops`, whose package imports every
provider, so the slots are filled before the first tensor exists.
"""

from __future__ import annotations


class Slots:
    """A fixed set of named functions, filled in later by the modules that own them."""

    def __init__(self, owner: str, *names: str):
        self.__dict__["_owner"] = owner
        self.__dict__["_names"] = frozenset(names)

    def install(self, **functions) -> None:
        unknown = set(functions) - self._names
        if unknown:
            raise AttributeError(f"{self._owner} declares no slot {sorted(unknown)}")
        self.__dict__.update(functions)

    def __getattr__(self, name: str):
        # only reached while a slot is empty (a filled one is an instance attribute)
        if name in self._names:
            raise RuntimeError(
                f"{self._owner}.{name} is provided by a module that is not loaded yet: "
                "import gradcli.engine.ops (or gradcli.torch) first")
        raise AttributeError(f"{self._owner} has no slot {name!r}")

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError("fill a slot with install(name=function)")
