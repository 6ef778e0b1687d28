"""gradcli.lang: the gradcli language (grammar, compiler, sandbox, guards).

Public API (everything else is internal)::

    from gradcli.lang import (parse, parse_all, parse_expression, is_incomplete,
                              compile_program, Session, run_file, run_source,
                              Limits, GradcliError, CompileError, ForbiddenError,
                              ProgramError, LimitError, Interrupted)

``parse(source, filename="<string>") -> Module``
    Source text to gradcli's AST (:mod:`gradcli.lang.ast`). Raises
    :class:`CompileError` (``SyntaxError``/``IndentationError`` kinds) at
    the first error. ``parse_all`` recovers at the next top-level statement
    and returns ``(module or None, [errors])`` (``gradcli check``);
    ``parse_expression`` parses one expression (``gradcli grad "EXPR"``).

``is_incomplete(source) -> bool``
    For the REPL: True when the text is the start of a longer input (open
    bracket, block header, unterminated triple-quoted string, trailing
    backslash, or a block statement not yet ended by a blank line).

``Session(limits=None, stdout=None, stderr=None, interactive=False, seed=None)``
    A program namespace. ``session.run(source, filename, echo=False)``
    compiles and runs in it and returns the value of the final statement
    if it is an expression statement (the REPL echoes it); ``echo=True``
    prints every top-level expression statement's non-None value as
    Python's prompt does. ``session.globals`` is the namespace,
    ``session.lookup(name)`` / ``session.names()`` see builtins and facade
    names too, ``session.compile(...)`` / ``session.execute(program)``
    split the two phases, ``session.reset()`` empties it. Use
    ``interactive=True`` for a REPL (names are looked up at run time).

``compile_program(module, filename, source, globals_=, builtins=, state=, limits=)``
    The compiler itself (used by Session): AST to closures.

``run_file(path, limits=None, seed=0, echo=False, stdout=None, stderr=None) -> int``
    Run one file ('-' = stdin) in a fresh session, print any error report
    on stderr, return the exit code: 0 ok, 1 runtime error / failed assert /
    guard, 2 syntax or forbidden name or unreadable file, 130 Ctrl-C.
    ``run_source(source, filename, ..., show_last=False)`` is the same for
    text (``gradcli eval`` passes ``show_last=True``).

Errors: :class:`GradcliError` (``.filename .line .col .end_line .end_col
.message .kind .exit_code .render()``) with subclasses
:class:`CompileError` (exit 2; ``.errors`` lists all found,
``render_all()``), :class:`ForbiddenError` (a CompileError),
:class:`ProgramError` (exit 1; ``.exc`` the original exception, ``.chain``
the user-function call chain), :class:`LimitError` (a guard tripped) and
:class:`Interrupted` (exit 130). A report looks like::

    prog.grad:6:5: RuntimeError: grad can be implicitly created only for scalar outputs
        6 |     z.backward()
          |     ^^^^^^^^^^^^
    call chain (most recent call last):
      prog.grad:9 in <module>
      prog.grad:6 in f

:class:`Limits` holds every resource guard's default (max_steps=10_000_000,
max_elements=100_000_000, max_length=10_000_000, max_depth=500, max_power,
max_shift, max_int_bits, max_nesting); ``Limits.from_env(**overrides)``
reads ``GRADCLI_MAX_STEPS``, ``GRADCLI_MAX_ELEMENTS``, ``GRADCLI_MAX_DEPTH``,
``GRADCLI_MAX_LENGTH`` then applies non-None overrides (CLI flags, ini keys).
A tripped guard raises ``LimitExceeded`` (a BaseException) inside the run:
programs cannot catch it.

Importing this package is cheap; the parser tables (precompiled from
``grammar/gradcli.lark`` by lark, see :mod:`gradcli.lang._lalr_gen`) and the
engine load on first use.
"""
from __future__ import annotations

from .errors import (
    CompileError,
    ForbiddenError,
    GradcliError,
    InternalError,
    Interrupted,
    LimitError,
    ProgramError,
)
from .limits import LimitExceeded, Limits

__all__ = [
    "parse", "parse_all", "parse_expression", "is_incomplete", "compile_program", "Session",
    "run_file", "run_source", "render_error", "Limits", "LimitExceeded", "GradcliError",
    "CompileError", "ForbiddenError", "ProgramError", "LimitError", "Interrupted",
    "InternalError",
]

_LAZY = {
    "parse": "parser", "parse_all": "parser", "parse_expression": "parser",
    "is_incomplete": "parser", "compile_program": "compiler", "Session": "session",
    "run_file": "session", "run_source": "session", "render_error": "session",
}


def __getattr__(name):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'gradcli.lang' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value
    return value
