"""Whole programs using classes, dicts, *args/**kwargs, random, functools, collections and
numpy, run by `gradcli run` in a real process and by Python with PyTorch and numpy: the
same stdout, and an uncaught error reported by gradcli with Python's type and message."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

HERE = Path(__file__).parent / "lang" / "e2e"
PROGRAMS = sorted(HERE.glob("*.grad"))


def _run(args, cwd):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=180)


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_gradcli_run_prints_what_python_prints(path, tmp_path):
    prog = tmp_path / path.name
    prog.write_text(path.read_text())
    ours = _run([sys.executable, "-m", "gradcli", "run", prog.name], tmp_path)
    theirs = _run([sys.executable, prog.name], tmp_path)
    assert ours.stdout == theirs.stdout, (ours.stdout, theirs.stdout, ours.stderr)
    assert "Traceback" not in ours.stderr
    if theirs.returncode == 0:
        assert ours.returncode == 0, ours.stderr
    else:
        last = theirs.stderr.strip().splitlines()[-1]  # "NegativeError: negative value: -2"
        head = ours.stderr.splitlines()[0]
        assert ours.returncode == 1 and head.endswith(last), (head, last)


@pytest.mark.parametrize("src,kind", [
    ("class A:\n    def __getattr__(self, n):\n        return 1\nprint('ran')\n", "ForbiddenError"),
    ("class A(metaclass=type):\n    pass\nprint('ran')\n", "ForbiddenError"),
    ("print('ran')\ntype('A', (), {})\n", "TypeError"),
    ("print('ran')\nimport numpy as np\nnp.ones(2).tofile('x')\n", "AttributeError"),
])
def test_refusals_through_the_cli(src, kind, tmp_path):
    (tmp_path / "p.grad").write_text(src)
    p = _run([sys.executable, "-m", "gradcli", "run", "p.grad"], tmp_path)
    head = p.stderr.splitlines()[0]
    assert f": {kind}: " in head and "Traceback" not in p.stderr, p.stderr
    assert p.returncode == (2 if kind == "ForbiddenError" else 1)
    assert p.stdout == ("" if kind == "ForbiddenError" else "ran\n")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["p.grad"]
