"""The create_graph nodes of hardswish, selu/celu (elu_backward), glu, soft_margin_loss and
prelu differentiate as PyTorch's do on ordinary values (second and third derivatives,
several reductions), and on the edge values (inf, nan, +-0, huge) where the chain rule
through a formula and PyTorch's closed forms part ways: elu_backward's, glu_backward's,
soft_margin_loss_backward's and _prelu_kernel_backward's own backward are derivatives.yaml's
formulas term by term (an inf times a 0 of a mask is a nan there, as in PyTorch)."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402

ORDINARY = [-3.5, -3.0, -1.25, -0.0, 0.0, 0.4, 2.9, 3.0, 7.0]
EDGES = [1.0, math.inf, 1e30, 2.0, 1e-45, -0.0, -math.inf, math.nan, -1e30, -2.0]


def _f(lib, name):
    F = lib.nn.functional
    return {
        "hardswish": lambda a: F.hardswish(a * 2),
        "selu": lambda a: lib.selu(a),
        "celu": lambda a: lib.celu(a, 0.7),
        "glu": lambda a: F.glu(lib.cat([a, a.cos()], -1)),
        "soft_margin_mean": lambda a: F.soft_margin_loss(a, lib.ones_like(a)) * a.sum(),
        "soft_margin_none": lambda a: F.soft_margin_loss(a, -lib.ones_like(a),
                                                         reduction="none"),
        "prelu": lambda a: (lib.prelu(a.reshape(1, 1, -1),
                                      lib.tensor([0.25], dtype=a.dtype)) ** 2).reshape(-1),
    }[name]


def _second_and_third(lib, name, values, dtype):
    a = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
    y = _f(lib, name)(a)
    weight = a * 0.5 + 1 if y.shape == a.shape else lib.ones_like(y)
    g, = lib.autograd.grad(y, a, weight, create_graph=True)
    gg, = lib.autograd.grad(g.sum(), a, create_graph=True, allow_unused=True)
    third = None
    if gg is not None and gg.requires_grad:
        third, = lib.autograd.grad(gg.sum(), a, allow_unused=True)
    return [None if t is None else (t.detach().tolist(), t.grad_fn.name() if t.grad_fn else None)
            for t in (g, gg, third)]


def _same(ours, theirs, signed):
    for o, t in zip(ours, theirs):
        if o is None or t is None:
            assert o is t
            continue
        assert o[1] == t[1]
        a, b = np.asarray(o[0], float), np.asarray(t[0], float)
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6, equal_nan=True)
        if signed:
            zeros = b == 0
            assert (np.signbit(a[zeros]) == np.signbit(b[zeros])).all()


NAMES = ["hardswish", "selu", "celu", "glu", "soft_margin_mean", "soft_margin_none", "prelu"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_higher_derivatives_on_ordinary_values(name, dtype):
    _same(_second_and_third(G, name, ORDINARY, dtype),
          _second_and_third(torch, name, ORDINARY, dtype), signed=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_second_derivative_on_edge_values(name, dtype):
    ours = _second_and_third(G, name, EDGES, dtype)[:2]
    theirs = _second_and_third(torch, name, EDGES, dtype)[:2]
    _same(ours, theirs, signed=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["selu", "celu", "glu", "soft_margin_mean", "soft_margin_none"])
def test_third_derivative_on_edge_values(name, dtype):
    # the double backward's own graph (elu_backward, glu_backward, soft_margin_loss_backward
    # nodes recorded by the explicit formulas) differentiates as PyTorch's on the edges too
    _same(_second_and_third(G, name, EDGES, dtype), _second_and_third(torch, name, EDGES, dtype),
          signed=False)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_soft_margin_double_backward_of_grad_output(reduction):
    # the gradient along grad_output (soft_margin_loss_double_backward_grad_output): for a
    # reduced loss the sum of the incoming gradient against the backward of ones
    def run(lib):
        x = lib.tensor([0.5, -2.0, 3.0, -0.0], dtype=lib.float64, requires_grad=True)
        t = lib.tensor([1.0, -1.0, -1.0, 1.0], dtype=lib.float64)
        y = lib.nn.functional.soft_margin_loss(x, t, reduction=reduction)
        g = lib.ones_like(y).requires_grad_()
        gx, = lib.autograd.grad(y, x, g, create_graph=True)
        return [v.tolist() for v in lib.autograd.grad((gx * x.detach()).sum(), (g, x))]
    ours, theirs = run(G), run(torch)
    np.testing.assert_allclose(np.asarray(ours[0]), np.asarray(theirs[0]), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ours[1]), np.asarray(theirs[1]), rtol=1e-12)


def test_empty_soft_margin_mean_backward():
    # 1/numel of an empty input is ATen's inf, never a Python ZeroDivisionError
    for lib in (G, torch):
        x = lib.zeros(0, requires_grad=True)
        lib.nn.functional.soft_margin_loss(x, lib.ones_like(x)).backward()
        assert x.grad.shape == (0,)
