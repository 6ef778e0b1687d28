"""Assertion introspection: what a failed ``assert`` shows, as pytest shows it.

A failed ``assert x.grad[1] == 13`` reports the values the comparison saw
(``assert tensor(12.) == 13``) and where they came from (``where x.grad[1] =
tensor(12.)``); a failed ``torch.allclose(a, b)`` reports the largest difference
and where it lies; any other failed expression lists the values of the names it
reads. The operands are evaluated once, in Python's order, so introspection never
changes what a program does; the exception the program sees keeps Python's own
message (empty, or the assert's message), and the explanation travels beside it
to the error report (``EXPLAIN_KEY`` in the exception's ``__dict__``).
"""

from __future__ import annotations

from . import ast as A
from .runtime import note

#: where a failed assert's explanation lines ride on the AssertionError
EXPLAIN_KEY = "_gradcli_explain"
#: longest value text shown per operand (a large tensor is cut, never the report)
MAX_VALUE_CHARS = 600


def shown(value) -> str:
    """A value as the report shows it: its repr, cut to MAX_VALUE_CHARS."""
    try:
        text = repr(value)
    except Exception as e:  # a user __repr__ that fails must not hide the failure
        text = f"<repr failed: {type(e).__name__}: {e}>"
    if len(text) > MAX_VALUE_CHARS:
        text = text[:MAX_VALUE_CHARS] + f"... ({len(text) - MAX_VALUE_CHARS} more characters)"
    return text


def source_text(source: str | None, node) -> str | None:
    """The program text of ``node`` (one line at most), or None."""
    pos = getattr(node, "pos", None)
    if not source or not pos or len(pos) < 4:
        return None
    line, col, end_line, end_col = pos[:4]
    if not line or line != end_line or not col or end_col <= col:
        return None
    lines = source.splitlines()
    if line > len(lines):
        return None
    return lines[line - 1][col - 1:end_col - 1] or None


def names_in(node) -> list:
    """The distinct names an expression reads, in order of first appearance."""
    found: list = []

    def walk(n):
        if isinstance(n, A.Name):
            if n.id not in found:
                found.append(n.id)
            return
        if isinstance(n, (A.Lambda, A.ListComp, A.GenExp)):
            return  # their names are bound inside
        if isinstance(n, A.Node):
            for field in n._fields:
                walk(getattr(n, field, None))
        elif isinstance(n, (list, tuple)):
            for item in n:
                walk(item)

    walk(node)
    return found


def _where_lines(pairs, source) -> list:
    """``where TEXT = VALUE`` for operands that are not literals and whose text is
    not already the value's own text."""
    out = []
    for node, value in pairs:
        if isinstance(node, A.Const):
            continue
        text = source_text(source, node)
        value_text = shown(value)
        if text and text != value_text:
            out.append(f"  where {text} = {value_text}")
    return out


def allclose_detail(a, b, rtol=1e-05, atol=1e-08) -> list:
    """The largest differences between two tensors that failed ``allclose``."""
    import numpy as np

    try:
        x = np.asarray(a.detach().double().tolist() if hasattr(a, "detach") else a, dtype=float)
        y = np.asarray(b.detach().double().tolist() if hasattr(b, "detach") else b, dtype=float)
        x, y = np.broadcast_arrays(x, y)
    except Exception:
        return []
    if x.size == 0:
        return []
    with np.errstate(all="ignore"):
        diff = np.abs(x - y)
        allowed = atol + rtol * np.abs(y)
        excess = np.where(np.isnan(diff), np.inf, diff - allowed)
    worst = np.unravel_index(int(np.argmax(excess)), excess.shape)
    bad = int(np.count_nonzero(excess > 0))
    where = f" at index {tuple(int(i) for i in worst)}" if x.ndim else ""
    return [f"  largest difference {float(diff[worst]):.6g}{where} "
            f"({float(x[worst]):.6g} vs {float(y[worst]):.6g}; allowed "
            f"{float(allowed[worst]):.3g} = atol {atol:g} + rtol {rtol:g} * |b|)",
            f"  {bad} of {x.size} elements differ beyond the tolerance"]


def probe(compiler, test, cmpops: dict):
    """``ev(env) -> (passed, explain)`` for an assert's test: ``explain()`` builds the
    explanation lines of a failure. Comparisons and ``allclose`` calls evaluate their
    parts here (once, in order); anything else runs as compiled."""
    source = compiler.source
    if isinstance(test, A.Compare) and len(test.ops) == 1:
        return _probe_compare(compiler, test, cmpops[test.ops[0]], source)
    if (isinstance(test, A.Call) and not test.keywords
            and not any(isinstance(a, A.Starred) for a in test.args)
            and isinstance(test.func, (A.Attribute, A.Name))
            and (test.func.attr if isinstance(test.func, A.Attribute) else test.func.id)
            == "allclose"):
        return _probe_allclose(compiler, test, source)
    full = compiler.expr(test)
    readers = [(n, compiler.expr(A.Name(n, pos=test.pos))) for n in names_in(test)]
    text = source_text(source, test)

    def ev(env):
        r = full(env)
        if r:
            return True, None

        def explain():
            lines = [f"assert {text}"] if text else []
            for name, read in readers:
                try:
                    value = read(env)
                except Exception:
                    continue
                if callable(value) and not hasattr(value, "shape"):
                    continue
                lines.append(f"  where {name} = {shown(value)}")
            return lines
        return False, explain
    return ev


def _probe_compare(compiler, test, op, source):
    left = compiler.expr(test.left)
    right = compiler.expr(test.comparators[0])
    loc = compiler.loc(test)
    symbol = test.ops[0]
    right_node = test.comparators[0]

    def ev(env):
        a = left(env)
        b = right(env)
        try:
            r = op(a, b)
            if r:
                return True, None
        except BaseException as e:
            note(e, loc)
            raise

        def explain():
            return ([f"assert {shown(a)} {symbol} {shown(b)}"]
                    + _where_lines(((test.left, a), (right_node, b)), source))
        return False, explain
    return ev


def _probe_allclose(compiler, test, source):
    func = compiler.expr(test.func)
    args = [compiler.expr(a) for a in test.args]
    loc = compiler.loc(test)
    text = source_text(source, test)
    method = isinstance(test.func, A.Attribute)

    def ev(env):
        f = func(env)
        values = [a(env) for a in args]
        try:
            r = f(*values)
            if r:
                return True, None
        except BaseException as e:
            note(e, loc)
            raise

        def explain():
            operands = list(values)
            if method and not _is_module(f):
                bound_to = getattr(f, "__self__", None)
                if bound_to is not None:
                    operands = [bound_to] + operands
            lines = [f"assert {text}"] if text else []
            if len(operands) >= 2:
                rtol = operands[2] if len(operands) > 2 else 1e-05
                atol = operands[3] if len(operands) > 3 else 1e-08
                lines += allclose_detail(operands[0], operands[1], rtol, atol)
            return lines
        return False, explain
    return ev


def _is_module(f) -> bool:
    return type(getattr(f, "__self__", None)).__name__ == "module"
