"""Fused call closures (gradcli/lang/fused.py): a call in a loop or a function body runs as
one closure with its operands read inline. Results, error reports (file, line, column,
caret), limits and the sandbox's refusals are the ones the general closures give: each
program here runs both ways (at module level, where code runs once and keeps the general
closures, and in a loop, where calls are fused) and in CPython."""
import contextlib
import io
import textwrap

import pytest

from gradcli.lang import Limits
from gradcli.lang import fused as F
from gradcli.lang.session import run_source


def run(src, **limits):
    out, err = io.StringIO(), io.StringIO()
    lim = Limits(**limits) if limits else Limits()
    code = run_source(textwrap.dedent(src), "fused.grad", limits=lim, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def python_output(src):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(textwrap.dedent(src), "fused.py", "exec"), {})
    return buf.getvalue()


# every operand kind (global, local, constant, builtin, other expression) in every place
# (callee, method object, positional and keyword arguments) and every sink (value,
# dropped, stored in a global, stored in a local)
PROGRAMS = [
    """
    def f(a, b=10, *, c=100):
        return a + b + c
    xs = []
    k = 5
    for i in range(3):
        xs.append(f(i))
        xs.append(f(i, k))
        xs.append(f(i, k, c=i))
        xs.append(f(k, c=-1, b=2))
        y = f(i, b=3)
        xs.append(y)
        xs.append(max(i, 1, k))
        z = len(xs)
        xs.append(z)
        xs.append(f(len(xs), b=abs(-i)))
        xs.append(str(i).join(["a", "b"]))
        xs.append("-".join(["a", str(i)]))
    print(xs)
    """,
    """
    def g(n):
        acc = []
        for j in range(n):
            v = divmod(j, 2)
            acc.append(v)
            w = round(j / 3, 2)
            acc.append(w)
            acc.append(sorted([j, -j], key=abs, reverse=True))
        m = min(acc[0])
        acc.append(m)
        return acc
    print(g(4))
    h = lambda a, b: pow(a, b)
    print([h(i, 2) for i in range(4)])
    print([sum([i, i], start=1) for i in range(3)])
    """,
    """
    class Acc:
        def __init__(self):
            self.items = []
        def add(self, v, times=1):
            for _ in range(times):
                self.items.append(v)
            return len(self.items)
    a = Acc()
    for i in range(3):
        a.add(i)
        n = a.add(i, times=2)
        print(n, a.add(-i), a.items[-1])
    """,
    """
    b, s, xs = 3, "v=%d", [1, 2]
    out = []
    for t in range(4):
        n = t * 2 + b - t // 2
        out.append(n ** 2 % 7 - b ** t)
        out.append(s % n)
        out.append(xs * t + [b] * 2)
        out.append("ab" * t + s)
        out.append((t << b) >> 1 & 6 | 1 ^ t)
        out.append(t / b - 1.5 * t)
    def f(u, v):
        for i in range(3):
            w = u * v + i - v ** 2
        return w, u % v, u * 2
    print(out, f(7, 3), f("x", 2) if False else f(9, 4))
    """,
    """
    class P:
        def __init__(self, v):
            self.v = v
        def total(self, n):
            t = 0
            for i in range(n):
                t = t + self.v * i
            return t
    p, z = P(3), 4
    for i in range(3):
        print(p.v, p.total(i), p.total(z))
    """,
    """
    w, s, xs = 1.5, "a", [1]
    def g(u):
        acc = 0
        for i in range(4):
            acc += u * i
            acc -= 1
            u *= 2
        return acc, u
    for i in range(3):
        w -= 0.25 * w
        s += str(i)
        xs *= 2
        xs += [i]
        n = len(xs)
        n //= 2
        n **= 2
        n %= 7
    abs = 3
    abs += 1
    print(w, s, xs, n, g(1), g(2.5), abs)
    """,
]


@pytest.mark.parametrize("src", PROGRAMS)
def test_results_match_python(src):
    code, out, err = run(src)
    assert code == 0, err
    assert out == python_output(src)


def test_calls_in_loops_are_fused():
    """The calls of a loop body take the fused closures (what this file tests)."""
    before = set(F._FACTORIES)
    code, _, err = run("""
    def f(a, b):
        return a
    for i in range(2):
        y = f(i, b=2.5)
    """)
    assert code == 0, err
    assert ("g", False, ("g", "c"), 1, "gset") in set(F._FACTORIES) | before


def test_shape_is_checked():
    with pytest.raises(ValueError):
        F.factory(("g; import os", False, (), 0, "ret"))
    with pytest.raises(ValueError):
        F.factory(("g", False, ("x",), 0, "ret"))
    with pytest.raises(ValueError):
        F.factory(("g", False, (), 0, "os.system"))


def _error_at(src):
    code, out, err = run(src)
    assert code == 1, (out, err)
    assert "Traceback" not in err
    return err.strip()


# (statement, what the error names) -- each runs at module level (general closures) and
# inside a loop (fused); the report's column and caret are the same
FAILING = [
    "y = undefined_fn(1)",
    "y = len(undefined_arg)",
    "y = len(1, k=undefined_kw)",
    "len(1)",
    "y = len(1)",
    "y = abs('a')",
    "[].nope()",
    "y = (1).nope(2)",
    "y = [].pop(5)",
    "print(1, sep=2)",
    "y = max()",
    "y = x + 'a'",
    "y = 1 / x",
    "y = x % x",
    "y = 'a' - x",
    "y = x ** -1.5 + undefined_right",
    "y = x.v.nope",
    "y = undefined_obj.v",
    "y = x.nope",
    "x += 'a'",
    "undefined_aug += 1",
]


@pytest.mark.parametrize("stmt", FAILING)
def test_errors_report_the_same_place(stmt):
    cold = _error_at(f"x = 0\nx = x\n{stmt}\n")
    hot = _error_at(f"x = 0\nfor i in range(1):\n    {stmt}\n")
    cold_lines, hot_lines = cold.splitlines(), hot.splitlines()
    # first line: fused.grad:LINE:COL: Kind: message; the caret line under the source
    c_head, h_head = cold_lines[0].split(":"), hot_lines[0].split(":")
    assert c_head[1] == "3" and h_head[1] == "3"
    assert int(h_head[2]) == int(c_head[2]) + 4, (cold, hot)  # the loop body's indent
    assert c_head[3:] == h_head[3:]
    caret_c = [ln for ln in cold_lines if "^" in ln][0]
    caret_h = [ln for ln in hot_lines if "^" in ln][0]
    assert caret_c.count("^") == caret_h.count("^")
    assert caret_h.index("^") == caret_c.index("^") + 4


def test_unbound_local_in_function():
    err = _error_at("""
    def f(flag):
        for i in range(2):
            if flag:
                v = 1
            y = abs(v)
        return y
    f(False)
    """)
    assert "UnboundLocalError: cannot access local variable 'v' where it is not " \
           "associated with a value" in err
    assert "fused.grad:6:" in err


def test_name_defined_later_in_the_loop():
    """A global the loop binds later: the first read fails as Python's does."""
    err = _error_at("""
    for i in range(2):
        y = abs(later)
        later = -1
    """)
    assert "NameError: name 'later' is not defined" in err


def test_builtin_shadowed_by_a_global_later():
    src = """
    out = []
    for i in range(3):
        out.append(abs(i - 5))
        if i == 1:
            abs = lambda v: 'mine'
    print(out)
    """
    code, out, err = run(src)
    assert code == 0, err
    assert out == python_output(src)


def test_step_limit_stops_a_loop_of_calls():
    code, out, err = run("""
    xs = []
    while True:
        xs.append(len(xs))
        xs.pop()
    """, max_steps=1000)
    assert code == 1
    assert "step limit exceeded" in err
    assert "fused.grad:" in err and "Traceback" not in err


@pytest.mark.parametrize("expr,fragment", [
    ("s * (10 ** 8)", "string too long"),
    ("xs * (10 ** 8)", "too long"),
    ("n ** n", "integer power too large"),
    ("n << n", "shift too large"),
])
def test_operator_guards_hold_when_fused(expr, fragment):
    for src in (f"s, xs, n = 'ab', [1], 10 ** 7\ny = {expr}\n",
                f"s, xs, n = 'ab', [1], 10 ** 7\nfor i in range(1):\n    y = {expr}\n"):
        code, out, err = run(src)
        assert code == 1, (src, out, err)
        assert "LimitError" in err and fragment in err, err


@pytest.mark.parametrize("stmt", ["s *= 10 ** 8", "xs *= 10 ** 8", "n **= n", "n <<= n"])
def test_augmented_guards_hold(stmt):
    for src in (f"s, xs, n = 'ab', [1], 10 ** 7\n{stmt}\n",
                f"s, xs, n = 'ab', [1], 10 ** 7\nfor i in range(1):\n    {stmt}\n",
                f"def f(s, xs, n):\n    {stmt}\nf('ab', [1], 10 ** 7)\n"):
        code, out, err = run(src)
        assert code == 1, (src, out, err)
        assert "LimitError" in err and "Traceback" not in err, err


def test_depth_limit_through_fused_calls():
    code, out, err = run("""
    def f(n):
        for i in range(1):
            r = f(n + 1)
        return r
    f(0)
    """, max_depth=50)
    assert code == 1
    assert "call depth limit exceeded" in err


# --------------------------------------------------------------- the sandbox, fused
ATTACKS = [  # (set-up, statement): denied attributes called as methods
    ("", "'{0.__class__}'.format(1)"),
    ("", "y = '{0[0]}'.format([1])"),
    ("", "y = '{x}'.format_map({'x': 1})"),
    ("import torch\nt = torch.ones(2)", "t.data_ptr()"),
    ("import torch\nt = torch.ones(2)", "y = t.untyped_storage()"),
    ("import torch\nt = torch.ones(2)", "y = t.storage()"),
    ("import torch", "torch.save(torch.ones(1), 'x.pt')"),
    ("import torch", "y = torch.load('x.pt')"),
    ("", "y = int.mro()"),
    ("", "y = print.__self__"),
    ("import torch\nt = torch.ones(2)", "y = t.repeat(10 ** 6, 10 ** 6)"),
]


@pytest.mark.parametrize("setup,stmt", ATTACKS)
def test_denied_methods_stay_denied_when_fused(setup, stmt, tmp_path, monkeypatch):
    """The same refusal at module level, in a loop and in a function (and no file)."""
    monkeypatch.chdir(tmp_path)
    reports = []
    for src in (f"{setup}\n{stmt}\n", f"{setup}\nfor i in range(1):\n    {stmt}\n",
                f"{setup}\ndef f():\n    {stmt}\nf()\n"):
        code, out, err = run(src)
        assert code in (1, 2), (src, out, err)
        assert "Traceback" not in err
        reports.append(err.strip().splitlines()[0].split(": ", 1)[1])
    assert reports[0] == reports[1] == reports[2], reports
    assert list(tmp_path.iterdir()) == []


DUNDERS_IN_HOT_CODE = [
    "for i in range(1):\n    y = (1).__class__()",
    "for i in range(1):\n    (1).__class__.__subclasses__()",
    "def f():\n    return [].__class__(x=1)\nf()",
    "for i in range(1):\n    y = print(1, __x=1)",
    "for i in range(1):\n    y = abs(i).__reduce__()",
]


@pytest.mark.parametrize("src", DUNDERS_IN_HOT_CODE)
def test_dunders_refused_in_hot_code(src):
    code, out, err = run(src)
    assert code == 2, (out, err)
    assert "not allowed" in err
    assert "Traceback" not in err


def test_fused_source_holds_no_program_text():
    """The program's names and constants reach a fused closure as values, never as text
    of the source the factory is built from."""
    src = F._source(("g", True, ("g", "c", "f"), 1, "gset"))
    assert "os" not in src.split() and "import" not in src
    code, out, err = run("""
    system = 1
    for i in range(1):
        y = abs(system)
        z = print(system, end=" import os\\n")
    """)
    assert code == 0, err
    assert out == "1 import os\n"
