"""torch.func and user hooks: a hook registered inside a transformed function belongs to
that transform's level, as PyTorch's hook on a level's wrapper does. It fires in the
passes its transform runs and in a backward the function runs itself, not in an
enclosing transform's passes through the kept graph nor in a backward after the
transform returned; and jacrev makes no pass beyond one per row of the Jacobian (no
probe pass runs hooks or custom backward formulas)."""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _traced(module, calls):
    def f(x):
        y = x.tanh()
        y.register_hook(lambda g: calls.append("tensor hook"))
        y.grad_fn.register_prehook(lambda go: calls.append("node prehook"))
        y.grad_fn.register_hook(lambda gi, go: calls.append("node hook"))
        z = (y * y).sum()
        module.autograd.grad(z, x, retain_graph=True)  # (a backward inside f: its hooks fire)
        calls.append("inner backward done")
        return z

    return f


def _scenario(module):
    calls = []
    log = []
    f = _traced(module, calls)
    x = module.tensor([0.5, -1.0, 2.0], requires_grad=True)
    r = module.func.grad(f)(x)
    log.append(("grad", calls[:]))
    calls.clear()
    r.sum().backward()
    log.append(("backward after grad", calls[:]))
    calls.clear()
    module.func.jacrev(module.func.grad(f))(x)
    log.append(("jacrev of grad", calls[:]))
    calls.clear()
    _, vjp_fn = module.func.vjp(f, x)
    log.append(("vjp", calls[:]))
    calls.clear()
    vjp_fn(module.tensor(1.0))
    log.append(("vjp_fn", calls[:]))
    return log


def test_hooks_fire_at_their_transforms_level_as_pytorchs():
    assert _scenario(gt) == _scenario(torch)


def test_hook_replacing_the_gradient_still_applies_at_its_level():
    def f(module):
        def inner(x):
            y = x * 2
            y.register_hook(lambda g: g * 10)
            return (y * y).sum()
        return inner

    x = [0.5, -1.0, 2.0]
    want = torch.func.jacrev(torch.func.grad(f(torch)))(torch.tensor(x))
    got = gt.func.jacrev(gt.func.grad(f(gt)))(gt.tensor(x))
    torch.testing.assert_close(torch.from_numpy(got.numpy().copy()), want)


class _Printing:
    @staticmethod
    def make(module, calls):
        class Square(module.autograd.Function):
            @staticmethod
            def forward(x):
                return x * x

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                calls.append("backward")
                (x,) = ctx.saved_tensors
                return 2 * x * g

        return Square


@pytest.mark.parametrize("nesting", ["jacrev", "jacrev_jacrev"])
def test_no_pass_beyond_the_rows(nesting):
    """PyTorch runs the rows as one vmapped pass (the hook once); gradcli runs one pass per
    row and, since the probe pass became a dry run, none more: n calls for n rows, where
    an extra probe pass used to make n + 1 (and the outer passes of a nesting more)."""
    calls = []
    square = _Printing.make(gt, calls)
    hooked = []

    def f(x):
        y = x.tanh()
        y.register_hook(lambda g: hooked.append(1))
        return square.apply(y)

    x = gt.tensor([0.5, -1.0, 2.0])
    if nesting == "jacrev":
        gt.func.jacrev(f)(x)
    else:
        gt.func.jacrev(gt.func.jacrev(f))(x)
    assert len(calls) == 3 and len(hooked) == 3, (calls, hooked)


def test_hessian_runs_the_hook_once_per_column():
    """(hessian's jacfwd of a custom Function would need its vmap rule, as in PyTorch)"""
    hooked = []

    def g(x):
        y = x.tanh()
        y.register_hook(lambda g: hooked.append(1))
        return (y * y).sum()

    gt.func.hessian(g)(gt.tensor([0.5, -1.0, 2.0]))
    assert len(hooked) == 3


def test_grad_and_vjp_run_a_custom_backward_once_as_pytorch():
    for module in (torch, gt):
        calls = []
        square = _Printing.make(module, calls)
        x = module.tensor([0.5, -1.0, 2.0])
        module.func.grad(lambda x, square=square: square.apply(x).sum())(x)
        _, vjp_fn = module.func.vjp(square.apply, x)
        vjp_fn(module.ones(3))
        assert calls == ["backward", "backward"], module
