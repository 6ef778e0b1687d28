"""``gradcli repl`` and ``gradcli`` on a terminal: the interactive REPL.

``register(app)`` adds the ``repl`` command; ``start(...)`` runs the REPL and
returns the exit code (0 after Ctrl-D or ``:quit``). When stdin is not a
terminal (``echo 'print(1)' | gradcli repl``) the input runs as a script,
exactly like ``gradcli run -``.

Cheap to import: prompt_toolkit, pygments and the language load only when the
REPL starts (:mod:`gradcli.cli.repl_ui` is the terminal front end,
:mod:`gradcli.cli.repl_core` the session and meta-commands).

History is kept across sessions in ``--history FILE``, else ``$GRADCLI_HISTORY``,
else ``$XDG_DATA_HOME/gradcli/history`` (``~/.local/share/gradcli/history``);
an empty value, or a file that cannot be written, keeps it in memory only.
"""

import os
import sys
from typing import Optional

REPL_HELP = """Start the interactive REPL (also: gradcli with no arguments on a terminal).

Every expression's value is echoed; errors are shown with a caret and the
session and its variables are kept; Ctrl-C stops a running program, Ctrl-D
leaves. Blocks (def, for, if, with ...) continue until an empty line.

Meta-commands: :graph EXPR, :grads, :explain EXPR [GRAD], :show EXPR,
:reset, :help, :quit.

Example session:

  >>> x = tensor([1., 2.], requires_grad=True)

  >>> y = (x * x).sum(); y.backward(); x.grad

  tensor([2., 4.])

  >>> :graph y

With stdin not a terminal (echo 'print(1 + 1)' | gradcli repl) the input runs
as a script, as gradcli run - does.
"""


def history_path(option: Optional[str] = None) -> Optional[str]:
    """The history file: ``--history``, ``$GRADCLI_HISTORY``, then the XDG
    data directory; None (in memory) for an empty value."""
    if option is not None:
        return os.path.expanduser(option) or None
    env = os.environ.get("GRADCLI_HISTORY")
    if env is not None:
        return os.path.expanduser(env) or None
    base = os.environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "gradcli", "history")


def start(*, seed: int = 0, no_color: bool = False, history: Optional[str] = None,
          max_steps: Optional[int] = None, max_elements: Optional[int] = None,
          max_depth: Optional[int] = None, max_length: Optional[int] = None) -> int:
    """Run the REPL on the terminal (or stdin as a script when it is not a
    terminal); return the exit code."""
    from gradcli.cli.app import do_run
    from gradcli.cli.options import _limits
    if no_color:
        os.environ["NO_COLOR"] = "1"
    limit_kw = dict(max_steps=max_steps, max_elements=max_elements, max_depth=max_depth,
                    max_length=max_length)
    if not _isatty(sys.stdin):
        return do_run(["-"], seed=seed, **limit_kw)
    limits = _limits(**limit_kw)
    if limits is None:
        return 2
    from gradcli.cli import repl_ui
    from gradcli.cli.repl_core import Repl
    color = not os.environ.get("NO_COLOR")
    return repl_ui.run(Repl(seed=seed, limits=limits), history_path=history_path(history),
                       color=color)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _positive(value: Optional[int]):
    import typer
    if value is not None and value <= 0:
        raise typer.BadParameter("must be a positive integer")
    return value


def register(app) -> None:
    """Add ``gradcli repl`` to the typer app."""
    from typing import Annotated

    import typer

    @app.command("repl", help=REPL_HELP)
    def repl_cmd(
        seed: Annotated[int, typer.Option("--seed", metavar="N",
                                          help="Starting seed of the random generator.")] = 0,
        no_color: Annotated[bool, typer.Option("--no-color",
                                               help="No colours or syntax highlighting.")] = False,
        history: Annotated[Optional[str], typer.Option(
            "--history", metavar="FILE",
            help="History file (default $GRADCLI_HISTORY, else "
                 "$XDG_DATA_HOME/gradcli/history; '' keeps it in memory).")] = None,
        max_steps: Annotated[Optional[int], typer.Option(
            "--max-steps", callback=_positive, metavar="N",
            help="Step budget of each input (default 10,000,000; env GRADCLI_MAX_STEPS).")] = None,
        max_elements: Annotated[Optional[int], typer.Option(
            "--max-elements", callback=_positive, metavar="N",
            help="Largest tensor allocation in elements (default 100,000,000; "
                 "env GRADCLI_MAX_ELEMENTS).")] = None,
        max_depth: Annotated[Optional[int], typer.Option(
            "--max-depth", callback=_positive, metavar="N",
            help="Nested calls of user functions (default 500; env GRADCLI_MAX_DEPTH).")] = None,
        max_length: Annotated[Optional[int], typer.Option(
            "--max-length", callback=_positive, metavar="N",
            help="Longest string or list (default 10,000,000; env GRADCLI_MAX_LENGTH).")] = None,
    ):
        raise typer.Exit(start(seed=seed, no_color=no_color, history=history,
                               max_steps=max_steps, max_elements=max_elements,
                               max_depth=max_depth, max_length=max_length))
