"""torch.__version__ prints as PyTorch 2.13's CPU build prints it (tutorials print it on their
first line: "Using torch 2.13.0+cpu"), and still compares as a version, in plain Python and
under `gradcli run`."""
from __future__ import annotations

import subprocess
import sys

import pytest

import gradcli.torch as gtorch

torch = pytest.importorskip("torch")


def test_facade_version_string_is_pytorchs():
    assert str(gtorch.__version__) == str(torch.__version__)
    assert repr(gtorch.__version__) == repr(torch.__version__)


@pytest.mark.parametrize("other", ["2.0", "2.13", "2.13.0", "2.14", "3.0"])
def test_facade_version_compares_as_pytorchs(other):
    for op in ("__lt__", "__le__", "__eq__", "__ge__", "__gt__"):
        assert getattr(gtorch.__version__, op)(other) == getattr(torch.__version__, op)(other)


def test_gradcli_run_prints_pytorchs_version(tmp_path):
    prog = tmp_path / "v.grad"
    prog.write_text("import torch\nprint('Using torch', torch.__version__)\n"
                    "print(f'{torch.__version__}', torch.__version__ >= '2.0')\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (f"Using torch {torch.__version__}\n{torch.__version__} True\n")


def test_torch_version_module_answers_as_a_cpu_build(tmp_path):
    """Environment cells print torch.version.cuda beside torch.__version__."""
    for name in ("cuda", "hip", "xpu", "debug", "git_version"):
        assert getattr(gtorch.version, name) == getattr(torch.version, name), name
    assert str(gtorch.version.__version__) == str(torch.version.__version__)
    prog = tmp_path / "env.grad"
    prog.write_text("import torch\nprint(torch.version.cuda, torch.version.debug)\n"
                    "print(torch.version.__version__ == torch.__version__)\n"
                    "print(torch.version.cuda is None and not torch.cuda.is_available())\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "None False\nTrue\nTrue\n"
