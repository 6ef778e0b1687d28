"""torch.func's gradients of an input that already needs a gradient: the result's graph
reaches the input's own node (no AliasBackward0 in between, as PyTorch's levels unwrap to
the input itself), and differentiating it again gives PyTorch's values."""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _names(fn, depth=0) -> list:
    """Every node name reachable from fn (depth first), to compare whole graphs' node sets."""
    if fn is None or depth > 12:
        return []
    out = [type(fn).__name__]
    for child, _ in fn.next_functions:
        out += _names(child, depth + 1)
    return out


FUNCS = {
    "sin_times": lambda t: (t.sin() * t).sum(),
    "cube": lambda t: (t ** 3).sum(),
    "exp_mean": lambda t: t.exp().mean(),
}


def _make(module, nonleaf: bool):
    x = module.tensor([0.5, -1.0, 2.0], dtype=module.float64, requires_grad=True)
    return x, (x * 2 if nonleaf else x)


@pytest.mark.parametrize("nonleaf", [False, True])
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_grad_of_input_needing_grad_reaches_its_node(name, nonleaf):
    got = []
    for module in (torch, gt):
        x, inp = _make(module, nonleaf)
        g = module.func.grad(FUNCS[name])(inp)
        names = _names(g.grad_fn)
        g.sum().backward()
        got.append((sorted(names), "AliasBackward0" in names, x.grad.tolist()))
    assert got[1][1] is False
    assert got[0][0] == got[1][0]
    assert got[1][2] == pytest.approx(got[0][2], rel=1e-12)


@pytest.mark.parametrize("transform", ["grad_and_value", "jacrev", "grad_aux"])
def test_other_reverse_transforms_bypass_the_alias(transform):
    for module in (torch, gt):
        x, _ = _make(module, False)
        f = FUNCS["sin_times"]
        if transform == "grad_and_value":
            results = module.func.grad_and_value(f)(x)
        elif transform == "jacrev":
            results = (module.func.jacrev(lambda t: t.sin() * t)(x),)
        else:
            results = module.func.grad(lambda t, f=f: (f(t), t.cos()), has_aux=True)(x)
        for r in results:
            assert "AliasBackward0" not in _names(r.grad_fn)


def test_nested_grad_has_no_alias_and_pytorch_values():
    values = []
    for module in (torch, gt):
        x, _ = _make(module, False)
        f = FUNCS["sin_times"]
        gg = module.func.grad(lambda t, m=module, f=f: m.func.grad(f)(t).sum())(x)
        assert "AliasBackward0" not in _names(gg.grad_fn)
        gg.sum().backward()
        values.append((gg.tolist(), x.grad.tolist()))
    assert values[1][0] == pytest.approx(values[0][0], rel=1e-12)
    assert values[1][1] == pytest.approx(values[0][1], rel=1e-12)


def test_vjp_fn_called_twice_gives_the_same_gradient():
    """The graph of the primal output stays differentiable by a later vjp_fn call."""
    x = gt.tensor([0.5, -1.0, 2.0], dtype=gt.float64, requires_grad=True)
    out, vjp_fn = gt.func.vjp(lambda t: (t.sin() * t), x)
    first = vjp_fn(gt.ones(3, dtype=gt.float64))[0].tolist()
    second = vjp_fn(gt.ones(3, dtype=gt.float64))[0].tolist()
    assert first == second
    tx = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    _, tfn = torch.func.vjp(lambda t: (t.sin() * t), tx)
    assert first == pytest.approx(tfn(torch.ones(3, dtype=torch.float64))[0].tolist(), rel=1e-12)
