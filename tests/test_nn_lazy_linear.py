"""nn.LazyLinear as d2l uses it: printing before and after the first call, the weights
drawn at the first call from the generator (so a seeded program holds PyTorch's
numbers), the module turning into a Linear, parameters kept as the same objects."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402


def _story(lib):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.LazyLinear(4), lib.nn.ReLU(), lib.nn.LazyLinear(2, bias=False))
    shown = [repr(net), str(net[0].weight), repr(type(net[0])), str(net[2].bias)]
    held = list(net.parameters())
    opt = lib.optim.SGD(net.parameters(), lr=0.1)
    noise = lib.randn(2)  # drawn before the layers initialise
    x = lib.rand(3, 5)
    out = net(x)
    shown += [repr(net), str(out), str(noise), repr(type(net[0])), str(net[0].weight),
              str(net[2].weight), str(net[0].weight.shape), str(net[0].in_features)]
    shown.append(str([a is b for a, b in zip(held, net.parameters())]))
    out.sum().backward()
    opt.step()
    shown += [str(net[0].bias), str(type(net[0].weight)), str(lib.randn(2))]
    shown.append(str(net(lib.ones(1, 5))))
    return shown


def test_lazy_linear_story_matches_pytorch():
    assert _story(gt) == _story(torch)


def test_float64_and_a_second_call():
    for lib in (torch, gt):
        lib.manual_seed(1)
        m = lib.nn.LazyLinear(3, dtype=lib.float64)
        a = m(lib.ones(2, 4, dtype=lib.float64))
        b = m(lib.ones(2, 4, dtype=lib.float64))
        if lib is torch:
            ref = (str(a), str(b), repr(m), str(m.weight.dtype))
        else:
            got = (str(a), str(b), repr(m), str(m.weight.dtype))
    assert got == ref


PROGRAM = """\
import torch
from torch import nn
torch.manual_seed(0)
net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
print(net)
print(net[0].weight)
y = net(torch.rand(2, 3))
print(net, y)
print(type(net[0]), net[0].weight.shape)
"""


def test_lazy_linear_under_gradcli_run(tmp_path):
    prog = tmp_path / "lazy.py"
    prog.write_text(PROGRAM)
    ref = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True,
                         timeout=120)
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                         capture_output=True, text=True, timeout=120)
    assert "<UninitializedParameter>" in ref.stdout
    assert got.stdout == ref.stdout, got.stderr


@pytest.mark.parametrize("source", [
    "m = torch.nn.LazyLinear(3)\nm.weight.materialize((10 ** 5, 10 ** 5))",
    "m = torch.nn.LazyLinear(10 ** 5)\ny = m(torch.ones(1, 10 ** 5))",
])
def test_materializing_respects_the_element_limit(tmp_path, source):
    """A program sizing an UninitializedParameter goes through --max-elements."""
    prog = tmp_path / "big.py"
    prog.write_text("import torch\n" + source + "\n")
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == 1
    assert "LimitError" in got.stderr and "Traceback" not in got.stderr
