"""Warnings under `gradcli run` print as `python prog.py` prints them on stderr: the
program's file and line, the category and message, then the program's source line at that
place, indented; once per place (Python's default action). Each test runs both programs in
real processes and compares stderr exactly."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")


def _both(tmp_path, program: str, name: str = "prog.py"):
    """(gradcli run's, python's) CompletedProcess of `program` at an absolute path (Python
    names its main file by its absolute path; gradcli by the path it is given)."""
    prog = tmp_path / name
    prog.write_text(program)
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    want = subprocess.run([sys.executable, str(prog)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    return got, want


def _assert_same(tmp_path, program: str):
    got, want = _both(tmp_path, program)
    assert want.returncode == 0, want.stderr
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout
    assert got.stderr == want.stderr
    return got


def test_warning_shows_the_program_line(tmp_path):
    got = _assert_same(tmp_path, (
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "y = x * 2\n"
        "if True:\n"
        "    g = y.grad\n"
        "print(g)\n"))
    assert got.stderr.endswith("\n  g = y.grad\n")


def test_multi_line_expressions_warn_at_pythons_line(tmp_path):
    # an attribute or method call over several lines is at its name's line, a call at its
    # first line; a warning inside a function points into the function
    _assert_same(tmp_path, (
        "import torch\n"
        "x = torch.ones(3, requires_grad=True)\n"
        "y = (x\n"
        "     * 2)\n"
        "a = [y\n"
        "     .grad, 1]\n"
        "def f(t):\n"
        "    return (t\n"
        "            .T)\n"
        "c = f(\n"
        "  torch.zeros(3) + 1)\n"
        "d = (y.sum()\n"
        "     .grad)\n"
        "e = torch.tensor(\n"
        "    x)\n"))


def test_warning_once_per_place_as_python(tmp_path):
    # a loop warns once at its line; another line warns again; a function called from two
    # places warns once, at its own line
    _assert_same(tmp_path, (
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "y = x * 2\n"
        "for i in range(3):\n"
        "    g = y.grad\n"
        "h = y.grad\n"
        "def k(t):\n"
        "    return torch.tensor(t)\n"
        "k(x)\n"
        "k(x)\n"
        "print(h)\n"))


def test_warning_in_a_hook_points_at_the_hook(tmp_path):
    _assert_same(tmp_path, (
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "def hook(g):\n"
        "    m = x * 1\n"
        "    print(m.grad)\n"
        "    return g\n"
        "x.register_hook(hook)\n"
        "(x * 3).sum().backward()\n"
        "print(x.grad)\n"))


def test_warning_in_an_imported_grad_module_shows_its_line(tmp_path):
    (tmp_path / "helper.grad").write_text(
        "import torch\n"
        "def peek(t):\n"
        "    return t.T\n")
    (tmp_path / "prog.grad").write_text("import torch\nimport helper\nhelper.peek(torch.ones(3))\n")
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", "prog.grad"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    first, second = got.stderr.splitlines()
    assert first.startswith("helper.grad:3: UserWarning: The use of `x.T` on tensors")
    assert second == "  return t.T"


def test_library_located_warning_shows_the_users_line(tmp_path):
    # PyTorch locates meshgrid's warning in its own functional.py; gradcli, having no such
    # file to show, gives the program's line that called it, with that line
    (tmp_path / "prog.grad").write_text(
        "import torch\n"
        "a = torch.meshgrid(torch.ones(2), torch.ones(3))\n")
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", "prog.grad"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    lines = got.stderr.splitlines()
    assert lines[0].startswith("prog.grad:2: UserWarning: torch.meshgrid: in an upcoming")
    assert lines[1:] == ["  a = torch.meshgrid(torch.ones(2), torch.ones(3))"]


def test_repl_input_warning_shows_its_line():
    from io import StringIO

    from gradcli.lang.session import Session, reset_engine

    reset_engine()
    err = StringIO()
    s = Session(stdout=StringIO(), stderr=err, interactive=True)
    s.run("import torch\nx = torch.ones(2, requires_grad=True)\n", "<input-1>")
    s.run("y = x * 2\n", "<input-2>")
    s.run("z = (y\n  .grad)\n", "<input-3>")
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("<input-3>:2: UserWarning: The .grad attribute of a Tensor")
    assert lines[1:] == ["  .grad)"]


def test_warnings_from_inside_the_library_show_once_per_process(tmp_path):
    """A warning PyTorch raises from its own Python code (a module's call, a loss's forward)
    points inside torch, so Python shows it once whatever program lines reach it; one
    raised at the program's line (torch.tensor of a tensor) shows once per line. gradcli
    shows each as often as Python does, at the program's line."""
    got, want = _both(tmp_path, (
        "import torch\n"
        "from torch import nn\n"
        "t = torch.ones(2)\n"
        "a = torch.tensor(t)\n"
        "b = torch.tensor(t)\n"
        "class Listed(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return [x * 2]\n"
        "m = Listed()\n"
        "m.register_full_backward_hook(lambda *args: None)\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "first = m(x)\n"
        "second = m(x)\n"
        "loss = nn.MSELoss()\n"
        "print(loss(torch.ones(2, 1), torch.ones(2)))\n"
        "print(loss(torch.ones(2, 1), torch.ones(2)))\n"))
    assert want.returncode == 0 and got.returncode == 0, got.stderr
    assert got.stdout == want.stdout

    def shown(stderr):
        return [line.split(": ", 1)[1] for line in stderr.splitlines() if "Warning: " in line]

    assert shown(got.stderr) == shown(want.stderr)
    assert len(shown(got.stderr)) == 4  # copy-construct twice, the hook and the loss once
    assert "prog.py:12: UserWarning: For backward hooks" in got.stderr
