"""`gradcli run --json/--grads/--graph`, `gradcli test` and `gradcli check` on scripts
using the newer breadth (an nn.Module subclass with a Parameter, a custom autograd
Function, complex and bfloat16 leaves), through real processes: the record's values and
gradients are what the same file computes under Python with PyTorch."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}

SCRIPT = '''\
import torch
from torch import nn
torch.manual_seed(0)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.scale = nn.Parameter(torch.tensor(2.0))
    def forward(self, x):
        return self.fc(x).tanh() * self.scale
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 3
    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return 3 * a * a * g
net = Net()
x = torch.tensor([[1.0, -1.0]])
loss = net(x).sum()
loss.backward()
w = torch.tensor([1.0, -2.0], requires_grad=True)
cubed = Cube.apply(w).sum()
cubed.backward()
z = torch.tensor([1 + 1j, 2 - 0.5j], requires_grad=True)
c = (z * z.sin()).abs().sum()
c.backward()
h = torch.tensor([0.5, 1.5], dtype=torch.bfloat16, requires_grad=True)
hb = (h.exp() * 3).sum()
hb.backward()
'''

NAMES = ["net.fc.weight", "net.fc.bias", "net.scale", "w", "z", "h"]


def gradcli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True,
                          text=True, env=ENV, timeout=120, cwd=cwd)


def _torch_grads() -> dict:
    scope: dict = {}
    exec(SCRIPT, scope)  # the script is plain Python too: PyTorch runs it here
    net = scope["net"]
    found = {"net.fc.weight": net.fc.weight, "net.fc.bias": net.fc.bias, "net.scale": net.scale}
    found.update({n: scope[n] for n in ("w", "z", "h")})
    return found


def _array(data, dtype: str) -> np.ndarray:
    a = np.asarray(data, dtype=float)
    return a[..., 0] + 1j * a[..., 1] if dtype.startswith("complex") else a


def test_run_json_values_and_grads_are_pytorchs(tmp_path):
    (tmp_path / "s.grad").write_text(SCRIPT)
    proc = gradcli("run", "s.grad", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    tensors = json.loads(proc.stdout)["runs"][0]["tensors"]
    want = _torch_grads()
    for name in NAMES:
        got, t = tensors[name], want[name]
        assert got["dtype"] == str(t.dtype).removeprefix("torch."), name
        assert got["shape"] == list(t.shape), name
        ref = t.grad.float() if t.dtype == torch.bfloat16 else t.grad
        np.testing.assert_allclose(_array(got["grad"], got["dtype"]), ref.numpy(), rtol=1.3e-6,
                                   atol=1e-5, err_msg=name)
    assert tensors["c"]["grad_fn"] == "SumBackward0" and tensors["c"]["grad"] is None


def test_run_graph_names_the_custom_function_and_module_parameters(tmp_path):
    (tmp_path / "s.grad").write_text(SCRIPT)
    proc = gradcli("run", "s.grad", "--graph", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for piece in ("SumBackward0 [] (cubed)", "CubeBackward [2]", "AccumulateGrad w [2]",
                  "AccumulateGrad net.fc.weight [2, 2]", "AccumulateGrad net.scale []",
                  "SumBackward0 [] (c)", "AbsBackward0 [2]", "SumBackward0 [] (hb)"):
        assert piece in out, piece


def test_run_grads_table_lists_every_leaf(tmp_path):
    (tmp_path / "s.grad").write_text(SCRIPT)
    proc = gradcli("run", "s.grad", "--grads", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if line.strip()}
    for name in NAMES:
        assert name in rows, name
    assert "None (non-leaf)" in rows["loss"]


def test_check_and_test_take_the_script(tmp_path):
    (tmp_path / "test_breadth.grad").write_text(
        SCRIPT + "assert w.grad.tolist() == [3.0, 12.0]\nassert h.grad.dtype == torch.bfloat16\n"
                 "assert torch.allclose(z.grad, z.grad.conj().conj())\n")
    (tmp_path / "test_wrong.grad").write_text(SCRIPT + "assert w.grad.tolist() == [3.0, 11.0]\n")
    proc = gradcli("check", "test_breadth.grad", "test_wrong.grad", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = gradcli("test", ".", "-q", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "test_wrong.grad" in proc.stdout and "assert [3.0, 12.0] == [3.0, 11.0]" in proc.stdout
    assert "test_breadth.grad  FAIL" not in proc.stdout
