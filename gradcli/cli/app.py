"""The ``gradcli`` command line (typer).

``main()`` is the console-script entry point (``gradcli = gradcli.cli.app:main``).
This module builds the typer ``app`` with the language commands (``run``,
``eval``, ``check``). Other commands live in their own modules under
``gradcli.cli``: a module listed in ``COMMAND_MODULES`` that defines
``register(app)`` is called with the app when it is built (missing modules are
skipped). Keep those modules cheap to import (import rich, prompt_toolkit, the
views inside the command functions).

Start-up: ``gradcli run|eval|check`` with plain arguments are parsed by a small
hand-written parser (:func:`_fast_path`) and never import typer (typer 0.29
builds pydantic adapters per parameter, ~0.1 s); anything else (``--help``, a
typo, another command) goes through the typer app, which also reports usage
errors (exit 2). ``app`` is built on first access (``from gradcli.cli.app
import app`` works).
"""
import os
import sys

from gradcli import __version__
from gradcli.cli.options import _err, _int_value, _limits, _option_value, _positive  # noqa: F401

HELP = """gradcli: a command-line expression differentiator.

Programs are a strict subset of Python that runs on gradcli's own autograd
engine and prints exactly what PyTorch prints.

Examples:

  gradcli run prog.grad               run a program (stdin with -)

  gradcli run a.grad b.grad --seed 1  each file in a fresh state

  gradcli eval "x = ones(2, requires_grad=True); (x * x).sum()"

  gradcli check *.grad                syntax and sandbox check, no run
"""

RUN_HELP = """Run .grad programs, each in a fresh state; the exit code is the worst of them.

Results go to stdout, error reports to stderr. Exit codes: 0 ok, 1 runtime
error, failed assert or resource limit, 2 syntax error or forbidden name,
130 interrupted (Ctrl-C).

Examples:

  gradcli run prog.grad

  gradcli run a.grad b.grad --seed 1 --max-steps 100000

  echo "print(ones(2))" | gradcli run -
"""

EVAL_HELP = """Run statements (separated by ';' or newlines) and echo the last
expression's value as Python's prompt does (repr; nothing for None).

\b
Example (quoted as it must be in bash and zsh):
  gradcli eval "x = tensor(2., requires_grad=True); (x**3).backward(); x.grad"
"""

CHECK_HELP = """Compile without running: report every syntax error and forbidden
name with its location (several per file where the parser can recover).
Exit 2 if any file has an error.

Examples:

  gradcli check prog.grad

  gradcli check -q examples/*.grad
"""

#: modules that add commands (``register(app)``)
COMMAND_MODULES = ("gradcli.cli.grad", "gradcli.cli.test", "gradcli.cli.repl")

LIMIT_OPTIONS = ("--max-steps", "--max-elements", "--max-depth", "--max-length")


# ------------------------------------------------------------ the commands
def do_run(files, *, echo=False, seed=0, graph=False, grads=False, as_json=False,
           **limits) -> int:
    from gradcli.lang.session import run_file
    lim = _limits(**limits)
    if lim is None:
        return 2
    worst = 0
    records = []
    for path in files:
        on_done = None
        stdout = None
        if as_json:
            import io
            from time import perf_counter

            from gradcli.cli.run_record import record_run

            stdout = io.StringIO()
            started = perf_counter()
            def on_done(session, error, p=path, buf=stdout, t0=started):
                if graph or grads:  # (the views' text goes into the record's stdout)
                    from gradcli.cli.run_record import render_after_run
                    render_after_run(session, graph, grads, file=buf)
                records.append(record_run(p, session, error, buf.getvalue(),
                                          perf_counter() - t0))
        elif graph or grads:
            from gradcli.cli.run_record import render_after_run

            on_done = lambda session, error: render_after_run(session, graph, grads)  # noqa: E731
        code = run_file(path, limits=lim, seed=seed, echo=echo, stdout=stdout, on_done=on_done)
        if as_json and records:
            records[-1]["exit_code"] = code
        worst = max(worst, code)
        if code == 130:
            break
    if as_json:
        import json

        _out(json.dumps({"schema": "gradcli.run/1", "runs": records}, indent=2))
    return _finish(worst)


def do_eval(code, *, seed=0, **limits) -> int:
    from gradcli.lang.session import run_source
    lim = _limits(**limits)
    if lim is None:
        return 2
    return _finish(run_source(code, "<eval>", limits=lim, seed=seed, show_last=True))


def do_check(files, *, quiet=False) -> int:
    """Check each program (a directory: every .grad file below it, skipping the folders
    a test search skips); exit 2 if any has an error or a directory holds none."""
    from gradcli.lang.check import check_file
    worst = 0
    for path in files:
        if path != "-" and os.path.isdir(path):
            from gradcli.cli.collect import grad_files_below

            found = grad_files_below(path)
            if not found:
                _err(f"{path}: no .grad files below it")
                worst = 2
        else:
            found = [path]
        for program in found:
            errors = check_file(program)
            if errors:
                _err("\n".join(errors))
                worst = 2
            elif not quiet:
                _out(f"{program}: ok")
    return _finish(worst)


def _out(text):
    sys.stdout.write(text + "\n")


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


# ------------------------------------------------------------- fast path
def _fast_path(argv):
    """Parse ``run``/``eval``/``check`` with plain arguments by hand.
    Returns a thunk that runs the command, or None to let typer handle argv."""
    if argv and argv[0] in ("grad", "graph"):
        from gradcli.cli.grad import fast_path

        return fast_path(argv)
    if not argv or argv[0] not in ("run", "eval", "check"):
        return None
    cmd, rest = argv[0], argv[1:]
    kw, positional = {}, []
    i = 0
    only_args = False
    while i < len(rest):
        a = rest[i]
        if only_args or a == "-" or not a.startswith("-"):
            positional.append(a)
        elif a == "--":
            only_args = True
        elif a == "--no-color":
            os.environ["NO_COLOR"] = "1"
        elif a == "--echo" and cmd == "run":
            kw["echo"] = True
        elif a in ("-q", "--quiet") and cmd == "check":
            kw["quiet"] = True
        else:
            name, value, i = _option_value(rest, i)
            if value is None or cmd == "check" or not (name in LIMIT_OPTIONS or name == "--seed"):
                return None
            number = _int_value(value, positive=name != "--seed")
            if number is None:
                return None
            kw[name[2:].replace("-", "_")] = number
        i += 1
    if not positional:
        return None
    if cmd == "run":
        return lambda: do_run(positional, **kw)
    if cmd == "check":
        return lambda: do_check(positional, **kw)
    if len(positional) != 1:
        return None
    return lambda: do_eval(positional[0], **kw)


# ------------------------------------------------------------- typer app
def _optional_module(name):
    import importlib  # not at the top: the fast paths never need it (0.5 ms in a venv)

    try:
        return importlib.import_module(name)
    except ImportError as e:
        if e.name and (name == e.name or name.startswith(e.name + ".")):
            return None
        raise


def register_commands(target):
    """Let each module of COMMAND_MODULES add its commands to ``target``."""
    for name in COMMAND_MODULES:
        mod = _optional_module(name)
        register = getattr(mod, "register", None) if mod is not None else None
        if register is not None:
            register(target)


def _build_app():
    from typing import Annotated, List, Optional

    import typer

    app = typer.Typer(name="gradcli", help=HELP, add_completion=True, no_args_is_help=False,
                      pretty_exceptions_enable=False,
                      context_settings={"help_option_names": ["-h", "--help"]})

    def version_cb(value: bool):
        if value:
            typer.echo(f"gradcli {__version__}")
            raise typer.Exit()

    @app.callback(invoke_without_command=True)
    def root(
        ctx: typer.Context,
        version: Annotated[bool, typer.Option("--version", callback=version_cb, is_eager=True,
                                              help="Show the version and exit.")] = False,
        no_color: Annotated[bool, typer.Option("--no-color",
                                               help="Plain text output, no colours.")] = False,
    ):
        if no_color:
            os.environ["NO_COLOR"] = "1"
        if ctx.invoked_subcommand is None:
            if sys.stdin is not None and not _stdin_is_terminal():
                # `echo 'print(1)' | gradcli --no-color` runs the program, as without options
                raise typer.Exit(do_run(["-"]))
            repl = _optional_module("gradcli.cli.repl")
            start = getattr(repl, "start", None) if repl is not None else None
            if start is not None and _stdin_is_terminal():
                raise typer.Exit(start())
            typer.echo(ctx.get_help())
            raise typer.Exit(0)

    Seed = Annotated[int, typer.Option("--seed", metavar="N",
                                       help="Starting seed of the random generator.")]
    MaxSteps = Annotated[Optional[int], typer.Option(
        "--max-steps", callback=_positive, metavar="N",
        help="Step budget: executed statements, loop iterations included "
             "(default 10,000,000; env GRADCLI_MAX_STEPS).")]
    MaxElements = Annotated[Optional[int], typer.Option(
        "--max-elements", callback=_positive, metavar="N",
        help="Largest tensor allocation in elements (default 100,000,000; "
             "env GRADCLI_MAX_ELEMENTS).")]
    MaxDepth = Annotated[Optional[int], typer.Option(
        "--max-depth", callback=_positive, metavar="N",
        help="Nested calls of user functions (default 500; env GRADCLI_MAX_DEPTH).")]
    MaxLength = Annotated[Optional[int], typer.Option(
        "--max-length", callback=_positive, metavar="N",
        help="Longest string or list (default 10,000,000; env GRADCLI_MAX_LENGTH).")]
    NoColor = Annotated[bool, typer.Option("--no-color", help="Plain text output, no colours.")]

    def no_color_env(flag):
        if flag:
            os.environ["NO_COLOR"] = "1"

    @app.command("run", help=RUN_HELP)
    def run_cmd(
        files: Annotated[List[str], typer.Argument(metavar="FILE...",
                                                   help="Programs to run ('-' = stdin).")],
        echo: Annotated[bool, typer.Option("--echo", help=(
            "Echo the value of every top-level expression statement, as Python's "
            "prompt does."))] = False,
        graph: Annotated[bool, typer.Option("--graph", help=(
            "After the run, draw the graph of each named tensor no other named tensor "
            "was computed from."))] = False,
        grads: Annotated[bool, typer.Option("--grads", help=(
            "After the run, a table of every named tensor that requires grad."))] = False,
        as_json: Annotated[bool, typer.Option("--json", help=(
            "Print one JSON record (schema gradcli.run/1): printed output, named "
            "tensors with values and grads, errors, the run's seconds."))] = False,
        seed: Seed = 0,
        max_steps: MaxSteps = None,
        max_elements: MaxElements = None,
        max_depth: MaxDepth = None,
        max_length: MaxLength = None,
        no_color: NoColor = False,
    ):
        no_color_env(no_color)
        raise typer.Exit(do_run(files, echo=echo, seed=seed, graph=graph, grads=grads,
                                as_json=as_json, max_steps=max_steps,
                                max_elements=max_elements, max_depth=max_depth,
                                max_length=max_length))

    @app.command("eval", help=EVAL_HELP)
    def eval_cmd(
        code: Annotated[str, typer.Argument(metavar="CODE",
                                            help="Statements separated by ';' or newlines.")],
        seed: Seed = 0,
        max_steps: MaxSteps = None,
        max_elements: MaxElements = None,
        max_depth: MaxDepth = None,
        max_length: MaxLength = None,
        no_color: NoColor = False,
    ):
        no_color_env(no_color)
        raise typer.Exit(do_eval(code, seed=seed, max_steps=max_steps, max_elements=max_elements,
                                 max_depth=max_depth, max_length=max_length))

    @app.command("check", help=CHECK_HELP)
    def check_cmd(
        files: Annotated[List[str], typer.Argument(metavar="FILE...",
                                                   help="Programs to check ('-' = stdin; a folder: every .grad file in it).")],
        quiet: Annotated[bool, typer.Option("--quiet", "-q",
                                            help="Print nothing for files that pass.")] = False,
        no_color: NoColor = False,
    ):
        no_color_env(no_color)
        raise typer.Exit(do_check(files, quiet=quiet))

    register_commands(app)
    return app


_APP = None


def __getattr__(name):
    global _APP
    if name == "app":
        if _APP is None:
            _APP = _build_app()
        return _APP
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: commands whose first act is to import the engine and the language
_ENGINE_COMMANDS = frozenset({"grad", "graph", "run", "eval"})


def _import_engine_gc_paused() -> None:
    """Import the engine (numpy with it) and the language with the cyclic garbage
    collector paused. The imports leave ~38,000 tracked objects; the ~40 passes they
    trigger free only ~340 (a few import-time cycles, freed by the next pass instead)
    and cost ~2% of a `gradcli grad` process (10M of ~540M instructions, callgrind).
    The collector runs as usual once the program starts."""
    import gc

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        import gradcli.lang.session  # noqa: F401
        import gradcli.torch  # noqa: F401
    finally:
        if was_enabled:
            gc.enable()


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def main(argv=None) -> None:
    """Console-script entry point."""
    import gradcli

    gradcli.OWNS_PROCESS = True  # (read when the engine is imported: engine/__init__.py)
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv and not _stdin_is_terminal() and "_GRADCLI_COMPLETE" not in os.environ:
        argv = ["run", "-"]  # `echo 'print(1)' | gradcli` runs the program, as python does
    elif (not argv or argv[0] == "repl") and "-h" not in argv and "--help" not in argv \
            and _stdin_is_terminal():
        from gradcli.cli.terminal import hold_terminal_echo

        hold_terminal_echo()  # keys typed while the REPL starts show once, at its prompt
    try:
        fast = _fast_path(argv)
        if fast is not None:
            if argv[0] in _ENGINE_COMMANDS:  # (help and usage errors go to typer: no engine)
                _import_engine_gc_paused()
            sys.exit(fast())
        __getattr__("app")(args=argv, prog_name="gradcli")
    except SystemExit:
        raise
    except KeyboardInterrupt:
        _err("gradcli: interrupted")
        sys.exit(130)
    except BrokenPipeError:
        _quiet_stdout()
        sys.exit(0)
    except Exception as e:  # a bug in gradcli: report it without a traceback
        if os.environ.get("GRADCLI_DEBUG"):
            raise
        _err(f"gradcli: internal error: {type(e).__name__}: {e} "
             "(rerun with GRADCLI_DEBUG=1 for a traceback)")
        sys.exit(1)
