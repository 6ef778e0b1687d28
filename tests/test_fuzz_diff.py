"""Differential fuzzing against PyTorch 2.13 (issue 6 item 2), bounded for the suite.

Random well-typed programs over the op table (tests/fuzz/difflib_torch.py:
broadcasting shapes, 0-d and empty tensors, float32/float64 with int64/bool
partners, nan/inf/ties/negatives, and the scenarios plain / no_grad /
retain_graph / second backward / create_graph / hooks / in-place on saved and
leaf tensors / autograd.grad) run with real torch and through gradcli; stdout
(values, dtypes, grad_fn names, gradients, error texts) must match. A mismatch
whose (op, scenario) has a regression case listed in tests/regressions/XFAIL.txt
is a known engine bug; any other mismatch fails. tests/fuzz/run_fuzz.py --diff N
runs the same with large counts and saves mismatches for make_regressions.py.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

torch = pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
import difflib_torch as D  # noqa: E402
from comparison_helpers import printed_by_one_gradcli_run  # noqa: E402

REGRESSIONS = Path(__file__).resolve().parent / "regressions"
N = int(os.environ.get("GRADCLI_FUZZ_EXAMPLES", "100"))
SETTINGS = settings(max_examples=N, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def known_engine_keys() -> set:
    keys = set()
    for line in (REGRESSIONS / "XFAIL.txt").read_text().splitlines():
        name = line.partition(":")[0].strip()
        if name.startswith("diff_"):
            keys.add(name[len("diff_"):])
    return keys


KNOWN = known_engine_keys()


def known(name, scenario, ours, theirs) -> bool:
    """A mismatch of an engine bug that has a regression case: the same (op,
    scenario), or the no_grad-view bug (diff_*_no_grad: PyTorch keeps
    requires_grad=True on views of a requires-grad leaf taken under no_grad),
    recognised by its signature whatever the view op."""
    if f"{name}_{scenario}" in KNOWN:
        return True
    if scenario == "no_grad":
        fixed = theirs.replace(", requires_grad=True)", ")").replace(
            "\n       requires_grad=True)", ")").replace("True None", "False None")
        return D.compare(ours, fixed) != "differ"
    return False


def _check(name, scenario, src):
    ours, theirs = D.run_gradcli(src), D.run_torch(src)
    verdict = D.compare(ours, theirs)
    if verdict == "differ" and not known(name, scenario, ours, theirs):
        pytest.fail(f"gradcli and PyTorch differ ({name}, {scenario}):\n{src}\n"
                    f"--- gradcli\n{ours}\n--- torch\n{theirs}")


@SETTINGS
@given(D.programs())
def test_random_programs_match_pytorch(prog):
    _check(*prog)


@SETTINGS
@given(D.programs(edge_bias=True))
def test_edge_valued_programs_match_pytorch(prog):
    _check(*prog)


def test_sample_through_the_real_cli(tmp_path):
    """A fixed sample through `gradcli run` (one process, many files): each
    file's stdout equals real torch's."""
    progs = []

    @settings(max_examples=24, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(D.programs())
    def grab(p):
        progs.append(p)

    grab()
    outputs = printed_by_one_gradcli_run(tmp_path, [src for _, _, src in progs], "d")
    for ours, (name, scenario, src) in zip(outputs, progs):
        theirs = D.run_torch(src)
        verdict = D.compare(ours, theirs)
        assert verdict != "differ" or known(name, scenario, ours, theirs), (src, ours)
