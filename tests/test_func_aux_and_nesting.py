"""torch.func: what grad/vjp/jacrev hand back as aux (the caller's own tensor, views that
stay views) and the graph of grad(grad(f)), compared with PyTorch 2.13."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

AUX = {
    "input": lambda x: ((x ** 2).sum(), x),
    "input_slice": lambda x: ((x ** 2).sum(), x[1:]),
    "input_reshape": lambda x: ((x ** 2).sum(), x.view(3, 1)),
    "input_view_of_view": lambda x: ((x ** 2).sum(), x.unsqueeze(0).t()),
    "intermediate_view": lambda x: ((x ** 2).sum(), (x * 2)[0]),
    "intermediate": lambda x: ((x ** 2).sum(), x.sin()),
    "nested": lambda x: ((x ** 2).sum(), (x[0], {"a": x.view(-1)})),
}


def _aux_facts(module, name: str, requires_grad: bool, transform: str):
    x = module.tensor([0.5, -1.0, 2.0], requires_grad=requires_grad)
    f = AUX[name]
    if transform == "grad":
        _, aux = module.func.grad(f, has_aux=True)(x)
    elif transform == "jacrev":
        _, aux = module.func.jacrev(f, has_aux=True)(x)
    else:
        _, _, aux = module.func.vjp(f, x, has_aux=True)
    leaves = aux if isinstance(aux, tuple) else (aux,)
    leaves = [leaves[0], leaves[1]["a"]] if name == "nested" else list(leaves)
    facts = []
    for leaf in leaves:
        base = leaf._base
        facts.append((leaf is x, None if base is None else base is x, repr(leaf),
                      leaf.requires_grad, leaf.is_leaf))
        if not leaf.requires_grad:
            leaf.add_(1)  # (a view of the caller's tensor writes into it)
    facts.append(repr(x))
    return facts


@pytest.mark.parametrize("transform", ["grad", "jacrev", "vjp"])
@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", sorted(AUX))
def test_aux_outputs_are_unwrapped_as_pytorch(name, requires_grad, transform):
    expected = _aux_facts(torch, name, requires_grad, transform)
    assert _aux_facts(gt, name, requires_grad, transform) == expected


SECOND = {
    "sin_times_square": lambda x: x.sin() * x ** 2,
    "exp": lambda x: x.exp(),
    "cube_sum": lambda x: (x ** 3).sum(),
    "tanh_sum": lambda x: x.tanh().sum() * 2,
}


def _second_grad(module, name: str, shape):
    x = module.tensor(np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape),
                      requires_grad=True)
    f = SECOND[name]
    g = module.func.grad(lambda y: module.func.grad(lambda z: f(z).sum())(y).sum())(x)
    (g * 1.5).sum().backward()
    return (repr(g), type(g.grad_fn).__name__,
            [None if fn is None else type(fn).__name__ for fn, _ in g.grad_fn.next_functions],
            x.grad.tolist())


@pytest.mark.parametrize("shape", [(), (3,)])
@pytest.mark.parametrize("name", sorted(SECOND))
def test_grad_of_grad_ends_in_the_functions_last_op(name, shape):
    got = _second_grad(gt, name, shape)
    expected = _second_grad(torch, name, shape)
    assert got[:2] == expected[:2]
    assert got[2][0] == expected[2][0]
    np.testing.assert_allclose(got[3], expected[3], rtol=1e-6)
