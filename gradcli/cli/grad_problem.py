"""The problem `gradcli grad` solves, apart from how it is asked and shown: the inputs
bound by `--at`, EXPR's value, its gradients, Jacobians, Hessians and the finite-difference
check, the options, and the plain tables and JSON values every output form shares.

The output forms loaded on demand (gradcli.cli.grad_output, grad_formula, grad_many) import
this module, and gradcli.cli.grad imports them: they never import gradcli.cli.grad back.
"""

from __future__ import annotations

import math
import os
import sys

SCHEMA = "gradcli.grad/2"

GRAD_JSON_SCHEMA = """gradcli.grad/2 -- the object `gradcli grad --json` prints:
  schema      "gradcli.grad/2"
  expr        the expression text
  wrt         the names differentiated with respect to, in --at order (then --grid)
  inputs      {name: TENSOR} the values bound by --at (a --grid name: its START)
  value       TENSOR, the expression's value
  gradients   {name: TENSOR | null} d(value)/d(name) (scalar value, or with --seed-grad);
              null where the name does not reach the value
  jacobian    {name: TENSOR} with --jacobian (shape = value.shape + name.shape)
  hessian     {"a,b": TENSOR} with --hessian (shape = a.shape + b.shape)
  hessian_matrix  with --hessian: {"labels": [str...], "data": [[number...]...]}, the blocks
              as one matrix over every element of the wrt names ("x", "W[0,1]")
  check       with --check: {"ok": bool, "max_abs_error": float, "max_rel_error": float,
              "worst": {"name": str, "index": [int...]} | null, "eps": float, "atol": float, "rtol": float,
              "note": str (only when EXPR's value is not float64, e.g. it casts to bfloat16: the
              differences cannot resolve it and the verdict does not test the gradient)}
  formula     with --formula: {name: str | null}, d(value)/d(name) as a string
              sympy.parse_expr reads; each name stands for one element of its tensor (the
              formula holds elementwise); sum_all(E)/mean_all(E) are the sum/mean over all
              elements of E, transpose(W) a matrix transpose, ones_matrix(m, n) a matrix of
              ones (a vector: n = 1); null where no symbolic rule
  formula_text    {name: str | null} the same in EXPR's notation ((E).sum(), W.T @ x)
  formula_check   {name: {"ok": bool | null, "max_abs_error": float | null, ...} | null},
              the formula against autograd at the --at point
  formula_missing {name: str} why a name has no formula ("no symbolic rule for ...")
  graph       with --graph: the graph as `gradcli graph --format json` prints it
  explanation with --explain: the step-by-step backward walk, as plain text
  points      with --grid: {"headers": [str...], "rows": [[number...]...]}, one row per
              grid point (the names, "value", "d/dNAME" for each wrt name)
TENSOR = {"shape": [int...], "dtype": "float32"|"float64"|"complex64"|"complex128"|"int64"|"bool"|...,
          "data": nested lists}
Non-finite numbers appear as the strings "nan", "inf" and "-inf"; a complex element is
its [real, imag] pair.
Changes: /2 added hessian_matrix, formula*, graph, explanation and points; every key of
/1 keeps its meaning.
"""


class UsageError(Exception):
    """Bad command-line input (exit 2)."""


class Problem:
    """An expression with its inputs bound, ready to differentiate or draw.

    (A plain class: ``dataclasses`` pulls ``inspect``, ~6 ms of start-up.)"""

    __slots__ = ("expr", "session", "names", "inputs", "wrt", "value", "program", "extra")

    def __init__(self, expr: str, session, names: list, inputs: dict, wrt: list, value=None,
                 program=None, extra=None):
        self.expr = expr
        self.session = session
        self.names = names
        self.inputs = inputs
        self.wrt = wrt
        self.value = value
        self.program = program
        self.extra = {} if extra is None else extra


AT_USAGE = "usage: --at NAME=VALUE, one name per --at (--at x=3 --at y=2)"


def parse_at(items: list) -> list:
    pairs = []
    for item in items:
        name, eq, value = item.partition("=")
        name = name.strip()
        if not eq or not value.strip() or not name:
            raise UsageError(f"--at expects NAME=VALUE, got {item!r}\n{AT_USAGE}")
        if not name.isidentifier() or name.startswith("_"):
            raise UsageError(f"--at: {name!r} is not a valid name\n{AT_USAGE}")
        pairs.append((name, value.strip()))
    return pairs


def _as_input(value, dtype, name: str):
    """An --at value as a floating or complex tensor: ints become the default float dtype,
    or --dtype; a complex value (`1+2j`, a list holding one, a complex tensor) stays
    complex, in the complex type that goes with that float dtype (complex64 with float32,
    complex128 with float64), as torch.tensor makes it."""
    import gradcli.torch as torch

    real = dtype or torch.get_default_dtype()
    if isinstance(value, torch.Tensor):
        t = value.detach().clone()
        if t.is_complex():
            return t.to(_complex_of(real)) if dtype is not None else t
        return t.to(dtype) if dtype is not None else (
            t if t.is_floating_point() else t.to(real))
    if isinstance(value, (bool, int, float, complex)) or isinstance(value, (list, tuple)):
        try:
            return torch.tensor(value, dtype=_complex_of(real) if _has_complex(value) else real)
        except (TypeError, ValueError, RuntimeError) as e:
            raise UsageError(f"--at {name}: {e}\n{AT_USAGE}") from None
    raise UsageError(f"--at {name}: expected a number, a list or a tensor, got "
                     f"{type(value).__name__}\n{AT_USAGE}")


def _has_complex(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_has_complex(v) for v in value)
    return isinstance(value, complex)


def _complex_of(real):
    """The complex dtype that goes with a real one (torch.tensor's choice)."""
    import gradcli.torch as torch

    return torch.complex128 if real == torch.float64 else torch.complex64


def build(expr: str, at: list, wrt_opt: list, dtype_name, seed: int, limits, grid=()) -> Problem:
    """Bind the inputs and evaluate EXPR (GradcliError propagates with its report)."""
    import gradcli.torch as torch
    from gradcli.lang import GradcliError, Session
    from gradcli.lang.session import reset_engine

    dtype = None
    if dtype_name is not None:
        aliases = {"float32": torch.float32, "float": torch.float32, "float64": torch.float64,
                   "double": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16,
                   "half": torch.float16}
        if dtype_name.removeprefix("torch.") in aliases:
            dtype_name = dtype_name.removeprefix("torch.")
        if dtype_name not in aliases:
            raise UsageError("--dtype must be float32, float64, bfloat16 or float16, got "
                             f"{dtype_name!r}")
        dtype = aliases[dtype_name]
    reset_engine(seed)
    session = Session(limits=limits, interactive=True)
    pairs = parse_at(at)
    for g in grid:  # a --grid name is bound to its start (the points come later)
        pairs.append((g[0], repr(float(g[1]))))
    names = [n for n, _ in pairs]
    if len(set(names)) != len(names):
        raise UsageError("--at/--grid: each name may be bound once")
    wrt = []
    for w in wrt_opt:
        wrt.extend(x.strip() for x in w.split(",") if x.strip())
    for w in wrt:
        if w not in names:
            raise UsageError(f"--wrt {w}: not bound by any --at or --grid")
    if not wrt:
        wrt = list(names)
    inputs = {}
    from gradcli.lang.bare_names import calculus_names

    session.builtins.update(calculus_names(session.builtins))
    for name, text in pairs:
        value = _at_value(session, name, text)
        t = _as_input(value, dtype, name)
        if name in wrt:
            t.requires_grad_(True)
        inputs[name] = t
        session.globals[name] = t
    try:
        program = session.compile(expr, "<expr>")
        value = session.execute(program)
    except GradcliError as e:
        _add_hint(e, expr, session)
        raise
    for where, text in [("EXPR", expr)] + [(f"--at {n}", t) for n, t in pairs]:
        _warn_xor(where, text)
    if not isinstance(value, torch.Tensor):
        if isinstance(value, (int, float, bool)):
            value = torch.tensor(value, dtype=dtype or torch.get_default_dtype())
        else:
            raise UsageError(f"EXPR must give a tensor or a number, got {type(value).__name__}")
    return Problem(expr, session, names, inputs, wrt, value, program)


def _at_value(session, name, text):
    """An --at value. One that is not a single expression, or that cannot be computed (an
    unknown name, a bad call), is a usage error (exit 2): it is command-line input."""
    from gradcli.lang import CompileError, GradcliError
    from gradcli.lang.session import render_error

    try:
        program = session.compile(text, f"--at {name}")
    except CompileError as e:
        hint = ""
        if "=" in text:
            hint = "; bind each name with its own --at"
        raise UsageError(f"--at {name}={text}: not one value ({e.message}){hint}\n{AT_USAGE}") \
            from None
    body = getattr(program.module, "body", ())
    if len(body) != 1 or type(body[0]).__name__ != "ExprStmt":
        raise UsageError(f"--at {name}={text}: not one value (give one expression)\n{AT_USAGE}")
    try:
        return session.execute(program)
    except GradcliError as e:
        _add_hint(e, text, session, in_at=True)
        raise UsageError(f"{render_error(e)}\n{AT_USAGE}") from None


def _warn_xor(where: str, text: str) -> None:
    """`2^3` runs (it is 1, bitwise xor): a calculus user meant a power, so say so on stderr
    even when nothing failed."""
    if "^" not in text:
        return
    import ast

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return
    if any(isinstance(n, ast.BitXor) for n in ast.walk(tree)):
        print(f"gradcli grad: note: {where} uses `^`, which is bitwise xor in Python (2^3 is 1); "
              f"a power is written `**`: {text.replace('^', '**')}", file=sys.stderr)


_NOT_DEFINED = "name '"


def _add_hint(err, text: str, session, in_at: bool = False) -> None:
    """What a calculus user most likely meant, as the error's hint line."""
    import re

    from gradcli.lang.bare_names import alias_hint

    message = getattr(err, "message", "") or ""
    found = re.fullmatch(r"name '(\w+)' is not defined", message)
    if "^" in text and found is None:  # an unbound name's hint comes first (x^2 + foo)
        err.hint = f"`^` is bitwise xor in Python: write `{text.replace('^', '**')}`"
        return
    if found is None:
        return
    name = found.group(1)
    alias = alias_hint(name, session.builtins)
    if alias is not None:
        err.hint = alias
    elif re.search(rf"\b{name}\s*\(", text):
        err.hint = (f"gradcli has no function `{name}`: the functions of torch, "
                    "torch.nn.functional and torch.special work by their bare names")
    elif in_at:
        err.hint = "an --at value is a number, a list or an expression of constants (pi, e)"
    else:
        err.hint = f"bind it with --at {name}=VALUE"


# --------------------------------------------------------------- computing

def gradients(p: Problem, seed_grad):
    """d(value)/d(wrt) via autograd.grad (None where a name does not reach the value)."""
    import gradcli.torch as torch

    targets = [p.inputs[n] for n in p.wrt]
    if not p.value.requires_grad:
        return {n: None for n in p.wrt}
    grads = torch.autograd.grad(p.value, targets, grad_outputs=seed_grad, retain_graph=True,
                                allow_unused=True)
    return dict(zip(p.wrt, grads))


def jacobians(p: Problem) -> dict:
    import gradcli.torch as torch

    out = {}
    flat = p.value.reshape(-1)
    for n in p.wrt:
        t = p.inputs[n]
        rows = []
        for k in range(flat.numel()):
            g = None
            if flat.requires_grad:
                g = torch.autograd.grad(flat[k], [t], retain_graph=True, allow_unused=True)[0]
            rows.append(torch.zeros_like(t) if g is None else g)
        block = torch.stack(rows).reshape(tuple(p.value.shape) + tuple(t.shape)) if rows else \
            torch.zeros(tuple(p.value.shape) + tuple(t.shape), dtype=t.dtype)
        out[n] = block
    return out


def hessians(p: Problem) -> dict:
    """Blocks d2(value)/da db for each pair of wrt names (value must be one element)."""
    import gradcli.torch as torch

    if p.value.numel() != 1:
        raise UsageError("--hessian needs EXPR to have one element")
    targets = [p.inputs[n] for n in p.wrt]
    if not p.value.requires_grad:
        return {f"{a},{b}": torch.zeros(tuple(p.inputs[a].shape) + tuple(p.inputs[b].shape))
                for a in p.wrt for b in p.wrt}
    firsts = torch.autograd.grad(p.value.reshape(()), targets, create_graph=True, allow_unused=True)
    out = {}
    for a, ga in zip(p.wrt, firsts):
        ta = p.inputs[a]
        for b in p.wrt:
            tb = p.inputs[b]
            rows = []
            flat = ga.reshape(-1) if ga is not None else None
            for k in range(ta.numel()):
                g = None
                if flat is not None and flat.requires_grad:
                    g = torch.autograd.grad(flat[k], [tb], retain_graph=True, allow_unused=True)[0]
                rows.append(torch.zeros_like(tb) if g is None else g.detach())
            out[f"{a},{b}"] = torch.stack(rows).reshape(tuple(ta.shape) + tuple(tb.shape))
    return out


def check(p: Problem, seed_grad, eps=1e-6, atol=1e-5, rtol=1e-3) -> dict:
    """gradcheck in float64: analytical vs central differences, worst error and where.

    A complex input is taken in complex128, and its numerical gradient is PyTorch's
    convention for a real-valued function: dL/d(real part) + i*dL/d(imaginary part), each
    from central differences (EXPR must then be real: a complex one is refused)."""
    import numpy as np

    import gradcli.torch as torch

    session, program = p.session, p.program
    doubles = {n: p.inputs[n].detach().to(torch.complex128 if p.inputs[n].is_complex() else torch.float64)
               for n in p.names}

    def evaluate(values):
        for n in p.names:
            session.globals[n] = values[n]
        v = session.execute(program)
        return v if isinstance(v, torch.Tensor) else torch.tensor(float(v), dtype=torch.float64)

    leaves = {n: (t.clone().requires_grad_(True) if n in p.wrt else t) for n, t in doubles.items()}
    out = evaluate(leaves)
    if out.is_complex() and any(doubles[n].is_complex() for n in p.wrt):
        for n in p.names:
            session.globals[n] = p.inputs[n]
        raise UsageError(f"--check with complex inputs needs a real EXPR (it is {out.dtype}): "
                         "check a real function of it, such as EXPR.abs() or EXPR.real")
    sg = None if seed_grad is None else seed_grad.to(torch.float64)
    w = sg if sg is not None else torch.ones_like(out)
    if out.numel() != 1 and sg is None:
        raise UsageError("--check of a non-scalar EXPR needs --seed-grad")
    analytical = {}
    if out.requires_grad:
        gs = torch.autograd.grad(out, [leaves[n] for n in p.wrt], grad_outputs=sg, allow_unused=True)
    else:
        gs = [None] * len(p.wrt)
    for n, g in zip(p.wrt, gs):
        kind = np.complex128 if doubles[n].is_complex() else np.float64
        analytical[n] = np.zeros(doubles[n].shape, kind) if g is None else np.asarray(g.tolist(), dtype=kind)
    wdata = np.asarray(w.tolist(), dtype=np.float64)
    worst = {"abs": 0.0, "rel": 0.0, "name": None, "index": None}
    ok = True
    with torch.no_grad():
        for n in p.wrt:
            base = doubles[n]
            kind = analytical[n].dtype
            flat = np.asarray(base.tolist(), dtype=kind).reshape(-1)
            numerical = np.zeros(flat.size, kind)
            steps = (eps, 1j * eps) if kind == np.complex128 else (eps,)
            for k in range(flat.size):
                for step in steps:
                    vals = {}
                    for sign in (1, -1):
                        bumped = flat.copy()
                        bumped[k] += sign * step
                        vals[sign] = np.asarray(
                            evaluate({**doubles, n: torch.tensor(bumped.reshape(base.shape).tolist(), dtype=base.dtype)}).tolist(),
                            dtype=np.float64)
                    numerical[k] += float(np.sum(wdata * (vals[1] - vals[-1])) / (2 * eps)) * (step / eps)
            ana = analytical[n].reshape(-1)
            abs_err = np.abs(ana - numerical)
            rel_err = abs_err / np.maximum(np.abs(numerical), 1e-12)
            if not np.allclose(ana, numerical, rtol=rtol, atol=atol):
                ok = False
            if abs_err.size and abs_err.max() >= worst["abs"]:
                k = int(abs_err.argmax())
                worst.update(abs=float(abs_err.max()), name=n,
                             index=[int(i) for i in np.unravel_index(k, base.shape)] if base.dim() else [])
            if rel_err.size:
                worst["rel"] = max(worst["rel"], float(rel_err.max()))
    for n in p.names:
        session.globals[n] = p.inputs[n]
    result = {"ok": ok, "max_abs_error": worst["abs"], "max_rel_error": worst["rel"],
              "worst": None if worst["name"] is None else {"name": worst["name"],
                                                           "index": worst["index"]},
              "eps": eps, "atol": atol, "rtol": rtol}
    if out.dtype != torch.float64:
        # EXPR casts (x.bfloat16(), autocast): a step of eps is below its resolution, so the
        # differences are rounding and the verdict says nothing about the gradient
        result["note"] = (f"EXPR's value is {out.dtype}, not torch.float64, even with float64 "
                          f"inputs: finite differences at eps={eps:g} cannot resolve it, so the "
                          "comparison does not test the gradient")
    return result


# ----------------------------------------------------------------- output

def _jsonable(x):
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    if isinstance(x, list):
        return [_jsonable(v) for v in x]
    if isinstance(x, complex):  # (a complex tensor's element: its [real, imag] pair)
        return [_jsonable(x.real), _jsonable(x.imag)]
    return x


def tensor_json(t):
    if t is None:
        return None
    return {"shape": list(t.shape), "dtype": t.dtype.name, "data": _jsonable(t.detach().tolist())}


def _plain_table(rows: list, headers: list) -> str:
    """A plain-text table (no rich) for pipes and NO_COLOR."""
    cells = [[str(c) for c in r] for r in rows]
    widths = [max([len(h)] + [max(len(line) for line in c[i].split("\n")) for c in cells]) for i, h in enumerate(headers)]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    out.append("  ".join("-" * w for w in widths))
    for c in cells:
        parts = [col.split("\n") for col in c]
        height = max(len(p) for p in parts)
        for i in range(height):
            out.append("  ".join((p[i] if i < len(p) else "").ljust(w) for p, w in zip(parts, widths)).rstrip())
    return "\n".join(out)


def _use_rich(no_color: bool) -> bool:
    if no_color or os.environ.get("NO_COLOR"):
        return False
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def print_table(title: str, rows: list, headers: list, no_color: bool) -> None:
    if not _use_rich(no_color):
        print(f"{title}\n{_plain_table(rows, headers)}")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for h in headers:
        table.add_column(h, overflow="fold")
    for r in rows:
        table.add_row(*[str(c) for c in r])
    Console().print(table)


def _seed_grad(p: Problem, text):
    import gradcli.torch as torch

    if text is None:
        return None
    v = p.session.run(text, "--seed-grad")
    g = v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=p.value.dtype)
    g = g.detach().to(p.value.dtype)
    if tuple(g.shape) != tuple(p.value.shape):
        try:
            g = g.expand(tuple(p.value.shape)).clone()
        except RuntimeError:
            raise UsageError(
                f"--seed-grad has shape {list(g.shape)} but EXPR has shape {list(p.value.shape)}") from None
    return g


class Options:
    """Everything `gradcli grad` was asked for (one object, so the typer command and the
    hand-written fast path call the same `do_grad`)."""

    __slots__ = ("expr", "at", "wrt", "seed_grad", "jacobian", "hessian", "graph", "explain",
                 "check", "as_json", "dtype", "seed", "no_color", "limits", "formula", "csv",
                 "grid", "plot", "precision")

    def __init__(self, expr, at=(), wrt=(), seed_grad=None, jacobian=False, hessian=False,
                 graph=False, explain=False, check=False, as_json=False, dtype=None, seed=0,
                 no_color=False, limits=None, formula=False, csv=False, grid=(), plot=None,
                 precision=None):
        self.expr, self.at, self.wrt, self.seed_grad = expr, list(at), list(wrt), seed_grad
        self.jacobian, self.hessian, self.graph, self.explain = jacobian, hessian, graph, explain
        self.check, self.as_json, self.dtype, self.seed = check, as_json, dtype, seed
        self.no_color, self.limits, self.formula, self.csv = no_color, limits, formula, csv
        self.grid, self.plot, self.precision = list(grid), plot, precision


#: flag pairs that cannot go together, and why (checked before anything runs)
