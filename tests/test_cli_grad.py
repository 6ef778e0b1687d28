"""`gradcli grad` and `gradcli graph` as a user runs them: real processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}


def gradcli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True,
                          text=True, env=ENV, timeout=timeout)


def grad_json(*args: str) -> dict:
    proc = gradcli("grad", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_readme_example_value_and_table():
    proc = gradcli("grad", "(x**2 * y.sin()).sum()", "--at", "x=[1,2,3]", "--at", "y=0.5")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "value: tensor(6.7120, grad_fn=<SumBackward0>)"
    assert any(line.split()[:2] == ["x", "[3]"] and "[0.9589, 1.9177, 2.8766]" in line for line in lines)
    assert any(line.split()[:2] == ["y", "[]"] and line.rstrip().endswith("12.2862") for line in lines)
    assert proc.stderr == ""


def test_matrix_rows_line_up_in_the_plain_table():
    proc = gradcli("grad", "(x * w).sum()", "--at", "x=ones(3,2)", "--at", "w=[[1.5,2],[3,4],[5,6]]")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("x "))
    block = lines[start:start + 3]
    value_col = block[0].index("[[1., 1.],")
    grad_col = block[0].index("[[1.5000, 2.0000],")
    for line, grad_row in zip(block[1:], ("[3.0000, 4.0000],", "[5.0000, 6.0000]]")):
        assert line[value_col + 1:].startswith("[1., 1.]")  # under the first row, past its "["
        assert line[grad_col + 1:].startswith(grad_row)


def test_integer_values_become_float_and_dtype_option():
    doc = grad_json("(x * x).sum()", "--at", "x=[1, 2]")
    assert doc["inputs"]["x"]["dtype"] == "float32"
    assert doc["gradients"]["x"]["data"] == [2.0, 4.0]
    doc = grad_json("(x * x).sum()", "--at", "x=[1, 2]", "--dtype", "float64")
    assert doc["value"]["dtype"] == "float64"


def test_at_accepts_expressions_and_wrt_limits_names():
    doc = grad_json("(W @ x).sum()", "--at", "W=eye(2) * 3", "--at", "x=ones(2)", "--wrt", "x")
    assert doc["wrt"] == ["x"]
    assert set(doc["gradients"]) == {"x"}
    assert doc["gradients"]["x"]["data"] == [3.0, 3.0]


def test_unused_name_has_null_gradient():
    doc = grad_json("x.sum()", "--at", "x=[1.,2.]", "--at", "y=3.0")
    assert doc["gradients"]["y"] is None


def test_non_scalar_needs_seed_grad_or_jacobian():
    proc = gradcli("grad", "x * 2", "--at", "x=[1.,2.]")
    assert proc.returncode == 2
    assert "--seed-grad" in proc.stderr and "--jacobian" in proc.stderr
    doc = grad_json("x * x", "--at", "x=[1.,2.]", "--seed-grad", "[1.0, 10.0]")
    assert doc["gradients"]["x"]["data"] == [2.0, 40.0]


def test_jacobian_shape_and_values():
    doc = grad_json("x.sin()", "--at", "x=[0.0, 1.0]", "--jacobian")
    block = doc["jacobian"]["x"]
    assert block["shape"] == [2, 2]
    assert block["data"][0] == [1.0, 0.0]
    assert block["data"][1][0] == 0.0 and abs(block["data"][1][1] - 0.5403023) < 1e-6


def test_hessian_blocks_for_each_pair():
    doc = grad_json("(x * y).sum() + (x ** 3).sum()", "--at", "x=[1., 2.]", "--at", "y=[3., 4.]", "--hessian")
    h = doc["hessian"]
    assert set(h) == {"x,x", "x,y", "y,x", "y,y"}
    assert h["x,x"]["data"] == [[6.0, 0.0], [0.0, 12.0]]
    assert h["x,y"]["data"] == [[1.0, 0.0], [0.0, 1.0]]
    assert h["y,y"]["data"] == [[0.0, 0.0], [0.0, 0.0]]


def test_check_reports_worst_error_and_passes():
    doc = grad_json("x.tanh().sum()", "--at", "x=[0.5, -1.0]", "--check")
    assert doc["check"]["ok"] is True
    assert doc["check"]["max_abs_error"] < 1e-6
    assert doc["check"]["worst"]["name"] == "x"
    proc = gradcli("grad", "x.tanh().sum()", "--at", "x=[0.5]", "--check")
    assert "gradcheck (float64" in proc.stdout and "PASS" in proc.stdout


def test_json_nonfinite_values_are_strings():
    doc = grad_json("x.log().sum()", "--at", "x=[0.0, 1.0]")
    assert doc["value"]["data"] == "-inf"
    assert doc["gradients"]["x"]["data"] == ["inf", 1.0]


def test_graph_and_explain_flags():
    proc = gradcli("grad", "(x * y).sum()", "--at", "x=[1.,2.]", "--at", "y=3.0", "--graph", "--explain")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "SumBackward0" in out and "MulBackward0" in out and "AccumulateGrad x" in out
    assert "d(a*b)/da = b" in out  # the rule text from the op table


@pytest.mark.parametrize("bad,code,needle", [
    (["x.tanh(", "--at", "x=1"], 2, "SyntaxError"),
    (["x + q", "--at", "x=1"], 1, "NameError"),
    (["x.sum()", "--at", "x"], 2, "NAME=VALUE"),
    (["x.sum()", "--at", "x=1", "--wrt", "z"], 2, "--wrt z"),
    (["ones(3) + x", "--at", "x=ones(2)"], 1, "The size of tensor a (3) must match the size of tensor b (2)"),
    (["x.sum()", "--at", "x=[1,2]", "--dtype", "int8"], 2, "--dtype"),
    (["x.sum()", "--at", "x=__import__('os')"], 2, ""),
])
def test_errors_are_reports_not_tracebacks(bad, code, needle):
    proc = gradcli("grad", *bad)
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert needle in proc.stderr


def test_graph_command_formats():
    tree = gradcli("graph", "(x * y + x.sin()).sum()", "--at", "x=[1,2]", "--at", "y=3.0")
    assert tree.returncode == 0, tree.stderr
    assert tree.stdout.splitlines()[0].startswith("SumBackward0")
    mer = gradcli("graph", "(x @ x).tanh()", "--at", "x=ones(2,2)", "--format", "mermaid")
    assert mer.stdout.startswith("flowchart")
    js = gradcli("graph", "(x * 2).sum()", "--at", "x=[1.]", "--format", "json")
    doc = json.loads(js.stdout)
    assert {n["name"] for n in doc["nodes"]} >= {"SumBackward0", "MulBackward0", "AccumulateGrad"}
    bad = gradcli("graph", "x.sum()", "--at", "x=1", "--format", "png")
    assert bad.returncode == 2 and "--format" in bad.stderr


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot not installed")
def test_graph_dot_renders_with_graphviz(tmp_path):
    proc = gradcli("graph", "(x * y).sum()", "--at", "x=[1.,2.]", "--at", "y=3.0", "--format", "dot")
    render = subprocess.run(["dot", "-Tsvg"], input=proc.stdout, capture_output=True, text=True)
    assert render.returncode == 0, render.stderr
    assert "<svg" in render.stdout


# ---------------------------------------------- gradients compared with PyTorch

EXPRESSIONS = [
    "(x**2 * y.sin()).sum()",
    "(x.exp() / (1 + y * y)).mean()",
    "(x.tanh() * y).sum() + (x * x).prod()",
    "(x.sigmoid() - y.cos()).pow(2).sum()",
    "x.norm() * y.abs().sum()",
    "torch.softmax(x * y, 0)[0]",
    "torch.log_softmax(x + y, 0).sum()",
    "(x.clamp(-0.5, 0.5) * y).sum()",
    "torch.maximum(x, y).sum() + torch.minimum(x, y).mean()",
    "(x.unsqueeze(1) * y.unsqueeze(0)).logsumexp(1).sum()",
    "torch.where(x > 0, x * y, y - x).sum()",
    "(x.sqrt() + y.rsqrt()).sum()",
    "torch.outer(x, y).sum(0).max()",
    "x.cumsum(0).std() + y.var()",
    "torch.nn.functional.mse_loss(x, y)",
]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_gradients_match_pytorch(expr):
    torch = pytest.importorskip("torch")
    x_vals, y_vals = [0.3, 1.2, 2.5], [0.7, 1.4, 0.2]
    doc = grad_json(expr, "--at", f"x={x_vals}", "--at", f"y={y_vals}", "--dtype", "float64")
    x = torch.tensor(x_vals, dtype=torch.float64, requires_grad=True)
    y = torch.tensor(y_vals, dtype=torch.float64, requires_grad=True)
    value = eval(expr, {"torch": torch, "x": x, "y": y})  # the oracle: same text in real torch
    gx, gy = torch.autograd.grad(value, [x, y], allow_unused=True)
    assert doc["value"]["data"] == pytest.approx(value.item(), rel=1e-10)
    for name, g in (("x", gx), ("y", gy)):
        got = doc["gradients"][name]
        if g is None:
            assert got is None
        else:
            assert got["data"] == pytest.approx(g.tolist(), rel=1e-9, abs=1e-12)
