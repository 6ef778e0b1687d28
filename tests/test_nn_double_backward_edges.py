"""The create_graph nodes of hardswish, selu/celu (elu_backward), glu, soft_margin_loss and
prelu differentiate as PyTorch's do on ordinary values (second and third derivatives,
several reductions); prelu's and hardswish's also on the edge values (inf, nan, +-0, huge)
where the chain rule through a formula and PyTorch's closed forms part ways (elu's, glu's
and soft_margin's edges are the edge sweep's known differences)."""

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
@pytest.mark.parametrize("name", ["prelu", "hardswish"])
def test_second_derivative_on_edge_values(name, dtype):
    ours = _second_and_third(G, name, EDGES, dtype)[:2]
    theirs = _second_and_third(torch, name, EDGES, dtype)[:2]
    _same(ours, theirs, signed=True)
