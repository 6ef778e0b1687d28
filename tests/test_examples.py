"""Every example runs and prints its golden output; the ones that use only
PyTorch 2.x names (and no printed randomness) print exactly what PyTorch prints."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CASES = sorted(p for p in EXAMPLES.glob("*.grad") if p.with_suffix(".out").exists())
# PyTorch 2.x names only (seed_004 uses the legacy aliases); their random numbers are
# PyTorch's after torch.manual_seed(0)
SAME_AS_TORCH = {"seed_000_autograd_basics", "seed_001_backprop_lecture", "seed_002_variable_autograd",
                 "seed_003_autograd_tutorial"}


def run(cmd, path):
    return subprocess.run([*cmd, str(path)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1"}, cwd=path.parent)


def test_examples_exist():
    assert len(CASES) >= 5


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_example_golden_output(path):
    proc = run([sys.executable, "-m", "gradcli", "run"], path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == path.with_suffix(".out").read_text()
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("name", sorted(SAME_AS_TORCH))
def test_example_matches_pytorch(name):
    pytest.importorskip("torch")
    path = EXAMPLES / f"{name}.grad"
    proc = run([sys.executable], path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == path.with_suffix(".out").read_text()


def test_ci_examples_pass_under_gradcli_test():
    proc = subprocess.run([sys.executable, "-m", "gradcli", "test", str(EXAMPLES / "ci")],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout


def test_oneshot_workflows_run(tmp_path):
    lines = [line for line in (EXAMPLES / "oneshot.sh").read_text().splitlines()
             if line.startswith("gradcli ")]
    assert len(lines) >= 6
    proc = subprocess.run(["sh", str(EXAMPLES / "oneshot.sh")], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "NO_COLOR": "1",
                                            "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("value: ") == len([ln for ln in lines if ln.startswith("gradcli grad")])
    assert "flowchart" in proc.stdout
