"""PyTorch's own optimizer database against gradcli: every OptimizerInfo of torch 2.13's
optim_db (torch.testing._internal.common_optimizers), each of its optim_inputs on CPU in
float32, float64 and (where the optimizer takes them) complex64, with foreach=True/False,
fused=True and differentiable=True, run in both libraries on the same parameters (a 0-d
and an empty one among them, two parameter groups) with the same gradients
(gradcli/optim_coverage.py does the work): parameters after every step, state_dict,
repr, a load_state_dict round trip and zero_grad must agree, and a refusal must be
PyTorch's (type and message, construction or step). Every error input must be refused as
PyTorch refuses it. A case in `optim_coverage.KNOWN_FAILING` must still fail (strict);
`python -m gradcli.optim_coverage` prints the counts."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")  # PyTorch's test helpers import it

from gradcli import optim_coverage  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    INFOS = optim_coverage.load_optim_db()


def _name(info) -> str:
    return info.optim_cls.__name__


def test_scope_is_pytorchs_optim_db():
    # 15 optimizers in torch 2.13: a very different number means optim_db moved under us
    names = {_name(info) for info in INFOS}
    assert len(names) >= 15
    assert {"SGD", "Adam", "AdamW", "LBFGS", "Muon", "Adafactor", "SparseAdam"} <= names


def _problems(name, results) -> list[str]:
    problems = []
    for key, (status, detail) in results.items():
        if f"{name} {key}" in optim_coverage.KNOWN_FAILING:
            if status == "pass":
                problems.append(f"{key} passes now: remove it from KNOWN_FAILING")
            continue
        if status == "fail":
            problems.append(f"{key}: {detail}")
    return problems


@pytest.mark.parametrize("info", INFOS, ids=_name)
def test_optimizer_inputs(info):
    results = optim_coverage.check_optimizer(info)
    assert results, f"{_name(info)}: no inputs ran"
    assert sum(s == "pass" for s, _ in results.values()) >= len(results) // 2
    problems = _problems(_name(info), results)
    assert not problems, f"{_name(info)}: " + "; ".join(problems)


@pytest.mark.parametrize("info", INFOS, ids=_name)
def test_optimizer_error_inputs(info):
    results = optim_coverage.check_errors(info)
    assert results, f"{_name(info)}: no error inputs"
    problems = _problems(_name(info), results)
    assert not problems, f"{_name(info)}: " + "; ".join(problems)


def test_known_failing_are_real_cases():
    # each entry names a case the database still has (a typo would silently never match)
    by_name = {_name(info): info for info in INFOS}
    for entry in optim_coverage.KNOWN_FAILING:
        name, key = entry.split(" ", 1)
        keys = {case[0] for case in optim_coverage.cases_of(by_name[name])}
        assert key in keys, entry

