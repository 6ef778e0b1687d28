"""`gradcli grad --formula` (issue 25): the derivative as a formula, compared with sympy's
own derivative of the same expression on many generated expressions, and checked against
autograd by the command itself."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest

sympy = pytest.importorskip("sympy")
from sympy.parsing.sympy_parser import parse_expr  # noqa: E402

ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}


def gradcli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True,
                          text=True, env=ENV, timeout=timeout)


def grad_json(*args: str) -> dict:
    proc = gradcli("grad", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# ------------------------------------------------------------ a seeded expression generator
# Each node is written twice from the same tree: as gradcli text (in one of three spellings:
# f(E), (E).f(), torch.f(E)) and as a sympy expression built independently of gradcli.

X, Y = sympy.symbols("x y", real=True)


def _sig(a):
    return 1 / (1 + sympy.exp(-a))


UNARY = [
    ("sin", sympy.sin, "any"), ("cos", sympy.cos, "any"), ("exp", sympy.exp, "any"),
    ("tanh", sympy.tanh, "any"), ("sigmoid", _sig, "any"), ("square", lambda a: a ** 2, "any"),
    ("sqrt", sympy.sqrt, "pos"), ("log", sympy.log, "pos"), ("reciprocal", lambda a: 1 / a, "pos"),
    ("log1p", lambda a: sympy.log(1 + a), "pos"), ("rsqrt", lambda a: 1 / sympy.sqrt(a), "pos"),
]


def gen(rng: random.Random, depth: int, names=("x", "y")):
    """(gradcli text, sympy expression) of a random differentiable expression."""
    syms = {"x": X, "y": Y}
    if depth == 0 or rng.random() < 0.2:
        k = rng.random()
        if k < 0.75:
            n = rng.choice(names)
            return n, syms[n]
        c = rng.choice([2, 3, 0.5, 1.5])
        return repr(c), sympy.nsimplify(c)
    kind = rng.random()
    if kind < 0.45:
        a_text, a = gen(rng, depth - 1, names)
        b_text, b = gen(rng, depth - 1, names)
        op = rng.choice(["+", "-", "*", "/", "**"])
        if op == "/":
            return f"({a_text}) / (1 + ({b_text})**2)", a / (1 + b ** 2)
        if op == "**":
            k = rng.choice([2, 3])
            return f"({a_text})**{k}", a ** k
        return f"({a_text}) {op} ({b_text})", {"+": a + b, "-": a - b, "*": a * b}[op]
    name, fn, domain = rng.choice(UNARY)
    a_text, a = gen(rng, depth - 1, names)
    if domain == "pos":  # keep the argument positive: 1 + E**2
        a_text, a = f"(1 + ({a_text})**2)", 1 + a ** 2
    # methods and torch.f need a tensor: a constant subexpression takes the bare name
    spelling = rng.randrange(3) if a.free_symbols else 0
    if spelling == 0:
        text = f"{name}({a_text})"
    elif spelling == 1:
        text = f"({a_text}).{name}()"
    else:
        text = f"torch.{name}({a_text})"
    return text, fn(a)


def numerically_equal(f, g, symbols, rng, points=4) -> bool:
    for _ in range(points):
        subs = {s: sympy.Float(rng.uniform(-1.5, 1.5), 30) for s in symbols}
        by_name = {s.name: v for s, v in subs.items()}
        want = complex(g.evalf(30, subs=subs))
        got = complex(f.evalf(30, subs={s: by_name[s.name] for s in f.free_symbols}))
        if not (abs(want) < 1e300 and want == want):
            continue
        if abs(got - want) > 1e-9 * max(1.0, abs(want)):
            return False
    return True


def _derive(text, shapes, wrt):
    from gradcli.cli import formula

    out = formula.derive(text, shapes, wrt)
    return {n: (None if d is None else formula.as_sympy(d), why) for n, (d, why) in out.items()}


def test_generated_scalar_expressions_match_sympys_derivative():
    rng = random.Random(2513)
    checked = 0
    for _ in range(160):
        text, ref = gen(rng, rng.randint(1, 4))
        derived = _derive(text, {"x": (), "y": ()}, ["x", "y"])
        for name, sym in (("x", X), ("y", Y)):
            formula_text, why = derived[name]
            assert formula_text is not None, (text, why)
            parsed = parse_expr(formula_text)  # the JSON promise: sympy reads it back
            assert numerically_equal(parsed, sympy.diff(ref, sym), [X, Y], rng), \
                (text, name, formula_text, sympy.diff(ref, sym))
            checked += 1
    assert checked == 320


def test_generated_sums_and_means_over_vectors_match_sympy():
    rng = random.Random(77)
    for _ in range(60):
        a_text, a = gen(rng, rng.randint(1, 3))
        b_text, b = gen(rng, rng.randint(1, 3))
        reducer = rng.choice(["sum", "mean"])
        text = f"({a_text}).sum() + ({b_text}).{reducer}()"
        scale = sympy.Rational(1, 4) if reducer == "mean" else 1
        derived = _derive(text, {"x": (4,), "y": (4,)}, ["x", "y"])
        for name, sym in (("x", X), ("y", Y)):
            formula_text, why = derived[name]
            assert formula_text is not None, (text, why)
            want = sympy.diff(a, sym) + scale * sympy.diff(b, sym)
            assert numerically_equal(parse_expr(formula_text), want, [X, Y], rng), \
                (text, name, formula_text)


def test_issue_example_in_the_expressions_notation():
    doc = grad_json("(x**3).sum() + (x*w).sum()", "--at", "x=[1,2,3]", "--at", "w=[4,5,6]",
                    "--formula")
    assert doc["formula_text"]["x"] == "3*x**2 + w"
    assert parse_expr(doc["formula"]["x"]) - parse_expr("3*x**2 + w") == 0
    assert doc["formula"]["w"] == "x"
    assert doc["formula_check"]["x"]["ok"] is True and doc["formula_check"]["w"]["ok"] is True


@pytest.mark.parametrize("seed", range(6))
def test_generated_expressions_through_the_command(seed):
    rng = random.Random(1000 + seed)
    text, ref = gen(rng, 3)
    doc = grad_json(text, "--at", "x=0.7", "--at", "y=-0.4", "--dtype", "float64", "--formula")
    for name, sym in (("x", X), ("y", Y)):
        assert doc["formula_check"][name]["ok"] is True, (text, doc["formula_check"])
        assert numerically_equal(parse_expr(doc["formula"][name]), sympy.diff(ref, sym),
                                 [X, Y], rng), (text, name)


def test_text_output_prints_formula_and_check():
    proc = gradcli("grad", "x**2*sin(y)", "--at", "x=1.5", "--at", "y=0.5", "--formula")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "  d/dx = 2*x*sin(y)  [matches autograd, max abs difference" in "\n".join(lines)
    assert any(line.startswith("  d/dy = x**2*cos(y)") for line in lines)


def test_matrix_product_closed_form():
    doc = grad_json("x @ W @ x", "--at", "x=[1.,2.,3.]", "--at", "W=[[1.,2,0],[0,1,3],[4,0,1]]",
                    "--formula")
    assert doc["formula_text"]["x"] == "W @ x + W.T @ x"
    assert doc["formula_check"]["x"]["ok"] is True
    assert doc["formula_text"]["W"] == "outer(x, x)"
    assert doc["formula_check"]["W"]["ok"] is True
    # sympy's own matrix derivative of the same expression
    xs, ws = sympy.MatrixSymbol("x", 3, 1), sympy.MatrixSymbol("W", 3, 3)
    assert str((xs.T * ws * xs).diff(xs)) == "W*x + W.T*x"
    parse_expr(doc["formula"]["x"])  # parsable


def test_nested_reduction_is_written_with_sum_and_checked():
    doc = grad_json("sqrt((x**2).sum())", "--at", "x=[3.,4.]", "--formula")
    assert doc["formula_text"]["x"] == "x/sqrt((x**2).sum())"
    assert "sum_all(x**2)" in doc["formula"]["x"]
    assert doc["formula_check"]["x"]["ok"] is True
    expr = parse_expr(doc["formula"]["x"], local_dict={"sum_all": sympy.Function("sum_all")})
    assert expr.has(sympy.Function("sum_all"))


def test_scalar_broadcast_against_a_vector_sums_its_partials():
    doc = grad_json("(x*w).sum()", "--at", "x=[1.,2.,3.]", "--at", "w=2.0", "--formula")
    assert doc["formula_text"]["w"] == "x.sum()"
    assert doc["formula_check"]["w"]["ok"] is True
    assert doc["formula_text"]["x"] == "w"


def test_elementwise_non_scalar_gives_each_elements_derivative():
    doc = grad_json("sin(x)*y", "--at", "x=[0.,1.,2.]", "--at", "y=3.0", "--formula",
                    "--jacobian")
    assert doc["formula"] == {"x": "y*cos(x)", "y": "sin(x)"}
    assert doc["formula_check"]["x"]["ok"] is True and doc["formula_check"]["y"]["ok"] is True


def test_no_symbolic_rule_is_named_and_numbers_still_printed():
    proc = gradcli("grad", "x.cumsum(0).sum()", "--at", "x=[1.,2.]", "--formula")
    assert proc.returncode == 0, proc.stderr
    assert "d/dx: no symbolic rule for cumsum; the numbers are autograd's" in proc.stdout
    assert "[2., 1.]" in proc.stdout
    doc = grad_json("x[0]*x.sum()", "--at", "x=[1.,2.]", "--formula")
    assert doc["formula"]["x"] is None
    assert "no symbolic rule" in doc["formula_missing"]["x"]
    assert doc["gradients"]["x"]["data"] == [4.0, 1.0]


def test_formula_for_constants_and_bare_functions():
    doc = grad_json("exp(1)*x + pi*x**2", "--at", "x=1", "--formula")
    assert parse_expr(doc["formula"]["x"]) - (sympy.E + 2 * sympy.pi * sympy.Symbol("x")) == 0
    assert doc["formula_check"]["x"]["ok"] is True


def test_formula_on_a_grid_is_checked_at_every_point():
    doc = grad_json("x**3*y", "--grid", "x=-1:1:5", "--grid", "y=0:2:3", "--formula")
    assert doc["formula"] == {"x": "3*x**2*y", "y": "x**3"}
    for name in ("x", "y"):
        assert doc["formula_check"][name]["ok"] is True
        assert doc["formula_check"][name]["points"] == 15
    proc = gradcli("grad", "sin(x)", "--grid", "x=0:3:20", "--plot", "--formula")
    assert proc.returncode == 0, proc.stderr
    assert "checked against autograd at every point" in proc.stdout
    assert "d/dx = cos(x)  [matches autograd" in proc.stdout


def test_formula_with_csv_is_refused():
    proc = gradcli("grad", "x**3", "--at", "x=[1,2]", "--formula", "--csv")
    assert proc.returncode == 2 and "--csv" in proc.stderr and proc.stdout == ""


def test_sum_of_a_matrix_product():
    doc = grad_json("(W @ x).sum()", "--at", "W=[[1.,2],[3,4]]", "--at", "x=[1.,2.]", "--formula")
    assert doc["formula_text"] == {"W": "outer(ones(2), x)", "x": "W.T @ ones(2)"}
    assert doc["formula_check"]["W"]["ok"] is True and doc["formula_check"]["x"]["ok"] is True


def test_kinks_follow_autograds_convention():
    # relu'(0) and abs'(0) are 0 in autograd: the formula says heaviside(x, 0), not 1/2
    doc = grad_json("relu(x)*y + abs(y)", "--at", "x=0", "--at", "y=0", "--formula")
    assert doc["formula_text"]["x"] == "y*heaviside(x, 0)"
    assert parse_expr(doc["formula"]["x"]).subs({"x": 0, "y": 1}) == 0
    assert doc["formula_check"]["x"]["ok"] is True and doc["formula_check"]["y"]["ok"] is True


# ------------------------------------------------------------ matrix products (issue 25 audit)

def _sympy_matrix_gradient(expr_of, shapes: dict, name: str, at: dict):
    """The gradient of a scalar matrix expression by sympy on explicit element symbols (no
    matrix calculus): what the closed forms must equal, element by element."""
    mats = {}
    for n, shape in shapes.items():
        rows, cols = (shape[0], 1) if len(shape) == 1 else shape
        mats[n] = sympy.Matrix(rows, cols, lambda i, j, n=n: sympy.Symbol(f"{n}_{i}_{j}"))
    value = expr_of(mats)
    subs = {}
    for n, m in mats.items():
        flat = sympy.Matrix(at[n]).reshape(*m.shape)
        subs.update({m[i, j]: flat[i, j] for i in range(m.rows) for j in range(m.cols)})
    m = mats[name]
    grad = [[float(sympy.diff(value, m[i, j]).subs(subs)) for j in range(m.cols)]
            for i in range(m.rows)]
    return grad if len(shapes[name]) == 2 else [row[0] for row in grad]


ONES = sympy.ones
MATRIX_CASES = [
    # (EXPR, --at values, the same expression on explicit sympy matrices, expected text)
    ("(A @ B).sum()", {"A": [[1., 2, 0], [0, 1, 3]], "B": [[1., 2], [3, 4], [5, 6]]},
     lambda m: (ONES(1, 2) * m["A"] * m["B"] * ONES(2, 1))[0],
     {"A": "ones(2, 2) @ B.T", "B": "A.T @ ones(2, 2)"}),
    ("(W @ x).sum()", {"W": [[1., 2, 3], [4, 5, 6]], "x": [1., -1, 2]},
     lambda m: (ONES(1, 2) * m["W"] * m["x"])[0],
     {"W": "outer(ones(2), x)", "x": "W.T @ ones(2)"}),
    ("(x @ W).mean()", {"W": [[1., 2], [3, 4], [5, 6]], "x": [1., -1, 2]},
     lambda m: (m["x"].T * m["W"] * ONES(2, 1))[0] / 2, None),
    ("x @ W @ x * 2 + 3", {"W": [[1., 2], [3, 4]], "x": [1., 2]},
     lambda m: 2 * (m["x"].T * m["W"] * m["x"])[0] + 3,
     {"W": "2*outer(x, x)", "x": "2*W @ x + 2*W.T @ x"}),
    ("(x @ x) ** 2", {"x": [1., 2, 3]}, lambda m: (m["x"].T * m["x"])[0] ** 2,
     {"x": "4*(x @ x)*x"}),
    ("tanh(x @ W @ y) * a", {"W": [[.1, .2], [.3, -.4]], "x": [1., 2], "y": [.5, -1], "a": 1.5},
     lambda m: sympy.tanh((m["x"].T * m["W"] * m["y"])[0]) * m["a"][0], None),
    ("sqrt(x @ x) + log(y @ y)", {"x": [1., 2, 3], "y": [1., 1]},
     lambda m: sympy.sqrt((m["x"].T * m["x"])[0]) + sympy.log((m["y"].T * m["y"])[0]),
     {"x": "1/sqrt(x @ x)*x", "y": "2/(y @ y)*y"}),
    ("(W @ x).sum() * (x @ x)", {"W": [[1., 2], [3, 4]], "x": [1., 2]},
     lambda m: (ONES(1, 2) * m["W"] * m["x"])[0] * (m["x"].T * m["x"])[0], None),
    ("mm(A, B).sum()", {"A": [[1., 2, 0], [0, 1, 3]], "B": [[1., 2], [3, 4], [5, 6]]},
     lambda m: (ONES(1, 2) * m["A"] * m["B"] * ONES(2, 1))[0], None),
    # least squares, the classic: elementwise square of a matrix product, summed
    ("((W @ x - b)**2).sum()", {"W": [[1., 2, 0], [0, 1, 3]], "x": [1., 2, 3], "b": [1., 1]},
     lambda m: sum(v ** 2 for v in (m["W"] * m["x"] - m["b"])),
     {"W": "2*outer(W @ x - b, x)", "x": "2*W.T @ (W @ x - b)", "b": "-2*W @ x + 2*b"}),
    ("((W @ x - b)**2).mean()", {"W": [[1., 2, 0], [0, 1, 3]], "x": [1., 2, 3], "b": [1., 1]},
     lambda m: sum(v ** 2 for v in (m["W"] * m["x"] - m["b"])) / 2, None),
    ("((A @ X)**2).sum()", {"A": [[1., 2, 0], [0, 1, 3]], "X": [[1., 2], [3, 4], [5, 6]]},
     lambda m: sum(v ** 2 for v in m["A"] * m["X"]),
     {"A": "2*A @ X @ X.T", "X": "2*A.T @ A @ X"}),
    ("square(W @ x).sum() * 0.5", {"W": [[1., 2, 0], [0, 1, 3]], "x": [1., 2, 3]},
     lambda m: sum(v ** 2 for v in m["W"] * m["x"]) / 2,
     {"W": "outer(W @ x, x)", "x": "W.T @ W @ x"}),
]


@pytest.mark.parametrize("expr,at,reference,texts", MATRIX_CASES, ids=[c[0] for c in MATRIX_CASES])
def test_matrix_products_have_closed_forms_equal_to_sympys_elementwise_gradient(
        expr, at, reference, texts):
    args = []
    for n, v in at.items():
        args += ["--at", f"{n}={v}"]
    doc = grad_json(expr, *args, "--dtype", "float64", "--formula")
    shapes = {n: tuple(sympy.Matrix(v).shape) if isinstance(v, list) and isinstance(v[0], list)
              else ((len(v),) if isinstance(v, list) else ()) for n, v in at.items()}
    for name in at:
        text = doc["formula_text"][name]
        assert text is not None and "PermuteDims" not in text, (name, doc.get("formula_missing"))
        assert doc["formula_check"][name]["ok"] is True, (name, text)
        if shapes[name]:
            want = _sympy_matrix_gradient(reference, {n: s if s else (1,) for n, s in
                                                      shapes.items()}, name,
                                          {n: v if isinstance(v, list) else [v]
                                           for n, v in at.items()})
            # the command checked its formula against autograd; autograd against sympy here
            assert np.allclose(doc["gradients"][name]["data"], want, rtol=1e-9, atol=1e-12), name
        if texts is not None and name in texts:
            assert text == texts[name]
        parse_expr(doc["formula"][name], local_dict={"transpose": sympy.Function("transpose"),
                                                      "outer": sympy.Function("outer")})


def test_non_elementwise_non_scalar_has_no_per_element_formula():
    # (x.mean() - x)**2 mixes elements: a formula per element would be the Jacobian's
    # diagonal, which is not what the seed's vector-Jacobian product prints
    proc = gradcli("grad", "(x.mean() - x)**2", "--at", "x=[1,2,3]", "--seed-grad", "ones(3)",
                   "--formula")
    assert proc.returncode == 0, proc.stderr
    assert "d/dx: no formula per element: EXPR is neither a scalar nor elementwise" in proc.stdout
    assert "d/dx =" not in proc.stdout
    doc = grad_json("W @ x", "--at", "W=[[1.,2],[3,4]]", "--at", "x=[1.,2.]", "--formula")
    assert doc["formula"] == {"W": None, "x": None}
    assert "non-scalar matrix product" in doc["formula_missing"]["x"]


# ------------------------------------------------------------ the broad generator, in and out of process

def _points(rng, names, count=3):
    return [{n: rng.uniform(-1.5, 1.5) for n in names} for _ in range(count)]


def test_broad_generated_expressions_match_sympys_derivative_in_process():
    """Every elementwise function of the generator (60 of torch, torch.special and
    torch.nn.functional, in all their spellings) with 1-3 variables: each formula exists
    and equals sympy's derivative of the independently built reference."""
    from grad_formula_gen import SYMBOLS, generate, numerically_equal

    rng = random.Random(2525)
    checked = 0
    for _ in range(50):
        names = ("x", "y", "z")[:rng.choice([1, 2, 3])]
        text, ref = generate(rng, rng.randint(1, 4), names)
        derived = _derive(text, {n: () for n in names}, list(names))
        for n in names:
            formula_text, why = derived[n]
            assert formula_text is not None, (text, why)
            assert numerically_equal(parse_expr(formula_text), sympy.diff(ref, SYMBOLS[n]),
                                     [SYMBOLS[m] for m in names], _points(rng, names)), \
                (text, n, formula_text)
            checked += 1
    assert checked > 90


@pytest.mark.parametrize("seed", range(3))
def test_broad_generated_expressions_through_the_command(seed):
    """The real process: its JSON formula equals sympy's derivative, and its own check
    against autograd (float64) passes, for 3 generated expressions in 3 variables each."""
    from grad_formula_gen import SYMBOLS, generate, numerically_equal

    rng = random.Random(9000 + seed)
    for _ in range(3):
        text, ref = generate(rng, 3, ("x", "y", "z"))
        point = _points(rng, ("x", "y", "z"), 1)[0]
        args = [a for n, v in point.items() for a in ("--at", f"{n}={v!r}")]
        doc = grad_json(text, *args, "--dtype", "float64", "--formula")
        for n in ("x", "y", "z"):
            assert doc["formula"][n] is not None, (text, doc.get("formula_missing"))
            assert doc["formula_check"][n]["ok"] is True, (text, n, doc["formula_check"][n])
            want = sympy.diff(ref, SYMBOLS[n])
            assert numerically_equal(parse_expr(doc["formula"][n]), want, list(SYMBOLS.values()),
                                     [point] + _points(rng, ("x", "y", "z"), 2)), (text, n)
