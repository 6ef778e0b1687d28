"""Undoing broadcasting in backward (registry.sum_to) builds PyTorch's graph.

Under create_graph the reduction is part of the gradient's graph, so its node
names show: a 0-d target is one plain sum (SumBackward0), a target with fewer
dims sums with keepdim then views (ViewBackward0), one with the same rank sums
with keepdim (SumBackward1). Compared with PyTorch over targets and ops.
"""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

TARGETS = [(), (1,), (1, 1), (3,), (2, 1), (1, 3)]
EXPRS = ["a * b", "a ** b", "a / b", "b - a", "torch.where(b > 0, a, b)", "a * b * a"]


def _grad(T, shape, expr):
    a = T.full(shape, 1.5, dtype=T.float64).requires_grad_(True)
    b = T.tensor([[0.5, 1.0, 2.0], [1.5, -0.5, 3.0]], dtype=T.float64, requires_grad=True)
    r = eval(expr, {"torch": T, "a": a, "b": b})  # noqa: S307 - fixed test text
    g, = T.autograd.grad(r.sum(), a, create_graph=True)
    g2 = T.autograd.grad(g.sum(), a, allow_unused=True)[0] if g.requires_grad else None
    return type(g.grad_fn).__name__ if g.grad_fn is not None else None, str(g), str(g2)


@pytest.mark.parametrize("expr", EXPRS)
@pytest.mark.parametrize("shape", TARGETS, ids=str)
def test_broadcast_gradient_graph_matches_pytorch(shape, expr):
    assert _grad(gt, shape, expr) == _grad(torch, shape, expr)
