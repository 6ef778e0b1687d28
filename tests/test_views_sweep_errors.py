"""Error reports (SPEC 4) for errors raised inside nn modules, checkpoint, torch.func,
custom Functions, parametrizations and module hooks: file, line, column, the source line
with a caret, PyTorch's own message, the call chain through the program's functions and
the exit code; one `gradcli run --json` process runs them all, and real PyTorch runs each
program for its message. The REPL side (it survives each) is test_views_sweep_repl.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}

#: name -> (program, line, column, kind, the call chain's function names after <module>)
ERRORS = {
    "module_forward": ("""\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        h = self.fc(x)
        return h @ torch.ones(3)
net = Net()
y = net(torch.ones(4, 3))
""", 9, 16, "RuntimeError", ["forward"]),
    "conv_layer": ("""\
import torch
import torch.nn as nn
conv = nn.Conv2d(3, 4, 3)
y = conv(torch.ones(1, 2, 5, 5))
""", 4, 5, "RuntimeError", []),
    "batchnorm_one_value": ("""\
import torch
import torch.nn as nn
bn = nn.BatchNorm1d(3)
bn(torch.ones(1, 3))
""", 4, 1, "ValueError", []),
    "lstm_hidden": ("""\
import torch
import torch.nn as nn
lstm = nn.LSTM(3, 4)
h0 = torch.zeros(1, 2, 5)
lstm(torch.ones(6, 2, 3), (h0, h0))
""", 5, 1, "RuntimeError", []),
    "transformer_width": ("""\
import torch
import torch.nn as nn
layer = nn.TransformerEncoderLayer(d_model=4, nhead=2)
layer(torch.ones(3, 2, 5))
""", 4, 1, "AssertionError", []),
    "sequential_user_block": ("""\
import torch
import torch.nn as nn
class Block(nn.Module):
    def forward(self, x):
        return x.view(7, -1)
net = nn.Sequential(nn.Linear(4, 4), Block())
net(torch.ones(2, 4))
""", 5, 16, "RuntimeError", ["forward"]),
    "checkpoint_block": ("""\
import torch
from torch.utils.checkpoint import checkpoint
def block(a):
    return a @ torch.ones(5)
x = torch.ones(3, requires_grad=True)
y = checkpoint(block, x, use_reentrant=False)
""", 4, 12, "RuntimeError", ["block"]),
    "checkpoint_reentrant_grad": ("""\
import torch
from torch.utils.checkpoint import checkpoint
x = torch.ones(3, requires_grad=True)
y = checkpoint(lambda a: a.sin(), x, use_reentrant=True)
torch.autograd.grad(y.sum(), x)
""", 5, 1, "RuntimeError", []),
    "func_grad_not_scalar": ("""\
import torch
from torch.func import grad
def f(x):
    return x * 2
g = grad(f)(torch.ones(3))
""", 5, 5, "RuntimeError", []),
    "func_grad_inner_error": ("""\
import torch
from torch.func import grad
def f(x):
    return (x @ torch.ones(5)).sum()
g = grad(f)(torch.ones(3))
""", 4, 13, "RuntimeError", ["f"]),
    "custom_forward": ("""\
import torch
class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x @ torch.ones(3)
    @staticmethod
    def backward(ctx, g):
        return g
x = torch.ones(2, requires_grad=True)
y = Bad.apply(x)
""", 5, 16, "RuntimeError", ["forward"]),
    "custom_backward": ("""\
import torch
class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g @ torch.ones(7)
x = torch.ones(2, requires_grad=True)
y = Bad.apply(x).sum()
y.backward()
""", 8, 16, "RuntimeError", ["backward"]),
    "custom_gradient_count": ("""\
import torch
class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g, g
x = torch.ones(2, requires_grad=True)
y = Bad.apply(x).sum()
y.backward()
""", 11, 1, "RuntimeError", []),
    "parametrization_forward": ("""\
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P
class Sym(nn.Module):
    def forward(self, X):
        return X @ torch.ones(7)
lin = nn.Linear(3, 3)
P.register_parametrization(lin, "weight", Sym())
""", 6, 16, "RuntimeError", ["forward"]),
    "module_backward_hook": ("""\
import torch
import torch.nn as nn
lin = nn.Linear(2, 2)
def bad_hook(m, gi, go):
    return go[0] @ torch.ones(9)
lin.register_full_backward_hook(bad_hook)
lin(torch.ones(1, 2, requires_grad=True)).sum().backward()
""", 5, 12, "RuntimeError", ["bad_hook"]),
    "distribution_argument": ("""\
import torch
from torch.distributions import Normal
d = Normal(torch.tensor([0.0]), torch.tensor([-1.0]))
""", 3, 5, "ValueError", []),
}


def torch_message(source: str) -> tuple[str, str]:
    """(kind, message) of the error real PyTorch raises running `source`."""
    pytest.importorskip("torch")
    try:
        exec(compile(source, "<program>", "exec"), {"__name__": "__main__"})
    except Exception as e:  # noqa: BLE001 - the error under test
        return type(e).__name__, str(e)
    raise AssertionError("PyTorch raised nothing")


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    folder = tmp_path_factory.mktemp("errors")
    for name, (source, *_) in ERRORS.items():
        (folder / f"{name}.grad").write_text(source)
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", "--json",
                           *(f"{name}.grad" for name in ERRORS)], capture_output=True,
                          text=True, env=ENV, timeout=300, cwd=folder)
    doc = json.loads(proc.stdout)
    return proc, {Path(r["file"]).stem: r for r in doc["runs"]}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_report_names_the_place_and_pytorchs_text(records, name):
    proc, runs = records
    source, line, column, kind, chain = ERRORS[name]
    run = runs[name]
    assert run["exit_code"] == 1
    error = run["error"]
    assert (error["kind"], error["line"], error["column"]) == (kind, line, column), error
    assert error["file"] == f"{name}.grad"
    torch_kind, message = torch_message(source)
    assert torch_kind == kind
    assert error["message"] == message
    report = error["report"].splitlines()
    assert report[0] == f"{name}.grad:{line}:{column}: {kind}: {message.splitlines()[0]}"
    code_line = source.splitlines()[line - 1]
    at = next(i for i, text in enumerate(report) if text.endswith(f"| {code_line}"))
    caret = report[at + 1]
    assert caret.index("^") - caret.index("|") - 2 == column - 1, report
    if chain:
        assert "call chain (most recent call last):" in report
        frames = [text.strip() for text in report[report.index(
            "call chain (most recent call last):") + 1:]]
        assert frames[0].endswith("in <module>")
        assert [f.rsplit(" in ", 1)[1] for f in frames[1:]] == chain, frames
    else:
        assert "call chain" not in error["report"]
    # the same report goes to stderr, never a Python traceback
    assert error["report"] in proc.stderr
    assert "Traceback" not in proc.stderr


def test_exit_code_is_the_worst_of_the_files(records):
    proc, _ = records
    assert proc.returncode == 1
