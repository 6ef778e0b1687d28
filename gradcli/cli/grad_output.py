"""`gradcli grad` output that only some flags need: the --json document (schema in
gradcli.cli.grad_problem.GRAD_JSON_SCHEMA) and the Hessian as one labelled matrix."""

from __future__ import annotations

from gradcli.cli.grad_problem import SCHEMA, Options, Problem, _jsonable, tensor_json


def hessian_matrix(p: Problem, hess: dict):
    """(labels, rows): the Hessian as one matrix over every element of the wrt names
    (`x` for a 0-d name, `x[0]`, `W[1,0]` for elements), in --at order."""
    import itertools

    labels, spans = [], []
    for n in p.wrt:
        shape = tuple(p.inputs[n].shape)
        if not shape:
            labels.append(n)
        else:
            for idx in itertools.product(*[range(k) for k in shape]):
                labels.append(f"{n}[{','.join(map(str, idx))}]")
        spans.append((n, max(1, p.inputs[n].numel())))
    rows = []
    for a, na in spans:
        block_rows = [[] for _ in range(na)]
        for b, nb in spans:
            flat = hess[f"{a},{b}"].detach().reshape(na, nb).tolist()
            for i in range(na):
                block_rows[i].extend(flat[i])
        rows.extend(block_rows)
    return labels, rows


def format_matrix(labels: list, rows: list, precision=None) -> str:
    digits = 4 if precision is None else precision
    cells = [[_fixed(v, digits) for v in r] for r in rows]
    width = max([len(lab) for lab in labels] + [len(c) for r in cells for c in r] + [1])
    side = max(len(lab) for lab in labels)
    lines = [" " * side + "  " + "  ".join(lab.rjust(width) for lab in labels)]
    for lab, r in zip(labels, cells):
        lines.append(lab.ljust(side) + "  " + "  ".join(c.rjust(width) for c in r))
    return "\n".join(lines)


def _fixed(v, digits) -> str:
    v = float(v)
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return f"{v:.{digits}f}"


def json_doc(p: Problem, o: Options, grads, jac, hess, chk, formulas, sg) -> dict:
    doc = {"schema": SCHEMA, "expr": p.expr, "wrt": p.wrt,
           "inputs": {n: tensor_json(t) for n, t in p.inputs.items()},
           "value": tensor_json(p.value)}
    if grads is not None:
        doc["gradients"] = {n: tensor_json(g) for n, g in grads.items()}
    if jac is not None:
        doc["jacobian"] = {n: tensor_json(b) for n, b in jac.items()}
    if hess is not None:
        doc["hessian"] = {k: tensor_json(b) for k, b in hess.items()}
        labels, matrix = hessian_matrix(p, hess)
        doc["hessian_matrix"] = {"labels": labels, "data": _jsonable(matrix)}
    if chk is not None:
        doc["check"] = chk
    if formulas is not None:
        doc["formula"] = {n: f["sympy"] for n, f in formulas.items()}
        doc["formula_text"] = {n: f["text"] for n, f in formulas.items()}
        doc["formula_check"] = {n: f["check"] for n, f in formulas.items()}
        missing = {n: f["missing"] for n, f in formulas.items() if f["missing"]}
        if missing:
            doc["formula_missing"] = missing
    if o.graph:
        import json

        from gradcli.views import export

        doc["graph"] = json.loads(export(p.value, "json", names=p.inputs))
    if o.explain:
        import io

        from gradcli.views import explain as walk

        buf = io.StringIO()
        walk(p.value, gradient=sg, names=p.inputs, color=False, file=buf, width=100)
        doc["explanation"] = buf.getvalue()
    return doc
