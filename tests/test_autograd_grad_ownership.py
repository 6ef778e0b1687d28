"""The engine's explicit record of who holds a gradient (run_engine's `shared`): the
buffers it adds into or hands to .grad are never ones a user, a hook or a custom
Function also holds. Each case would show a changed value if the engine wrote into a
gradient someone else kept; values are compared with PyTorch."""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _both(program):
    mine, theirs = program(gt), program(torch)
    assert mine == theirs
    return mine


def test_a_custom_backward_that_keeps_its_result():
    def program(t):
        kept = []

        class Keep(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                r = g * 2
                kept.append(r)
                return r

        x = t.ones(4, requires_grad=True)
        (Keep.apply(x) + x * 3).sum().backward()
        (x * 5).sum().backward()
        return [kept[0].tolist(), x.grad.tolist()]

    assert _both(program)[0] == [2.0] * 4


def test_captured_gradients_of_autograd_grad_stay_as_returned():
    def program(t):
        x = t.ones(3, requires_grad=True)
        y = x * 2
        z = (y * 3 + y * 4).sum()
        gy, gx = t.autograd.grad(z, (y, x), retain_graph=True)
        before = (gy.tolist(), gx.tolist())
        z.backward()
        (x * 10).sum().backward()
        return [before, (gy.tolist(), gx.tolist()), x.grad.tolist()]

    log = _both(program)
    assert log[0] == log[1]


def test_a_node_prehook_that_keeps_the_gradients():
    def program(t):
        x = t.ones(3, requires_grad=True)
        y = x * 2
        seen = []
        y.grad_fn.register_prehook(lambda gs: seen.append(gs[0]))
        (y * 3 + y * 4).sum().backward()
        (x * 6).sum().backward()
        return [seen[0].tolist(), x.grad.tolist()]

    assert _both(program)[0] == [7.0] * 3


def test_a_gradient_sent_down_two_edges_of_one_node():
    def program(t):
        a = t.ones(3, requires_grad=True)
        b = a * 1
        c = b + b  # AddBackward0 returns the same tensor for both inputs
        (c * 2 + b * 5).sum().backward()
        return a.grad.tolist()

    assert _both(program) == [9.0] * 3


def test_retained_and_leaf_gradients_stay_apart_over_many_passes():
    def program(t):
        x = t.ones(3, requires_grad=True)
        h = x * 1
        h.retain_grad()
        outs = []
        for k in range(3):
            (h * (k + 1) + x * 2).sum().backward(retain_graph=True)
            outs.append((h.grad.tolist(), x.grad.tolist()))
        return outs

    _both(program)
