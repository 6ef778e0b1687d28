"""torch.func's refusals, compared with PyTorch 2.13 (type and text): non-tensor aux
outputs, empty outputs, argnums checks, and requires_grad_() / retain_grad() /
torch.autograd.functional inside a transformed function."""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _cases(m):
    f = m.func
    x = m.tensor([0.5, -1.0, 2.0])
    return {
        "grad_aux_int": lambda: f.grad(lambda t: (t.sum(), 1), has_aux=True)(x),
        "grad_aux_str_in_list": lambda: f.grad(lambda t: (t.sum(), [t, "abc"]), has_aux=True)(x),
        "grad_aux_none": lambda: f.grad(lambda t: (t.sum(), None), has_aux=True)(x),
        "vjp_aux_float": lambda: f.vjp(lambda t: (t.sum(), 1.0), x, has_aux=True),
        "jvp_aux_float": lambda: f.jvp(lambda t: (t.sum(), 1.0), (x,), (x,), has_aux=True),
        "jacrev_aux_float": lambda: f.jacrev(lambda t: (t.sum(), 1.0), has_aux=True)(x),
        "vjp_none": lambda: f.vjp(lambda t: None, x),
        "vjp_empty": lambda: f.vjp(lambda t: (), x),
        "jvp_none": lambda: f.jvp(lambda t: None, (x,), (x,)),
        "jvp_empty": lambda: f.jvp(lambda t: [], (x,), (x,)),
        "jacrev_none": lambda: f.jacrev(lambda t: None)(x),
        "vjp_non_tensor": lambda: f.vjp(lambda t: (t, 1.0), x),
        "jvp_strict_independent": lambda: f.jvp(lambda t: m.ones(3), (x,), (x,), strict=True),
        "jvp_strict_dependent": lambda: f.jvp(lambda t: t * 2, (x,), (x,), strict=True)[1].sum(),
        "jvp_non_tensor": lambda: f.jvp(lambda t: (t, 1.0), (x,), (x,)),
        "argnums_negative_duplicate": lambda: f.grad(m.mul, argnums=(0, -2))(x[0], x[1]),
        "argnums_duplicate": lambda: f.grad(m.mul, argnums=(1, 1))(x[0], x[1]),
        "requires_grad_in_grad": lambda: f.grad(lambda t: t.requires_grad_().sum())(x),
        "requires_grad_false_in_grad": lambda: f.grad(lambda t: t.requires_grad_(False).sum())(x),
        "requires_grad_fresh_in_vmap": lambda: f.vmap(lambda t: m.zeros(2).requires_grad_() * t)(x),
        "requires_grad_in_jvp": lambda: f.jvp(lambda t: t.requires_grad_(), (x,), (x,)),
        "retain_grad_in_grad": lambda: f.grad(lambda t: (t.sin().retain_grad(), t.sum())[1])(x),
        "functional_vjp_in_vmap": lambda: f.vmap(
            lambda t: m.autograd.functional.vjp(lambda u: u.sin().sum(), t))(x.reshape(3, 1)),
        "functional_jacobian_in_grad": lambda: f.grad(
            lambda t: m.autograd.functional.jacobian(lambda u: u.sin().sum(), t))(x[0]),
        "requires_grad_setter_in_grad": lambda: f.grad(
            lambda t: (setattr(t, "requires_grad", True), t.sum())[1])(x),
    }


def _outcome(m, name):
    try:
        _cases(m)[name]()
    except Exception as err:  # noqa: BLE001 - the type and text are what is compared
        return type(err).__name__, str(err)
    return "ok"


@pytest.mark.parametrize("name", sorted(_cases(gt)))
def test_transform_refusals_as_pytorch(name):
    assert _outcome(gt, name) == _outcome(torch, name)


def test_methods_are_back_after_a_refused_transform():
    with pytest.raises(RuntimeError):
        gt.func.grad(lambda t: t.requires_grad_().sum())(gt.ones(2))
    t = gt.ones(2).requires_grad_()
    t.sin().retain_grad()
    assert t.requires_grad
    out = gt.autograd.functional.jacobian(lambda u: u.sin(), gt.zeros(2))
    assert out.tolist() == [[1.0, 0.0], [0.0, 1.0]]
