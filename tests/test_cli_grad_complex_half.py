"""`gradcli grad` on complex and half-precision inputs, through real processes, against
PyTorch: `--at z=1+2j` (or a list or tensor holding complex numbers) stays complex and its
gradient is PyTorch's; --jacobian and --check take complex inputs; the options that read
a derivative as one real number refuse them (exit 2, one message); `--dtype bfloat16` and
`float16` bind the inputs in that type, and --csv recognises an elementwise EXPR there."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}


def gradcli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True,
                          text=True, env=ENV, timeout=120)


def grad_json(*args: str) -> dict:
    proc = gradcli("grad", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "Warning" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


def as_array(entry) -> np.ndarray:
    data = np.asarray(entry["data"], dtype=float)
    if entry["dtype"].startswith("complex"):
        data = data[..., 0] + 1j * data[..., 1]
    return data


@pytest.mark.parametrize("expr,at,make", [
    ("(x*x.sin()).real.sum()", "x=[1+2j, 2]", lambda x: (x * x.sin()).real.sum()),
    ("x.abs().sum()", "x=tensor([1+2j, 3-1j])", lambda x: x.abs().sum()),
    ("(x*x.conj()).real.sum() + x.angle().sum()", "x=[0.5-1j, -2+0.25j]",
     lambda x: (x * x.conj()).real.sum() + x.angle().sum()),
])
def test_complex_gradient_is_pytorchs(expr, at, make):
    doc = grad_json(expr, "--at", at)
    assert doc["inputs"]["x"]["dtype"] == "complex64"
    value = eval(at.split("=", 1)[1], {"tensor": lambda v: v})
    x = torch.tensor(value, requires_grad=True)
    out = make(x)
    out.backward()
    assert doc["gradients"]["x"]["dtype"] == str(x.grad.dtype).removeprefix("torch.")
    np.testing.assert_allclose(as_array(doc["gradients"]["x"]), x.grad.numpy(), rtol=1.3e-6, atol=1e-5)
    np.testing.assert_allclose(as_array(doc["value"]), out.detach().numpy(), rtol=1.3e-6)


def test_complex_scalar_in_float64_and_a_real_partner():
    doc = grad_json("(z*y).abs().sum()", "--at", "z=1+2j", "--at", "y=2", "--dtype", "float64")
    assert doc["inputs"]["z"]["dtype"] == "complex128" and doc["inputs"]["y"]["dtype"] == "float64"
    z = torch.tensor(1 + 2j, dtype=torch.complex128, requires_grad=True)
    y = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    (z * y).abs().sum().backward()
    assert as_array(doc["gradients"]["z"]) == pytest.approx(z.grad.item())
    assert as_array(doc["gradients"]["y"]) == pytest.approx(y.grad.item())


def test_complex_table_seed_grad_and_jacobian():
    proc = gradcli("grad", "x.abs()", "--at", "x=tensor([1+2j, 3-1j])", "--seed-grad", "tensor([1., 2.])")
    assert proc.returncode == 0, proc.stderr
    assert "[0.4472+0.8944j, 1.8974-0.6325j]" in proc.stdout
    assert proc.stderr == ""
    proc = gradcli("grad", "(x*y).abs()", "--at", "x=[1+2j, 2]", "--at", "y=2", "--jacobian")
    assert proc.returncode == 0, proc.stderr
    x, y = torch.tensor([1 + 2j, 2]), torch.tensor(2.0)
    jx, jy = torch.autograd.functional.jacobian(lambda a, b: (a * b).abs(), (x, y))
    assert repr(jx) in proc.stdout and repr(jy) in proc.stdout


def test_complex_check_passes_and_catches_a_wrong_gradient():
    doc = grad_json("(x*x.sin()).real.sum()", "--at", "x=[1+2j, 2]", "--check")
    assert doc["check"]["ok"] is True and doc["check"]["max_abs_error"] < 1e-6
    # autograd sees x.detach() as a constant, finite differences do not: the check must
    # fail on both the real and the imaginary direction's account
    proc = gradcli("grad", "(x*x.detach()).abs().sum()", "--at", "x=[1+2j, 0.5-1j]", "--check")
    assert proc.returncode == 1 and "FAIL" in proc.stdout, proc.stdout + proc.stderr
    doc = json.loads(gradcli("grad", "(x*x.detach()).abs().sum()", "--at", "x=[2j]", "--check",
                             "--json").stdout)
    # |x|^2 at 2j: numerical gradient 2x = 4j, autograd's (x.detach() held) 2j
    assert doc["check"]["ok"] is False and doc["check"]["max_abs_error"] == pytest.approx(2.0, rel=1e-4)


def test_complex_check_refuses_a_complex_expr():
    proc = gradcli("grad", "(x*x).sum()", "--at", "x=[1+2j, 2]", "--check", "--seed-grad", "tensor(1+0j)")
    assert proc.returncode == 2
    assert "--check with complex inputs needs a real EXPR" in proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr


@pytest.mark.parametrize("flags", [["--formula"], ["--hessian"], ["--csv"], ["--plot"],
                                   ["--grid", "y=0:1:3"]])
def test_real_only_options_refuse_complex_inputs(flags):
    at = ["--at", "x=1+2j"] + ([] if "--grid" in flags else ["--at", "y=1"])
    proc = gradcli("grad", "(x*y).abs()", *at, *flags)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith(f"gradcli grad: {flags[0]} takes real inputs: x is torch.complex64")
    assert proc.stdout == "" and "Traceback" not in proc.stderr


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_dtype_half_types_bind_the_inputs(dtype):
    doc = grad_json("(x*x.sin()).sum()", "--at", "x=[1.5, 2, 3]", "--dtype", dtype)
    tdt = getattr(torch, dtype)
    x = torch.tensor([1.5, 2, 3], dtype=tdt, requires_grad=True)
    out = (x * x.sin()).sum()
    out.backward()
    assert doc["inputs"]["x"]["dtype"] == dtype and doc["value"]["dtype"] == dtype
    assert as_array(doc["gradients"]["x"]).tolist() == x.grad.float().tolist()
    assert float(doc["value"]["data"]) == out.item()


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_csv_of_an_elementwise_expr_in_half_types(dtype):
    proc = gradcli("grad", "x*x.sin()", "--at", "x=[1.5, 2, 3]", "--dtype", dtype, "--csv")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "x,value,d/dx"
    x = torch.tensor([1.5, 2, 3], dtype=getattr(torch, dtype), requires_grad=True)
    value = x * x.sin()
    (g,) = torch.autograd.grad(value, x, torch.ones_like(value))
    rows = [[float(c) for c in line.split(",")] for line in lines[1:]]
    assert rows == [[a, b, c] for a, b, c in zip(x.tolist(), value.tolist(), g.tolist())]
    # one that mixes elements is still refused
    proc = gradcli("grad", "x.cumsum(0)", "--at", "x=[1.5, 2, 3]", "--dtype", dtype, "--csv")
    assert proc.returncode == 2 and "--csv needs an elementwise EXPR" in proc.stderr


def test_dtype_names_the_choices():
    proc = gradcli("grad", "x", "--at", "x=1", "--dtype", "int8")
    assert proc.returncode == 2
    assert "--dtype must be float32, float64, bfloat16 or float16, got 'int8'" in proc.stderr


def test_graph_format_json_keeps_a_complex_input():
    proc = gradcli("graph", "(x*x.conj()).real.sum()", "--at", "x=tensor([1+2j])", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    doc = json.loads(proc.stdout)
    x = torch.tensor([1 + 2j], requires_grad=True)
    seen, todo = [], [(x * x.conj()).real.sum().grad_fn]
    while todo:  # PyTorch's nodes, breadth first, each once
        fn = todo.pop(0)
        if fn is not None and fn not in seen:
            seen.append(fn)
            todo += [g for g, _ in fn.next_functions]
    assert [n["name"] for n in doc["nodes"]] == [type(fn).__name__ for fn in seen]
    assert "ViewAsRealBackward0" in [n["name"] for n in doc["nodes"]]  # (it stayed complex)
