"""Filling a facade module from the op table's PUBLIC registry.

Each facade module (`gradcli.torch`, `gradcli.torch.linalg`, ...) calls `fill` with its
globals and its public prefix once its op modules are imported, so every function
declared with `@public("torch.linalg.inv")` appears there without an import list.
"""

from __future__ import annotations

from gradcli.engine.ops.registry import PUBLIC, public_names


def fill(namespace: dict, prefix: str) -> None:
    """Add the PUBLIC functions under `prefix` to `namespace` (names already there win)."""
    for name, fn in public_names(prefix).items():
        namespace.setdefault(name, fn)


def unsupported(path: str, module: str = "", lazy: tuple = ()):
    """A module `__getattr__`: a submodule of `lazy` is imported on first use (the
    facade module `module` lists them as `_LAZY_SUBMODULES`, so start-up does not pay
    for them and programs may still reach them as attributes); a name declared after the
    module was filled (an op module imported later, a test fixture) comes from the
    registry; any other name says it is not supported by gradcli."""
    prefix = path + "."

    def __getattr__(name: str):
        if name in lazy:
            import importlib

            return importlib.import_module(f"{module}.{name}")
        if name.startswith("__"):
            raise AttributeError(name)
        fn = PUBLIC.get(prefix + name)
        if fn is not None:
            return fn
        raise AttributeError(f"{path}.{name} is not supported by gradcli")

    return __getattr__
