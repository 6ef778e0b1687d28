"""torch.autograd.functional and gradcheck under every grad mode, and hook order, vs PyTorch.

Regression tests for issue 21's two silent errors: the functional API returned all-zero
results without grad_fn under no_grad with create_graph=True (PyTorch enables grad
inside), gradcheck read a zero numerical Jacobian for functions that differentiate
inside; and backward(inputs=) on a non-leaf stored the gradient after the grad_fn
pre-hooks (b.grad 12 where PyTorch has 3).
"""

from __future__ import annotations

import pytest
from scenario_log import same as _same

torch = pytest.importorskip("torch")


FUNCTIONS = {
    "vjp": lambda t, x: t.autograd.functional.vjp(lambda a: (a * a).sum(), x, create_graph=True),
    "jvp": lambda t, x: t.autograd.functional.jvp(lambda a: a ** 3, x, t.ones(2, dtype=t.float64),
                                                   create_graph=True),
    "jacobian": lambda t, x: t.autograd.functional.jacobian(lambda a: a * a.sum(), x, create_graph=True),
    "hessian": lambda t, x: t.autograd.functional.hessian(lambda a: (a ** 3).sum(), x, create_graph=True),
    "hvp": lambda t, x: t.autograd.functional.hvp(lambda a: (a ** 3).sum(), x,
                                                   t.ones(2, dtype=t.float64), create_graph=True),
    "vhp": lambda t, x: t.autograd.functional.vhp(lambda a: (a ** 3).prod(), x,
                                                   t.tensor([1.0, -2.0], dtype=t.float64),
                                                   create_graph=True),
}


@pytest.mark.parametrize("mode", ["no_grad", "enable_grad"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_functional_create_graph_under_every_grad_mode(name, mode):
    def scenario(t, log):
        x = t.tensor([1.5, 2.0], dtype=t.float64, requires_grad=True)
        with getattr(t, mode)(), t.set_grad_enabled(mode == "enable_grad"):
            res = FUNCTIONS[name](t, x)
        for r in res if isinstance(res, tuple) else (res,):
            log.append(r)
        # the result really is differentiable: its gradient flows back to x
        last = res[-1] if isinstance(res, tuple) else res
        last.sum().backward()
        log.append(x.grad)

    log = _same(scenario)
    assert any("grad_fn" in entry for entry in log)  # not the old detached zeros


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_functional_without_create_graph_under_no_grad(name):
    def scenario(t, log):
        x = t.tensor([0.5, -1.25], dtype=t.float64, requires_grad=True)
        fn = FUNCTIONS[name]
        with t.no_grad():
            res = fn(t, x) if name in ("hessian", "jacobian") else fn(t, x)
        log.append(res)

    _same(scenario)


def test_gradcheck_of_a_function_that_differentiates_inside():
    def scenario(t, log):
        x = t.tensor([0.3, 1.1, -0.7], dtype=t.float64, requires_grad=True)

        def inner(a):
            return t.autograd.functional.jacobian(lambda b: b.sin() * b.sum(), a, create_graph=True)

        log.append(t.autograd.gradcheck(inner, (x,)))
        with t.no_grad():
            log.append(t.autograd.gradcheck(inner, (x,)))

        def wrong(a):  # a jacobian without graph: gradcheck must report a mismatch
            return t.autograd.functional.jacobian(lambda b: b.sin() * b.sum(), a.detach()).requires_grad_()

        log.append(t.autograd.gradcheck(wrong, (x,), raise_exception=False))

    assert _same(scenario) == ["True", "True", "False"]


def test_functional_argument_errors():
    cases = [
        lambda t, x: t.autograd.functional.vjp(lambda a: a, 3.0),
        lambda t, x: t.autograd.functional.jacobian(lambda a: a, (x, 2)),
        lambda t, x: t.autograd.functional.jacobian(lambda a: a.detach(), x, strict=True),
        lambda t, x: t.autograd.functional.jacobian(lambda a: a * 2, x, strict=True, vectorize=True),
        lambda t, x: t.autograd.functional.vjp(lambda a: a * 2, x, t.ones(3, dtype=t.float64)),
        lambda t, x: t.autograd.functional.hvp(lambda a: a * 2, x, t.ones(2, dtype=t.float64)),
        lambda t, x: t.autograd.functional.hvp(lambda a: (a * 2).sum(), x, t.ones(2, dtype=t.float64),
                                               strict=True),
        lambda t, x: t.autograd.functional.vhp(lambda a: (a ** 2).sum(), x, strict=True),
        lambda t, x: t.autograd.functional.hessian(lambda a: (a * 2).sum(), x, strict=True),
        lambda t, x: t.autograd.functional.jvp(lambda a: a.detach() * 2, x, t.ones(2, dtype=t.float64),
                                               strict=True),
        lambda t, x: t.autograd.functional.jacobian(lambda a, b: a * 2, (x, x * 1), strict=True),
    ]
    for case in cases:
        def scenario(t, log, case=case):
            x = t.tensor([1.0, 2.0], dtype=t.float64, requires_grad=True)
            log.append(case(t, x))

        log = _same(scenario)
        assert "Error" in log[-1]


def test_prehook_order_and_what_backward_inputs_stores():
    def scenario(t, log):
        def hook1(g):
            log.append(1)
            return g * 3

        def hook2(gs):
            log.append(2)
            return tuple(g * 2 for g in gs)

        a = t.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.grad_fn.register_prehook(hook2)
        b.register_hook(hook1)
        b.grad_fn.register_prehook(hook2)
        acc = b.grad_fn.next_functions[0][0]
        a.register_hook(hook1)
        acc.register_prehook(hook2)
        a.register_hook(hook1)
        b.sum().backward(retain_graph=True)
        log.append(a.grad)
        log.append(t.autograd.grad(b.sum(), inputs=(a,), retain_graph=True))
        b.sum().backward(inputs=(b,))
        log.append(b.grad)  # 3: the tensor hook only (PyTorch), not 12
        a.grad = None
        a.clone().sum().backward(inputs=(a,))
        log.append(a.grad)  # a leaf gets what its AccumulateGrad gets, after its pre-hook

    log = _same(scenario)
    assert "tensor(3.)" in log
