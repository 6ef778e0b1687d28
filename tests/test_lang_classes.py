"""Classes, dicts and sets, *args/**kwargs and the builtins docs/language.md lists: gradcli runs
the programs of tests/lang/class_programs.txt (separated by '#---') and prints what Python
prints (stdout, then the uncaught error's type and message)."""
from __future__ import annotations

import contextlib
import io
import warnings
from pathlib import Path

import pytest

from gradcli.lang import GradcliError, Session

PROGRAMS = (Path(__file__).parent / "lang" / "class_programs.txt").read_text().split("\n#---\n")


def run_python(src):
    """Python's own output for ``src``, run as a main module (classes print as __main__.X)."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(src, "<p>", "exec"), {"__name__": "__main__"})
        return out.getvalue()
    except SyntaxError as e:
        return out.getvalue() + f"!SyntaxError: {e.msg}"
    except Exception as e:
        return out.getvalue() + f"!{type(e).__name__}: {e}"


def run_gradcli(src, **kw):
    out = io.StringIO()
    s = Session(stdout=out, **kw)
    try:
        s.run(src, "<p>")
        return out.getvalue()
    except GradcliError as e:
        return out.getvalue() + f"!{e.kind}: {e.message}"


@pytest.mark.parametrize("src", PROGRAMS, ids=[p.split("\n", 1)[0][2:40] for p in PROGRAMS])
def test_same_output_as_python(src):
    if "import torch" in src:
        pytest.importorskip("torch")  # Python runs the program with real PyTorch
    assert run_gradcli(src) == run_python(src)
