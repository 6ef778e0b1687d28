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


# --- AccumulateGrad takes over a gradient user code returned and kept no reference to
# (PyTorch's "steal"); one that is still held anywhere is copied.


def test_post_accumulate_hook_edits_show_in_the_node_post_hook():
    """The leaf's .grad is the very gradient the node's hooks produced, so an in-place
    change made by a post-accumulate-grad hook reaches the node's post-hook."""
    def program(t):
        x = t.rand(3, requires_grad=True)
        acc = x.view_as(x).grad_fn.next_functions[0][0]
        x.register_hook(lambda g: g.sub(2.0))
        acc.register_prehook(lambda gs: (gs[0].div(5.0),))

        def post_accumulate(v):
            v.grad.add_(0.5)

        x.register_post_accumulate_grad_hook(post_accumulate)

        def node_post(grad_inputs, grad_outputs):
            x.grad = grad_outputs[0].mul(10)

        acc.register_hook(node_post)
        x.sum().backward()
        return x.grad.tolist()

    assert _both(program) == [3.0, 3.0, 3.0]


def test_one_gradient_for_two_leaves_is_taken_by_the_last_only():
    def program(t):
        seen = []

        class Twice(t.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a + b

            @staticmethod
            def backward(ctx, g):
                seen.append(g.data_ptr())
                return g, g

        a = t.randn(4, 5, requires_grad=True)
        b = t.randn(4, 5, requires_grad=True)
        Twice.apply(a, b)[1][0].backward()
        pa, pb = a.grad.data_ptr(), b.grad.data_ptr()
        a.grad.add_(1)  # b.grad must not move with it
        return [pa == pb, seen[0] in (pa, pb), b.grad.sum().item() == 1.0]

    assert _both(program) == [False, True, True]


def test_a_non_contiguous_custom_gradient_is_copied():
    def program(t):
        ptrs = []

        class Spread(t.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.shape = a.shape
                return t.tensor([1.0])

            @staticmethod
            def backward(ctx, g):
                r = t.ones(1).expand(ctx.shape)
                ptrs.append(r.data_ptr())
                return r

        a = t.randn(3, 2, requires_grad=True)
        Spread.apply(a).backward()
        return [a.grad.data_ptr() == ptrs[0], a.grad.is_contiguous()]

    assert _both(program) == [False, True]


def test_a_hook_that_keeps_what_it_returns_is_not_shared():
    def program(t):
        kept = []
        x = t.ones(3, requires_grad=True)

        def keep(g):
            r = g * 2
            kept.append(r)
            return r

        x.register_hook(keep)
        (x * 1).sum().backward()
        (x * 1).sum().backward()
        return [x.grad.tolist(), kept[0].tolist()]

    assert _both(program) == [[4.0] * 3, [2.0] * 3]


def test_a_hook_returning_an_outside_tensor_leaves_it_alone():
    def program(t):
        w = t.full((3,), 7.0)
        y = t.ones(3, requires_grad=True)
        y.register_hook(lambda g: w)
        (y * 1).sum().backward()
        (y * 1).sum().backward()
        return [y.grad.tolist(), w.tolist()]

    assert _both(program) == [[14.0] * 3, [7.0] * 3]


def test_a_hook_that_stores_its_input_sees_it_unchanged():
    def program(t):
        stored = []
        x = t.ones(3, requires_grad=True)
        x.register_hook(stored.append)  # returns None: the gradient goes on as it is
        (x * 2).sum().backward()
        x.grad.mul_(100)
        return [stored[0].tolist(), x.grad.tolist()]

    assert _both(program) == [[2.0] * 3, [200.0] * 3]


def test_a_root_gradient_given_for_a_leaf_is_copied():
    def program(t):
        z = t.ones(3, requires_grad=True)
        root = t.ones(3)
        z.backward(root)
        z.grad.add_(1)
        return [root.tolist(), z.grad.tolist()]

    assert _both(program) == [[1.0] * 3, [2.0] * 3]
