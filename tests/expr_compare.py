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


def assert_raises_as_pytorch(call, gradcli_torch, torch, *, compare_text: bool = True) -> None:
    """`call(T)` raises the same exception type with gradcli's torch as with PyTorch's
    (and the same text unless `compare_text` is False); the op files' error tables use it."""
    import pytest

    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(Exception) as ours:
        call(gradcli_torch)
    assert type(ours.value) is type(theirs.value)
    if compare_text:
        assert str(ours.value) == str(theirs.value)
