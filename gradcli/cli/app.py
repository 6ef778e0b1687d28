"""The ``gradcli`` command line (typer).

``main()`` is the console-script entry point (``gradcli = gradcli.cli.app:main``).
This module defines ``app`` and the language commands (``run``, ``eval``,
``check``). Other commands live in their own modules under ``gradcli.cli``
and are added by :func:`register_commands`: a module listed in
``COMMAND_MODULES`` that defines ``register(app)`` gets called with the app.
Keep those modules cheap to import (import rich, prompt_toolkit, the views
inside the command functions): every ``gradcli run`` imports them.
"""
from __future__ import annotations

import importlib
import os
import sys
from typing import Annotated, List, Optional

import typer

from gradcli import __version__

HELP = """gradcli: a command-line expression differentiator.

Programs are a strict subset of Python that runs on gradcli's own autograd
engine and prints exactly what PyTorch prints.

Examples:

  gradcli run prog.grad               run a program (stdin with -)

  gradcli run a.grad b.grad --seed 1  each file in a fresh state

  gradcli eval "x = ones(2, requires_grad=True); (x * x).sum()"

  gradcli check *.grad                syntax and sandbox check, no run
"""

#: modules that add commands (``register(app)``); missing ones are skipped
COMMAND_MODULES = ("gradcli.cli.grad", "gradcli.cli.graph", "gradcli.cli.test",
                   "gradcli.cli.repl")

app = typer.Typer(
    name="gradcli",
    help=HELP,
    add_completion=True,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool):
    if value:
        typer.echo(f"gradcli {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
    no_color: bool = typer.Option(False, "--no-color", help="Plain text output, no colours."),
):
    if no_color:
        os.environ["NO_COLOR"] = "1"
    if ctx.invoked_subcommand is None:
        repl = _optional_module("gradcli.cli.repl")
        start = getattr(repl, "start", None) if repl is not None else None
        if start is not None and sys.stdin.isatty():
            raise typer.Exit(start())
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


# ------------------------------------------------------------------- options
def _limits(max_steps, max_elements, max_depth, max_length=None):
    from gradcli.lang.limits import Limits
    try:
        return Limits.from_env(max_steps=max_steps, max_elements=max_elements,
                               max_depth=max_depth, max_length=max_length)
    except (ValueError, TypeError) as e:
        typer.echo(f"gradcli: {e}", err=True)
        raise typer.Exit(2) from None


def _positive(value: Optional[int]):
    if value is not None and value <= 0:
        raise typer.BadParameter("must be a positive integer")
    return value


MAX_STEPS = typer.Option(None, "--max-steps", callback=_positive, metavar="N",
                         help="Step budget: executed statements, loop iterations included "
                              "(default 10,000,000; env GRADCLI_MAX_STEPS).")
MAX_ELEMENTS = typer.Option(None, "--max-elements", callback=_positive, metavar="N",
                            help="Largest tensor allocation in elements (default 100,000,000; "
                                 "env GRADCLI_MAX_ELEMENTS).")
MAX_DEPTH = typer.Option(None, "--max-depth", callback=_positive, metavar="N",
                         help="Nested calls of user functions (default 500; env "
                              "GRADCLI_MAX_DEPTH).")
MAX_LENGTH = typer.Option(None, "--max-length", callback=_positive, metavar="N",
                          help="Longest string or list (default 10,000,000; env "
                               "GRADCLI_MAX_LENGTH).")
SEED = typer.Option(0, "--seed", metavar="N", help="Starting seed of the random generator.")


def _quiet_stdout():
    """stdout was closed by the reader (``| head``): end quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _finish(code: int) -> int:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    except (OSError, ValueError):
        pass
    return code


# ------------------------------------------------------------------ commands
@app.command("run")
def run_cmd(
    files: Annotated[List[str], typer.Argument(metavar="FILE...",
                                               help="Programs to run ('-' = stdin).")],
    echo: bool = typer.Option(False, "--echo", help="Echo the value of every top-level "
                                                    "expression statement, as Python's prompt."),
    seed: int = SEED,
    max_steps: Optional[int] = MAX_STEPS,
    max_elements: Optional[int] = MAX_ELEMENTS,
    max_depth: Optional[int] = MAX_DEPTH,
    max_length: Optional[int] = MAX_LENGTH,
):
    """Run .grad programs, each in a fresh state; the exit code is the worst of them.

    Results go to stdout, errors to stderr. Exit codes: 0 ok, 1 runtime error
    or failed assert, 2 syntax/forbidden name, 130 interrupted.
    """
    from gradcli.lang.session import run_file
    limits = _limits(max_steps, max_elements, max_depth, max_length)
    worst = 0
    for path in files:
        code = run_file(path, limits=limits, seed=seed, echo=echo)
        worst = max(worst, code)
        if code == 130:
            break
    raise typer.Exit(_finish(worst))


@app.command("eval")
def eval_cmd(
    code: Annotated[str, typer.Argument(metavar="CODE",
                                        help="Statements separated by ';' or newlines.")],
    seed: int = SEED,
    max_steps: Optional[int] = MAX_STEPS,
    max_elements: Optional[int] = MAX_ELEMENTS,
    max_depth: Optional[int] = MAX_DEPTH,
    max_length: Optional[int] = MAX_LENGTH,
):
    """Run statements and echo the last expression's value (repr; nothing for None).

    Example: gradcli eval "x = ones(2, requires_grad=True); y = (x * 3).sum(); y.backward(); x.grad"
    """
    from gradcli.lang.session import run_source
    limits = _limits(max_steps, max_elements, max_depth, max_length)
    rc = run_source(code, "<eval>", limits=limits, seed=seed, show_last=True)
    raise typer.Exit(_finish(rc))


@app.command("check")
def check_cmd(
    files: Annotated[List[str], typer.Argument(metavar="FILE...",
                                               help="Programs to check ('-' = stdin).")],
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing for files that pass."),
):
    """Compile without running: report syntax errors and forbidden names with
    their location (several per file where the parser can recover). Exit 2 on any."""
    from gradcli.lang.check import check_file
    worst = 0
    for path in files:
        errors = check_file(path)
        if errors:
            for text in errors:
                typer.echo(text, err=True)
            worst = 2
        elif not quiet:
            typer.echo(f"{path}: ok")
    raise typer.Exit(_finish(worst))


# ----------------------------------------------------------- other commands
def _optional_module(name):
    try:
        return importlib.import_module(name)
    except ImportError as e:
        if e.name and name.startswith(e.name) or e.name == name:
            return None
        raise


def register_commands(target=app):
    for name in COMMAND_MODULES:
        mod = _optional_module(name)
        register = getattr(mod, "register", None) if mod is not None else None
        if register is not None:
            register(target)


register_commands()


def main(argv: Optional[List[str]] = None) -> None:
    """Console-script entry point."""
    try:
        app(args=argv, prog_name="gradcli")
    except KeyboardInterrupt:
        sys.stderr.write("gradcli: interrupted\n")
        sys.exit(130)
    except BrokenPipeError:
        _quiet_stdout()
        sys.exit(0)
