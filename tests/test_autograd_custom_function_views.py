"""A custom Function's outputs that are views (or inputs returned as-is) may not be written in
place, with PyTorch 2.13's CreationMeta messages; and the engine's final callbacks
(Variable._execution_engine.queue_callback), compared with PyTorch."""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _functions(t):
    class IdOne(t.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.narrow(0, 0, 2)

        @staticmethod
        def backward(ctx, g):
            return t.zeros(4)

    class IdTwo(t.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            v = a.narrow(0, 0, 2)
            return v, v * 2

        @staticmethod
        def backward(ctx, g, h):
            return t.zeros(4)

    class Same(t.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g

    return IdOne, IdTwo, Same


CASES = {
    "one_output_direct": lambda F, a: F[0].apply(a).mul_(2),
    "view_of_its_view": lambda F, a: F[0].apply(a)[0:1].mul_(2),
    "base_written": lambda F, a: (lambda o: (a.mul_(2), o.sum()))(F[0].apply(a)),
    "two_outputs": lambda F, a: F[1].apply(a)[0].mul_(2),
    "input_returned_as_is": lambda F, a: F[2].apply(a).mul_(2),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_inplace_on_custom_function_view_output(case):
    msgs = []
    for t in (gt, torch):
        a = t.ones(4, requires_grad=True).clone()
        with pytest.raises(RuntimeError) as err:
            CASES[case](_functions(t), a)
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]
    assert "no_grad mode" not in msgs[0]


def _callbacks_scenario(t, depths):
    counter = {"inner": 0, "outer": 0}
    engine = t.autograd.Variable._execution_engine

    class Inner(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            if 1 in depths:
                engine.queue_callback(lambda: counter.__setitem__("inner", counter["inner"] + 1))
            return g

    class Outer(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            if 0 in depths:
                engine.queue_callback(lambda: counter.__setitem__("outer", counter["outer"] + 1))
            x = g.detach().requires_grad_()
            with t.enable_grad():
                Inner.apply(x).sum().backward()  # a backward inside a backward
            return g

    Outer.apply(t.ones(3, requires_grad=True)).sum().backward()
    return counter


@pytest.mark.parametrize("depths", [(0,), (1,), (0, 1)])
def test_queue_callback_runs_once_at_the_end_of_its_own_backward(depths):
    mine, theirs = _callbacks_scenario(gt, depths), _callbacks_scenario(torch, depths)
    assert mine == theirs
    assert sum(mine.values()) == len(depths)


def _chained_callbacks(t) -> list:
    calls = []
    engine = t.autograd.Variable._execution_engine

    def first():
        calls.append("first")
        engine.queue_callback(lambda: calls.append("second"))

    class F(t.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            engine.queue_callback(first)
            return g

    F.apply(t.ones(2, requires_grad=True)).sum().backward()
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass."):
        engine.queue_callback(lambda: None)
    return calls


def test_queue_callback_chains_and_needs_a_running_backward():
    assert _chained_callbacks(gt) == _chained_callbacks(torch) == ["first", "second"]


def _view_when_input_needs_no_grad(t):
    class ViewAs(t.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.view_as(inp)

        @staticmethod
        def backward(ctx, grad):
            return grad

    out = []
    for write in (lambda v, b: v.add_(b), lambda v, b: v.copy_(b)):
        view = ViewAs.apply(t.ones(1, 2))
        try:
            write(view, t.ones(1, requires_grad=True))
            out.append("no error")
        except RuntimeError as e:
            out.append(str(e))
    view = t.ones(1, 2).unbind()[0]
    try:
        view.copy_(t.ones(1, requires_grad=True))
        out.append("no error")
    except RuntimeError as e:
        out.append(str(e))
    return out


def test_view_output_of_a_function_whose_input_needs_no_grad():
    mine = _view_when_input_needs_no_grad(gt)
    assert mine == _view_when_input_needs_no_grad(torch)
    assert "This view was created inside a custom Function" in mine[0]


def _local_inplace(t):
    class Fn(t.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            view = inp.clone()[:3]
            view += 2  # a view written inside forward: its history is still this node's
            return view

        @staticmethod
        def backward(ctx, grad):
            return t.ones(10)

    base = t.arange(10.0, requires_grad=True)
    out = Fn.apply(base)
    out.sum().backward()
    return type(out.grad_fn).__name__, out.tolist(), base.grad.tolist()


def test_view_written_inside_forward_keeps_the_function_node():
    assert _local_inplace(gt) == _local_inplace(torch)


def _dirty_view_inputs(t):
    """A Function that writes its first input (a view) in place and marks it dirty: the
    base's history goes through CopySlices over the Function's node, so the other input
    gets its gradient, first and second order."""

    class AddInto(t.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.mark_dirty(x)
            x.add_(y)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    root = t.arange(16.0, dtype=t.float64).reshape(4, 4).requires_grad_()
    other = t.tensor([[1.0, -2.0], [0.5, 4.0]], dtype=t.float64, requires_grad=True)
    x = root.clone()
    out = AddInto.apply(x.narrow(1, 2, 2).narrow(0, 1, 2), other)
    AddInto.apply(x.narrow(1, 0, 2).narrow(0, 1, 2), other * other)
    names = [type(out.grad_fn).__name__, type(x.grad_fn).__name__]
    weights = t.arange(16.0, dtype=t.float64).reshape(4, 4)
    g_root, g_other = t.autograd.grad((x * weights).sum(), (root, other), create_graph=True)
    gg, = t.autograd.grad(g_other.sum(), other)
    checks = [t.autograd.gradcheck(lambda r, o: AddInto.apply(r.clone()[1:3, 2:], o), (root, other))]
    return names, x.tolist(), g_root.tolist(), g_other.tolist(), gg.tolist(), checks


def test_dirty_view_input_rewrites_the_base_history():
    assert _dirty_view_inputs(gt) == _dirty_view_inputs(torch)


def _stale_view_as_root(t):
    """A view taken before its base got a history (an in-place op with a tensor that needs
    a gradient) is a root of autograd.grad / backward with that history."""
    r = t.tensor([2.0], dtype=t.float64, requires_grad=True)
    x = t.ones(5, dtype=t.float64)
    v = x.select(0, 1)
    x.mul_(r)
    first = t.autograd.grad(v, r)
    x2 = t.ones(3, dtype=t.float64)
    w = x2[1:]
    x2.add_(r * r)
    w.sum().backward()
    return first[0].tolist(), r.grad.tolist(), type(w.grad_fn).__name__


def test_stale_view_is_a_root_with_its_new_history():
    assert _stale_view_as_root(gt) == _stale_view_as_root(torch)
