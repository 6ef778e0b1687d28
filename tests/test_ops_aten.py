"""torch.ops.aten (engine/ops/aten_ops.py) against PyTorch 2.13: packets and overloads
print and name themselves as PyTorch's, run gradcli's ops (values, grad_fn names, the
Scalar overloads' Backward1 nodes, first and second gradients), an aten name gradcli
lacks says so, and programs reach them only through their public face (attack tests)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from process_helpers import assert_runs_as_python_does

import gradcli.torch as gt

torch = pytest.importorskip("torch")

X = np.array([0.5, -1.25, 2.0])

CALLS = {
    "exp.default": lambda A, T, x: A.exp.default(x),
    "exp packet": lambda A, T, x: A.exp(x),
    "sum.default": lambda A, T, x: A.sum.default(x),
    "sum.dim_IntList": lambda A, T, x: A.sum.dim_IntList(x.reshape(3, 1), [0]),
    "view.default": lambda A, T, x: A.view.default(x, [3, 1]),
    "view packet": lambda A, T, x: A.view(x, [1, 3]),
    "t.default": lambda A, T, x: A.t.default(x.reshape(3, 1)),
    "add.Tensor alpha": lambda A, T, x: A.add.Tensor(x, x * 2, alpha=2),
    "add.Tensor number": lambda A, T, x: A.add.Tensor(x, 3),
    "add.Scalar": lambda A, T, x: A.add.Scalar(x, 3),
    "add.Scalar alpha": lambda A, T, x: A.add.Scalar(x, 3, 2),
    "sub.Scalar": lambda A, T, x: A.sub.Scalar(x, 1.5),
    "mul.Scalar": lambda A, T, x: A.mul.Scalar(x, 3),
    "div.Scalar": lambda A, T, x: A.div.Scalar(x, 4),
    "mul.Tensor": lambda A, T, x: A.mul.Tensor(x, x),
    "mul packet number": lambda A, T, x: A.mul(x, 3),
    "pow.Tensor_Scalar": lambda A, T, x: A.pow.Tensor_Scalar(x, 3),
    "mm.default": lambda A, T, x: A.mm.default(x.reshape(3, 1), x.reshape(1, 3)),
    "relu": lambda A, T, x: A.relu(x),
    "linalg_inv": lambda A, T, x: A.linalg_inv.default(T.diag(x) + 3),
    "special_expit": lambda A, T, x: A.special_expit(x),
    "_to_copy-like clone": lambda A, T, x: A.clone.default(x),
    "div.Scalar of ints": lambda A, T, x: A.div.Scalar(T.tensor([1, 2, 3]), 2),
    "mul.Scalar of ints by float": lambda A, T, x: A.mul.Scalar(T.tensor([1, 2]), 2.5),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_aten_calls_as_pytorch(name):
    got = []
    for T in (gt, torch):
        x = T.tensor(X, dtype=T.float64, requires_grad=True)
        out = CALLS[name](T.ops.aten, T, x)
        row = [repr(out), type(out.grad_fn).__name__ if out.grad_fn is not None else None]
        if out.requires_grad:
            (g,) = T.autograd.grad((out * out).sum(), x, create_graph=True)
            (gg,) = T.autograd.grad(g.sum(), x, allow_unused=True)
            row += [g.detach().numpy(), None if gg is None else gg.numpy()]
        got.append(row)
    ours, theirs = got
    assert ours[:2] == theirs[:2]
    for a, b in zip(ours[2:], theirs[2:], strict=True):
        if b is None:
            assert a is None or not np.any(a)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-7)


def test_packets_and_overloads_print_as_pytorch():
    for T in (gt, torch):
        A = T.ops.aten
        assert repr(A) == "<module 'torch.ops.aten' from 'torch.ops'>"
        assert repr(A.add) == "<OpOverloadPacket(op='aten.add')>"
        assert repr(A.add.default) == "<OpOverloadPacket(op='aten.add')>".replace(
            "Packet", "").replace("')", "', overload='default')")
        assert repr(A.add.Tensor) == "<OpOverload(op='aten.add', overload='Tensor')>"
        assert str(A.add.default) == "aten.add.default"
        assert A.add.default.name() == "aten::add"
        assert repr(A.exp.default.overloadpacket) == "<OpOverloadPacket(op='aten.exp')>"
        assert type(A.add).__name__ == "OpOverloadPacket"
        assert type(A.add.Tensor).__name__ == "OpOverload"


def test_missing_aten_ops_say_so():
    for name in ("fft_fft", "nope", "_foreach_add"):
        with pytest.raises(AttributeError, match=f"torch.ops.aten.{name} is not supported "
                                                 "by gradcli"):
            getattr(gt.ops.aten, name)
    with pytest.raises(AttributeError, match="torch.ops.nope is not supported by gradcli"):
        gt.ops.nope  # noqa: B018
    assert gt.ops.profiler._record_function_exit is not None  # (the namespace it shares)


def _run(tmp_path, program):
    (tmp_path / "p.grad").write_text(program)
    return subprocess.run([sys.executable, "-m", "gradcli", "run", "p.grad"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)


def test_aten_through_the_cli(tmp_path):
    program = ("import torch\n"
               "x = torch.tensor([1.0, -2.0], requires_grad=True)\n"
               "y = torch.ops.aten.mul.Scalar(torch.ops.aten.exp.default(x), 3)\n"
               "print(y, torch.ops.aten.add.default, torch.ops.aten.sum)\n"
               "y.sum().backward()\n"
               "print(x.grad)\n")
    assert_runs_as_python_does(tmp_path, program)


@pytest.mark.parametrize("attack", [
    "torch.ops.aten.add._fn",
    "torch.ops.aten.add.default._fn",
    "torch.ops.aten.add.default.__call__.__globals__",
    "torch.ops.aten.__class__.__init__.__globals__",
    "type(torch.ops.aten.add).__getattr__.__globals__",
    "getattr(torch.ops.aten.add.default, '_fn')",
    "torch.ops.aten.add.__class__.__mro__",
    "torch.ops.aten.__reduce_ex__(2)",
    "torch.ops.aten.storage",
    "torch.ops.aten.data_ptr",
    "torch.ops.aten.save",
])
def test_aten_attacks_stay_in_the_sandbox(tmp_path, attack):
    got = _run(tmp_path, f"import torch\nprint({attack})\n")
    assert got.returncode != 0 and got.stdout == ""
    assert "Traceback" not in got.stderr
