"""torch.autograd.functional's forward-mode Jacobian and Hessian keep the graph PyTorch's do.

PyTorch's forward-mode jacobian (vectorize=True) does not detach its inputs: where a
tangent formula reads a primal that requires grad (t ** 2, and t * 2 too, whose formula
reads the primal through a zero tangent), the Jacobian requires grad and ends in the
reshape of the split, permuted columns; where it reads none (t.sum()) there is no graph.
Compared with PyTorch: values, grad_fn names and their next nodes."""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

CASES = {
    "square": lambda F, x1, x2: F.jacobian(lambda t: t ** 2, x1, vectorize=True,
                                           strategy="forward-mode"),
    "sum": lambda F, x1, x2: F.jacobian(lambda t: t.sum(), x1, vectorize=True,
                                        strategy="forward-mode"),
    "scaled": lambda F, x1, x2: F.jacobian(lambda t: t * 2, x1, vectorize=True,
                                           strategy="forward-mode"),
    "detached": lambda F, x1, x2: F.jacobian(lambda t: t.sin(), x1.detach(), vectorize=True,
                                             strategy="forward-mode"),
    "two_in_two_out": lambda F, x1, x2: F.jacobian(lambda t, u: (t * u, t.exp()),
                                                   (x1, x1.detach()), vectorize=True,
                                                   strategy="forward-mode"),
    "matrix": lambda F, x1, x2: F.jacobian(lambda t: t @ t, x2, vectorize=True,
                                           strategy="forward-mode"),
    "mixed_shapes": lambda F, x1, x2: F.jacobian(lambda t, u: t.sum() * u, (x2, x1),
                                                 vectorize=True, strategy="forward-mode"),
    "hessian_cube": lambda F, x1, x2: F.hessian(lambda t: (t ** 3).sum(), x1, vectorize=True,
                                                outer_jacobian_strategy="forward-mode"),
    "hessian_matrix": lambda F, x1, x2: F.hessian(lambda t: (t.exp() * t).sum(), x2,
                                                  vectorize=True,
                                                  outer_jacobian_strategy="forward-mode"),
    "hessian_create_graph": lambda F, x1, x2: F.hessian(
        lambda t: (t ** 3).sum(), x1, vectorize=True, outer_jacobian_strategy="forward-mode",
        create_graph=True),
}


def _shown(r):
    if isinstance(r, (tuple, list)):
        return [_shown(a) for a in r]
    fn = r.grad_fn
    return (r.tolist(), None if fn is None else type(fn).__name__,
            None if fn is None else [type(n).__name__ if n else None for n, _ in fn.next_functions])


def _run(T, case):
    T.manual_seed(0)
    x1 = T.randn(3, requires_grad=True)
    x2 = T.randn(2, 2, requires_grad=True)
    try:
        return _shown(CASES[case](T.autograd.functional, x1, x2))
    except (RuntimeError, NotImplementedError) as e:  # (create_graph: both refuse)
        return type(e).__name__, str(e)


@pytest.mark.parametrize("case", sorted(CASES))
def test_forward_mode_jacobian_graph_as_pytorch(case):
    assert _run(gt, case) == _run(torch, case)
