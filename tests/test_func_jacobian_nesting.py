"""torch.func: a jacrev of a jacrev (and deeper nestings, and jacrev of what a function
does with an inner Jacobian) gives PyTorch 2.13's values and graphs, and its passes each
differentiate one row of the inner Jacobian instead of all of them."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as gt
from gradcli.engine.ops.registry import OPS

torch = pytest.importorskip("torch")


def _predict(module):
    functional = module.nn.functional
    return lambda w, b, x: functional.linear(x, w, b).tanh()


def _inputs(module, dout: int, din: int, requires_grad: bool = False):
    rng = np.random.default_rng(din * 100 + dout)
    w = module.tensor(rng.standard_normal((dout, din)).astype(np.float32))
    b = module.tensor(rng.standard_normal(dout).astype(np.float32))
    x = module.tensor(rng.standard_normal(din).astype(np.float32), requires_grad=requires_grad)
    return w, b, x


# name -> how the transform is built from (module, predict)
NESTINGS = {
    "jacrev_jacrev": lambda m, f: m.func.jacrev(m.func.jacrev(f, argnums=2), argnums=2),
    "jacrev_jacrev_all_args": lambda m, f: m.func.jacrev(m.func.jacrev(f, argnums=(1, 2)),
                                                           argnums=(0, 2)),
    "jacrev_cubed": lambda m, f: m.func.jacrev(m.func.jacrev(m.func.jacrev(f, argnums=2),
                                                             argnums=2), argnums=2),
    "jacrev_jacfwd": lambda m, f: m.func.jacrev(m.func.jacfwd(f, argnums=2), argnums=2),
    "jacfwd_jacrev": lambda m, f: m.func.jacfwd(m.func.jacrev(f, argnums=2), argnums=2),
    "hessian": lambda m, f: m.func.hessian(f, argnums=2),
    # what the outer jacrev differentiates is not the inner Jacobian itself
    "jacrev_of_summed_jacobian": lambda m, f: m.func.jacrev(
        lambda w, b, x: m.func.jacrev(f, argnums=2)(w, b, x).sum(0), argnums=2),
    "jacrev_of_scaled_jacobian": lambda m, f: m.func.jacrev(
        lambda w, b, x: m.func.jacrev(f, argnums=2)(w, b, x) * x, argnums=2),
    "jacrev_of_jacobian_row": lambda m, f: m.func.jacrev(
        lambda w, b, x: m.func.jacrev(f, argnums=2)(w, b, x)[1], argnums=2),
    "jacrev_of_jacobian_and_value": lambda m, f: m.func.jacrev(
        lambda w, b, x: (m.func.jacrev(f, argnums=2)(w, b, x), f(w, b, x) * x.sum()),
        argnums=2),
}


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


@pytest.mark.parametrize("name", sorted(NESTINGS))
@pytest.mark.parametrize("sizes", [(3, 4), (5, 2)])
def test_nested_jacobians_match_pytorch(name, sizes):
    dout, din = sizes
    want = NESTINGS[name](torch, _predict(torch))(*_inputs(torch, dout, din))
    got = NESTINGS[name](gt, _predict(gt))(*_inputs(gt, dout, din))
    want, got = _leaves(want), _leaves(got)
    assert len(want) == len(got)
    for w, g in zip(want, got, strict=True):
        assert tuple(g.shape) == tuple(w.shape)
        assert str(g.dtype) == str(w.dtype)
        assert g.grad_fn is None and w.grad_fn is None
        torch.testing.assert_close(torch.from_numpy(g.numpy().copy()), w)


@pytest.mark.parametrize("name", ["jacrev_jacrev", "jacrev_cubed", "jacrev_of_summed_jacobian",
                                  "jacrev_of_scaled_jacobian"])
def test_nested_jacobian_keeps_the_callers_graph(name):
    """Inputs that need a gradient: the nested Jacobian keeps its graph, its grad_fn is
    PyTorch's and a backward through it gives PyTorch's third derivatives."""
    want = NESTINGS[name](torch, _predict(torch))(*_inputs(torch, 3, 4, True))
    inputs = _inputs(gt, 3, 4, True)
    got = NESTINGS[name](gt, _predict(gt))(*inputs)
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__
    torch.testing.assert_close(torch.from_numpy(got.detach().numpy().copy()), want.detach())
    x_t = _inputs(torch, 3, 4, True)
    want = NESTINGS[name](torch, _predict(torch))(*x_t)
    (want_grad,) = torch.autograd.grad((want * want).sum(), x_t[2])
    (got_grad,) = gt.autograd.grad((got * got).sum(), inputs[2])
    torch.testing.assert_close(torch.from_numpy(got_grad.numpy().copy()), want_grad)


@pytest.mark.parametrize("through", ["jacobian", "sum"])
def test_infinite_derivatives_make_nan_where_pytorch_does(through):
    """An inner row with an infinite derivative adds 0 * inf = NaN to every pass, also to
    those that differentiate other rows, as PyTorch's vmapped passes do."""

    def nested(module):
        inner = module.func.jacrev(lambda x: x.sqrt() * x[0])
        if through == "sum":
            return module.func.jacrev(lambda x: inner(x).sum(1))
        return module.func.jacrev(inner)

    x = np.array([1.0, 0.0, 4.0], dtype=np.float32)
    want = nested(torch)(torch.tensor(x))
    got = nested(gt)(gt.tensor(x))
    np.testing.assert_array_equal(np.isnan(got.numpy()), np.isnan(want.numpy()))
    np.testing.assert_array_equal(np.isinf(got.numpy()), np.isinf(want.numpy()))
    torch.testing.assert_close(torch.from_numpy(got.numpy().copy()), want, equal_nan=True)


def test_each_outer_pass_runs_one_inner_row(monkeypatch):
    """jacrev(jacrev(f)) with n inputs and n outputs: the outer passes run tanh's backward
    about n^2 times in all (one inner row each), not n^3 (every inner row every pass)."""
    calls = []
    op = OPS["tanh"]
    original = op.backward

    def counted(ctx, g):
        calls.append(1)
        return original(ctx, g)

    monkeypatch.setattr(op, "backward", counted)
    n = 12
    got = NESTINGS["jacrev_jacrev"](gt, _predict(gt))(*_inputs(gt, n, n))
    assert tuple(got.shape) == (n, n, n)
    assert len(calls) <= 3 * n * n, len(calls)
