"""A convolution's gradient under create_graph, compared with PyTorch 2.13's graph.

PyTorch records one ConvolutionBackwardBackward0 node per convolution backward whose
inputs are grad_output, input and weight: every gradient (the bias's too) hangs off it with
its output number, a weight gradient requires grad when only the weight does, and a
gradient differentiated along an input it does not depend on gives None. These scenarios
check the names, the output numbers, the next_functions, requires_grad, the values, and
the second derivatives (or their absence), for the 1d/2d/3d and transposed forms."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

# (functional name, input shape, weight shape, keyword arguments)
FORMS = [
    ("conv1d", (2, 2, 7), (3, 2, 3), {"stride": 2, "padding": 1}),
    ("conv2d", (1, 2, 5, 6), (2, 1, 2, 3), {"groups": 2, "dilation": (1, 2)}),
    ("conv3d", (1, 1, 3, 4, 3), (2, 1, 2, 2, 2), {"padding": 1}),
    ("conv_transpose1d", (1, 2, 4), (2, 3, 3), {"stride": 2}),
    ("conv_transpose2d", (2, 2, 3, 3), (2, 1, 2, 2), {"padding": 1}),
]
NEEDS = [n for n in itertools.product((False, True), repeat=3) if n[0] or n[1]]


def _fn_name(fn):
    return None if fn is None else type(fn).__name__


def _scenario(T, form, needs, rng_seed):
    name, xs, ws, kw = form
    rng = np.random.default_rng(rng_seed)
    arrays = [rng.standard_normal(xs), rng.standard_normal(ws),
              rng.standard_normal(ws[1] if "transpose" in name else ws[0])]
    x, w, b = (T.tensor(a, dtype=T.float64, requires_grad=r) for a, r in zip(arrays, needs))
    y = getattr(T.nn.functional, name)(x, w, b, **kw)
    wanted = [t for t in (x, w, b) if t.requires_grad]
    grads = T.autograd.grad((y * y.detach().cos()).sum(), wanted, create_graph=True)
    seen = []
    for g in grads:
        fn = g.grad_fn
        seen.append((g.requires_grad, _fn_name(fn), g.output_nr if fn is not None else None,
                     None if fn is None else [(_fn_name(n), i) for n, i in fn.next_functions],
                     np.round(g.detach().numpy(), 9).tolist()))
    same_node = [g.grad_fn is grads[0].grad_fn for g in grads]
    second = []
    for g in grads:
        if not g.requires_grad:
            second.append("no graph")
            continue
        got = T.autograd.grad((g * g.detach().sin()).sum(), wanted, allow_unused=True,
                              retain_graph=True)
        second.append([None if s is None else np.round(s.numpy(), 7).tolist() for s in got])
    return seen, same_node, second


@pytest.mark.parametrize("form", FORMS, ids=[f[0] for f in FORMS])
@pytest.mark.parametrize("needs", NEEDS, ids=["".join("xwb"[i] for i in range(3) if n[i])
                                              for n in NEEDS])
def test_create_graph_gradient_is_one_node_as_pytorch(form, needs):
    assert _scenario(gt, form, needs, 7) == _scenario(torch, form, needs, 7)


def test_weight_gradient_of_a_constant_input_differentiates_to_nothing():
    """conv(x, w) with only w requiring grad: the weight gradient has a graph (its node
    takes w) but does not depend on w, so w.grad stays None after its backward."""
    for T in (gt, torch):
        x = T.tensor([[[1.0, -2.0, 0.5, 3.0]]])
        w = T.tensor([[[0.25, -1.0]]], requires_grad=True)
        gw, = T.autograd.grad(T.nn.functional.conv1d(x, w).sum(), w, create_graph=True)
        assert type(gw.grad_fn).__name__ == "ConvolutionBackwardBackward0"
        assert T.autograd.grad(gw.sum(), w, allow_unused=True, retain_graph=True) == (None,)
        gw.sum().backward()
        assert w.grad is None
