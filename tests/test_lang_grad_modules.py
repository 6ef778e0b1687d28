"""Test files share helpers: `import helpers` / `from helpers import f` load the sibling
helpers.grad, sandboxed exactly as the importing file (real processes)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HELPERS = """import torch
TOL = 1e-6
calls = []
def grad_of(f, x):
    calls.append(1)
    x = x.detach().requires_grad_(True)
    f(x).sum().backward()
    return x.grad
def bad():
    return 1 / 0
"""


def run(tmp_path, name, *args):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return subprocess.run([sys.executable, "-m", "gradcli", *args, name], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, env=env)


def write(tmp_path, **files):
    for name, text in files.items():
        (tmp_path / f"{name}.grad").write_text(text)


def test_import_and_from_import_share_one_run_of_the_helper(tmp_path):
    write(tmp_path, helpers=HELPERS, test_use=(
        "import torch\nimport helpers\nfrom helpers import grad_of, TOL as tol, calls\n"
        "x = torch.tensor([1.0, 2.0])\nprint(helpers.grad_of(torch.sin, x), tol)\n"
        "assert torch.allclose(grad_of(lambda t: t ** 2, x), 2 * x)\n"
        "print(len(calls), helpers.calls is calls)\n"))
    r = run(tmp_path, "test_use.grad", "run")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "tensor([ 0.5403, -0.4161]) 1e-06\n2 True\n"


def test_errors_inside_a_helper_show_the_helpers_line(tmp_path):
    write(tmp_path, helpers=HELPERS, test_use="import helpers\nhelpers.bad()\n")
    r = run(tmp_path, "test_use.grad", "run")
    assert r.returncode == 1
    assert r.stderr.startswith("helpers.grad:10:12: ZeroDivisionError: division by zero\n"
                               "    10 |     return 1 / 0\n")
    assert "  test_use.grad:2 in <module>\n  helpers.grad:10 in bad" in r.stderr


def test_gradcli_test_runs_tests_not_helpers(tmp_path):
    write(tmp_path, helpers=HELPERS,
          test_a="from helpers import grad_of\nimport torch\n"
                 "assert grad_of(torch.exp, torch.zeros(1)).item() == 1.0\n")
    r = run(tmp_path, ".", "test")
    assert r.returncode == 0 and "1 passed" in r.stdout and "helpers.grad" not in r.stdout


@pytest.mark.parametrize("program,expected", [
    ("from helpers import nope\n",
     "ImportError: cannot import name 'nope' from 'helpers' (helpers.grad)"),
    ("import helpers\nhelpers.TOL = 3\n", "modules are read-only in gradcli"),
    ("import nothere\n", "import of 'nothere' is not allowed: gradcli programs can import "
                        "only torch (and its submodules), math, random, functools, "
                        "collections, numpy, functorch and the NAME.grad files beside the "
                        "program"),
])
def test_misuse_is_one_clear_error(tmp_path, program, expected):
    write(tmp_path, helpers=HELPERS, test_p=program)
    r = run(tmp_path, "test_p.grad", "run")
    assert r.returncode in (1, 2) and expected in r.stderr and "Traceback" not in r.stderr


def test_import_cycles_are_compile_errors(tmp_path):
    write(tmp_path, a="import b\n", b="import a\n")
    r = run(tmp_path, "a.grad", "run")
    assert r.returncode == 2
    assert "circular import of 'a' (a.grad imports itself through the files it imports)" \
        in r.stderr


# ------------------------------------------------------------------ the sandbox
@pytest.mark.parametrize("helper,what", [
    ("import os\n", "import of 'os' is not allowed"),
    ("x = open('/etc/passwd')\n", "open"),
    ("y = (1).__class__\n", "'__class__' is not allowed"),
    ("def f():\n    return __import__('os')\n", "__import__"),
    ("import subprocess\n", "import of 'subprocess' is not allowed"),
])
def test_a_helper_is_compiled_under_the_same_rules(tmp_path, helper, what):
    write(tmp_path, evil=helper, test_x="import evil\nprint('ran')\n")
    r = run(tmp_path, "test_x.grad", "run")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "ran" not in r.stdout
    assert r.stderr.startswith("evil.grad:") and what in r.stderr


@pytest.mark.parametrize("program", [
    "import helpers\nhelpers.__dict__\n",
    "import helpers\nhelpers.__builtins__\n",
    "import helpers\nhelpers._LOADED\n",
    "import helpers\nhelpers.grad_of.__globals__\n",
    "from helpers import __builtins__\n",
    "from helpers import _private\n",
    "from helpers import *\n",
    "import helpers\ngetattr(helpers, '__di' + 'ct__')\n",
])
def test_a_helper_module_exposes_only_its_public_names(tmp_path, program):
    write(tmp_path, helpers=HELPERS + "_private = 1\n", test_x=program + "print('leaked')\n")
    r = run(tmp_path, "test_x.grad", "run")
    assert r.returncode in (1, 2) and "leaked" not in r.stdout, r.stdout + r.stderr
    assert "Traceback" not in r.stderr


def test_only_files_beside_the_program_can_be_imported(tmp_path):
    (tmp_path / "sub").mkdir()
    write(tmp_path, helpers=HELPERS)
    (tmp_path / "sub" / "test_x.grad").write_text("import helpers\n")
    r = run(tmp_path, os.path.join("sub", "test_x.grad"), "run")
    assert r.returncode == 2 and "import of 'helpers' is not allowed" in r.stderr
    # a program without a file (stdin) has no siblings
    r = subprocess.run([sys.executable, "-m", "gradcli", "run", "-"], cwd=tmp_path,
                       input="import helpers\n", capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "import of 'helpers' is not allowed" in r.stderr
    assert "NAME.grad" not in r.stderr  # a program without a file has no siblings


def test_steps_in_a_helper_count_toward_the_budget(tmp_path):
    write(tmp_path, slow="for i in range(10000):\n    pass\n", test_x="import slow\n")
    r = run(tmp_path, "test_x.grad", "run", )
    assert r.returncode == 0
    r = subprocess.run([sys.executable, "-m", "gradcli", "run", "--max-steps", "500",
                        "test_x.grad"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1 and "slow.grad:2:5: LimitError: step limit exceeded" in r.stderr


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_a_link_out_of_the_folder_cannot_be_imported(tmp_path):
    """A link named NAME.grad must not let a program read (and show in an error report) a
    file elsewhere: a secret of the CI machine, say. Links within the folder are fine."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN = 'hunter2'\n")
    (tmp_path / "outside.grad").write_text("TOKEN = 'hunter2'\n")
    progs = tmp_path / "progs"
    progs.mkdir()
    os.symlink(secret, progs / "leak.grad")
    os.symlink(os.path.join("..", "outside.grad"), progs / "up.grad")
    (progs / "real.grad").write_text("X = 5\n")
    os.symlink("real.grad", progs / "alias.grad")
    for name in ("leak", "up"):
        (progs / "test_x.grad").write_text(f"import {name}\nprint({name}.TOKEN)\n")
        r = run(tmp_path, os.path.join("progs", "test_x.grad"), "run")
        assert r.returncode == 2, r.stdout + r.stderr
        assert "hunter2" not in r.stdout + r.stderr
        assert (f"cannot import '{name}': {os.path.join('progs', name)}.grad is a link to a "
                "file outside the program's folder") in r.stderr
    (progs / "test_x.grad").write_text("from alias import X\nprint(X)\n")
    r = run(tmp_path, os.path.join("progs", "test_x.grad"), "run")
    assert r.returncode == 0 and r.stdout == "5\n", r.stderr
