"""autograd.grad / backward(inputs=) stop at the tensors they differentiate with respect to.

PyTorch captures the gradient flowing into a non-leaf input and does not run that
tensor's own grad_fn (unless another input lies below it): its node hooks do not fire
and its saved tensors may already be freed. Compared with PyTorch.
"""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _scenario(T) -> list:
    log = []

    def attempt(label, fn):
        try:
            log.append((label, str(fn())))
        except RuntimeError as err:
            log.append((label, str(err)[:60]))

    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    z, w = (y * 3).sum(), (y * 4).sum()
    y.sum().backward()  # frees ExpBackward0's saved result
    attempt("grad wrt y", lambda: T.autograd.grad(z, y, retain_graph=True))
    attempt("grad wrt [y]", lambda: T.autograd.grad(w, [y], retain_graph=True))
    attempt("grad wrt [y, x]", lambda: T.autograd.grad(w, [y, x], retain_graph=True))
    attempt("backward inputs=[y]", lambda: (y.retain_grad(), z.backward(inputs=[y]), y.grad)[2])

    h = T.tensor([1.0, 2.0], requires_grad=True)
    k = h * 1
    k.register_hook(lambda g: g * 10)
    m = (k * 4).sum()
    attempt("tensor hook, k below another target", lambda: T.autograd.grad(m, [k, h], retain_graph=True))
    attempt("tensor hook, k alone", lambda: T.autograd.grad(m, [k], retain_graph=True))
    k.grad_fn.register_prehook(lambda go: (go[0] * 100,))
    attempt("node prehook", lambda: T.autograd.grad(m, [k, h], retain_graph=True))
    attempt("backward inputs=[h]", lambda: (m.backward(inputs=[h], retain_graph=True), h.grad)[1])

    fired = []
    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: fired.append("tensor hook"))
    b.grad_fn.register_hook(lambda gi, go: fired.append("node hook"))
    b.grad_fn.register_prehook(lambda go: fired.append("node prehook"))
    attempt("hooks", lambda: (T.autograd.grad((b * b).sum(), b), fired))
    return log


def test_grad_stops_at_its_inputs():
    assert _scenario(gt) == _scenario(torch)
