"""The REPL's logic, without the terminal: inputs, meta-commands, completion.

:class:`Repl` runs one accepted input at a time (:meth:`Repl.handle`) in a
:class:`gradcli.lang.Session` that survives every error. Everything here is
plain Python so it can be tested in-process; the prompt_toolkit front end is
:mod:`gradcli.cli.repl_ui`. Output goes to the current ``sys.stdout`` (values,
views) and ``sys.stderr`` (errors, notices), looked up at each call.

Also here, for the front end: :func:`enter_action` (does Enter accept the
input or open a new line?), :func:`next_indent` (auto-indent) and
:func:`completions` (names, attributes after ``x.``, keywords, meta-commands).
"""
from __future__ import annotations

import io
import re
import sys
import tokenize

PROMPT = ">>> "
CONTINUATION = "... "

#: the language's keywords (a Python subset), offered by completion
KEYWORDS = (
    "and", "as", "assert", "break", "continue", "def", "del", "elif", "else", "except",
    "False", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "None", "not", "or", "pass", "raise", "return", "True", "try", "while", "with",
)

#: name -> (argument synopsis, description); the order of :help
META_COMMANDS = {
    ":graph": ("EXPR", "the grad_fn graph of a tensor, down to its named leaves"),
    ":grads": ("", "a table of every named tensor that requires grad, with .grad"),
    ":explain": ("EXPR [GRAD]", "the backward pass of EXPR step by step, without side effects\n"
                 "(a non-scalar EXPR needs GRAD, as backward does: :explain y, ones(3))"),
    ":show": ("EXPR", "a panel with a tensor's shape, dtype, grad_fn, values and .grad"),
    ":reset": ("", "a fresh session: forget every name, reset seed and print options"),
    ":help": ("", "this help"),
    ":quit": ("", "leave the REPL (also Ctrl-D)"),
}
ALIASES = {":q": ":quit", ":exit": ":quit", ":h": ":help", ":?": ":help"}

HELP_EXAMPLES = """\
Examples:
  >>> x = tensor([1., 2., 3.], requires_grad=True)
  >>> y = (x ** 2).sum()
  >>> y.backward()
  >>> x.grad
  tensor([2., 4., 6.])
  >>> :graph y
  >>> :explain (x * x).sum()
  >>> def f(a):
  ...     return a.sin() * a
  ...
  >>> f(x)

Enter runs the input (a block such as def/for/if/with continues until an
empty line); Tab completes names, tensor methods after "x." and commands;
Up/Down walk the history; Ctrl-C clears the line or stops a running
program (your variables are kept); Ctrl-D or :quit leaves."""


def help_text() -> str:
    width = max(len(f"{k} {a}".rstrip()) for k, (a, _) in META_COMMANDS.items())
    lines = ["Meta-commands (arguments are gradcli expressions evaluated in the session):"]
    for name, (args, desc) in META_COMMANDS.items():
        first, *more = desc.split("\n")
        lines.append(f"  {f'{name} {args}'.rstrip():<{width}}  {first}")
        lines.extend(f"  {'':<{width}}  {line}" for line in more)
    lines.append("")
    lines.append(HELP_EXAMPLES)
    return "\n".join(lines)


# ------------------------------------------------------------------ the session
class Repl:
    """One interactive session: ``handle(text)`` runs an accepted input and
    returns False when the REPL should end (``:quit``), True otherwise."""

    def __init__(self, *, seed: int = 0, limits=None):
        self.seed = seed
        self.limits = limits
        self.counter = 0
        self.session = self._new_session()

    # ------------------------------------------------------------ set-up
    def _new_session(self):
        from gradcli.lang import Session
        _reset_engine(self.seed)
        session = Session(limits=self.limits, interactive=True, seed=self.seed)
        session.builtins  # noqa: B018 - load the facade now (installs tensor methods)
        return session

    def reset(self):
        self.session = self._new_session()

    def next_filename(self) -> str:
        self.counter += 1
        return f"<input-{self.counter}>"

    # ------------------------------------------------------------ inputs
    def handle(self, text: str) -> bool:
        """Run one input; report every error on stderr; keep the session."""
        try:
            return self._handle(text)
        except KeyboardInterrupt:
            _err("KeyboardInterrupt")
        except Exception as e:  # a bug in gradcli: report it, keep the session
            _err(f"gradcli: internal error: {type(e).__name__}: {e} (the session is kept)")
        finally:
            _flush()
        return True

    def _handle(self, text: str) -> bool:
        stripped = text.strip()
        if not stripped:
            return True
        if stripped.startswith(":"):
            return self.meta(stripped)
        if stripped in ("exit", "quit", "exit()", "quit()") and \
                stripped.rstrip("()") not in self.session.globals:
            return False
        if stripped in ("help", "help()") and "help" not in self.session.globals:
            _out("gradcli's help is the :help command (Python's help() is not available "
                 "here):\n")
            _out(help_text())
            return True
        asked = re.fullmatch(r"help\((.+)\)", stripped, re.S)
        if asked and "help" not in self.session.globals and "\n" not in stripped:
            what = asked.group(1).strip()
            _out(f"Python's help() is not available in gradcli: :show {what} describes a "
                 "value (shape, dtype, grad_fn, values, .grad); :help lists the REPL's "
                 "commands\n")
            return True
        self.run(text)
        return True

    def run(self, source: str) -> None:
        """Run statements, echoing each top-level expression's value."""
        from gradcli.lang import GradcliError
        from gradcli.lang.limits import LimitExceeded
        try:
            self.session.run(source, self.next_filename(), echo=True)
        except GradcliError as e:
            report(e)
        except LimitExceeded as e:  # a guard tripped outside the program (defensive)
            _flush()
            _err(f"LimitError: {e}")

    def evaluate(self, source: str):
        """The value of one expression (a meta-command's argument); raises
        GradcliError (reported by the caller)."""
        from gradcli.lang import parse_expression
        filename = self.next_filename()
        parse_expression(source, filename)
        return self.session.run(source, filename)

    # ------------------------------------------------------------ meta-commands
    def meta(self, line: str) -> bool:
        m = re.match(r"(:[^\s(]*)\s*(.*)\Z", line, re.S)
        name, arg = m.group(1), m.group(2).strip()
        name = ALIASES.get(name, name)
        if name not in META_COMMANDS:
            close = [c for c in META_COMMANDS if c.startswith(name) and name != ":"]
            hint = f" (did you mean {' or '.join(close)}?)" if close and len(name) > 1 else ""
            _err(f"unknown command {name!r}{hint}; type :help for the list")
            return True
        if name == ":quit":
            return False
        if name == ":help":
            _out(help_text())
            return True
        if name == ":reset":
            self.reset()
            _out("session reset: all names cleared")
            return True
        needs_arg = bool(META_COMMANDS[name][0])
        if needs_arg and not arg:
            _err(f"usage: {name} {META_COMMANDS[name][0]}")
            return True
        if not needs_arg and arg:
            _err(f"{name} takes no argument")
            return True
        from gradcli.lang import GradcliError
        try:
            getattr(self, "meta_" + name[1:])(arg)
        except GradcliError as e:
            report(e)
        return True

    def _view(self, command, fn, *args, **kwargs):
        try:
            fn(*args, **kwargs)
        except KeyboardInterrupt:
            raise
        except Exception as e:
            _flush()
            _err(f"{command}: {type(e).__name__}: {e}")

    def meta_graph(self, arg):
        from gradcli import views
        value = self.evaluate(arg)
        self._view(":graph", views.graph, value, names=self.session.globals)

    def meta_grads(self, arg):
        from gradcli import views
        self._view(":grads", views.grads, self.session.globals)

    def meta_show(self, arg):
        from gradcli import views
        value = self.evaluate(arg)
        name = arg if re.fullmatch(r"[A-Za-z_][\w.]*", arg) else None
        if name is None:  # (`:show model[0].weight`: the parameter's qualified name)
            from gradcli.views.common import name_for
            name = name_for(value, self.session.globals)
        self._view(":show", views.show, value, name=name)

    def meta_explain(self, arg):
        from gradcli import views
        out_src, grad_src = split_explain_args(arg)
        if grad_src is None:
            value = self.evaluate(out_src)
            if isinstance(value, tuple) and len(value) == 2 and not _is_tensor(value) \
                    and _is_tensor(value[0]):
                out, gradient = value  # ":explain y, ones(3)"
            else:
                out, gradient = value, None
        else:
            out = self.evaluate(out_src)
            gradient = self.evaluate(grad_src)
        if gradient is None and _is_tensor(out) and out.numel() != 1:
            _err(f":explain: {out_src} has {out.numel()} elements, and backward needs a "
                 f"gradient for a non-scalar output: give it as a second argument, e.g. "
                 f":explain {out_src}, ones_like({out_src})")
            return
        self._view(":explain", views.explain, out, gradient, names=self.session.globals)


def split_explain_args(arg: str):
    """``OUT [GRADIENT]``: (out, gradient or None) source texts. The whole
    argument is one expression if it parses (``y, ones(3)`` is a tuple, split
    by the caller); otherwise the first split at top-level whitespace where
    both sides are expressions (``y ones(3)``)."""
    from gradcli.lang import CompileError, parse_expression
    try:
        parse_expression(arg)
        return arg, None
    except CompileError:
        pass
    for pos in _top_level_spaces(arg):
        left, right = arg[:pos].strip(), arg[pos:].strip()
        if not left or not right:
            continue
        try:
            parse_expression(left)
            parse_expression(right)
        except CompileError:
            continue
        return left, right
    return arg, None  # let the evaluation report the syntax error


def _top_level_spaces(text: str):
    chars, _ = _unquoted_chars(text)
    depth = 0
    for i, c in chars:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c.isspace() and depth == 0:
            yield i


def _unquoted_chars(text: str):
    """``([(index, char), ...], ends_in_string)``: the characters of text outside string
    literals (quotes and backslash escapes skipped), and whether a string is left open.

    The argument splitter and the completer both must not look inside strings."""
    chars, quote = [], None
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        else:
            chars.append((i, c))
        i += 1
    return chars, quote is not None


def _is_tensor(value) -> bool:
    from gradcli.engine.tensor import Tensor
    return isinstance(value, Tensor)


def report(err) -> None:
    """An error report on stderr: a caret report, or a short line for Ctrl-C."""
    from gradcli.lang import Interrupted
    from gradcli.lang.session import render_error
    _flush()
    if isinstance(err, Interrupted):
        where = err.filename + (f":{err.line}" if err.line else "")
        _err(f"KeyboardInterrupt: interrupted at {where} (the session and its variables are kept)")
        state = _in_backward(getattr(err, "exc", None))
        if state == "freed":
            _err("note: the backward pass was cut short: part of its graph is already freed "
                 "and some .grad may hold partial sums; run the forward again (and zero the "
                 "gradients) before calling backward")
        elif state:
            _err("note: the backward pass was cut short: its graph is kept (retain_graph) "
                 "but some .grad may hold partial sums; zero the gradients before calling "
                 "backward again")
    else:
        _err(render_error(err))


def _in_backward(exc):
    """Whether ``exc`` was raised inside the engine's backward pass: "freed" (the pass
    frees the graph as it goes), "kept" (retain_graph), or None (elsewhere)."""
    tb = getattr(exc, "__traceback__", None)
    state = None
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename.replace("\\", "/").endswith("gradcli/engine/autograd.py"):
            retain = frame.f_locals.get("retain_graph", None)
            if state is None or retain is not None:  # the innermost setting decides
                state = "kept" if retain else "freed"
        tb = tb.tb_next
    return state


def _reset_engine(seed: int) -> None:
    try:
        from gradcli.lang.session import reset_engine
    except ImportError:  # pragma: no cover - older language module
        return
    reset_engine(seed)


def _out(text: str) -> None:
    _write_line(sys.stdout, text)


def _err(text: str) -> None:
    _write_line(sys.stderr, text)


def _write_line(stream, text: str) -> None:
    """Write and flush one line, ignoring a closed or broken stream (a REPL whose terminal
    went away must not fail while reporting)."""
    try:
        stream.write(text + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass


# ------------------------------------------------------------------ editing
def enter_action(text: str, cursor: int | None = None) -> str:
    """What Enter does: "accept" (run the input) or "newline" (continue it).

    A meta-command or a complete single statement is accepted. A block (or an
    open bracket, a trailing backslash, an unterminated triple-quoted string)
    continues on a new line until an empty line ends it, as at Python's
    prompt; an empty line inside brackets or a string still continues. With
    the cursor inside a multi-line input, Enter opens a line there."""
    if cursor is None:
        cursor = len(text)
    if text.lstrip().startswith(":") or not text.strip():
        return "accept"
    if "\n" not in text:
        return "newline" if needs_more(text) else "accept"
    if text[cursor:].strip():
        return "newline"
    before = text[:cursor]
    current = before.rsplit("\n", 1)[-1]
    if "\n" in before and not current.strip():
        # an empty line ends the block, unless a bracket or string is open
        return "newline" if _open_bracket_or_string(before.rstrip()) else "accept"
    return "newline" if needs_more(before) else "accept"


def needs_more(text: str) -> bool:
    """The input is the start of a longer one: :func:`gradcli.lang.is_incomplete`,
    or (what it misses inside an indented block) a last line ending with ``:``, a
    decorator line (``@staticmethod`` before a method: its def follows), or an open
    bracket or triple-quoted string."""
    from gradcli.lang import is_incomplete
    if is_incomplete(text):
        return True
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if lines:
        last = _strip_comment(lines[-1]).strip()
        if last.endswith(":") or last.startswith("@"):
            return True
    return _open_bracket_or_string(text.rstrip())


def _open_bracket_or_string(text: str) -> bool:
    try:
        for _ in tokenize.generate_tokens(io.StringIO(text + "\n").readline):
            pass
    except tokenize.TokenError:
        return True
    except (SyntaxError, ValueError):
        return False
    return text.endswith("\\")


_DEDENT_AFTER = re.compile(r"\s*(return|pass|break|continue|raise)\b")


def next_indent(line: str) -> str:
    """The indentation of the line after ``line``: the same, four more after
    a ``:``, four less after return/pass/break/continue/raise."""
    indent = line[: len(line) - len(line.lstrip())]
    code = _strip_comment(line).rstrip()
    if code.endswith(":"):
        return indent + "    "
    if _DEDENT_AFTER.match(code) and indent:
        return indent[:-4] if indent.endswith("    ") else indent[:-1]
    if _open_bracket_or_string(code) and code and code[-1] in "([{,":
        return indent + "    "
    return indent


def _strip_comment(line: str) -> str:
    """The line without its comment: the first # outside a string (escapes respected)."""
    for i, c in _unquoted_chars(line)[0]:
        if c == "#":
            return line[:i]
    return line


# ------------------------------------------------------------------ completion
_WORD = re.compile(r"([A-Za-z_][\w]*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*\.\s*(\w*)\Z|(\w*)\Z")
#: tensor attributes that are tensors again (completion looks through them
#: without evaluating anything)
_TENSOR_ATTRS = frozenset({"grad", "data", "T", "mT", "H", "mH", "real"})


def completions(session, text_before_cursor: str) -> tuple:
    """(prefix, candidates) for the text before the cursor: meta-command
    names after a leading ``:``, public attributes after ``name.`` (tensor
    methods, module names), otherwise session names, builtins and keywords.
    Nothing is evaluated: ``x.`` looks ``x`` up; ``torch.nn.`` walks modules."""
    stripped = text_before_cursor.lstrip()
    if stripped.startswith(":") and not re.search(r"\s", stripped):
        names = list(META_COMMANDS) + list(ALIASES)
        return stripped, sorted(n for n in names if n.startswith(stripped))
    if stripped.startswith(":"):  # a meta-command's argument: an expression
        text_before_cursor = re.sub(r"\A\s*:\S*\s*", "", text_before_cursor)
    if _in_string_or_comment(text_before_cursor):
        return "", []
    m = _WORD.search(text_before_cursor)
    if m is None:
        return "", []
    if m.group(1) is not None:
        prefix = m.group(2)
        before = text_before_cursor[: m.start(1)]
        if before[-1:].isdigit() or before[-1:] == ".":
            return prefix, []
        names = attribute_names(session, re.sub(r"\s+", "", m.group(1)).split("."))
    else:
        prefix = m.group(3)
        before = text_before_cursor[: m.start(3)]
        if not prefix or prefix[0].isdigit() or before.rstrip().endswith("."):
            return prefix, []
        names = set(session.names()) | set(KEYWORDS)
        if before.strip() == "" and "\n" not in text_before_cursor:
            names |= {"exit", "quit", "help"} - set(session.globals)
    public = prefix.startswith("_")
    return prefix, sorted((n for n in names if n.startswith(prefix) and
                           (public or not n.startswith("_"))),
                          key=lambda n: (n.lower(), n))


def attribute_names(session, chain) -> set:
    """The attributes a program may read from ``a.b.c`` (chain of names)."""
    from gradcli.engine.tensor import Tensor
    try:
        obj = session.lookup(chain[0])
    except KeyError:
        return set()
    for part in chain[1:]:
        if obj is Tensor or isinstance(obj, Tensor):
            if part not in _TENSOR_ATTRS:
                return set()
            obj = Tensor  # stands for "a tensor"; nothing is evaluated
        elif _is_module(obj):
            if part not in _module_names(obj):
                return set()
            obj = getattr(obj, part, None)
        else:  # an nn.Module, a program's object: `net.fc1.` (registered parts, attributes)
            if part not in _public_attributes(obj):
                return set()
            obj = _static_attr(obj, part)
            if obj is _UNKNOWN:
                return set()
    return _public_attributes(obj)


_UNKNOWN = object()


def _static_attr(obj, name: str):
    """``obj.name`` found without running any code: an nn.Module's registered submodule,
    parameter or buffer, an instance attribute, or a plain class attribute; _UNKNOWN for
    anything computed (a property such as a parametrized weight, a __getattr__)."""
    import inspect
    own = getattr(obj, "__dict__", None)
    if isinstance(own, dict):
        for table in ("_modules", "_parameters", "_buffers"):
            parts = own.get(table)
            if isinstance(parts, dict) and name in parts:
                return parts[name]
        if name in own:
            return own[name]
    try:
        value = inspect.getattr_static(obj, name)
    except AttributeError:
        return _UNKNOWN
    if isinstance(value, (property, staticmethod, classmethod)) or hasattr(value, "__get__") \
            and not callable(value):
        return _UNKNOWN
    return value


def _is_module(obj) -> bool:
    import types
    return isinstance(obj, types.ModuleType)


def _module_names(mod) -> frozenset:
    from gradcli.lang import runtime as R
    return R.module_names(mod) if R.is_allowed_module(mod) else frozenset()


def _public_attributes(obj) -> set:
    from gradcli.engine.tensor import Tensor
    from gradcli.lang import runtime as R
    if _is_module(obj):
        return set(_module_names(obj))
    tp = obj if obj is Tensor else type(obj)
    if obj is Tensor or isinstance(obj, Tensor):
        from gradcli.engine.tensor import UNSUPPORTED_METHODS
        names = {n for n in dir(Tensor) if not n.startswith("_")}
        return (names - R.DENY_ATTRS - UNSUPPORTED_METHODS) | {"_version"}
    policy = R._policy(tp)
    if policy in ("engine", "user"):  # (an nn.Module's dir lists its registered parts)
        try:
            names = dir(obj)
        except Exception:  # noqa: BLE001 - a half-built object: nothing to offer
            return set()
        return {n for n in names if not n.startswith("_")} - R.DENY_ATTRS
    if isinstance(policy, frozenset):
        return set(policy)
    return set()


def _in_string_or_comment(text: str) -> bool:
    chars, ends_in_string = _unquoted_chars(text.rsplit("\n", 1)[-1])
    return ends_in_string or any(c == "#" for _, c in chars)

