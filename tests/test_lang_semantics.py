"""Runtime semantics: gradcli runs the same source as Python and prints the same.

The programs of tests/lang/python_programs.txt (separated by '#---') use no
torch names, so each is run both by Python's own exec and by a gradcli
Session; stdout and the final uncaught error (type and message) must match.
"""
import contextlib
import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcli.lang import GradcliError, Session

PROGRAMS = (Path(__file__).parent / "lang" / "python_programs.txt").read_text().split("\n#---\n")


def run_python(src):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("ignore")
            exec(compile(src, "<p>", "exec"), {})
        return out.getvalue()
    except SyntaxError as e:
        return out.getvalue() + f"!SyntaxError: {e.msg}"
    except Exception as e:
        return out.getvalue() + f"!{type(e).__name__}: {e}"


def run_gradcli(src, **kw):
    out = io.StringIO()
    s = Session(stdout=out, **kw)
    try:
        s.run(src, "<p>")
        return out.getvalue()
    except GradcliError as e:
        return out.getvalue() + f"!{e.kind}: {e.message}"


@pytest.mark.parametrize("src", PROGRAMS, ids=[f"program{i}" for i in range(len(PROGRAMS))])
def test_same_output_as_python(src):
    assert run_gradcli(src) == run_python(src)


@pytest.mark.parametrize("src", PROGRAMS[:8], ids=[f"program{i}" for i in range(8)])
def test_same_output_as_python_in_interactive_mode(src):
    assert run_gradcli(src, interactive=True) == run_python(src)


# ------------------------------------------------------------ generated expressions
_atoms = st.one_of(st.integers(-20, 20), st.floats(-10, 10, allow_nan=False).map(lambda f: round(f, 3)),
                   st.sampled_from(["True", "False", "x", "y", "(x - y)"]))


@st.composite
def expressions(draw, depth=0):
    if depth > 3 or draw(st.booleans()):
        return str(draw(_atoms))
    kind = draw(st.sampled_from(["bin", "un", "cmp", "bool", "ifexp", "pow"]))
    a = draw(expressions(depth + 1))
    b = draw(expressions(depth + 1))
    if kind == "bin":
        return f"({a} {draw(st.sampled_from(['+', '-', '*', '/', '//', '%']))} {b})"
    if kind == "un":
        return f"{draw(st.sampled_from(['-', '+', 'not ', '- -', '~']))}{a}"
    if kind == "cmp":
        ops = draw(st.lists(st.sampled_from(["<", "<=", "==", "!=", ">", ">="]), min_size=1,
                            max_size=3))
        parts = [a] + [f"{op} {draw(expressions(depth + 1))}" for op in ops]
        return "(" + " ".join(parts) + ")"
    if kind == "bool":
        return f"({a} {draw(st.sampled_from(['and', 'or']))} {b})"
    if kind == "pow":
        return f"(-{draw(st.integers(0, 5))} ** {draw(st.integers(-2, 3))})"
    return f"({a} if {b} else {draw(expressions(depth + 1))})"


@settings(max_examples=300, deadline=None)
@given(expressions(), st.integers(-5, 5), st.floats(-3, 3, allow_nan=False))
def test_generated_expressions_match_python(e, x, y):
    src = f"x = {x}\ny = {y!r}\nprint(repr({e}))\n"
    assert run_gradcli(src) == run_python(src)


# ------------------------------------------------------------ tensors through the language
def test_inplace_augmented_assignment_on_tensors_keeps_identity():
    out = run_gradcli("import torch\nt = torch.zeros(2)\nu = t\nt += 1\nprint(t is u, u)\n"
                      "v = t + 0\nv = v * 2\nprint(v is u)\n")
    assert out == "True tensor([1., 1.])\nFalse\n"


def test_for_over_tensor_max_unpacking_and_no_grad_decorator():
    src = """import torch
x = torch.tensor([[1., 5.], [3., 2.]], requires_grad=True)
for row in x:
    print(row.shape)
v, i = x.max(0)
print(v, i)
@torch.no_grad()
def f(t):
    return t * 2
print(f(x).requires_grad, (x * 2).requires_grad)
with torch.no_grad():
    print((x + 1).requires_grad)
x[0, 0].item()
print(f"{x.sum().item():.2f}", "%.1f" % x.sum())
"""
    out = run_gradcli(src)
    assert out == ("torch.Size([2])\ntorch.Size([2])\n"
                   "tensor([3., 5.], grad_fn=<MaxBackward0>) tensor([1, 0])\n"
                   "False True\nFalse\n11.00 11.0\n")


def test_bare_facade_names_and_builtins_win():
    out = run_gradcli("print(ones(2), zeros(1).dtype, max([1, 3]), sum([1, 2]), abs(-1))\n"
                      "print(torch.max(tensor([1, 3])))\n")
    assert out == "tensor([1., 1.]) torch.float32 3 3 1\ntensor(3)\n"


def test_imports_bind_facade_modules():
    src = """import torch as t
import torch.nn.functional as F
from torch import ones, no_grad
from torch.autograd import grad
import math
from math import sqrt
x = ones(3, requires_grad=True)
y = F.relu(x - 0.5).sum()
(g,) = grad(y, x)
print(g, t.is_grad_enabled(), math.pi > 3, sqrt(4.0))
"""
    assert run_gradcli(src) == "tensor([1., 1., 1.]) True True 2.0\n"


def test_hooks_call_user_functions_and_globals():
    src = """import torch
seen = []
def hook(g):
    global last
    last = g
    seen.append(g.shape)
    return g * 2
x = torch.ones(2, requires_grad=True)
h = x.register_hook(hook)
(x * 3).sum().backward()
print(x.grad, last, seen)
h.remove()
"""
    assert run_gradcli(src) == "tensor([6., 6.]) tensor([3., 3.]) [torch.Size([2])]\n"


def test_session_keeps_globals_between_runs_and_returns_last_value():
    s = Session(stdout=io.StringIO(), interactive=True)
    assert s.run("x = 2") is None
    assert s.run("def f(y):\n    return x * y\n") is None
    assert s.run("f(5)") == 10
    s.run("x = 3")
    assert s.run("f(5)") == 15
    assert s.lookup("x") == 3 and "ones" in s.names()


def test_echo_prints_each_top_level_expression_like_the_python_prompt():
    out = io.StringIO()
    s = Session(stdout=out)
    s.run("1 + 1\nNone\nx = 3\nx\n'a'\nfor i in range(2):\n    i\ndef f():\n    5\nf()\n",
          echo=True)
    assert out.getvalue() == "2\n3\n'a'\n0\n1\n"


def test_named_tuple_results_expose_their_fields():
    out = run_gradcli("r = tensor([[1., 5.], [3., 2.]]).max(1)\nprint(r.values, r.indices, r[0])\n"
                      "v, i = r\nprint(i)\n")
    assert out == "tensor([5., 3.]) tensor([1, 0]) tensor([5., 3.])\ntensor([1, 0])\n"
