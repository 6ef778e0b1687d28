"""`gradcli grad` without --formula/--plot loads none of the heavy optional modules
(issue 25): sympy, plotext, matplotlib and scipy load only when their flag is given, and
the many-points/formula/plot modules of gradcli.cli only then too."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
import sys
from gradcli.cli.app import main
sys.argv = ["gradcli"] + sys.argv[1:]
try:
    main()
except SystemExit as e:
    code = e.code
print("CODE", code, file=sys.stderr)
print("MODULES", " ".join(sorted(sys.modules)), file=sys.stderr)
"""

HEAVY = ("sympy", "plotext", "matplotlib", "scipy", "mpmath")
OURS = ("gradcli.cli.formula", "gradcli.cli.plot", "gradcli.cli.points", "gradcli.cli.grad_many",
        "gradcli.cli.grad_formula", "gradcli.cli.grad_output")


def loaded(*args: str) -> set:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1"})
    lines = proc.stderr.splitlines()
    assert "CODE 0" in lines, proc.stderr[-2000:]
    line = [ln for ln in lines if ln.startswith("MODULES")][-1]
    return set(line.split()[1:])


def heavy(mods: set) -> set:
    return {m for m in mods if m.split(".")[0] in HEAVY or m in OURS}


def test_plain_grad_loads_no_sympy_plotext_matplotlib_or_scipy():
    mods = loaded("grad", "x*2", "--at", "x=1")
    assert "gradcli.lang.bare_names" in mods  # the probe ran the command
    assert not heavy(mods), sorted(heavy(mods))


def test_grad_with_calculus_input_and_hessian_loads_none_either():
    mods = loaded("grad", "exp(1)*x**2*y + pi", "--at", "x=1", "--at", "y=2", "--hessian",
                  "--precision", "6")
    assert "gradcli.cli.grad_output" in mods  # the Hessian matrix's printer, on demand
    assert not heavy(mods) - {"gradcli.cli.grad_output"}, sorted(heavy(mods))


def test_formula_loads_sympy_and_csv_loads_no_plotting():
    assert "sympy" in loaded("grad", "x**2", "--at", "x=1", "--formula")
    mods = loaded("grad", "x**2", "--at", "x=[1,2]", "--csv")
    assert "gradcli.cli.points" in mods
    assert not {m for m in mods if m.split(".")[0] in HEAVY}


def test_terminal_plot_loads_plotext_not_matplotlib():
    mods = loaded("grad", "x**2", "--grid", "x=0:1:5", "--plot")
    assert "plotext" in mods
    assert not {m for m in mods if m.split(".")[0] in ("matplotlib", "sympy")}
