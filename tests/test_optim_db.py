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



@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adagrad", "ASGD", "NAdam", "RAdam",
                                  "RMSprop", "Rprop", "Adadelta", "Adamax"])
def test_state_step_follows_the_default_dtype(name):
    # PyTorch keeps 'step' (ASGD's eta and mu, NAdam's mu_product) in float64 when the
    # default dtype is float64, in float32 for fused=True; the default is restored after
    import torch

    import gradcli.torch as gt

    info = next(i for i in INFOS if _name(i) == name)
    before = torch.get_default_dtype(), gt.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        gt.set_default_dtype(gt.float64)
        probe = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))])
        probe.param_groups[0]["params"][0].grad = torch.ones(2)
        probe.step()
        assert next(iter(probe.state.values()))["step"].dtype == torch.float64
        optim_coverage.run_case(info, "float32", {})
        if name in ("Adam", "AdamW", "Adagrad"):
            optim_coverage.run_case(info, "float64", {"fused": True})
    finally:
        torch.set_default_dtype(before[0])
        gt.set_default_dtype(before[1])


def test_differentiable_on_a_non_leaf_is_refused_plainly():
    # differentiable=True exists for optimizing through a step (non-leaf parameters);
    # gradcli's steps are not recorded, so it refuses instead of giving wrong gradients
    import gradcli.torch as gt

    w = gt.ones(3, requires_grad=True)
    p = w * 2
    opt = gt.optim.Adam([p], differentiable=True)
    p.grad = gt.ones(3)
    with pytest.raises(RuntimeError, match="differentiable=True on a non-leaf parameter is "
                                           "not supported by gradcli"):
        opt.step()
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        gt.optim.Adam([w * 2])
