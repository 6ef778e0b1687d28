"""`gradcli grad --csv / --grid / --plot`: the many-points side of the command.

Imported only when one of those flags is given (see gradcli.cli.grad); the points
themselves are computed by gradcli.cli.points, the plots drawn by gradcli.cli.plot.
"""

from __future__ import annotations

import sys

from gradcli.cli.grad_problem import Options, Problem, UsageError, _jsonable, _use_rich, print_table


def many_points(p: Problem, o: Options, grid: list) -> int:
    from gradcli.cli.points import PointsError, number, table, write_csv

    formulas = None
    if o.formula:
        from gradcli.cli.grad_formula import (
            _check_formulas_at_points,
            formula_report,
            print_formulas,
        )

        formulas = formula_report(p, None, check=False)
    try:
        if o.plot is not None and not grid:
            grid = _plot_range(p)
        headers, rows = table(p, grid)
    except PointsError as e:
        raise UsageError(str(e)) from None
    if formulas is not None:
        _check_formulas_at_points(p, formulas, headers, rows)
    if o.plot is not None:
        if formulas is not None:
            print_formulas(formulas, o.precision)
        return _plot(p, o, grid, headers, rows)
    if o.csv:
        write_csv(headers, rows, o.precision, sys.stdout)
        return 0
    if o.as_json:
        import json

        from gradcli.cli.grad_output import json_doc

        doc = json_doc(p, o, None, None, None, None, formulas, None)
        doc["points"] = {"headers": headers,
                         "rows": [[_jsonable(float(v)) for v in r] for r in rows]}
        print(json.dumps(doc, indent=2))
        return 0
    if formulas is not None:
        print_formulas(formulas, o.precision)
    digits = 6 if o.precision is None else o.precision
    print_table(f"{p.expr} at {len(rows)} points", [[number(v, digits) for v in r] for r in rows],
                headers, o.no_color)
    return 0


def _plot_range(p: Problem) -> list:
    """--plot without --grid: the one 1-D --at vector is the x axis."""
    vectors = [n for n in p.names if p.inputs[n].dim() == 1 and p.inputs[n].numel() > 1]
    if len(vectors) != 1 or any(p.inputs[n].numel() != 1 for n in p.names if n not in vectors):
        raise UsageError("--plot needs one 1-D range: --grid NAME=START:STOP:N (or one --at "
                         "NAME bound to a 1-D vector, the other names to numbers)")
    return []


def _plot(p: Problem, o: Options, grid: list, headers: list, rows: list) -> int:
    from gradcli.cli import plot as plotting

    if grid and len(grid) != 1:
        raise UsageError("--plot draws over one name: give one --grid")
    xname = grid[0][0] if grid else next(n for n in p.names if p.inputs[n].dim() == 1)
    xi = headers.index(xname)
    vi = headers.index("value")
    xs = [r[xi] for r in rows]
    series = {p.expr: [r[vi] for r in rows]}
    if xname in p.wrt:
        di = headers.index(f"d/d{xname}")
        series[f"d/d{xname}"] = [r[di] for r in rows]
    title = f"{p.expr} and d/d{xname}" if xname in p.wrt else p.expr
    if o.plot:
        plotting.image(o.plot, xs, series, xname, title)
        print(f"wrote {o.plot}")
    else:
        print(plotting.terminal(xs, series, xname, title, color=_use_rich(o.no_color)))
    return 0
