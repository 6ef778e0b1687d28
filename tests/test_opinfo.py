"""PyTorch's own op database against gradcli: every differentiable float64 CPU OpInfo of
torch 2.13's op_db, on its sample and reference inputs (gradcli/coverage.py does the
work): values, dtypes, grad_fn names and vector-Jacobian products within torch.testing's
tolerances. An op gradcli lacks is an xfail naming it, as are the few in
`coverage.KNOWN_FAILING`, so the run is green and its counts are the coverage; an op
gradcli has must pass every sample. `python -m gradcli.coverage` prints the same count."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")  # PyTorch's test helpers import it

from gradcli import coverage  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    OPS = coverage.load_op_db()


def test_scope_is_pytorchs_differentiable_list():
    # 503 in torch 2.13: a different number means op_db moved under us
    assert len(OPS) > 400
    assert not [op for op in OPS if op.name.startswith(coverage.OUT_OF_SCOPE_PREFIXES)]


@pytest.mark.parametrize("op", OPS, ids=[coverage.op_id(op) for op in OPS])
def test_opinfo(op):
    name = coverage.op_id(op)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status, detail = coverage.check_op(op)
    if status == "missing":
        pytest.xfail(f"gradcli lacks {name}")
    if name in coverage.KNOWN_FAILING:
        if status == "pass":
            pytest.fail(f"{name} passes now: remove it from coverage.KNOWN_FAILING")
        pytest.xfail(f"{name}: {coverage.KNOWN_FAILING[name]}")
    assert status == "pass", f"{name}: {detail}"
