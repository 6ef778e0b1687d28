"""`gradcli grad` at many points and output people can read (issue 25): --csv, --grid,
--plot, --hessian as one matrix, --precision, --json with graph/explanation, refused flag
combinations, and --help examples that run as pasted. Real processes throughout."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import math
import os
import re
import subprocess
import sys

import pytest

ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}


def gradcli(*args: str, timeout: float = 120, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True,
                          text=True, env=env or ENV, timeout=timeout)


def grad_json(*args: str) -> dict:
    proc = gradcli("grad", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def rows_of(text: str) -> list:
    return list(csv.reader(io.StringIO(text)))


# ------------------------------------------------------------------- --csv

def test_csv_one_row_per_element_with_full_precision():
    torch = pytest.importorskip("torch")
    proc = gradcli("grad", "sin(x)*y", "--at", "x=[0,1,2]", "--at", "y=2", "--csv")
    assert proc.returncode == 0, proc.stderr
    rows = rows_of(proc.stdout)
    assert rows[0] == ["x", "y", "value", "d/dx", "d/dy"]
    assert len(rows) == 4
    x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    y = torch.tensor(2.0)
    want = torch.sin(x) * y
    dx = torch.cos(x) * y
    for k, row in enumerate(rows[1:]):
        assert float(row[0]) == x[k].item() and float(row[1]) == 2.0
        assert float(row[2]) == pytest.approx(want[k].item(), rel=1.3e-6, abs=1e-5)
        assert float(row[3]) == pytest.approx(dx[k].item(), rel=1.3e-6, abs=1e-5)
        assert float(row[4]) == pytest.approx(math.sin(k), rel=1.3e-6, abs=1e-5)
    assert len(rows[2][2]) > 10  # all the digits of the float32 value, not 4


def test_csv_broadcast_never_sums_over_points():
    proc = gradcli("grad", "x*y", "--at", "x=[[0],[1],[2]]", "--at", "y=[0,1]", "--csv")
    assert proc.returncode == 0, proc.stderr
    rows = rows_of(proc.stdout)[1:]
    assert len(rows) == 6
    for x, y, value, dx, dy in rows:
        assert float(value) == float(x) * float(y)
        assert float(dx) == float(y) and float(dy) == float(x)  # each point's own partials


def test_csv_refuses_a_non_elementwise_expr():
    for expr in ("x.sum()", "x.softmax(0)", "x.cumsum(0)"):
        proc = gradcli("grad", expr, "--at", "x=[1.,2.,3.]", "--csv")
        assert proc.returncode == 2, (expr, proc.stdout, proc.stderr)
        assert "--csv needs an elementwise EXPR" in proc.stderr


def test_csv_precision():
    proc = gradcli("grad", "x*pi", "--at", "x=[1,2]", "--dtype", "float64", "--csv",
                   "--precision", "3")
    assert proc.stdout.splitlines()[1] == "1,3.14,3.14"


# ------------------------------------------------------------------- --grid

def test_grid_every_point_and_each_points_partials():
    doc = grad_json("x**2*y", "--grid", "x=0:1:3", "--grid", "y=1:2:2", "--dtype", "float64")
    pts = doc["points"]
    assert pts["headers"] == ["x", "y", "value", "d/dx", "d/dy"]
    assert len(pts["rows"]) == 6
    for x, y, v, dx, dy in pts["rows"]:
        assert v == pytest.approx(x * x * y) and dx == pytest.approx(2 * x * y)
        assert dy == pytest.approx(x * x)
    assert sorted({(r[0], r[1]) for r in pts["rows"]}) == [(0.0, 1.0), (0.0, 2.0), (0.5, 1.0),
                                                           (0.5, 2.0), (1.0, 1.0), (1.0, 2.0)]


def test_grid_with_a_fixed_vector_goes_point_by_point():
    proc = gradcli("grad", "(x*w).sum()", "--grid", "x=0:1:3", "--at", "w=[1,2]", "--wrt", "x",
                   "--csv")
    assert proc.returncode == 0, proc.stderr
    rows = rows_of(proc.stdout)
    assert rows[0] == ["x", "value", "d/dx"]
    assert [float(r[1]) for r in rows[1:]] == [0.0, 1.5, 3.0]
    assert [float(r[2]) for r in rows[1:]] == [3.0, 3.0, 3.0]


def test_too_many_grid_points_together_are_refused():
    proc = gradcli("grad", "x*y", "--grid", "x=0:1:10000", "--grid", "y=0:1:1000")
    assert proc.returncode == 2 and "points in all" in proc.stderr


def test_grid_table_stays_one_line_per_point():
    proc = gradcli("grad", "sin(x)", "--grid", "x=0:3:31")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "sin(x) at 31 points"
    assert len(lines) == 3 + 31
    assert "..." not in proc.stdout


@pytest.mark.parametrize("spec", ["x=0:1", "x=a:b:3", "x=0:1:0", "0:1:3", "x=0:1:2.5",
                                  "x=0:1:2000000"])
def test_bad_grid_is_a_usage_error(spec):
    proc = gradcli("grad", "x*2", "--grid", spec)
    assert proc.returncode == 2, proc.stderr
    assert "--grid" in proc.stderr and "Traceback" not in proc.stderr


# ------------------------------------------------------------------- --plot

def test_plot_in_the_terminal():
    proc = gradcli("grad", "sin(x)", "--grid", "x=0:6.28:60", "--plot")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "sin(x) and d/dx" in out
    assert "sin(x)" in out and "d/dx" in out
    assert re.search(r"[\u2800-\u28ff]", out)  # braille dots: a drawn curve
    assert "\x1b[" not in out  # NO_COLOR


def test_plot_over_a_vector_at_value():
    proc = gradcli("grad", "x**2", "--at", "x=linspace(-1, 1, 30)", "--plot")
    assert proc.returncode == 0, proc.stderr
    assert "x**2 and d/dx" in proc.stdout


def test_plot_needs_one_range():
    proc = gradcli("grad", "x*y", "--at", "x=1", "--at", "y=2", "--plot")
    assert proc.returncode == 2
    assert "--plot needs one 1-D range" in proc.stderr


def test_plot_to_a_file(tmp_path):
    target = tmp_path / "d.png"
    proc = gradcli("grad", "tanh(x)", "--grid", "x=-3:3:50", "--plot", str(target))
    if importlib.util.find_spec("matplotlib") is None:
        assert proc.returncode == 2
        assert "needs matplotlib" in proc.stderr and "gradcli[plot]" in proc.stderr
        assert not target.exists()
    else:
        assert proc.returncode == 0, proc.stderr
        assert target.read_bytes()[:4] == b"\x89PNG"


def test_plot_file_suffix_is_checked_before_running(tmp_path):
    proc = gradcli("grad", "x", "--grid", "x=0:1:3", "--plot=" + str(tmp_path / "d.txt"))
    assert proc.returncode == 2 and ".png" in proc.stderr


# ------------------------------------------------------------------- --hessian

def test_hessian_of_scalar_names_is_one_labelled_matrix():
    proc = gradcli("grad", "x**2*y + y**3", "--at", "x=1", "--at", "y=2", "--hessian")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = lines.index("hessian d2(x**2*y + y**3):")
    assert lines[start + 1].split() == ["x", "y"]
    assert lines[start + 2].split() == ["x", "4.0000", "2.0000"]
    assert lines[start + 3].split() == ["y", "2.0000", "12.0000"]
    doc = grad_json("x**2*y + y**3", "--at", "x=1", "--at", "y=2", "--hessian")
    assert doc["hessian_matrix"] == {"labels": ["x", "y"], "data": [[4.0, 2.0], [2.0, 12.0]]}


def test_hessian_of_vectors_is_a_block_matrix():
    proc = gradcli("grad", "(x*y).sum() + (x**3).sum()", "--at", "x=[1.,2.]", "--at", "y=[3.,4.]",
                   "--hessian", "--precision", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("hessian"))
    assert lines[start + 1].split() == ["x[0]", "x[1]", "y[0]", "y[1]"]
    assert lines[start + 2].split() == ["x[0]", "6.0", "0.0", "1.0", "0.0"]
    assert lines[start + 5].split() == ["y[1]", "0.0", "1.0", "0.0", "0.0"]


# ------------------------------------------------------------------- --precision

def test_precision_applies_to_tensors_and_checks():
    proc = gradcli("grad", "(x*pi).sum()", "--at", "x=[1.,2.]", "--dtype", "float64",
                   "--precision", "8", "--check")
    assert proc.returncode == 0, proc.stderr
    assert "value: tensor(9.42477796, dtype=torch.float64" in proc.stdout
    assert "3.14159265" in proc.stdout
    assert re.search(r"max abs error \d\.\d{8}e", proc.stdout)


def test_bad_precision_is_a_usage_error():
    proc = gradcli("grad", "x*2", "--at", "x=1", "--precision", "40")
    assert proc.returncode == 2 and "--precision" in proc.stderr


# ------------------------------------------------------------------- --json

def test_json_carries_graph_and_explanation():
    doc = grad_json("(x*y).sum()", "--at", "x=[1.,2.]", "--at", "y=3.0", "--graph", "--explain")
    assert doc["schema"] == "gradcli.grad/2"
    assert doc["graph"]["output"]["grad_fn"] == "SumBackward0"
    assert any(n["name"] == "MulBackward0" for n in doc["graph"]["nodes"])
    assert "Step 1  SumBackward0" in doc["explanation"]
    assert "d(a*b)/da = b" in doc["explanation"]


def test_json_schema_is_documented():
    from gradcli.cli.grad_problem import GRAD_JSON_SCHEMA, SCHEMA

    assert GRAD_JSON_SCHEMA.startswith(SCHEMA)
    doc = grad_json("x**2*y", "--at", "x=1", "--at", "y=2", "--hessian", "--formula", "--graph",
                    "--explain", "--check")
    for key in doc:
        assert re.search(rf"^  {key}\b", GRAD_JSON_SCHEMA, re.M), key


# ------------------------------------------------------------------- refused combinations

@pytest.mark.parametrize("flags,needle", [
    (["--jacobian", "--seed-grad", "[1,1]"], "--seed-grad"),
    (["--jacobian", "--explain"], "--explain"),
    (["--csv", "--json"], "--csv and --json"),
    (["--csv", "--hessian"], "--hessian"),
    (["--grid", "x=0:1:2", "--jacobian"], "--jacobian"),
    (["--plot", "--json"], "--plot"),
])
def test_flags_that_cannot_go_together_are_refused_before_running(flags, needle):
    proc = gradcli("grad", "print(1) or x*2", "--at", "x=[1.,2.]", *flags)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert needle in proc.stderr
    assert proc.stdout == ""  # nothing ran: print(1) never printed


# ------------------------------------------------------------------- --help examples

UNSAFE = set("[]()*?{}<>|&;")


def unquoted_specials(line: str) -> set:
    """Characters bash or zsh would treat as globs or syntax outside quotes."""
    found, quote = set(), None
    for ch in line:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in UNSAFE:
            found.add(ch)
    return found


def example_lines(help_text: str) -> list:
    return [line.strip() for line in help_text.splitlines() if line.strip().startswith("gradcli ")]


def test_grad_and_graph_help_examples_are_quoted_for_bash_and_zsh():
    from gradcli.cli.grad import GRAD_HELP, GRAPH_HELP

    examples = example_lines(GRAD_HELP) + example_lines(GRAPH_HELP)
    assert len(examples) >= 10
    for line in examples:
        assert not unquoted_specials(line), line


def test_other_commands_help_examples_have_no_unquoted_brackets_or_parentheses():
    from gradcli.cli import app

    texts = [app.HELP, app.RUN_HELP, app.EVAL_HELP, app.CHECK_HELP]
    for name in ("gradcli.cli.test", "gradcli.cli.repl"):
        mod = importlib.import_module(name)
        texts += [v for k, v in vars(mod).items() if k.endswith("HELP") and isinstance(v, str)]
    for text in texts:
        for line in example_lines(text):
            words = line.split("  ")[0]  # the command, before its aligned comment
            assert not (unquoted_specials(words) - {"*", "|", ";"}), line


def test_grad_help_examples_run_as_pasted(tmp_path):
    from gradcli.cli.grad import GRAD_HELP, GRAPH_HELP

    shim = tmp_path / "gradcli"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gradcli "$@"\n')
    shim.chmod(0o755)
    env = {**ENV, "PATH": f"{tmp_path}{os.pathsep}{ENV.get('PATH', '')}"}
    for line in example_lines(GRAD_HELP) + example_lines(GRAPH_HELP):
        proc = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env,
                              timeout=120, cwd=tmp_path)
        assert proc.returncode == 0, (line, proc.stderr)


def test_plot_through_the_typer_parser_too(tmp_path):
    # a root option before the command sends the arguments through typer, not the fast path
    proc = gradcli("--no-color", "grad", "sin(x)", "--grid", "x=0:3:20", "--plot")
    assert proc.returncode == 0, proc.stderr
    assert "sin(x) and d/dx" in proc.stdout
    proc = gradcli("--no-color", "grad", "sin(x)", "stray", "--grid", "x=0:3:20")
    assert proc.returncode == 2 and "stray" in proc.stderr
    target = tmp_path / "t.svg"
    proc = gradcli("--no-color", "grad", "sin(x)", "--grid", "x=0:3:20", "--plot", str(target))
    if importlib.util.find_spec("matplotlib") is None:
        assert proc.returncode == 2 and "needs matplotlib" in proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr
        assert b"<svg" in target.read_bytes()


# ------------------------------------------------------------------- audit additions

WITHOUT_MATPLOTLIB = """
import sys
sys.modules["matplotlib"] = None  # as if it were not installed
from gradcli.cli.app import main
sys.argv = ["gradcli"] + sys.argv[1:]
main()
"""


@pytest.mark.parametrize("target", ["d.png", "d.svg"])
def test_plot_to_a_file_without_matplotlib_says_so_before_running(tmp_path, target):
    path = tmp_path / target
    proc = subprocess.run([sys.executable, "-c", WITHOUT_MATPLOTLIB, "grad", "print(7) or sin(x)",
                           "--grid", "x=0:1:5", "--plot", str(path)],
                          capture_output=True, text=True, env=ENV, timeout=120)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "writing an image needs matplotlib, which is not installed" in proc.stderr
    assert "pip install 'gradcli[plot]'" in proc.stderr and "--plot alone draws" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == "" and not path.exists()  # refused before EXPR ran


def test_terminal_plot_works_without_matplotlib():
    proc = subprocess.run([sys.executable, "-c", WITHOUT_MATPLOTLIB, "grad", "x**2",
                           "--grid", "x=-1:1:30", "--plot"],
                          capture_output=True, text=True, env=ENV, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "x**2 and d/dx" in proc.stdout


@pytest.mark.skipif(not os.path.exists("/usr/bin/zsh") and not
                    any(os.path.exists(os.path.join(d, "zsh"))
                        for d in os.environ.get("PATH", "").split(os.pathsep)),
                    reason="zsh is not installed")
def test_grad_help_examples_and_readme_first_command_run_as_pasted_in_zsh(tmp_path):
    from gradcli.cli.grad import GRAD_HELP, GRAPH_HELP

    shim = tmp_path / "gradcli"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gradcli "$@"\n')
    shim.chmod(0o755)
    env = {**ENV, "PATH": f"{tmp_path}{os.pathsep}{ENV.get('PATH', '')}"}
    readme = os.path.join(os.path.dirname(__file__), os.pardir, "README.md")
    lines = example_lines(GRAD_HELP) + example_lines(GRAPH_HELP)
    if os.path.exists(readme):
        with open(readme, encoding="utf-8") as f:
            first = next(line for line in f if "gradcli grad" in line)
        lines.append(first[first.index("gradcli grad"):].strip())
    for line in lines:
        proc = subprocess.run(["zsh", "-f", "-c", line], capture_output=True, text=True,
                              env=env, timeout=120, cwd=tmp_path)
        assert proc.returncode == 0, (line, proc.stderr)
        assert "no matches found" not in proc.stderr


def test_broadcast_grid_of_two_vectors_keeps_each_points_partials():
    # x down a column, y along a row: 6 points, and d/dy at (x, y) is x there, never
    # the sum of x over the column (what a plain gradient of the sum gives: 3)
    rows = rows_of(gradcli("grad", "x*y**2", "--at", "x=[[0],[1],[2]]", "--at", "y=[0,1]",
                           "--csv").stdout)
    assert rows[0] == ["x", "y", "value", "d/dx", "d/dy"]
    table = {(float(r[0]), float(r[1])): (float(r[3]), float(r[4])) for r in rows[1:]}
    assert len(table) == 6
    for (x, y), (dx, dy) in table.items():
        assert dx == y ** 2 and dy == 2 * x * y


def test_explain_of_a_non_scalar_without_a_seed_is_refused_before_printing():
    proc = gradcli("grad", "sin(x)*y", "--at", "x=[0.5,1]", "--at", "y=2", "--explain",
                   "--formula")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == "" and "--seed-grad" in proc.stderr
    proc = gradcli("grad", "sin(x)*y", "--at", "x=[0.5,1]", "--at", "y=2", "--explain",
                   "--formula", "--seed-grad", "ones(2)")
    assert proc.returncode == 0, proc.stderr
    assert "Step 1" in proc.stdout and "d/dx = y*cos(x)" in proc.stdout
