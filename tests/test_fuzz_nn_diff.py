"""Differential fuzzing of nn / optim / user classes against PyTorch 2.13, bounded for
the suite (tests/fuzz/nn_fuzz.py writes the programs; tests/fuzz/nn_fuzz_run.py is the
long run).

Random training programs (a model of random layers in a Sequential, ModuleList,
ModuleDict or user subclass with buffers, parameters and tied weights; a loss with random
options; an optimizer with param groups; a scheduler; hooks, freezing, eval passes) run
with real torch, with gradcli's facade as plain Python and through the gradcli language:
stdout must agree. 'close' (float32 last-digit printing drift) and 'noise' (a
mathematically zero gradient's rounding noise, amplified by a normalising optimizer)
pass; any other difference fails. Erroring programs (bad forward, wrong shapes into
layers, optimizers given non-leaves, bad scheduler arguments) must report PyTorch's text
at the right line with a caret, exit non-zero, without a Python traceback.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

torch = pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
import nn_fuzz as NF  # noqa: E402
from comparison_helpers import printed_by_one_gradcli_run  # noqa: E402

N = int(os.environ.get("GRADCLI_NN_FUZZ_EXAMPLES", "12"))


def _settings(n):
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _check(src):
    verdict, outs = NF.compare3(src)
    if verdict == "differ":
        which = "facade" if outs["facade_verdict"] == "differ" else "language"
        pytest.fail(f"gradcli ({which}) and PyTorch differ:\n{src}\n--- gradcli\n"
                    f"{outs[which]}\n--- torch\n{outs['torch']}")


# (two tests of N programs each, different ones: pytest-xdist runs them side by side)
@_settings(N)
@given(NF.programs())
def test_training_programs_match_pytorch(src):
    _check(src)


@_settings(N)
@given(NF.programs())
def test_more_training_programs_match_pytorch(src):
    _check(src)


@_settings(2 * N)
@given(NF.error_programs())
def test_error_paths_report_pytorchs_text_at_the_line(case):
    name, src = case
    code, err = NF.language_error(src)
    problems = NF.check_error_report(src, NF.torch_error(src), code, err)
    assert not problems, f"{name}:\n{src}\n{problems}\n{err}"


def test_sample_through_the_real_cli(tmp_path):
    """A few programs through `gradcli run` in a real process: stdout equals torch's,
    no traceback."""
    progs = []

    @_settings(3)
    @given(NF.programs())
    def grab(p):
        progs.append(p)

    grab()
    for ours, src in zip(printed_by_one_gradcli_run(tmp_path, progs, "n"), progs):
        assert NF.compare(ours, NF.run_torch(src)) != "differ", (src, ours)


def test_error_through_the_real_cli(tmp_path):
    """An optimizer given a non-leaf, as a file: PyTorch's text, file:line:col, a caret,
    exit 1, no traceback."""
    (tmp_path / "bad.grad").write_text(
        "import torch\nw = torch.randn(3, requires_grad=True)\n"
        "opt = torch.optim.SGD([w * 2], lr=0.1)\n")
    p = subprocess.run([sys.executable, "-m", "gradcli", "run", "bad.grad"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, NO_COLOR="1"))
    assert p.returncode != 0 and "Traceback" not in p.stderr
    head = p.stderr.splitlines()[0]
    assert head.startswith("bad.grad:3:") and "ValueError: can't optimize a non-leaf Tensor" \
        in head, p.stderr
    assert "^" in p.stderr
