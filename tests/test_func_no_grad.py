"""torch.func under torch.no_grad, compared with PyTorch 2.13: a transform inside no_grad
still differentiates its own function, but the enclosing level (a transform or plain
autograd) sees its result as a constant; vjp_fn decides when it runs."""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _nested_simple(m):
    f = m.func

    def h(x):
        with m.no_grad():
            shift = f.grad(lambda t: 0.25 * t ** 4)(x)
        return x ** 3 - shift

    x = m.tensor(1.5, dtype=m.float64, requires_grad=True)
    y = f.grad(h)(x)
    (z,) = m.autograd.grad(y, x)
    return y.item(), z.item()


def _nested_complicated(m):
    f = m.func

    def inner(x):
        with m.no_grad():
            shift = x ** 3
        return x ** 3 - shift

    def g(x):
        r1 = f.grad(inner)(x)
        with m.no_grad():
            shift = f.grad(inner)(x)
        return r1 - shift

    x = m.tensor(0.7, dtype=m.float64, requires_grad=True)
    y = f.grad(g)(x)
    (z,) = m.autograd.grad(y, x)
    return y.item(), z.item()


def _vjp_fn_under_no_grad(m):
    x = m.tensor(3.14, dtype=m.float64, requires_grad=True)
    out, fn = m.func.vjp(lambda t: t ** 2, x)
    with m.no_grad():
        (y,) = fn(m.tensor(1.0, dtype=m.float64))
    return y.requires_grad, out.requires_grad, y.item()


def _vjp_under_no_grad(m):
    x = m.tensor(3.14, dtype=m.float64, requires_grad=True)
    with m.no_grad():
        out, fn = m.func.vjp(lambda t: t ** 2, x)
    (y,) = fn(m.tensor(1.0, dtype=m.float64))
    return out.requires_grad, y.requires_grad, m.autograd.grad(y, x)[0].item()


@pytest.mark.parametrize("case", [_nested_simple, _nested_complicated, _vjp_fn_under_no_grad,
                                  _vjp_under_no_grad], ids=lambda c: c.__name__)
def test_no_grad_with_transforms_as_pytorch(case):
    assert case(gt) == pytest.approx(case(torch), rel=1e-12)
