"""torch.autograd.Function (both styles), its ctx, node and errors, against PyTorch 2.13.

Each scenario runs with gradcli.torch and with torch; the logs (printed values, node
names, error texts) must be identical, and each scenario asserts its key fact too.
"""

from __future__ import annotations

import warnings

import pytest
from scenario_log import attempt as _attempt
from scenario_log import same_ignoring_warnings as _same

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _cube(t):
    class Cube(t.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x * x * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g * ctx.k, None

    return Cube


def test_forward_backward_node_and_saved_tensors():
    def scenario(t, log):
        Cube = _cube(t)
        x = t.tensor([1.0, -2.0, 0.5], requires_grad=True)
        y = Cube.apply(x, 2)
        log += [y, y.grad_fn, y.grad_fn.name(), type(y.grad_fn).__name__, y.grad_fn.next_functions,
                y.grad_fn.needs_input_grad, y.grad_fn.saved_tensors, y.grad_fn.k, y.requires_grad,
                y.is_leaf]
        y.sum().backward()
        log.append(x.grad)
        _attempt(log, lambda: y.sum().backward())  # saved tensors freed
        _attempt(log, lambda: y.grad_fn.saved_tensors)
        with t.no_grad():
            log.append(Cube.apply(x, 2))
        log.append(Cube.apply(x.detach(), 2).grad_fn)
        log.append(Cube.apply(x, k=3))

    log = _same(scenario)
    assert "grad_fn=<CubeBackward>" in log[0]
    assert log[2] == "CubeBackward"


def test_setup_context_style_and_kwargs():
    def scenario(t, log):
        class Scale(t.autograd.Function):
            @staticmethod
            def forward(x, k):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, k = inputs
                ctx.save_for_backward(x, output)
                ctx.k = k

            @staticmethod
            def backward(ctx, g):
                x, out = ctx.saved_tensors
                return g * ctx.k + 0 * out, None

        x = t.tensor([1.0, 2.0], requires_grad=True)
        y = Scale.apply(x, 3.0)
        log.append(y)
        y.sum().backward()
        log.append(x.grad)

    assert _same(scenario)[-1] == "tensor([3., 3.])"


def test_double_backward_and_gradcheck():
    def scenario(t, log):
        class Legendre3(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return 0.5 * (5 * x ** 3 - 3 * x)

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 1.5 * (5 * x ** 2 - 1)

        class Exp(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                result = x.exp()
                ctx.save_for_backward(result)  # an output: unpacked with this node as grad_fn
                return result

            @staticmethod
            def backward(ctx, g):
                (result,) = ctx.saved_tensors
                return g * result

        x = t.tensor([0.5, -0.25, 2.0], dtype=t.float64, requires_grad=True)
        for fn in (Legendre3, Exp):
            y = fn.apply(x)
            (g,) = t.autograd.grad(y.sum(), x, create_graph=True)
            log.append(g)
            x.grad = None
            g.sum().backward()
            log.append(x.grad)
            log.append(t.autograd.gradcheck(fn.apply, (x,)))
            log.append(t.autograd.gradgradcheck(fn.apply, (x,)))

    log = _same(scenario)
    assert log.count("True") == 4


def test_backward_errors():
    def scenario(t, log):
        def fn(backward, n_args=1):
            class Bad(t.autograd.Function):
                @staticmethod
                def forward(ctx, x, *rest):
                    return x * 2

            Bad.backward = staticmethod(backward)
            return lambda x: Bad.apply(x, *([1] * (n_args - 1)))

        x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        cases = [
            fn(lambda ctx, g: g, 2),  # too few gradients
            fn(lambda ctx, g: t.ones(2, 2)),  # wrong shape
            fn(lambda ctx, g: 3),  # not a tensor
            fn(lambda ctx, g: (g, g), 2),  # a gradient for a non-tensor input
            fn(lambda ctx, g: (g, None, None)),  # extra Nones are dropped
            fn(lambda ctx, g: g.sum()),  # not expandable
            fn(lambda ctx, g: t.ones(1)),  # expandable: summed to the input's shape
            fn(lambda ctx, g: g.double()),  # cast to the input's dtype
        ]
        for case in cases:
            x.grad = None
            _attempt(log, lambda case=case: case(x).sum().backward())
            log.append(x.grad)

    log = _same(scenario)
    assert any("incorrect number of gradients" in entry for entry in log)
    assert any("invalid gradient at index 0" in entry for entry in log)


def test_saved_tensor_modified_in_place():
    def scenario(t, log):
        class Keep(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * 2

        x = t.tensor([1.0, 2.0], requires_grad=True)
        z = x * 1
        y = Keep.apply(z)
        with t.no_grad():
            y.add_(1)
        _attempt(log, lambda: y.sum().backward())
        z = x * 1
        y = Keep.apply(z)
        with t.no_grad():
            z.add_(1)
        _attempt(log, lambda: y.sum().backward())

    log = _same(scenario)
    assert "output 0 of Keep," in log[0] and "output 0 of Mul," in log[1]


def test_inputs_returned_dirty_and_non_differentiable_outputs():
    def scenario(t, log):
        class Same(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        class Double(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class Split(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                a, b = x * 2, x > 1
                ctx.mark_non_differentiable(b)
                return a, b

            @staticmethod
            def backward(ctx, ga, gb):
                log.append(gb)
                return ga

        x = t.tensor([1.0, 2.0], requires_grad=True)
        y = Same.apply(x)
        log += [y is x, y._base is x, y.grad_fn, y.requires_grad]
        _attempt(log, lambda: Double.apply(t.tensor([1.0, 2.0], requires_grad=True)))
        z = x * 1
        w = Double.apply(z)
        log += [w is z, z.grad_fn, z._version]
        w.sum().backward()
        log.append(x.grad)
        a, b = Split.apply(x)
        log += [a, b, b.requires_grad]
        a.sum().backward()
        log.append(x.grad)

    log = _same(scenario)
    assert "a leaf Variable that requires grad" in " ".join(log)


def test_materialize_grads_and_multiple_outputs():
    def scenario(t, log):
        def make(materialize):
            class Two(t.autograd.Function):
                @staticmethod
                def forward(ctx, x, k):
                    ctx.set_materialize_grads(materialize)
                    return x * 2, k, x * 3

                @staticmethod
                def backward(ctx, g1, gk, g2):
                    log.append((g1, gk, g2))
                    return (g1 if g1 is not None else 0) * 2, None

            return Two

        x = t.tensor([1.0, 2.0], requires_grad=True)
        for materialize in (True, False):
            a, k, b = make(materialize).apply(x, 7)
            log += [k, a.grad_fn is b.grad_fn, b.grad_fn.next_functions]
            a.sum().backward()
        log.append(x.grad)

    _same(scenario)


def test_once_differentiable_and_hooks():
    def scenario(t, log):
        class Sq(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 2

            @staticmethod
            @t.autograd.function.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        x = t.tensor([1.0, 3.0], requires_grad=True)
        y = Sq.apply(x)
        y.register_hook(lambda g: g * 10)
        y.grad_fn.register_prehook(lambda gs: log.append(("pre", gs)))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi, go)))
        go = t.ones(2, requires_grad=True)
        (g,) = t.autograd.grad(y, x, go, create_graph=True)
        log += [g, g.grad_fn.name()]
        _attempt(log, lambda: g.sum().backward())
        y = Sq.apply(x)
        y.sum().backward()
        log.append(x.grad)

    log = _same(scenario)
    assert any("differentiate twice" in entry for entry in log)


def test_base_class_errors_and_warnings():
    def scenario(t, log):
        class NoBackward(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

        x = t.tensor([1.0], requires_grad=True)
        _attempt(log, lambda: NoBackward.apply(x).sum().backward())
        _attempt(log, lambda: type("NoForward", (t.autograd.Function,), {}).apply(x))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            NoBackward()
        log.append([str(w.message).split(" should")[1] for w in caught])
        log.append(isinstance(NoBackward.apply(x).grad_fn, t.autograd.function.FunctionCtx))

    log = _same(scenario)
    assert "You must implement" in log[0]


def test_explain_view_names_the_custom_step():
    from gradcli.views.walkthrough import explain_data

    Cube = _cube(gt)
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    out = Cube.apply(x, 1).sum()
    steps = explain_data(out, names={"x": x, "out": out})
    assert [s["name"] for s in steps] == ["SumBackward0", "CubeBackward", "AccumulateGrad"]
    assert "Cube.backward" in steps[1]["rule"]
    assert x.grad is None  # the dry run neither accumulates nor frees
    out.backward()
    assert x.grad.tolist() == [3.0, 12.0]
