"""`gradcli grad --formula`: the formulas of gradcli.cli.formula, checked against autograd.

Imported only with --formula (gradcli.cli.formula imports sympy).
"""

from __future__ import annotations

from gradcli.cli.grad_problem import Problem, gradients


def formula_report(p: Problem, grads, check: bool = True) -> dict:
    """{name: {"text", "sympy", "missing", "check"}} for each wrt name (sympy on first use)."""
    from gradcli.cli import formula as F

    shapes = {n: tuple(t.shape) for n, t in p.inputs.items()}
    derived = F.derive(p.expr, shapes, p.wrt)
    expected = None
    out = {}
    for n in p.wrt:
        d, reason = derived[n]
        entry = {"text": None, "sympy": None, "missing": reason, "check": None, "expr": d}
        if d is not None:
            entry["text"] = F.as_text(d)
            entry["sympy"] = F.as_sympy(d)
            if check:
                if expected is None:
                    expected = _autograd_partials(p, grads)
                if not expected and p.value.numel() != 1:
                    # one formula per element would be the Jacobian's diagonal only
                    entry.update(text=None, sympy=None, expr=None, missing=NOT_ELEMENTWISE)
                else:
                    entry["check"] = _check_formula(F, d, p, expected.get(n) if expected
                                                    else None)
        out[n] = entry
    return out


NOT_ELEMENTWISE = ("no formula per element: EXPR is neither a scalar nor elementwise (its "
                   "derivative is a Jacobian; write a scalar such as (E).sum())")


def _autograd_partials(p: Problem, grads) -> dict:
    """What the formulas must equal: the gradient of a scalar EXPR, each element's own
    partials for an elementwise one ({} when neither)."""
    import numpy as np

    if p.value.numel() == 1:
        g = grads if grads is not None else gradients(p, None)
        return {n: (np.zeros(tuple(p.inputs[n].shape)) if t is None else
                    np.asarray(t.tolist(), dtype=float)) for n, t in g.items()}
    from gradcli.cli.points import _broadcast_shape, elementwise

    try:
        shape = _broadcast_shape([tuple(t.shape) for t in p.inputs.values()])
    except ValueError:
        return {}
    found = elementwise(p, dict(p.inputs), shape)
    if found is None:
        return {}
    return {n: np.asarray(t.tolist(), dtype=float) for n, t in found[1].items()}


def _check_formula(F, d, p: Problem, expected) -> dict:
    import numpy as np

    if expected is None:
        return {"ok": None, "max_abs_error": None, "note": "not checked (EXPR is neither a "
                "scalar nor elementwise)"}
    values = {n: np.asarray(t.detach().tolist(), dtype=float) for n, t in p.inputs.items()}
    shapes = {n: tuple(t.shape) for n, t in p.inputs.items()}
    try:
        got = F.evaluate(d, shapes, values, False)
        got = np.broadcast_to(np.asarray(got, dtype=float).reshape(-1) if
                              np.size(got) == np.size(expected) else got, expected.reshape(-1).shape
                              if np.size(got) == np.size(expected) else expected.shape)
        got = got.reshape(expected.shape)
    except Exception as e:  # noqa: BLE001 - a formula sympy cannot evaluate numerically
        return {"ok": None, "max_abs_error": None, "note": f"not checked ({type(e).__name__})"}
    float64 = p.value.dtype.name == "float64"
    rtol, atol = (1e-7, 1e-7) if float64 else (1e-5, 1e-5)
    diff = np.abs(got - expected)
    both_nan = np.isnan(got) & np.isnan(expected)
    diff = np.where(both_nan, 0.0, diff)
    same_inf = np.isinf(got) & (got == expected)
    diff = np.where(same_inf, 0.0, diff)
    worst = float(np.nanmax(diff)) if diff.size else 0.0
    ok = bool(np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True))
    return {"ok": ok, "max_abs_error": worst if worst == worst else None, "rtol": rtol,
            "atol": atol}


def _check_formulas_at_points(p: Problem, formulas: dict, headers: list, rows: list) -> None:
    """With --grid/--plot: each formula against the autograd column at every point."""
    import numpy as np

    from gradcli.cli import formula as F

    columns = {h: np.asarray([r[k] for r in rows], dtype=float) for k, h in enumerate(headers)}
    shapes = {n: () for n in p.names}
    for n, f in formulas.items():
        if f["text"] is None or f"d/d{n}" not in columns:
            continue
        d = f["expr"]
        if d is None or any(s.name not in columns for s in d.free_symbols):
            continue
        try:
            got = np.broadcast_to(np.asarray(F.evaluate(d, shapes, columns, False), dtype=float),
                                  (len(rows),))
        except Exception:  # noqa: BLE001 - a formula sympy cannot evaluate numerically
            continue
        want = columns[f"d/d{n}"]
        float64 = p.value.dtype.name == "float64"
        rtol, atol = (1e-7, 1e-7) if float64 else (1e-5, 1e-5)
        diff = np.where(np.isnan(got) & np.isnan(want), 0.0, np.abs(got - want))
        f["check"] = {"ok": bool(np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)),
                      "max_abs_error": float(np.nanmax(diff)) if diff.size else 0.0,
                      "rtol": rtol, "atol": atol, "points": len(rows)}


def print_formulas(formulas: dict, precision) -> None:
    at_points = any(f["check"] and f["check"].get("points") for f in formulas.values())
    where = "at every point" if at_points else "at the --at point"
    print(f"formula (sympy; checked against autograd {where}):")
    for n, f in formulas.items():
        if f["text"] is None:
            print(f"  d/d{n}: {f['missing']}; the numbers are autograd's")
            continue
        chk = f["check"]
        if chk is None:
            verdict = ""
        elif chk["ok"] is None:
            verdict = f"  [{chk['note']}]"
        else:
            err = chk["max_abs_error"]
            digits = 2 if precision is None else precision
            err_text = "nan" if err is None else f"{err:.{digits}e}"
            verdict = (f"  [{'matches' if chk['ok'] else 'DIFFERS FROM'} autograd, "
                       f"max abs difference {err_text}]")
        print(f"  d/d{n} = {f['text']}{verdict}")
