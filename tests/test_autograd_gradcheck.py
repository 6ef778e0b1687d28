"""gradcheck / gradgradcheck diagnostics and the torch.autograd.gradcheck module, vs PyTorch."""

from __future__ import annotations

import pytest
from scenario_log import attempt as _attempt
from scenario_log import same_recording_warnings as _same

torch = pytest.importorskip("torch")


def test_mismatch_message_and_error_class():
    def scenario(t, log):
        from importlib import import_module

        gc_mod = import_module(f"{t.__name__}.autograd.gradcheck")

        def wrong(x):
            y = x.clone()
            y.register_hook(lambda g: g + 1e-2)
            return y

        x = t.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=t.float64, requires_grad=True)
        try:
            t.autograd.gradcheck(wrong, (x,))
        except gc_mod.GradcheckError as e:
            log.append(("GradcheckError", isinstance(e, RuntimeError), str(e)))
        log.append(t.autograd.gradcheck(wrong, (x,), raise_exception=False))

        def boom(x):
            raise RuntimeError("Not a GradcheckError!")

        _attempt(log, lambda: t.autograd.gradcheck(boom, (x,), raise_exception=False))
        log.append(t.autograd.gradcheck(lambda a: (a * a).sum(), x))

    log = _same(scenario)
    assert "Jacobian mismatch for output 0 with respect to input 0" in log[0]


def test_diagnostics():
    def scenario(t, log):
        one = t.ones(1, dtype=t.float64, requires_grad=True)
        # no differentiable output but a numerical gradient
        _attempt(log, lambda: t.autograd.gradcheck(lambda x: t.tensor([x.item()], dtype=t.float64), one))
        log.append(t.autograd.gradcheck(lambda x: (), (one,)))

        def grows(x):
            return t.cat([x, x]) if bool((x >= 1).all()) else x

        _attempt(log, lambda: t.autograd.gradcheck(grows, (one,)))

        def narrows(x):
            return x.to(t.float32) if bool((x >= 1).all()) else x

        _attempt(log, lambda: t.autograd.gradcheck(narrows, (one,)))

        def strict_hook(x):
            def hook(g):
                if g is None:
                    raise RuntimeError("x is undefined")

            y = x.clone()
            y.register_hook(hook)
            return y

        _attempt(log, lambda: t.autograd.gradcheck(strict_hook, (one,)))
        log.append(t.autograd.gradcheck(strict_hook, (one,), check_undefined_grad=False))
        _attempt(log, lambda: t.autograd.gradcheck(lambda x: x * 2, (t.ones(2, dtype=t.float64),)))
        log.append(t.autograd.gradcheck(lambda x: x * 2, (t.ones(2, requires_grad=True),)))

    log = _same(scenario)
    assert any("Numerical gradient for function expected to be zero" in e for e in log)
    assert any("same shape when inputs are perturbed" in e for e in log)
    assert any("handle undefined output grads" in e for e in log)


def test_nondeterministic_backward():
    def scenario(t, log):
        class Jitter(t.autograd.Function):
            @staticmethod
            def forward(ctx, x, jitter):
                ctx.jitter = jitter
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                Jitter.calls += 1
                return g * (1 + ctx.jitter * (Jitter.calls % 2)), None

        Jitter.calls = 0
        x = t.ones(3, dtype=t.float64, requires_grad=True)
        _attempt(log, lambda: t.autograd.gradcheck(lambda a: Jitter.apply(a, 1e-6), (x,)))
        log.append(t.autograd.gradcheck(lambda a: Jitter.apply(a, 1e-6), (x,), nondet_tol=1e-5))

    log = _same(scenario)
    assert "Backward is not reentrant" in log[0]


def test_deprecated_jacobian_helpers():
    def scenario(t, log):
        from importlib import import_module

        gc_mod = import_module(f"{t.__name__}.autograd.gradcheck")
        a = t.tensor([[0.5, 1.5], [2.0, -1.0]], dtype=t.float64, requires_grad=True)
        b = t.tensor([[1.0, 0.0], [3.0, 2.0]], dtype=t.float64, requires_grad=True)

        def fn(inputs):
            return 2 * inputs[0] + inputs[1], inputs[0] + 2 * inputs[1]

        log.append(gc_mod.get_numerical_jacobian(fn, (a, b), eps=1e-6))
        log.append(gc_mod.get_numerical_jacobian(fn, (a, b), target=(b,), eps=1e-6))
        _attempt(log, lambda: gc_mod.get_numerical_jacobian(fn, (a, b), grad_out=2.0))
        jac, reentrant, sizes_ok, types_ok = gc_mod.get_analytical_jacobian((a, b), fn((a, b))[0])
        log += [jac, reentrant, sizes_ok, types_ok]

    _same(scenario)


def test_gradgradcheck_passes_and_fails():
    def scenario(t, log):
        x = t.tensor([0.3, -0.8], dtype=t.float64, requires_grad=True)
        go = t.tensor([1.0, 0.5], dtype=t.float64, requires_grad=True)
        log.append(t.autograd.gradgradcheck(lambda a: a.sin() * a, (x,), (go,)))

        class FirstOnly(t.autograd.Function):  # backward right, its own derivative wrong
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a ** 3

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return g * 3 * a.detach() ** 2

        log.append(t.autograd.gradcheck(FirstOnly.apply, (x,)))
        log.append(t.autograd.gradgradcheck(FirstOnly.apply, (x,), (go,), raise_exception=False))

    assert _same(scenario) == ["True", "True", "False"]
