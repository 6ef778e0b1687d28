"""`if __name__ == "__main__":` runs as in Python: a program reads `__name__` as
"__main__", a .grad file it imports reads its module name; nothing can bind the name
(it stays one of the names that start with '__', which programs cannot use otherwise)."""

from __future__ import annotations

import subprocess
import sys

import pytest

MAIN = '''\
def main():
    print("main ran", __name__)

print("top level", __name__)
if __name__ == "__main__":
    main()
'''

HELPER = '''\
def triple(x):
    return 3 * x

print("imported as", __name__)
if __name__ == "__main__":
    print("the helper's own main ran")
'''


def _run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "gradcli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_main_guard_runs_as_python_runs_it(tmp_path):
    (tmp_path / "prog.grad").write_text(MAIN)
    (tmp_path / "prog.py").write_text(MAIN)
    got = _run("run", "prog.grad", cwd=tmp_path)
    want = subprocess.run([sys.executable, "prog.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout == "top level __main__\nmain ran __main__\n"


def test_an_imported_grad_file_reads_its_module_name(tmp_path):
    (tmp_path / "helper.grad").write_text(HELPER)
    (tmp_path / "prog.grad").write_text("import helper\nprint(helper.triple(2), __name__)\n")
    got = _run("run", "prog.grad", cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert got.stdout == "imported as helper\n6 __main__\n"


def test_eval_reads_main():
    got = subprocess.run([sys.executable, "-m", "gradcli", "eval", "__name__"],
                         capture_output=True, text=True, timeout=120)
    assert got.stdout.strip() == "'__main__'"


@pytest.mark.parametrize("source", [
    "__name__ = 'x'\n",
    "del __name__\n",
    "for __name__ in [1]:\n    pass\n",
    "[1 for __name__ in [2]]\n",
    "def f(__name__):\n    pass\n",
    "f = lambda __name__: 1\n",
    "import math as __name__\n",
    "from math import pi as __name__\n",
    "def f():\n    global __name__\n    __name__ = 2\n",
    "try:\n    pass\nexcept Exception as __name__:\n    pass\n",
    "import torch\nwith torch.no_grad() as __name__:\n    pass\n",
    "class A:\n    __name__ = 3\n",
    "x = __name__.__class__\n",
    "x = __builtins__\n",
    "x = __spec__\n",
])
def test_nothing_binds_the_name_or_reaches_past_it(source, tmp_path):
    (tmp_path / "attack.grad").write_text(source)
    got = _run("run", "attack.grad", cwd=tmp_path)
    assert got.returncode == 2, got.stdout
    assert "ForbiddenError" in got.stderr
    assert "Traceback" not in got.stderr


def test_reading_the_name_gives_only_a_string(tmp_path):
    (tmp_path / "prog.grad").write_text(
        "g = [__name__][0]\nprint(type(g), g.upper())\n__name__()\n")
    got = _run("run", "prog.grad", cwd=tmp_path)
    assert got.stdout == "<class 'str'> __MAIN__\n"
    assert got.returncode == 1
    assert "TypeError: 'str' object is not callable" in got.stderr
    assert "Traceback" not in got.stderr
