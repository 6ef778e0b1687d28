"""A program that subclasses the real torch.nn.Module and torch.autograd.Function (its
ctx carrying the program's own attributes), trains with Adam and reads a state_dict
prints what PyTorch prints (addresses aside), through `gradcli run`."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = Path(__file__).parent / "lang" / "curriculum_module_function.grad"
ADDR = re.compile(r"0x[0-9a-f]+")


def test_program_classes_on_real_module_and_function_print_as_pytorch():
    pytest.importorskip("torch")
    torch_out = subprocess.run([sys.executable, str(PROGRAM)], capture_output=True, text=True,
                               timeout=120)
    assert torch_out.returncode == 0, torch_out.stderr
    ours = subprocess.run([sys.executable, "-m", "gradcli", "run", str(PROGRAM)],
                          capture_output=True, text=True, timeout=120)
    assert ours.returncode == 0, ours.stderr
    assert ADDR.sub("0x?", ours.stdout) == ADDR.sub("0x?", torch_out.stdout)


def test_ctx_attributes_never_reach_the_engines_own_names(tmp_path):
    prog = tmp_path / "ctx.grad"
    prog.write_text(
        "import torch\n"
        "class F(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        ctx.k = 3\n"
        "        ctx.saved = 'mine'\n"
        "        return x * 2\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        return g * ctx.k\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "F.apply(x).sum().backward()\n"
        "print(x.grad)\n")
    r = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1  # `saved` is the engine's: the program may not set it
    assert "FBackward' object attribute 'saved' is read-only" in r.stderr, r.stderr
    prog.write_text(prog.read_text().replace("        ctx.saved = 'mine'\n", ""))
    r = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "tensor([3., 3.])\n", r.stderr
