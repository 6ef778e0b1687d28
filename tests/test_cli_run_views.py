"""View builtins inside programs (show/graph/grads/explain/export) and
`gradcli run --graph/--grads/--json`, run as real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}

PROGRAM = """\
import torch
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor(3., requires_grad=True)
h = x * w
out = (h + x.sin()).sum()
"""


def gradcli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True, text=True,
                          env=ENV, timeout=60, input=stdin)


def run_program(tmp_path, body: str, *flags):
    path = tmp_path / "prog.grad"
    path.write_text(PROGRAM + body)
    return gradcli("run", str(path), *flags)


def test_show_names_the_variable_and_shows_grad(tmp_path):
    proc = run_program(tmp_path, "out.backward()\nshow(x)\n")
    assert proc.returncode == 0, proc.stderr
    assert "x" in proc.stdout.splitlines()[0]
    assert "requires_grad  True" in proc.stdout
    assert "[3.5403, 2.5839]" in proc.stdout


def test_graph_builtin_names_leaves(tmp_path):
    proc = run_program(tmp_path, "graph(out)\n")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("SumBackward0")
    assert any("AccumulateGrad x" in line for line in lines)
    assert any("AccumulateGrad w" in line for line in lines)


def test_explain_has_no_side_effects_and_uses_rules(tmp_path):
    proc = run_program(tmp_path, "explain(out)\nprint(x.grad)\nout.backward()\nprint(w.grad)\n")
    assert proc.returncode == 0, proc.stderr
    assert "d(a*b)/da = b" in proc.stdout and "d(sin a)/da = cos a" in proc.stdout
    assert "None\ntensor(3.)" in proc.stdout


def test_grads_table_and_export(tmp_path):
    proc = run_program(tmp_path, 'out.backward()\ngrads()\nprint(export(out, "mermaid"))\n')
    assert proc.returncode == 0, proc.stderr
    assert "Gradients" in proc.stdout
    assert "flowchart" in proc.stdout


def test_export_is_echoed_as_text_in_eval():
    proc = gradcli("eval", "x = ones(1, requires_grad=True); export(x * 2, 'dot')")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("digraph")


def test_view_builtin_errors_are_reports(tmp_path):
    proc = run_program(tmp_path, "explain(h)\n")
    assert proc.returncode == 1
    assert "grad can be implicitly created only for scalar outputs" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run_program(tmp_path, "export(out, 'png')\n")
    assert proc.returncode == 1 and "unknown export format" in proc.stderr


def test_run_graph_and_grads_flags(tmp_path):
    proc = run_program(tmp_path, "out.backward()\n", "--graph", "--grads")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    roots = [line for line in lines if line.startswith("SumBackward0")]
    assert len(roots) == 1  # h is inside out's graph, so only out is drawn
    assert any(line.split()[:1] == ["w"] and line.rstrip().endswith("3.") for line in lines)


def test_run_json_record(tmp_path):
    proc = run_program(tmp_path, "out.backward()\nprint('done')\n", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "gradcli.run/1"
    run = doc["runs"][0]
    assert run["exit_code"] == 0 and run["error"] is None
    assert run["stdout"] == "done\n"
    assert run["tensors"]["x"]["grad"] == [3.540302276611328, 2.583853244781494]
    assert run["tensors"]["out"]["grad_fn"] == "SumBackward0"
    assert run["tensors"]["h"]["grad"] is None


def test_run_json_times_the_program_not_the_start_up(tmp_path):
    """"seconds" covers reading, compiling and running the file, not gradcli's imports: a
    program with a busy loop reads at least the loop's time, and less than the
    whole process took."""
    import time

    busy = "i = 0\nwhile i < 200000:\n    i += 1\n"
    path = tmp_path / "busy.grad"
    path.write_text(busy)
    started = time.perf_counter()
    proc = gradcli("run", str(path), "--json")
    wall = time.perf_counter() - started
    assert proc.returncode == 0, proc.stderr
    seconds = json.loads(proc.stdout)["runs"][0]["seconds"]
    assert isinstance(seconds, float)
    assert 0.01 < seconds < wall


def test_run_json_records_errors_and_exit_codes(tmp_path):
    proc = run_program(tmp_path, "print(1)\nout.backward()\nout.backward()\n", "--json")
    assert proc.returncode == 1
    run = json.loads(proc.stdout)["runs"][0]
    assert run["exit_code"] == 1
    assert run["error"]["kind"] == "RuntimeError"
    assert run["error"]["line"] == 8
    assert run["error"]["message"].startswith("Trying to backward through the graph a second time")
    bad = tmp_path / "bad.grad"
    bad.write_text("x = (1,\n")
    proc = gradcli("run", str(bad), "--json")
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["runs"][0]["error"]["kind"] == "SyntaxError"
