"""Forward AD of the matrix products (mm, addmm, bmm, mv, dot, addmv, baddbmm, and matmul
and linear built on them) by derivatives.yaml's product-rule formulas on the op table:
PyTorch 2.13's tangent values, dtype, strides and grad_fn, for every subset of the inputs
carrying a tangent, with and without primals that need a gradient; the formulas (not the
generic double-vjp rule) compute them."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as gt
import gradcli.torch.autograd.forward_ad as gfw
from gradcli.engine import forward_ad as engine_fwad

torch = pytest.importorskip("torch")
tfw = torch.autograd.forward_ad

CASES = {
    "mm": (lambda m, a, b: m.mm(a, b), [(3, 4), (4, 5)]),
    "mv": (lambda m, a, b: m.mv(a, b), [(3, 4), (4,)]),
    "dot": (lambda m, a, b: m.dot(a, b), [(4,), (4,)]),
    "bmm": (lambda m, a, b: m.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    "vector_at_matrix": (lambda m, a, b: a @ b, [(4,), (4, 5)]),
    "addmm": (lambda m, c, a, b: m.addmm(c, a, b), [(5,), (3, 4), (4, 5)]),
    "addmm_scaled": (lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2.0),
                     [(3, 5), (3, 4), (4, 5)]),
    "linear_vector": (lambda m, x, w, b: m.nn.functional.linear(x, w, b), [(4,), (3, 4), (3,)]),
    "linear_batch": (lambda m, x, w, b: m.nn.functional.linear(x, w, b), [(2, 4), (3, 4), (3,)]),
    "baddbmm": (lambda m, c, a, b: m.baddbmm(c, a, b, beta=0.5, alpha=2.0),
                [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    "addmv": (lambda m, c, a, b: m.addmv(c, a, b, alpha=3.0), [(3,), (3, 4), (4,)]),
}


def _tangent(module, fw, fn, primals, tangents, mask, requires_grad):
    with fw.dual_level():
        args = []
        for i, (p, t) in enumerate(zip(primals, tangents, strict=True)):
            x = module.tensor(p, requires_grad=requires_grad)
            if mask >> i & 1:
                x = fw.make_dual(x, module.tensor(t))
            args.append(x)
        t = fw.unpack_dual(fn(module, *args)).tangent
        return (t.detach().numpy().copy(), str(t.dtype), t.stride(),
                type(t.grad_fn).__name__ if t.grad_fn is not None else None)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_tangents_are_pytorchs(name, dtype, requires_grad):
    fn, shapes = CASES[name]
    rng = np.random.default_rng(len(name))
    primals = [rng.standard_normal(s).astype(dtype) for s in shapes]
    tangents = [rng.standard_normal(s).astype(dtype) for s in shapes]
    tangents[0].flat[0] = 0.0  # (a zero tangent entry: its products' signs of zero)
    for mask in range(1, 2 ** len(shapes)):
        want = _tangent(torch, tfw, fn, primals, tangents, mask, requires_grad)
        got = _tangent(gt, gfw, fn, primals, tangents, mask, requires_grad)
        assert got[1:] == want[1:], (mask, got[1:], want[1:])
        torch.testing.assert_close(torch.from_numpy(got[0]), torch.from_numpy(want[0]))


@pytest.mark.parametrize("name", ["mm", "addmm", "bmm", "mv", "dot", "baddbmm", "addmv"])
def test_the_formulas_compute_them(name, monkeypatch):
    """No double vjp (the generic rule): the op table's formula makes the tangent."""
    def refused(*args):
        raise AssertionError("generic rule used")

    monkeypatch.setattr(engine_fwad, "jvp_of_op", refused)
    fn, shapes = CASES[name]
    rng = np.random.default_rng(1)
    primals = [rng.standard_normal(s) for s in shapes]
    tangents = [rng.standard_normal(s) for s in shapes]
    for mask in range(1, 2 ** len(shapes)):
        _tangent(gt, gfw, fn, primals, tangents, mask, True)


def test_hessian_of_a_linear_tanh_layer_is_pytorchs():
    rng = np.random.default_rng(7)
    w, b, x = (rng.standard_normal(s).astype(np.float32) for s in ((6, 5), (6,), (5,)))

    def predict(module):
        return lambda w, b, x: module.nn.functional.linear(x, w, b).tanh()

    want = torch.func.hessian(predict(torch), argnums=2)(*map(torch.tensor, (w, b, x)))
    got = gt.func.hessian(predict(gt), argnums=2)(*map(gt.tensor, (w, b, x)))
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype) == str(want.dtype)
    torch.testing.assert_close(torch.from_numpy(got.numpy().copy()), want)
