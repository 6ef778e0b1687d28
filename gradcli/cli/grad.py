"""`gradcli grad` (the one-shot differentiator) and `gradcli graph`.

Both bind `--at NAME=VALUE` inputs, evaluate EXPR with the language (so EXPR and
the values are sandboxed like any program), and then either differentiate it or
draw its graph. The JSON schema of `grad --json` is documented in
gradcli.cli.grad_problem.GRAD_JSON_SCHEMA (versioned: "schema": "gradcli.grad/2").

Start-up matters (`gradcli grad "x*2" --at x=1` is the W1 benchmark): sympy
(`--formula`, gradcli.cli.formula), plotext/matplotlib (`--plot`, gradcli.cli.plot) and
the many-points code (`--csv`/`--grid`, gradcli.cli.points) are imported only when their
flag is given.
"""

import os
import sys

from gradcli.cli.grad_problem import (
    Options,
    Problem,
    UsageError,
    _seed_grad,
    build,
    check,
    gradients,
    hessians,
    jacobians,
    print_table,
)

GRAD_HELP = """Differentiate EXPR at a point: prints its value and the gradients.

EXPR and the --at values may use pi, e, inf, nan and every elementwise function of
torch, torch.nn.functional and torch.special by its bare name (exp(1) is e). Powers
are written x**2 (^ is bitwise xor in Python).

\b
Examples (quoted as they must be in bash and zsh):
  gradcli grad "x**2*sin(x)" --at x=1 --formula
  gradcli grad "(x**2 * y.sin()).sum()" --at "x=[1,2,3]" --at y=0.5
  gradcli grad "x @ W @ x" --at "x=ones(3)" --at "W=eye(3)" --wrt x --formula
  gradcli grad "x.sin()" --at "x=[0.0,1.0]" --jacobian
  gradcli grad "x**2*y + y**3" --at x=1 --at y=2 --hessian
  gradcli grad "x.exp().sum()" --at "x=[1,2]" --explain
  gradcli grad "x.tanh().sum()" --at x=0.5 --check --json
  gradcli grad "sin(x)*y" --at "x=[0,1,2]" --at y=2 --csv
  gradcli grad "x**2*y" --grid x=0:1:3 --grid y=1:2:2
  gradcli grad "sin(x)" --grid x=0:6.28:100 --plot
"""

GRAPH_HELP = """Draw the autograd graph of EXPR (tree, or export as dot/mermaid/json).

\b
Examples (quoted as they must be in bash and zsh):
  gradcli graph "(x * y + x.sin()).sum()" --at "x=[1,2]" --at y=3.0
  gradcli graph "(x @ x).tanh()" --at "x=ones(2,2)" --format mermaid
"""



def _short(t) -> str:
    """A tensor's repr without `tensor(...)` around it; the rows of a matrix keep lining
    up under the first (their indent was for the 7 characters of `tensor(`)."""
    if t is None:
        return "None (not reached)"
    text = repr(t.detach())
    prefix = "tensor("
    if not text.startswith(prefix):
        return text
    pad = " " * len(prefix)
    body = text[len(prefix):-1]
    cut = body.rfind(", dtype=")  # the value line above the table names the dtype
    if cut != -1 and "\n" not in body[cut:]:
        body = body[:cut]
    lines = body.split("\n")
    return "\n".join([lines[0]] + [line[len(pad):] if line.startswith(pad) else line
                                   for line in lines[1:]])


def report(p: Problem, grads, jac, hess, chk, no_color: bool, precision=None) -> None:
    print(f"value: {p.value!r}")
    if grads is not None:
        rows = [(n, list(p.inputs[n].shape), _short(p.inputs[n]), _short(grads[n])) for n in p.wrt]
        print_table("gradients", rows, ["name", "shape", "value", "grad"], no_color)
    if jac is not None:
        for n, block in jac.items():
            print(f"jacobian d({p.expr})/d{n}: shape {list(block.shape)}\n{block!r}")
    if hess is not None:
        from gradcli.cli.grad_output import format_matrix, hessian_matrix

        labels, matrix = hessian_matrix(p, hess)
        if all(p.inputs[n].dim() == 0 for n in p.wrt):
            kind = ""
        elif len(p.wrt) == 1:
            n = p.wrt[0]
            kind = f"/d{n} d{n} (shape {[len(labels), len(labels)]})"
        else:
            kind = " (blocks d2/da db of each pair, flattened)"
        print(f"hessian d2({p.expr}){kind}:\n{format_matrix(labels, matrix, precision)}")
    if chk is not None:
        where = ""
        if chk["worst"] is not None:
            idx = chk["worst"]["index"]
            where = f" at {chk['worst']['name']}{idx if idx else ''}"
        verdict = "PASS" if chk["ok"] else "FAIL"
        digits = 3 if precision is None else precision
        print(f"gradcheck (float64, eps={chk['eps']:g}, atol={chk['atol']:g}, rtol={chk['rtol']:g}): {verdict}; "
              f"max abs error {chk['max_abs_error']:.{digits}e}{where}, "
              f"max rel error {chk['max_rel_error']:.{digits}e}")
        if chk.get("note"):
            print(f"note: {chk['note']}")


CONFLICTS = (
    ("jacobian", "seed_grad", "--jacobian computes every row of the Jacobian; --seed-grad asks "
                              "for one vector-Jacobian product: give one of them"),
    ("jacobian", "explain", "--explain walks one backward pass: use --seed-grad VALUE instead of "
                            "--jacobian"),
    ("csv", "as_json", "--csv and --json are two output formats: give one of them"),
    ("csv", "jacobian", "--csv prints one row per point: drop --jacobian"),
    ("csv", "hessian", "--csv prints one row per point: drop --hessian"),
    ("csv", "graph", "--csv prints one row per point: drop --graph"),
    ("csv", "explain", "--csv prints one row per point: drop --explain"),
    ("csv", "check", "--csv prints one row per point: drop --check"),
    ("csv", "seed_grad", "--csv gives each point's own derivatives: drop --seed-grad"),
    ("csv", "plot", "--csv and --plot both write the points: give one of them"),
    ("csv", "formula", "--csv prints only the points: run --formula without --csv"),
    ("grid", "jacobian", "--grid gives each point's derivatives: drop --jacobian"),
    ("grid", "hessian", "--grid gives each point's derivatives: drop --hessian"),
    ("grid", "seed_grad", "--grid gives each point's derivatives: drop --seed-grad"),
    ("grid", "graph", "--grid evaluates many points: --graph draws one; drop one of them"),
    ("grid", "explain", "--grid evaluates many points: --explain walks one; drop one of them"),
    ("grid", "check", "--grid evaluates many points: run --check at one --at point"),
    ("plot", "as_json", "--plot draws; --json prints data: give one of them"),
    ("plot", "jacobian", "--plot draws EXPR and its derivative: drop --jacobian"),
    ("plot", "hessian", "--plot draws EXPR and its derivative: drop --hessian"),
    ("plot", "seed_grad", "--plot draws each point's derivative: drop --seed-grad"),
)


def refuse_conflicts(o: Options) -> None:
    for a, b, why in CONFLICTS:
        va, vb = getattr(o, a), getattr(o, b)
        if (va not in (None, False, []) and vb not in (None, False, [])):
            raise UsageError(why)
    if o.precision is not None and not 0 <= o.precision <= 17:
        raise UsageError(f"--precision must be between 0 and 17, got {o.precision}")
    if o.plot:
        from gradcli.cli.plot import PlotError, check_target

        try:
            check_target(o.plot)
        except PlotError as e:
            raise UsageError(str(e)) from None


def do_grad(o: Options) -> int:
    from gradcli.lang import GradcliError

    try:
        refuse_conflicts(o)
        grid = []
        if o.grid:
            from gradcli.cli.points import PointsError, parse_grid

            try:
                grid = parse_grid(o.grid)
            except PointsError as e:
                raise UsageError(str(e)) from None
        p = build(o.expr, o.at, o.wrt, o.dtype, o.seed, o.limits, grid=grid)
        _refuse_complex(p, o)
        if o.precision is not None:
            import gradcli.torch as torch

            torch.set_printoptions(precision=o.precision)
        if o.csv or grid or o.plot is not None:
            from gradcli.cli.grad_many import many_points

            return many_points(p, o, grid)
        return _one_point(p, o)
    except (UsageError, GradcliError) as e:
        return _report_failure("grad", e)
    except RuntimeError as e:  # engine errors raised outside a program (e.g. autograd.grad)
        print(f"gradcli grad: RuntimeError: {e}", file=sys.stderr)
        return 1


#: the options that read derivatives as real numbers (a formula over reals, table rows,
#: plotted curves, second derivatives of a real function), by their flag
_REAL_ONLY = (("formula", "--formula"), ("csv", "--csv"), ("grid", "--grid"),
              ("plot", "--plot"), ("hessian", "--hessian"))


def _refuse_complex(p: Problem, o: Options) -> None:
    """Complex inputs (`--at z=1+2j`) give the value, the gradients (PyTorch's conjugate
    Wirtinger convention), --seed-grad, --jacobian, --check, --graph, --explain and --json;
    the options that treat a derivative as one real number are refused (exit 2)."""
    complex_names = [n for n in p.names if p.inputs[n].is_complex()]
    if not complex_names:
        return
    used = [flag for attr, flag in _REAL_ONLY if getattr(o, attr) not in (None, False, [], ())]
    if used:
        n = complex_names[0]
        raise UsageError(f"{used[0]} takes real inputs: {n} is {p.inputs[n].dtype} (its "
                         "gradient, --jacobian and --check work with complex inputs)")


def _one_point(p: Problem, o: Options) -> int:
    sg = _seed_grad(p, o.seed_grad)
    grads = jac = hess = chk = formulas = None
    if o.explain and sg is None and p.value.numel() != 1:  # before anything is printed
        raise UsageError(f"--explain walks the backward pass of a non-scalar EXPR (shape "
                         f"{list(p.value.shape)}) from a seed: give --seed-grad VALUE")
    if o.jacobian:
        jac = jacobians(p)
    elif p.value.numel() != 1 and sg is None and not o.hessian and not o.formula:
        raise UsageError(
            "EXPR is not a scalar (shape "
            f"{list(p.value.shape)}): give --seed-grad VALUE for a vector-Jacobian product, "
            "--jacobian, or --csv for each element's own derivatives (elementwise EXPR)")
    elif not o.hessian or sg is not None or p.value.numel() == 1:
        if p.value.numel() == 1 or sg is not None:
            grads = gradients(p, sg)
    if o.hessian:
        hess = hessians(p)
    if o.check:
        chk = check(p, sg)
    if o.formula:
        from gradcli.cli.grad_formula import formula_report

        formulas = formula_report(p, grads)
    if o.as_json:
        import json

        from gradcli.cli.grad_output import json_doc

        print(json.dumps(json_doc(p, o, grads, jac, hess, chk, formulas, sg), indent=2))
    else:
        report(p, grads, jac, hess, chk, o.no_color, o.precision)
        if formulas is not None:
            from gradcli.cli.grad_formula import print_formulas

            print_formulas(formulas, o.precision)
        if o.graph:
            from gradcli.views import graph as draw

            for n, g in (grads or {}).items():  # fresh leaves: show their gradients in the tree
                p.inputs[n].grad = None if g is None else g.detach()
            draw(p.value, names=p.inputs, color=False if o.no_color else None)
            for n in p.inputs:
                p.inputs[n].grad = None
        if o.explain:
            from gradcli.views import explain as walk

            walk(p.value, gradient=sg, names=p.inputs, color=False if o.no_color else None)
    if chk is not None and not chk["ok"]:
        return 1
    return 0


def do_graph(expr, at, fmt, dtype, seed, no_color, limits) -> int:
    from gradcli.lang import GradcliError

    fmt = fmt.lower()
    if fmt not in ("tree", "dot", "mermaid", "json"):
        print(f"gradcli graph: --format must be tree, dot, mermaid or json, got {fmt!r}", file=sys.stderr)
        return 2
    try:
        p = build(expr, at, [], dtype, seed, limits)
        if fmt == "tree":
            from gradcli.views import graph as draw

            draw(p.value, names=p.inputs, color=False if no_color else None)
        else:
            from gradcli.views import export

            print(export(p.value, fmt, names=p.inputs))
        return 0
    except (UsageError, GradcliError) as e:
        return _report_failure("graph", e)


def _report_failure(command, err) -> int:
    """Report on stderr why `gradcli grad` or `gradcli graph` failed and return the exit
    code: 2 for a usage error, a program error's own code (both commands agree on these)."""
    if isinstance(err, UsageError):
        print(f"gradcli {command}: {err}", file=sys.stderr)
        return 2
    from gradcli.lang.session import render_error

    print(render_error(err), file=sys.stderr)
    return err.exit_code


def register(app) -> None:
    from typing import Annotated, List, Optional

    import typer

    from gradcli.cli.options import _limits, _positive

    At = Annotated[List[str], typer.Option("--at", metavar="NAME=VALUE", help=(
        "Bind NAME to a number, a nested list or any expression (ones(2,2), randn(3)); "
        "integer values become the default float dtype. Repeatable."))]
    Dtype = Annotated[Optional[str], typer.Option("--dtype", help="float32 (default), float64, bfloat16 or float16.")]
    Seed = Annotated[int, typer.Option("--seed", metavar="N", help="Starting seed of the random generator.")]
    NoColor = Annotated[bool, typer.Option("--no-color", help="Plain text output.")]
    MaxSteps = Annotated[Optional[int], typer.Option("--max-steps", callback=_positive, metavar="N",
                                                     help="Step budget (default 10,000,000).")]
    MaxElements = Annotated[Optional[int], typer.Option("--max-elements", callback=_positive, metavar="N",
                                                        help="Largest tensor in elements (default 100,000,000).")]

    @app.command("grad", help=GRAD_HELP)
    def grad_cmd(
        expr: Annotated[str, typer.Argument(metavar="EXPR", help="The expression to differentiate.")],
        at: At = [],  # noqa: B006 - typer reads the default
        wrt: Annotated[List[str], typer.Option("--wrt", metavar="NAMES",
                                               help="Differentiate only w.r.t. these names (comma-separated or repeated).")] = [],  # noqa: B006
        seed_grad: Annotated[Optional[str], typer.Option("--seed-grad", metavar="VALUE",
                                                         help="The gradient of a non-scalar EXPR (a vector-Jacobian product).")] = None,
        jacobian: Annotated[bool, typer.Option("--jacobian", help="One Jacobian per wrt name.")] = False,
        hessian: Annotated[bool, typer.Option("--hessian", help="The blocks d2 EXPR / da db for each pair.")] = False,
        graph: Annotated[bool, typer.Option("--graph", help="Also draw the grad_fn graph.")] = False,
        explain: Annotated[bool, typer.Option("--explain", help="Also walk the backward pass step by step.")] = False,
        check_: Annotated[bool, typer.Option("--check", help="gradcheck in float64 against finite differences.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print a JSON document (schema gradcli.grad/2).")] = False,
        formula: Annotated[bool, typer.Option("--formula", help=(
            "Also the derivative as a formula for each wrt name (sympy), checked against "
            "autograd."))] = False,
        csv: Annotated[bool, typer.Option("--csv", help=(
            "One CSV row per element of an elementwise EXPR (or per --grid point): the names, "
            "the value, each derivative, all digits."))] = False,
        grid: Annotated[List[str], typer.Option("--grid", metavar="NAME=START:STOP:N", help=(
            "Evaluate at N points from START to STOP (repeatable: every combination)."))] = [],  # noqa: B006
        plot: Annotated[bool, typer.Option("--plot", help=(
            "Draw EXPR and its derivative over the 1-D range in the terminal; --plot FILE.png "
            "(.svg, .pdf) writes an image (needs matplotlib: gradcli's `plot` extra)."))] = False,
        plot_file: Annotated[Optional[str], typer.Argument(
            metavar="FILE", hidden=True, help="The image --plot writes.")] = None,
        precision: Annotated[Optional[int], typer.Option("--precision", metavar="N", help=(
            "Digits of every printed number (tensors: after the point, as "
            "torch.set_printoptions).")) ] = None,
        dtype: Dtype = None,
        seed: Seed = 0,
        no_color: NoColor = False,
        max_steps: MaxSteps = None,
        max_elements: MaxElements = None,
    ):
        # typer has no option with an optional value: `--plot FILE` arrives as a flag and a
        # second word (the fast path reads it directly)
        if plot_file is not None and not plot:
            raise typer.BadParameter(f"unexpected extra argument {plot_file!r}")
        raise typer.Exit(do_grad(Options(
            expr, at, wrt, seed_grad, jacobian, hessian, graph, explain, check_, as_json, dtype,
            seed, no_color, _limits(max_steps=max_steps, max_elements=max_elements),
            formula=formula, csv=csv, grid=grid, plot=(plot_file or "") if plot else None,
            precision=precision)))

    @app.command("graph", help=GRAPH_HELP)
    def graph_cmd(
        expr: Annotated[str, typer.Argument(metavar="EXPR", help="The expression whose graph to draw.")],
        at: At = [],  # noqa: B006
        fmt: Annotated[str, typer.Option("--format", "-f", help="tree, dot, mermaid or json.")] = "tree",
        dtype: Dtype = None,
        seed: Seed = 0,
        no_color: NoColor = False,
        max_steps: MaxSteps = None,
        max_elements: MaxElements = None,
    ):
        raise typer.Exit(do_graph(expr, at, fmt, dtype, seed, no_color,
                                  _limits(max_steps=max_steps, max_elements=max_elements)))


# ------------------------------------------------------------- fast path
# `gradcli grad`/`graph` with plain options are parsed here, without typer (whose
# import costs about 0.1-0.2 s); anything else (--help, errors) goes to typer.

_FLAGS = {"--jacobian": "jacobian", "--hessian": "hessian", "--graph": "graph",
          "--explain": "explain", "--check": "check", "--json": "as_json", "--no-color": "no_color",
          "--formula": "formula", "--csv": "csv"}
_VALUES = {"--at": "at", "--wrt": "wrt", "--seed-grad": "seed_grad", "--dtype": "dtype",
           "--seed": "seed", "--max-steps": "max_steps", "--max-elements": "max_elements",
           "--format": "fmt", "-f": "fmt", "--grid": "grid", "--precision": "precision"}
_REPEATED = ("at", "wrt", "grid")
_INTS = ("seed", "max_steps", "max_elements", "precision")
_GRAD_ONLY = ("wrt", "seed_grad", "grid", "precision")


def _plot_value(rest: list, i: int):
    """`--plot` takes a FILE only when the next word names an image (or `--plot=FILE`)."""
    a = rest[i]
    if a.startswith("--plot="):
        return a.partition("=")[2], i
    if i + 1 < len(rest) and not rest[i + 1].startswith("-") and \
            rest[i + 1].lower().endswith((".png", ".svg", ".pdf")):
        return rest[i + 1], i + 1
    return "", i


def fast_path(argv: list):
    """A thunk running `grad`/`graph` for plain arguments, or None to let typer parse."""
    if not argv or argv[0] not in ("grad", "graph"):
        return None
    from gradcli.cli.options import (  # loaded already: app runs us
        _int_value,
        _limits,
        _option_value,
    )

    cmd = argv[0]
    kw = {"at": [], "wrt": [], "grid": []}
    positional = []
    rest = argv[1:]
    i = 0
    while i < len(rest):
        a = rest[i]
        if not a.startswith("-") or a == "-":
            positional.append(a)
        elif a in _FLAGS and (cmd == "grad" or a == "--no-color"):
            kw[_FLAGS[a]] = True
        elif cmd == "grad" and (a == "--plot" or a.startswith("--plot=")):
            kw["plot"], i = _plot_value(rest, i)
        else:
            name, value, i = _option_value(rest, i)
            key = _VALUES.get(name)
            if key is None or value is None or (cmd == "graph" and key in _GRAD_ONLY) \
                    or (cmd == "grad" and key == "fmt"):
                return None
            if key in _INTS:
                value = _int_value(value, positive=key not in ("seed", "precision"))
                if value is None:
                    return None
            if key in _REPEATED:
                kw[key].append(value)
            else:
                kw[key] = value
        i += 1
    if len(positional) != 1:
        return None
    limits = _limits(max_steps=kw.pop("max_steps", None), max_elements=kw.pop("max_elements", None))
    if limits is None:
        return lambda: 2
    expr = positional[0]
    if kw.get("no_color"):
        os.environ["NO_COLOR"] = "1"
    if cmd == "graph":
        return lambda: do_graph(expr, kw["at"], kw.get("fmt", "tree"), kw.get("dtype"),
                                kw.get("seed", 0), kw.get("no_color", False), limits)
    kw.pop("fmt", None)
    return lambda: do_grad(Options(expr, limits=limits, **kw))
