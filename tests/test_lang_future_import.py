"""`from __future__ import ...` (tutorials open with it: seq2seq's unicode_literals,
print_function, division; modern code's annotations): a no-op where Python accepts it
(first, after an optional docstring), Python's SyntaxError elsewhere, and the one feature
that changes the language refused; an unknown feature is refused like any import gradcli
does not have, in Python's words. Run through real processes, against plain Python."""

from __future__ import annotations

import subprocess
import sys

import pytest

ACCEPTED = [
    "from __future__ import annotations\nx: int = 3\nprint(x, 7 / 2)\n",
    '"""A docstring."""\nfrom __future__ import division, print_function\n'
    "from __future__ import unicode_literals\nprint(1 / 2, 'a' + 'b')\n",
    "from __future__ import (absolute_import, generator_stop, nested_scopes,\n"
    "                        generators, with_statement)\nprint('ok')\n",
]

SYNTAX_ERRORS = [
    ("print(1)\nfrom __future__ import division\n",
     "from __future__ imports must occur at the beginning of the file"),
    ("def f():\n    from __future__ import division\nprint(1)\n",
     "from __future__ imports must occur at the beginning of the file"),
    ("from __future__ import *\n", "future feature * is not defined"),
    ("from __future__ import nonsense\n", "future feature nonsense is not defined"),
    ("from __future__ import braces\n", "not a chance"),
]

REFUSED = [
    "from __future__ import barry_as_FLUFL\nprint(1)\n",   # changes the grammar
    "import __future__\nprint(__future__.division)\n",     # the module itself
    "from __future__ import division\nprint(division.compiler_flag)\n",  # no name is bound
    "from __future__ import annotations\nprint(getattr(annotations, 'mandatory'))\n",
]


def _gradcli(tmp_path, code):
    prog = tmp_path / "prog.grad"
    prog.write_text(code)
    return subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                          capture_output=True, text=True, timeout=120)


def _python(tmp_path, code):
    prog = tmp_path / "prog.py"
    prog.write_text(code)
    return subprocess.run([sys.executable, str(prog)], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("code", ACCEPTED)
def test_future_import_is_a_no_op_as_in_python(tmp_path, code):
    ours, ref = _gradcli(tmp_path, code), _python(tmp_path, code)
    assert ref.returncode == 0
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == ref.stdout


@pytest.mark.parametrize("code,message", SYNTAX_ERRORS)
def test_misplaced_or_unknown_future_is_pythons_syntax_error(tmp_path, code, message):
    ref = _python(tmp_path, code)
    assert ref.returncode != 0 and message in ref.stderr
    ours = _gradcli(tmp_path, code)
    assert ours.returncode == 2
    # (misplaced: SyntaxError, as Python; an unknown feature: refused as imports are)
    assert ("SyntaxError" in ours.stderr or "ForbiddenError" in ours.stderr)
    assert message in ours.stderr
    assert "Traceback" not in ours.stderr and ours.stdout == ""


@pytest.mark.parametrize("code", REFUSED)
def test_future_module_stays_out_of_reach(tmp_path, code):
    ours = _gradcli(tmp_path, code)
    assert ours.returncode != 0
    assert "Traceback" not in ours.stderr and ours.stdout == ""
