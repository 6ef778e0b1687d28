"""The errors gradcli reports to users, and their text.

Every report has the same shape (docs/language.md, "Errors")::

    prog.grad:3:12: ZeroDivisionError: division by zero
        3 |     return a / b
          |            ^^^^^
    call chain (most recent call last):
      prog.grad:7 in <module>
      prog.grad:3 in f

The first line is ``FILE:LINE:COL: KIND: MESSAGE`` (columns 1-based), then
the source line with carets under the offending span, then (for errors
inside user functions) the call chain, then an optional ``hint:`` line.
"""
from __future__ import annotations


class GradcliError(Exception):
    """A user-facing error with a source location and a ``render()``."""

    exit_code = 1
    kind = "Error"

    def __init__(self, message: str, filename: str = "<string>", pos=None,
                 source: str | None = None, *, kind: str | None = None,
                 hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.filename = filename
        pos = tuple(pos) if pos else (0, 0, 0, 0)
        self.line, self.col, self.end_line, self.end_col = (tuple(pos) + (0, 0, 0, 0))[:4]
        self.source = source
        self.hint = hint
        if kind is not None:
            self.kind = kind

    def __str__(self) -> str:
        return self.message

    def headline(self) -> str:
        where = self.filename
        if self.line:
            where += f":{self.line}"
            if self.col:
                where += f":{self.col}"
        return f"{where}: {self.kind}: {self.message}" if self.message else f"{where}: {self.kind}"

    def render(self) -> str:
        """The whole report, without a trailing newline."""
        out = [self.headline()]
        out.extend(source_excerpt(self.source, self.line, self.col, self.end_line, self.end_col))
        out.extend(self._extra_lines())
        if self.hint:
            out.append(f"hint: {self.hint}")
        return "\n".join(out)

    def _extra_lines(self) -> list:
        return []


class CompileError(GradcliError):
    """Found before the program runs: syntax, forbidden names, bad imports (exit 2).

    ``errors`` lists every error found (this one first); ``gradcli check``
    prints them all.
    """

    exit_code = 2
    kind = "SyntaxError"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.errors = [self]

    def render_all(self) -> str:
        return "\n".join(e.render() for e in self.errors)


class ForbiddenError(CompileError):
    """A name, attribute or import the sandbox does not allow (exit 2)."""

    kind = "ForbiddenError"


class ProgramError(GradcliError):
    """An exception that escaped the program (exit 1).

    ``exc`` is the original exception (its message is PyTorch's text for
    engine errors); ``chain`` lists the user-function frames as
    ``(filename, line, function name)``, outermost first.
    """

    exit_code = 1

    def __init__(self, message, filename="<string>", pos=None, source=None, *,
                 kind=None, hint=None, exc=None, chain=(), details=()):
        super().__init__(message, filename, pos, source, kind=kind, hint=hint)
        self.exc = exc
        self.chain = list(chain)
        #: what a failed assert saw (the operands' values, the names it read)
        self.details = list(details)

    def _extra_lines(self) -> list:
        lines = list(self.details)
        if len(self.chain) < 2:
            return lines
        lines.append("call chain (most recent call last):")
        prev, repeats = None, 0
        for entry in self.chain:
            if entry == prev:
                repeats += 1
                if repeats >= 3:
                    continue
            else:
                if repeats >= 3:
                    lines.append(f"  [previous line repeated {repeats - 2} more times]")
                prev, repeats = entry, 0
            fn, line, name = entry
            lines.append(f"  {fn}:{line} in {name}")
        if repeats >= 3:
            lines.append(f"  [previous line repeated {repeats - 2} more times]")
        return lines


class LimitError(ProgramError):
    """A resource guard ended the run (exit 1)."""

    kind = "LimitError"


class Interrupted(ProgramError):
    """Ctrl-C ended the run (exit 130)."""

    exit_code = 130
    kind = "KeyboardInterrupt"


class InternalError(GradcliError):
    """A bug in gradcli itself (exit 1)."""

    kind = "InternalError"


def source_excerpt(source, line, col, end_line=0, end_col=0) -> list:
    """``N | text`` and the caret line under columns col..end_col."""
    if not source or not line:
        return []
    lines = source.splitlines()
    if line > len(lines):
        return []
    text = lines[line - 1]
    shown = text.expandtabs(8).rstrip()
    gutter = str(line)
    pad = " " * len(gutter)
    out = [f"    {gutter} | {shown}"]
    if col:
        start = len(text[: col - 1].expandtabs(8))
        if end_line == line and end_col > col:
            stop = len(text[: end_col - 1].expandtabs(8))
        elif end_line > line:
            stop = max(len(shown), start + 1)
        else:
            stop = start + 1
        stop = max(stop, start + 1)
        out.append(f"    {pad} | {' ' * start}{'^' * (stop - start)}")
    return out


def exit_code_of(errors) -> int:
    code = 0
    for e in errors:
        code = max(code, e.exit_code)
    return code
