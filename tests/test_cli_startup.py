"""The one-shot paths import only what they use (SPEC 3 / issue 4): no REPL,
no prompt_toolkit, no rich unless a view is drawn, no typer on the fast paths."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = (
    "import sys, runpy\n"
    "sys.argv = ['gradcli'] + sys.argv[1:]\n"
    "try:\n"
    "    runpy.run_module('gradcli', run_name='__main__')\n"
    "except SystemExit:\n"
    "    pass\n"
    "loaded = sorted(m for m in ('rich', 'prompt_toolkit', 'pygments', 'typer', 'pydantic',\n"
    "                            'gradcli.cli.repl_ui') if m in sys.modules)\n"
    "print('LOADED', ' '.join(loaded), file=sys.stderr)\n"
)


def loaded_modules(*args: str) -> set:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1"})
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("LOADED")][-1]
    return set(line.split()[1:])


def test_grad_imports_no_repl_rich_or_typer():
    mods = loaded_modules("grad", "(x * x).sum()", "--at", "x=[1.,2.]")
    assert not mods & {"rich", "prompt_toolkit", "pygments", "typer", "pydantic", "gradcli.cli.repl_ui"}, mods


def test_run_imports_no_repl_rich_or_typer(tmp_path):
    prog = tmp_path / "p.grad"
    prog.write_text("import torch\nprint(torch.ones(2).sum())\n")
    mods = loaded_modules("run", str(prog))
    assert not mods & {"rich", "prompt_toolkit", "pygments", "typer", "pydantic"}, mods


def test_graph_view_loads_rich_only_when_drawing():
    mods = loaded_modules("grad", "(x * x).sum()", "--at", "x=[1.,2.]", "--graph")
    assert "rich" in mods
    assert not mods & {"prompt_toolkit", "typer"}, mods
