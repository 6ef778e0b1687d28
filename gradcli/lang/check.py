"""``gradcli check``: compile without running, reporting every error found."""
from __future__ import annotations

from .errors import CompileError, ForbiddenError, GradcliError
from .parser import parse_all
from .session import Session, read_source


def check_source(source: str, filename: str) -> list:
    """Every syntax and forbidden-name error of a program, as CompileErrors
    sorted by position (empty when it compiles)."""
    session = Session()
    module, errors = parse_all(source, filename, max_nesting=session.limits.max_nesting)
    if module is not None:
        try:
            session.compile(source, filename)
        except CompileError as e:
            errors.extend(e.errors)
        except GradcliError as e:
            errors.append(e)
    elif errors:
        # the parts that parsed may still hold forbidden names
        _, partial = _parts(source, filename, errors, session)
        errors.extend(partial)
    errors.sort(key=lambda e: (e.line, e.col))
    return errors


def _parts(source, filename, syntax_errors, session):
    bad_lines = {e.line for e in syntax_errors}
    lines = source.split("\n")
    kept = []
    # blank out top-level statements that contain a syntax error
    i = 0
    blocks = []
    while i < len(lines):
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or lines[j][:1] in " \t#)]}" or
                                  lines[j].lstrip().startswith(("else", "elif", "except",
                                                                "finally"))):
            j += 1
        blocks.append((i, j))
        i = j
    for a, b in blocks:
        if any(a < ln <= b for ln in bad_lines):
            kept.extend([""] * (b - a))
        else:
            kept.extend(lines[a:b])
    try:
        session.compile("\n".join(kept), filename)
    except CompileError as e:
        return None, [x for x in e.errors if isinstance(x, ForbiddenError)]
    except GradcliError:
        pass
    return None, []


def check_file(path: str) -> list:
    """Rendered reports of every error in one file (empty list: it compiles)."""
    try:
        source, filename = read_source(path)
    except CompileError as e:
        return [e.render()]
    return [e.render() for e in check_source(source, filename)]
