"""PyTorch's own module database against gradcli: every ModuleInfo of torch 2.13's
module_db (torch.testing._internal.common_modules), each of its ModuleInputs on CPU in
float64 and float32, in train and (where the module's behaviour differs) eval mode,
built in both libraries with PyTorch's parameters copied in (gradcli/module_coverage.py
does the work): output values, dtypes, shapes and grad_fn names, buffers after the
forward, and the gradients of inputs and parameters. A case in
`module_coverage.KNOWN_FAILING` must still fail (strict); a failure of a
`module_coverage.KNOWN_CAUSES` cause (a float32 gradient whose line depends on PyTorch's
kernels) is left out; every other case must pass;
`python -m gradcli.module_coverage` prints the counts."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")  # PyTorch's test helpers import it

from gradcli import module_coverage  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    INFOS = module_coverage.load_module_db()


def test_scope_is_pytorchs_module_db():
    # 114 entries in torch 2.13: a very different number means module_db moved under us
    assert len(INFOS) > 100
    names = {info.name for info in INFOS}
    assert {"nn.Linear", "nn.BatchNorm2d", "nn.LSTM", "nn.TransformerEncoder"} <= names


@pytest.mark.parametrize("info", INFOS, ids=[info.name for info in INFOS])
def test_module_info(info):
    results = module_coverage.check_module(info)
    assert results, f"{info.name}: no inputs ran"
    ran = [k for k, (status, _) in results.items() if status == "pass"]
    assert ran, f"{info.name}: no input passes ({results})"
    problems = []
    for key, (status, detail) in results.items():
        if f"{info.name} {key}" in module_coverage.KNOWN_FAILING:
            if status == "pass":
                problems.append(f"{key} passes now: remove it from KNOWN_FAILING")
            continue
        if status == "known":  # (a KNOWN_CAUSES failure: machine-dependent, see there)
            continue
        if status != "pass":
            problems.append(f"{key}: {status}: {detail}")
    assert not problems, f"{info.name}: " + "; ".join(problems)


def test_known_failing_are_real_cases():
    # each entry names a case the database still has (a typo would silently never match)
    by_name = {info.name: info for info in INFOS}
    for entry in module_coverage.KNOWN_FAILING:
        name, key = entry.split(" ", 1)
        cases = [module_coverage.case_id(*case) for case in module_coverage.cases_of(by_name[name])]
        assert key in cases, entry


def test_known_causes_match_only_their_failures():
    assert module_coverage.known_cause(
        "float32", "grad of param in_proj_weight[0]: Tensor-likes are not close!")
    assert module_coverage.known_cause("float64", "grad of param in_proj_weight[0]: x") is None
    assert module_coverage.known_cause("float32", "grad of param weight[0]: x") is None


def test_a_difference_is_reported(monkeypatch):
    # the harness itself can fail: a gradcli ReLU that adds a constant is caught
    import gradcli.torch as gt

    info = next(i for i in INFOS if i.name == "nn.ReLU")
    real = gt.nn.ReLU.forward
    monkeypatch.setattr(gt.nn.ReLU, "forward", lambda self, x: real(self, x) + 1e-3)
    results = module_coverage.check_module(info)
    assert results and all(status == "fail" for status, _ in results.values())
    assert all("not close" in detail for _, detail in results.values())


def test_command_prints_the_counts(capsys):
    assert module_coverage.main(["nn.ReLU", "nn.Linear"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 of 2 modules pass every input\n")
    assert " inputs pass (0 fail, 0 known, 0 missing, 0 not expressible)" in out
