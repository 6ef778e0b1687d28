"""A .grad program passing a bad argument to a torch function or Tensor method: the real
CLI (`python -m gradcli run`) prints one error with file, line, column, caret and
PyTorch's own text (computed here with real PyTorch), exit status 1, no traceback; a
program can also catch it and read the same text."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

ENV = dict(os.environ, NO_COLOR="1", COLUMNS="100", TERMINAL_WIDTH="100")


def run_prog(tmp_path, source):
    (tmp_path / "prog.grad").write_text(source)
    return subprocess.run([sys.executable, "-m", "gradcli", "run", "prog.grad"],
                          capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=60)


class Sneaky:
    """The host-side twin of the programs' class: same name, so PyTorch's text names it."""


def torch_error(fn, *args, **kwargs) -> str:
    with pytest.raises(Exception) as err:  # noqa: PT011 - the type is part of what is compared
        fn(*args, **kwargs)
    return f"{type(err.value).__name__}: {err.value}"


def test_torch_sin_of_a_string(tmp_path):
    p = run_prog(tmp_path, 'x = torch.ones(2)\ny = torch.sin("a")\nprint(y)\n')
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr == (f"prog.grad:2:5: {torch_error(torch.sin, 'a')}\n"
                        '    2 | y = torch.sin("a")\n'
                        "      |     ^^^^^^^^^^^^^^\n")


def test_bare_cat_of_an_int(tmp_path):
    p = run_prog(tmp_path, "print('before')\nparts = cat(3)\n")
    assert p.returncode == 1 and p.stdout == "before\n"
    assert p.stderr == (f"prog.grad:2:9: {torch_error(torch.cat, 3)}\n"
                        "    2 | parts = cat(3)\n"
                        "      |         ^^^^^^\n")


def test_special_alias_names_pytorchs_op(tmp_path):
    p = run_prog(tmp_path, "import torch\ny = torch.special.erf([1, 2])\n")
    assert p.returncode == 1
    first = p.stderr.splitlines()[0]
    assert first == f"prog.grad:2:5: {torch_error(torch.special.erf, [1, 2])}"
    assert "special_erf()" in first


def test_method_with_an_unknown_keyword_lists_the_signatures(tmp_path):
    """The multi-line listing comes whole, then the source line and its caret."""
    p = run_prog(tmp_path, "x = torch.ones(2, 3)\ns = x.sum(foo=1)\n")
    assert p.returncode == 1
    expected = torch_error(torch.ones(2, 3).sum, foo=1)
    assert expected.count("\n") >= 2
    assert p.stderr.startswith(f"prog.grad:2:5: {expected}")
    assert p.stderr.endswith("    2 | s = x.sum(foo=1)\n      |     ^^^^^^^^^^^^\n")
    assert "Traceback" not in p.stderr + p.stdout


def test_nn_functional_and_too_many_arguments(tmp_path):
    p = run_prog(tmp_path, "import torch.nn.functional as F\nx = torch.ones(3)\n"
                           "y = F.gelu(x, 'none', 3)\n")
    assert p.returncode == 1
    expected = torch_error(torch.nn.functional.gelu, torch.ones(3), "none", 3)
    assert p.stderr.splitlines()[0] == f"prog.grad:3:5: {expected}"


def test_a_program_catches_pytorchs_text(tmp_path):
    p = run_prog(tmp_path, "try:\n    torch.exp(None)\nexcept TypeError as err:\n"
                           "    print('caught:', err)\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"caught: {torch_error(torch.exp, None).partition(': ')[2]}\n"


def test_a_program_object_is_named_and_its_methods_cannot_break_the_check(tmp_path):
    """The check reads only the type of a program's object (its __eq__, __str__ and
    __index__ are never needed to word the error); the report names the class."""
    src = ("class Sneaky:\n"
           "    def __eq__(self, other):\n        raise ValueError('eq ran')\n"
           "    def __str__(self):\n        raise ValueError('str ran')\n"
           "y = torch.sin(Sneaky())\n")
    p = run_prog(tmp_path, src)
    assert p.returncode == 1
    assert p.stderr.splitlines()[0] == f"prog.grad:6:5: {torch_error(torch.sin, Sneaky())}"
    assert "Traceback" not in p.stderr and "ran" not in p.stderr


def test_a_program_object_as_an_option_runs_none_of_its_code(tmp_path):
    src = ("class Sneaky:\n"
           "    def __eq__(self, other):\n        print('eq ran')\n        return True\n"
           "    def __str__(self):\n        print('str ran')\n        return 'cpu'\n"
           "z = torch.zeros(2, dtype=Sneaky())\n")
    p = run_prog(tmp_path, src)
    assert p.returncode == 1 and "ran" not in p.stdout
    expected = torch_error(torch.zeros, 2, dtype=Sneaky())
    assert p.stderr.splitlines()[0] == f"prog.grad:8:5: {expected}"
