"""The REPL's terminal front end (prompt_toolkit); imported only by the REPL.

One :class:`prompt_toolkit.PromptSession` for the whole run: file history
(in memory when the file cannot be written), auto-suggestion from history,
completion (:func:`gradcli.cli.repl_core.completions`), Python syntax
highlighting, and multi-line editing where Enter either runs the input or
opens an auto-indented line (:func:`gradcli.cli.repl_core.enter_action`).
"""
from __future__ import annotations

import os
import sys

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, has_selection
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.output.color_depth import ColorDepth

from gradcli import __version__

from .repl_core import CONTINUATION, PROMPT, completions, enter_action, next_indent


class GradcliCompleter(Completer):
    """Names of the session (globals, builtins, the torch facade), keywords,
    attributes after ``x.`` and meta-commands; nothing is evaluated."""

    def __init__(self, repl):
        self.repl = repl

    def get_completions(self, document, complete_event):
        try:
            prefix, names = completions(self.repl.session, document.text_before_cursor)
        except Exception:  # completion must never break the prompt
            return
        for name in names:
            yield Completion(name, start_position=-len(prefix))


def make_history(path: str | None):
    """(history, notice): a FileHistory at ``path`` (its directory created),
    or an in-memory history and a one-line notice why."""
    if not path:
        return InMemoryHistory(), None
    try:
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as e:
        reason = e.strerror or str(e)
        return InMemoryHistory(), f"gradcli: history is not saved ({path}: {reason})"
    return FileHistory(path), None


def key_bindings(repl):
    kb = KeyBindings()

    def line_before_cursor() -> str:
        from prompt_toolkit.application import get_app
        return get_app().current_buffer.document.current_line_before_cursor

    @Condition
    def at_indentation() -> bool:  # only whitespace before the cursor on this line
        return not line_before_cursor().strip()

    @Condition
    def in_indentation() -> bool:  # and some of it
        before = line_before_cursor()
        return bool(before) and not before.strip()

    @kb.add("enter", filter=~has_selection)
    @kb.add("c-j", filter=~has_selection)  # a pasted "\n" (a typed Enter sends "\r")
    def _enter(event):
        b = event.current_buffer
        state = b.complete_state
        if state is not None:
            if state.current_completion is not None:
                b.apply_completion(state.current_completion)
                return
            b.complete_state = None
        if enter_action(b.text, b.cursor_position) == "accept":
            text = b.text
            if "\n" in text:
                text = text.rstrip()
                b.document = Document(text, len(text))
            b.validate_and_handle()
        elif typed_ahead(event):
            # a paste or input typed while the REPL was busy: its lines carry their own
            # indentation, so none is added (they run as Python's prompt runs them)
            b.insert_text("\n")
        else:
            line = b.document.current_line_before_cursor
            b.insert_text("\n" + next_indent(line))

    @kb.add("tab", filter=at_indentation & ~has_selection)
    def _tab(event):
        event.current_buffer.insert_text("    ")

    @kb.add("tab", filter=~at_indentation & ~has_selection)
    def _complete(event):
        # synchronous: a unique completion is inserted at once, even while a
        # complete-while-typing task is still running (which would drop an
        # asynchronous start_completion)
        b = event.current_buffer
        if b.complete_state is not None:
            b.complete_next()
            return
        try:
            prefix, names = completions(repl.session, b.document.text_before_cursor)
        except Exception:
            return
        if not names:
            return
        common = os.path.commonprefix(names)
        if len(common) > len(prefix):
            b.delete_before_cursor(len(prefix))
            b.insert_text(common)
        if len(names) > 1:
            b.start_completion(select_first=False)

    @kb.add("backspace", filter=in_indentation & ~has_selection)
    def _backspace(event):
        b = event.current_buffer
        before = b.document.current_line_before_cursor
        b.delete_before_cursor(len(before) - (len(before) - 1) // 4 * 4)

    return kb


def typed_ahead(event) -> bool:
    """More keys are already waiting behind this one: it arrived faster than anyone
    types (an unbracketed paste, or lines typed while a program ran)."""
    try:
        return bool(event.app.key_processor.input_queue)
    except AttributeError:
        return False


def continuation(width, line_number, wrap_count):
    return CONTINUATION.rjust(width)


def make_prompt_session(repl, *, history_path: str | None, color: bool, input=None,
                        output=None):
    """The PromptSession of the REPL (``input``/``output`` for tests)."""
    history, notice = make_history(history_path)
    if notice:
        print(notice, file=sys.stderr)
    lexer = None
    if color:
        from prompt_toolkit.lexers import PygmentsLexer
        from pygments.lexers.python import PythonLexer
        lexer = PygmentsLexer(PythonLexer)
    if output is None:
        from prompt_toolkit.output import create_output
        # the prompt on stderr when stdout is redirected to a file (results go there)
        output = create_output(stdout=sys.stderr if prompt_to_stderr() else sys.stdout)
    if hasattr(output, "enable_cpr"):
        # no cursor-position requests: a terminal (or pexpect, script, an IDE console)
        # that never answers makes prompt_toolkit warn after 2 s and echo input twice
        output.enable_cpr = False
    return PromptSession(
        message=PROMPT,
        multiline=True,
        prompt_continuation=continuation,
        history=history,
        auto_suggest=AutoSuggestFromHistory(),
        completer=GradcliCompleter(repl),
        complete_while_typing=True,
        lexer=lexer,
        include_default_pygments_style=color,
        color_depth=None if color else ColorDepth.DEPTH_1_BIT,
        key_bindings=key_bindings(repl),
        enable_history_search=False,
        mouse_support=False,
        input=input,
        output=output,
    )


def prompt_to_stderr() -> bool:
    """stdout redirected to a file while stderr is the terminal: prompt there."""
    return not sys.stdout.isatty() and sys.stderr.isatty()


class no_terminal_echo:
    """While a program runs, the terminal does not echo what is typed: the keys wait
    in the input buffer and the next prompt shows them once, as it reads them."""

    def __enter__(self):
        self.saved = None
        try:
            import termios

            fd = sys.stdin.fileno()
            if os.isatty(fd):
                self.saved = termios.tcgetattr(fd)
                quiet = list(self.saved)
                quiet[3] &= ~termios.ECHO
                termios.tcsetattr(fd, termios.TCSANOW, quiet)
                self.fd = fd
        except (ImportError, OSError, ValueError, AttributeError):
            self.saved = None
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            import termios

            try:
                termios.tcsetattr(self.fd, termios.TCSANOW, self.saved)
            except (OSError, ValueError):
                pass
        return False


def run(repl, *, history_path: str | None, color: bool) -> int:
    """The read-eval-print loop; returns the exit code (0)."""
    session = make_prompt_session(repl, history_path=history_path, color=color)
    print(f"gradcli {__version__} — type :help for commands, Ctrl-D to exit",
          file=sys.stderr if prompt_to_stderr() else sys.stdout)
    while True:
        try:
            text = session.prompt()
            with no_terminal_echo():  # keys typed while it runs wait for the next prompt
                going_on = repl.handle(text)  # handle() reports its errors and Ctrl-C
            if not going_on:
                break
        except KeyboardInterrupt:
            continue  # Ctrl-C at the prompt clears the line
        except EOFError:
            break
    return 0
