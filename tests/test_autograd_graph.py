"""torch.autograd.graph (saved-tensor hooks, gradient edges, increment_version, multi-grad
hooks, Node) and post-accumulate-grad hooks, compared with PyTorch 2.13."""

from __future__ import annotations

import pytest
from scenario_log import attempt as _attempt
from scenario_log import same as _same

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def test_saved_tensors_hooks_pack_and_unpack():
    def scenario(t, log):
        graph = t.autograd.graph

        def pack(x):
            log.append(("pack", tuple(x.shape)))
            return x * 1

        def unpack(x):
            log.append(("unpack", tuple(x.shape)))
            return x

        x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with graph.saved_tensors_hooks(pack, unpack):
            z = (x.exp() * x).sum()
        log.append("forward done")
        z.backward()
        log.append(x.grad)
        x.grad = None
        with graph.saved_tensors_hooks(lambda a: a, lambda a: a):
            y = (x ** 3).sum()
        (g,) = t.autograd.grad(y, x, create_graph=True)
        g.sum().backward()  # double backward through unpacked tensors
        log += [g, x.grad]
        with graph.save_on_cpu():
            y = (x.sin() * x).sum()
        y.backward()
        log.append(x.grad)

    log = _same(scenario)
    assert "('pack', (3,))" in log and "('unpack', (3,))" in log


def test_saved_tensors_hooks_on_custom_functions_and_errors():
    def scenario(t, log):
        graph = t.autograd.graph

        class Square(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        x = t.tensor([1.0, 2.0], requires_grad=True)
        with graph.saved_tensors_hooks(lambda a: (log.append("pack"), a)[1],
                                       lambda a: (log.append("unpack"), a)[1]):
            y = Square.apply(x)
        y.sum().backward()
        log.append(x.grad)
        with graph.saved_tensors_hooks(lambda a: a, lambda a: 3):
            y = (x * x).sum()
        _attempt(log, lambda: y.backward())
        with graph.disable_saved_tensors_hooks("no hooks here"):
            _attempt(log, lambda: graph.saved_tensors_hooks(lambda a: a, lambda a: a).__enter__())

    log = _same(scenario)
    assert log[:2] == ["pack", "unpack"]


def test_gradient_edges_and_increment_version():
    def scenario(t, log):
        graph = t.autograd.graph
        a = t.tensor([1.0, 2.0], requires_grad=True)
        b = a * 2
        edge = graph.get_gradient_edge(b)
        log += [edge, edge.node is b.grad_fn, edge.output_nr]
        log.append(t.autograd.grad((b * b).sum(), edge))
        log.append(t.autograd.grad((b * b).sum(), graph.get_gradient_edge(a)))
        _attempt(log, lambda: graph.get_gradient_edge(t.ones(1)))
        c = a * 1
        d = c * c
        graph.increment_version(c)
        _attempt(log, lambda: d.sum().backward())
        log.append(isinstance(b.grad_fn, graph.Node))

    log = _same(scenario)
    assert "(tensor([4., 8.]),)" in log


def test_multi_grad_hooks():
    def scenario(t, log):
        graph = t.autograd.graph
        t1, t2, t3 = (t.tensor([v], requires_grad=True) for v in (1.0, 2.0, 3.0))
        handle = graph.register_multi_grad_hook((t1, t2, t3), lambda gs: log.append(("all", gs)))
        (t1 * t2).sum().backward()
        (t1 * t2 * t3).sum().backward()
        handle.remove()
        (t1 * t2).sum().backward()
        graph.register_multi_grad_hook((t1, t2), lambda g: log.append(("any", g)), mode="any")
        (t1 * 2 + t2 * 3).sum().backward()
        _attempt(log, lambda: graph.register_multi_grad_hook((t1,), print, mode="bad"))

    log = _same(scenario)
    assert log[0] == "('all', [tensor([2.]), tensor([1.]), None])"


def test_post_accumulate_grad_hooks_and_accumulator_post_hooks():
    def scenario(t, log):
        p = t.tensor([1.0, 2.0], requires_grad=True)
        p.register_post_accumulate_grad_hook(lambda x: log.append(("post acc", x.grad)))
        (p * 3).sum().backward()
        (p * 3).sum().backward()
        _attempt(log, lambda: (p * 2).register_post_accumulate_grad_hook(print))
        _attempt(log, lambda: t.ones(1).register_post_accumulate_grad_hook(print))
        q = t.tensor([1.0], requires_grad=True)
        acc = (q * 1).grad_fn.next_functions[0][0]
        acc.register_hook(lambda gi, go: log.append(("acc post", gi, go)))
        (q * 5).sum().backward()
        other = t.tensor([1.0], requires_grad=True)
        (q * other).sum().backward(inputs=[other])  # q's accumulator does not run

    log = _same(scenario)
    assert log.count("('acc post', (), (tensor([5.]),))") == 1


def _hooks_entered_or_exited_inside_backward(t):
    import gc
    import weakref

    log = []

    def scope():
        def unpack(x):
            weak_ctx().__enter__()  # entered during backward, never exited
            return x

        ctx = t.autograd.graph.saved_tensors_hooks(lambda x: x, unpack)
        weak_ctx = weakref.ref(ctx)
        x = t.tensor([0.5, 1.0], requires_grad=True)
        with ctx:
            x.sin().sum().backward()
        return weakref.ref(unpack)

    gc.disable()
    try:
        log.append(scope()() is None)  # the hook entered inside backward did not outlive it
    finally:
        gc.enable()

    def exit_inside(x):
        ctx_1.__exit__()
        return x

    ctx_1 = t.autograd.graph.saved_tensors_hooks(lambda x: x, exit_inside)
    ctx_2 = t.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x)
    for _ in range(3):
        with ctx_2:
            ctx_1.__enter__()
            t.tensor([0.5, 1.0], requires_grad=True).sin().sum().backward()
    for _ in range(3):
        ctx_1.__exit__()  # more exits than enters: no error
    a = t.tensor(1.0, requires_grad=True)
    y = a.exp()
    y.grad_fn._raw_saved_result.register_hooks(lambda x: x, lambda x: x)  # no hooks left active
    log.append(y.grad_fn._saved_result.item())
    return log


def test_saved_tensors_hooks_entered_or_exited_inside_backward():
    assert _hooks_entered_or_exited_inside_backward(gt) == _hooks_entered_or_exited_inside_backward(torch)


def test_saved_tensors_hooks_pack_and_unpack_in_the_nodes_saved_order():
    """PyTorch's node packs (and unpacks) its saved tensors in its fields' order:
    MulBackward0 holds other before self, PowBackward1 the exponent first."""
    def scenario(torch, log):
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = torch.tensor([3.0, 4.0], requires_grad=True)

        def pack(x):
            log.append(("pack", x.tolist()))
            return x

        def unpack(x):
            log.append(("unpack", x.tolist()))
            return x

        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            for f in (lambda: a * b, lambda: a ** b, lambda: torch.maximum(a, b),
                      lambda: a.exp(), lambda: a / b):
                f().sum().backward()

    assert len(_same(scenario)) == 20  # (exp saves its result only)
