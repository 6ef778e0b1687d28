"""Tensor.to checks its arguments against PyTorch's three overloads: an unknown keyword (a
tutorial's `a.to(requires_grad=True)`), a non-bool flag, one argument too many or of a
kind no overload takes raise PyTorch's TypeError word for word (the keywords listed last
to first, as its parser does), in plain Python and under `gradcli run`; what PyTorch
accepts still works."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

REJECTED = [
    "a.to(requires_grad=True)",
    "a.to(torch.float64, requires_grad=True)",
    "a.to('cpu', torch.float64, foo=1)",
    "a.to(a, bar=2.0)",
    "a.to(torch.float64, 'x')",
    "a.to(dtype=torch.float64, requires_grad=True, x=None)",
    "a.to('cpu', non_blocking=True, zz=[1])",
    "a.to(torch.float64, False, False, False)",
    "a.to(copy=True, device='cpu', k=(1, 2))",
    "a.to(torch.float64, copy=1)",
    "a.to(torch.float64, non_blocking=1)",
    "a.to([1])",
    "a.to(dtype='float')",
    "a.to(torch.device('cpu'), foo=1)",
    "a.to(dtype=torch.float64, tensor=a)",
    "a.to(1.5, foo=1)",
    "a.to(torch.float64, torch.float64)",
    "a.to(p, foo=1)",
]

ACCEPTED = [
    "a.to(torch.float64)", "a.to('cpu')", "a.to('cpu', torch.float64)", "a.to(None)",
    "a.to(float)", "a.to(1.5)", "a.to(True)", "a.to(tensor=b)", "a.to(b)",
    "a.to(torch.float64, True, True)", "a.to('cpu', None)", "a.to(None, None, False, False)",
    "a.to(dtype=torch.int32, copy=True)", "a.to(device='cpu', dtype=torch.int64)",
    "a.to(torch.device('cpu'), torch.float64, non_blocking=False, copy=False)",
]


def _run(lib, expr):
    a = lib.ones(2)
    b = lib.zeros(1, dtype=lib.float64)
    p = lib.nn.Parameter(lib.ones(1))
    return eval(expr, {"torch": lib, "a": a, "b": b, "p": p})


@pytest.mark.parametrize("expr", REJECTED)
def test_rejected_like_pytorch(expr):
    with pytest.raises(TypeError) as ref:
        _run(torch, expr)
    with pytest.raises(TypeError) as ours:
        _run(gt, expr)
    assert str(ours.value) == str(ref.value)


@pytest.mark.parametrize("expr", ACCEPTED)
def test_accepted_like_pytorch(expr):
    ref, ours = _run(torch, expr), _run(gt, expr)
    assert str(ours.dtype) == str(ref.dtype)
    assert ours.tolist() == ref.tolist()


def test_run_prints_the_error_and_stops(tmp_path):
    program = tmp_path / "prog.py"
    program.write_text("import torch\na = torch.randn(2, 2)\nprint(a.requires_grad)\n"
                       "a = a.to(requires_grad=True)\nprint('not reached')\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(program)],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode != 0
    assert proc.stdout == "False\n"
    with pytest.raises(TypeError) as ref:
        torch.ones(1).to(requires_grad=True)
    assert "Traceback" not in proc.stderr
    assert f"TypeError: {ref.value}".rstrip("\n") in proc.stderr
