"""Run one torch expression over float64 leaves made from numpy arrays (`x0`, `x1`, ...),
with gradcli.torch or with PyTorch as `torch`: the op test files compare the two runs."""

from __future__ import annotations

import warnings


def run_expr(module, expr: str, arrays) -> tuple[list, list]:
    """(the leaves, the outputs as a list) of `expr` evaluated with `module` as torch."""
    inputs = [module.tensor(a, dtype=module.float64, requires_grad=True) for a in arrays]
    names = {f"x{i}": x for i, x in enumerate(inputs)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = eval(expr, {"torch": module}, names)  # noqa: S307 - the test files' own tables
    outs = list(out) if isinstance(out, tuple) else [out]
    return inputs, outs
