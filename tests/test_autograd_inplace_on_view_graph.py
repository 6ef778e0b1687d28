"""In-place ops on views differentiated with create_graph, compared with PyTorch: the
graph CopySlices records (torch::autograd::CopyBackwards for the copied gradient, the
wrapped node's double backward beside it), the saved output of an in-place op on a view
(it unpacks with the view's history, so a second backward does not meet a freed node),
and threshold_'s gradient (the input before the write decides it, not the result)."""

from __future__ import annotations

import pytest
from scenario_log import same

torch = pytest.importorskip("torch")


def names(fn, depth: int) -> list:
    """The node names of the graph under `fn`, depth-first, `depth` levels deep."""
    if fn is None or depth == 0:
        return []
    return [fn.name(), [names(f, depth - 1) for f, _ in fn.next_functions]]


@pytest.mark.parametrize("threshold, value", [(0.5, 2.0), (0.5, -2.0), (0.0, 0.0)])
def test_threshold_in_place_gradient_follows_the_input(threshold, value):
    def scenario(t, log):
        x = t.tensor([0.1, 1.0, 0.5, -3.0, 0.7], requires_grad=True)
        y = t.nn.functional.threshold(x * 1, threshold, value, True)
        log.append((y.grad_fn.name(), y.tolist()))
        (y * t.arange(1.0, 6.0)).sum().backward()
        log.append(x.grad.tolist())
        x.grad = None
        z = t.threshold_(x * 2, threshold, value)
        g, = t.autograd.grad(z.sum(), x, create_graph=True)
        log.append((g.tolist(), g.grad_fn.name() if g.grad_fn is not None else None))

    same(scenario)


def test_threshold_on_view_double_backward_graph():
    def scenario(t, log):
        inputs = t.ones((1, 3, 2, 2), requires_grad=True)
        tmp = (inputs + 1).view_as(inputs)
        out = t.sigmoid(t.nn.functional.threshold(tmp, 0.0, 0.0, True))
        grad, = t.autograd.grad(out, inputs, grad_outputs=t.ones(out.size()),
                                create_graph=True, retain_graph=True)
        penalty = grad.sum()
        penalty.backward()
        top = penalty.grad_fn.next_functions[0][0]
        log.append((top.name(), type(top).__name__))
        log.append([f.name() for f, _ in top.next_functions])
        log.append([round(v, 6) for v in inputs.grad.reshape(-1).tolist()])

    same(scenario)


@pytest.mark.parametrize("op", ["relu_", "sigmoid_", "tanh_", "exp_"])
@pytest.mark.parametrize("view", ["view", "slice", "select"])
def test_saved_output_of_in_place_op_on_view_differentiates_twice(op, view):
    def scenario(t, log):
        x = t.tensor([[0.5, -1.0, 2.0], [1.5, -0.25, 0.75]], requires_grad=True)
        base = x * 2
        v = {"view": lambda: base.view(3, 2), "slice": lambda: base[:, 1:],
             "select": lambda: base[1]}[view]()
        getattr(v, op)()
        log.append((v.grad_fn.name(), base.grad_fn.name()))
        g, = t.autograd.grad((base * base).sum(), x, create_graph=True)
        log.append([round(a, 5) for a in g.reshape(-1).tolist()])
        gg, = t.autograd.grad(g.sum(), x)
        log.append([round(a, 5) for a in gg.reshape(-1).tolist()])

    same(scenario)


def test_copy_slices_create_graph_keeps_the_gradient_outside_the_view():
    def scenario(t, log):
        x = t.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
        w = t.tensor([0.5, 1.5, -1.0, 2.0], requires_grad=True)
        base = x * w
        base[1:3].mul_(w[:2])
        g = t.autograd.grad(base.pow(2).sum(), [x, w], create_graph=True)
        log.append([a.tolist() for a in g])
        log.append(g[0].grad_fn.name())
        log.append(names(g[0].grad_fn, 3))
        log.append([a.tolist() for a in t.autograd.grad(g[0].sum() + g[1].sum(), [x, w])])
        b = t.zeros(3).copy_(x[:3])
        log.append((type(b.grad_fn).__name__, b.grad_fn.name()))

    same(scenario)
