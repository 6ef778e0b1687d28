"""The linalg / nn.functional additions as gradcli programs see them: their results'
public names work, and nothing on them (return types, LinAlgError, the linear-map specs
behind pools and interpolation) leads out of the sandbox."""

from __future__ import annotations

import io

import pytest

from gradcli.lang import Limits
from gradcli.lang.session import run_source


def run(src):
    out, err = io.StringIO(), io.StringIO()
    code = run_source(src, "ops.grad", limits=Limits(), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_programs_use_the_new_functions():
    code, out, err = run(
        "A = torch.tensor([[2., 1.], [1., 3.]], requires_grad=True)\n"
        "r = torch.linalg.slogdet(A)\n"
        "r.logabsdet.backward()\n"
        "print(A.grad)\n"
        "Q, R = torch.linalg.qr(A)\n"
        "print(torch.linalg.eigh(A).eigenvalues)\n"
        "x = torch.nn.functional.interpolate(A.reshape(1, 1, 2, 2), scale_factor=2, "
        "mode='bilinear')\n"
        "print(x.grad_fn)\n"
        "print(r.count(r.sign))\n")
    assert code == 0, err
    assert "0.6000" in out and "UpsampleBilinear2DBackward0" in out


@pytest.mark.parametrize("attack", [
    "r = torch.linalg.slogdet(torch.eye(2))\nr.__class__",
    "r = torch.linalg.slogdet(torch.eye(2))\nr._fields",
    "torch.linalg.LinAlgError.__subclasses__()",
    "torch.linalg.LinAlgError.mro()",
    "x = torch.nn.functional.interpolate(torch.ones(1, 1, 2, requires_grad=True), size=3)\n"
    "x.grad_fn.meta",
    "x = torch.nn.functional.interpolate(torch.ones(1, 1, 2, requires_grad=True), size=3)\n"
    "x.grad_fn.op",
    "x = torch.nn.functional.max_pool3d(torch.ones(1, 1, 2, 2, 2, requires_grad=True), 2)\n"
    "x.grad_fn.saved",
    "r = torch.linalg.svd(torch.eye(2))\nr.n_fields.__class__",
])
def test_no_way_out(attack):
    code, out, err = run(attack)
    assert code in (1, 2), (code, out, err)
    assert "Traceback" not in err
    assert "not" in err  # "not allowed" / "not supported by gradcli"
