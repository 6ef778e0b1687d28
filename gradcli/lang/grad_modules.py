"""Programs share helpers: ``import helpers`` / ``from helpers import f`` load the
``helpers.grad`` file that lies beside the importing file.

The helper is compiled when the importer is (its syntax and forbidden names are the
importer's compile errors, reported at the helper's own lines) and run once per run,
at the first import statement that executes, with the importer's builtins, step
budget and guards: it is sandboxed exactly as the importer is. What the importer sees
is a read-only module of the helper's public top-level names. Only files in the
importer's own folder are found (no paths, no packages, no search path; a symbolic link
to a file elsewhere is refused), and only for programs read from a file (not ``-e``,
stdin or the REPL).
"""

from __future__ import annotations

import os
import types

#: filename -> source of each helper compiled, for the error reports of its lines
SOURCES: dict = {}
#: the helpers being compiled, innermost last (an import cycle is a compile error)
_COMPILING: list = []
#: where a run keeps the helpers it has loaded (a key no program can spell)
_LOADED_KEY = "__grad_modules__"


class ProgramModule(types.ModuleType):
    """A ``.grad`` file imported by another: its public top-level names, read-only."""


def sibling_path(importer: str, name: str) -> str | None:
    """``NAME.grad`` beside the file ``importer``, if there is one."""
    if not name.isidentifier() or not importer or importer.startswith("<"):
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(importer)), name + ".grad")
    return path if os.path.isfile(path) else None


def links_out(path: str, importer: str) -> bool:
    """Whether the helper ``path`` is a link to a file outside the importer's folder."""
    real_dir = os.path.dirname(os.path.realpath(path))
    return real_dir not in (os.path.dirname(os.path.realpath(importer)),
                            os.path.realpath(os.path.dirname(path)))


def compile_sibling(compiler, name: str, pos):
    """``load(env) -> ProgramModule`` for ``import name`` in the program ``compiler``
    compiles, or None when no ``name.grad`` lies beside it. Problems with the helper
    (unreadable, a syntax error, an import cycle) are recorded on ``compiler``."""
    from .compiler import compile_program
    from .errors import CompileError
    from .parser import parse

    path = sibling_path(compiler.filename, name)
    if path is None:
        return None
    real = os.path.realpath(path)
    shown = os.path.join(os.path.dirname(compiler.filename), name + ".grad")
    importer = os.path.realpath(compiler.filename)
    if links_out(path, compiler.filename):
        # a link out of the folder would let a program read (and show, in an error
        # report) any file: a program reads only the .grad files beside it
        compiler.forbid(f"cannot import '{name}': {shown} is a link to a file outside the "
                        "program's folder", pos)
        return _nothing
    if real in _COMPILING or real == importer:
        compiler.forbid(f"circular import of '{name}' ({shown} imports itself through "
                        "the files it imports)", pos)
        return _nothing
    try:
        with open(path, "rb") as f:
            source = f.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        compiler.forbid(f"cannot import '{name}': {shown} cannot be read ({e})", pos)
        return _nothing
    namespace: dict = {"__name__": name}
    outermost = not _COMPILING
    if outermost:  # the program being compiled is the first link of any cycle
        _COMPILING.append(importer)
    _COMPILING.append(real)
    try:
        module = parse(source, shown, max_nesting=compiler.limits.max_nesting)
        program = compile_program(module, shown, source, globals_=namespace,
                                  builtins=compiler.B, state=compiler.state,
                                  limits=compiler.limits, static_globals=True)
    except CompileError as e:
        compiler.errors.extend(e.errors)
        return _nothing
    finally:
        del _COMPILING[-2 if outermost else -1:]
    SOURCES[shown] = source
    loaded = compiler.G

    def load(env):
        cache = loaded.setdefault(_LOADED_KEY, {})
        mod = cache.get(real)
        if mod is None:
            program.code(None)
            mod = ProgramModule(name)
            public = {k: v for k, v in namespace.items() if not k.startswith("_")}
            mod.__dict__.update(public)
            mod.__all__ = sorted(public)
            mod.__file__ = shown
            cache[real] = mod
        return mod

    return load


def _nothing(env):
    return None


def name_from(mod, name: str):
    """``from helper import name`` at run time: the name, or Python's ImportError."""
    if not name.startswith("_") and name in getattr(mod, "__all__", ()):
        return getattr(mod, name)
    raise ImportError(f"cannot import name '{name}' from '{mod.__name__}' "
                      f"({getattr(mod, '__file__', '?')})")
