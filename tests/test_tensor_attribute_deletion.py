"""Deleting a tensor's attributes (PyTorch's TestAutograd.test_attribute_deletion and
more): `del t.grad` clears the gradient; deleting data, requires_grad or _backward_hooks
raises PyTorch's RuntimeError, a read-only attribute PyTorch's AttributeError, and the
tensor stays usable. The same in a .grad program (where `_` names are refused when the
program is checked)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

# (torch 2.13 crashes on `del t.real` / `del t.imag`: left out)
NAMES = ["grad", "data", "requires_grad", "grad_fn", "_version", "_backward_hooks", "is_leaf",
         "shape", "dtype", "device", "retains_grad", "output_nr", "ndim", "T", "H", "mT",
         "is_cuda", "name", "foo"]


def _outcome(m, name: str, leaf: bool):
    x = m.ones(2, 2, requires_grad=True)
    x.sum().backward()
    t = x if leaf else x * 2
    try:
        delattr(t, name)
        got = ("ok", None if t.grad is None else t.grad.tolist()) if name == "grad" else ("ok",)
    except Exception as err:  # noqa: BLE001 - the type and text are what is compared
        got = (type(err).__name__, str(err))
    return got, (t * 3).sum().item(), t.requires_grad, t.is_leaf


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "result"])
@pytest.mark.parametrize("name", NAMES)
def test_deleting_an_attribute_is_pytorchs(name, leaf):
    assert _outcome(gt, name, leaf) == _outcome(torch, name, leaf)


def test_pytorchs_attribute_deletion_test():
    x = gt.randn((5, 5), requires_grad=True)
    (x * 2).sum().backward()
    del x.grad
    assert x.grad is None
    with pytest.raises(RuntimeError, match="Deleting tensor data is not allowed"):
        del x.data
    with pytest.raises(TypeError):
        x.data = None
    with pytest.raises(RuntimeError, match="requires_grad must be a bool"):
        del x.requires_grad
    with pytest.raises(RuntimeError, match="Deletion of _backwards_hooks not allowed!"):
        del x._backward_hooks


@pytest.mark.xfail(strict=True, reason="refusing `del t._grad_fn` needs a Tensor.__delattr__, "
                   "which routes every attribute write of every tensor through Python")
def test_deleting_the_grad_fn_slot_is_refused():
    y = gt.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Deletion of _grad_fn not allowed"):
        del y._grad_fn


def test_deletion_in_a_program(tmp_path):
    program = tmp_path / "deletion.grad"
    program.write_text(
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "(x * 2).sum().backward()\n"
        "print(x.grad)\n"
        "del x.grad\n"
        "print(x.grad)\n"
        "del x.data\n")
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", str(program)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.splitlines() == ["tensor([2., 2.])", "None"]
    assert ("deletion.grad:7:1: RuntimeError: Deleting tensor data is not allowed. Delete "
            "tensor instead!") in done.stderr
    assert "Traceback" not in done.stderr
    program.write_text("import torch\nx = torch.ones(2, requires_grad=True) * 2\ndel x._grad_fn\n")
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", str(program)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode != 0
    assert "ForbiddenError" in done.stderr and "Traceback" not in done.stderr


def test_name_reads_none_and_refuses_writes():
    """Tensor.name: None, and read-only with PyTorch's text."""
    out = []
    for m in (gt, torch):
        t = m.ones(2)
        try:
            t.name = "a"
            wrote = "ok"
        except AttributeError as err:
            wrote = str(err)
        out.append((t.name, (t * 2).name, wrote))
    assert out[0] == out[1]
