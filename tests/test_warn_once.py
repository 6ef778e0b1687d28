"""PyTorch's once-per-process warnings (TORCH_WARN_ONCE), each side in a fresh process:
given the first time only, every time under torch.set_warn_always(True), not at all where
PyTorch's condition does not hold; and a new `gradcli run` program starts with none given,
as a new Python process does."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

#: each line run in order in one fresh process; the warnings each gives are compared
STEPS = [
    "float(t)", "float(t)", "complex(t)", "torch.tensor([t])", "'%f' % t", "t.item()",
    "int(t)", "torch.set_warn_always(True)", "float(t)", "float(t)", "complex(t)",
    "torch.tensor([[t], [2.]])",
    "with torch.no_grad(): float(t)",
    "torch.autograd.backward((t * t), create_graph=True)",
    "torch.autograd.backward((t * t), create_graph=True)",
    "torch.set_warn_always(False)",
    "torch.autograd.backward((t * t), create_graph=True)",
    "torch.zeros(1).copy_(torch.tensor([1 + 1j]))",
    "torch.zeros(1).copy_(torch.tensor([1 + 1j]))",
]

_SCRIPT = """
import sys, warnings
import {module} as torch
t = torch.tensor(1.5, requires_grad=True)
for step in {steps!r}:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        exec(step)
    print(step, "->", [str(w.message).split(chr(10))[0] for w in seen])
"""


def _run(module: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    done = subprocess.run([sys.executable, "-c", _SCRIPT.format(module=module, steps=STEPS)],
                          capture_output=True, text=True, env=env, cwd=os.path.dirname(__file__),
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_once_per_process_warnings_as_pytorch():
    pytest.importorskip("torch")
    ours = _run("gradcli.torch")
    assert ours == _run("torch")
    assert ours.count("Converting a tensor with requires_grad=True") == 5


def test_each_program_starts_with_no_warning_given(tmp_path):
    """Two programs run by one session object (as the test runner and the REPL's :run do):
    each gives the warning once, as each of two Python processes would."""
    from io import StringIO

    from gradcli.lang.session import run_source

    program = "t = torch.tensor(2.0, requires_grad=True)\nfloat(t)\nfloat(t * 3)\nprint('ok')\n"
    for _ in range(2):
        out, err = StringIO(), StringIO()
        assert run_source(program, "p.py", stdout=out, stderr=err) == 0
        assert out.getvalue() == "ok\n"
        assert err.getvalue().count("Converting a tensor with requires_grad=True") == 1
