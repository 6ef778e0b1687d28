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
    """A value as the report shows it: its repr, cut to MAX_VALUE_CHARS. A user
    ``__repr__`` that fails, or runs out of the program's budget (a guard is a
    BaseException), must not hide the failure: it is named instead."""
    from .limits import LimitExceeded

    try:
        text = repr(value)
    except (Exception, LimitExceeded) as e:
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
        if isinstance(node, A.Const) or not worth_showing(value):
            continue
        text = source_text(source, node)
        value_text = shown(value)
        if text and text != value_text:
            out.append(f"  where {text} = {value_text}")
    return out


def worth_showing(value) -> bool:
    """Whether a ``where`` line for ``value`` helps: modules, functions and classes are
    what a name reads, not what it compared (pytest leaves them out too)."""
    from .limits import LimitExceeded

    if type(value).__name__ in ("module", "ProgramModule"):
        return False
    try:  # (hasattr may run a program's __getattr__)
        return not (callable(value) and not hasattr(value, "shape"))
    except (Exception, LimitExceeded):
        return True


def allclose_detail(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> list:
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
    try:
        rtol, atol = float(rtol), float(atol)
    except (TypeError, ValueError):
        return []
    with np.errstate(all="ignore"):
        diff = np.abs(x - y)
        allowed = atol + rtol * np.abs(y)
        excess = np.where(x == y, -np.inf, diff - allowed)  # equal infinities are close
        excess = np.where(np.isnan(excess), np.inf, excess)
        if equal_nan:
            excess = np.where(np.isnan(x) & np.isnan(y), -np.inf, excess)
    failing = excess > 0
    # the largest difference among the elements that are not close (NaN counts as largest)
    ranked = np.where(failing, np.where(np.isnan(diff), np.inf, diff), -np.inf)
    worst = np.unravel_index(int(np.argmax(ranked)), ranked.shape)
    bad = int(np.count_nonzero(failing))
    where = f" at index {tuple(int(i) for i in worst)}" if x.ndim else ""
    return [f"  largest difference {float(diff[worst]):.6g}{where} "
            f"({float(x[worst]):.6g} vs {float(y[worst]):.6g}; allowed "
            f"{float(allowed[worst]):.6g} = atol {atol:g} + rtol {rtol:g} * |b|)",
            f"  {bad} of {x.size} elements differ beyond the tolerance"]


#: torch.allclose's parameters after the two tensors, with their defaults
ALLCLOSE_PARAMS = (("rtol", 1e-05), ("atol", 1e-08), ("equal_nan", False))


def _is_allclose_call(test) -> bool:
    """``allclose(a, b, ...)`` in any spelling (torch.allclose, a.allclose, a bare
    allclose), with plain positional and named arguments."""
    if not isinstance(test, A.Call) or not isinstance(test.func, (A.Attribute, A.Name)):
        return False
    name = test.func.attr if isinstance(test.func, A.Attribute) else test.func.id
    return (name == "allclose" and not any(isinstance(a, A.Starred) for a in test.args)
            and all(k.name is not None for k in test.keywords))


def probe(compiler, test, cmpops: dict):
    """``ev(env) -> (passed, explain)`` for an assert's test: ``explain()`` builds the
    explanation lines of a failure. Comparisons and ``allclose`` calls evaluate their
    parts here (once, in order); anything else runs as compiled."""
    source = compiler.source
    if isinstance(test, A.Compare):
        return _probe_compare(compiler, test, [cmpops[op] for op in test.ops], source)
    if _is_allclose_call(test):
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
                if worth_showing(value):
                    lines.append(f"  where {name} = {shown(value)}")
            return lines
        return False, explain
    return ev


def _probe_compare(compiler, test, ops, source):
    """A comparison, chained or not, evaluated as Python does (each operand once, left to
    right, stopping at the first false link); a failure shows that link's operands."""
    nodes = [test.left] + list(test.comparators)
    operands = [compiler.expr(n) for n in nodes]
    loc = compiler.loc(test)
    symbols = test.ops

    def ev(env):
        a = operands[0](env)
        for i, op in enumerate(ops):
            b = operands[i + 1](env)
            try:
                r = op(a, b)
                ok = bool(r)
            except BaseException as e:
                note(e, loc)
                raise
            if not ok:
                return False, _link_explainer(a, b, symbols[i], nodes[i], nodes[i + 1],
                                              source)
            a = b
        return True, None
    return ev


def _link_explainer(a, b, symbol, left_node, right_node, source):
    """``explain()`` of the failed link ``a SYMBOL b`` of a comparison."""
    def explain():
        return ([f"assert {shown(a)} {symbol} {shown(b)}"]
                + _where_lines(((left_node, a), (right_node, b)), source))
    return explain


def _probe_allclose(compiler, test, source):
    func = compiler.expr(test.func)
    args = [compiler.expr(a) for a in test.args]
    kwargs = [(k.name, compiler.expr(k.value)) for k in test.keywords]
    loc = compiler.loc(test)
    text = source_text(source, test)
    method = isinstance(test.func, A.Attribute)

    def ev(env):
        f = func(env)
        values = [a(env) for a in args]
        named = {name: value(env) for name, value in kwargs}
        try:
            r = f(*values, **named)
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
            params = ("input", "other") + tuple(p for p, _ in ALLCLOSE_PARAMS)
            bound = dict(zip(params, operands))
            bound.update((k, v) for k, v in named.items() if k in params)
            if "input" in bound and "other" in bound:
                settings = {p: bound.get(p, default) for p, default in ALLCLOSE_PARAMS}
                lines += allclose_detail(bound["input"], bound["other"], **settings)
            return lines
        return False, explain
    return ev


def _is_module(f) -> bool:
    return type(getattr(f, "__self__", None)).__name__ == "module"
