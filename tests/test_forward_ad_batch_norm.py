"""batch_norm's tangent under forward AD is PyTorch's batch_norm_jvp, compared with
PyTorch 2.13 in every combination of training/evaluation, which of input, weight and bias
carry a tangent (and which exist), and whether the primals or the tangents require grad:
the tangent's values, its graph two nodes deep (grad_fn names, next_functions), and the
gradient of the tangent with respect to every leaf (a reverse pass through the tangent)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import gradcli.torch as gt
from gradcli.engine.forward_ad import tangent_of

torch = pytest.importorskip("torch")

rng = np.random.default_rng(7)
X, W, B = rng.standard_normal((3, 2, 2)), rng.standard_normal(2), rng.standard_normal(2)
XT, WT, BT = rng.standard_normal((3, 2, 2)), rng.standard_normal(2), rng.standard_normal(2)


def _chain(fn, depth):
    if fn is None or depth == 0:
        return None
    return type(fn).__name__, tuple(_chain(f, depth - 1) for f, _ in fn.next_functions)


def _array(module, t):
    if module is torch:  # (an efficient zero gradient cannot be read as numpy)
        return np.zeros(tuple(t.shape)) if t._is_zerotensor() else t.detach().numpy()
    return np.array(t._data)


def _run(module, training, has, tangent, primal_rg):
    fw = module.autograd.forward_ad
    leaves = []

    def leaf(values):
        t = module.tensor(values, requires_grad=True)
        leaves.append(t)
        return t

    x = leaf(X) if primal_rg else module.tensor(X)
    w = (leaf(W) if primal_rg else module.tensor(W)) if has[1] else None
    b = (leaf(B) if primal_rg else module.tensor(B)) if has[2] else None
    with fw.dual_level():
        duals = []
        for p, t, want in ((x, XT, tangent[0]), (w, WT, tangent[1]), (b, BT, tangent[2])):
            if p is not None and want:
                p = fw.make_dual(p, leaf(t) if not primal_rg else module.tensor(t))
            duals.append(p)
        out = module.nn.functional.batch_norm(
            duals[0], module.zeros(2, dtype=module.float64), module.ones(2, dtype=module.float64),
            duals[1], duals[2], training=training)
        t = fw.unpack_dual(out).tangent if module is torch else tangent_of(out)
        values = t.detach().numpy().copy() if module is torch else np.array(t._data)
        graph = _chain(t.grad_fn, 3)
        grads = None
        if t.requires_grad:
            got = module.autograd.grad((t * module.tensor(np.linspace(0.5, 2, t.numel())
                                                           .reshape(tuple(t.shape)))).sum(),
                                       leaves, allow_unused=True)
            grads = [None if g is None else _array(module, g) for g in got]
    return values, graph, grads


def _cases():
    for training, has_w, has_b in itertools.product((True, False), repeat=3):
        for tangent in itertools.product((True, False), repeat=3):
            if (tangent[1] and not has_w) or (tangent[2] and not has_b) or not any(tangent):
                continue
            for primal_rg in (True, False):
                yield pytest.param(training, (True, has_w, has_b), tangent, primal_rg,
                                   id=f"{'train' if training else 'eval'}-w{has_w:d}b{has_b:d}"
                                      f"-t{''.join(str(int(v)) for v in tangent)}"
                                      f"-{'primal' if primal_rg else 'tangent'}_rg")


@pytest.mark.parametrize(("training", "has", "tangent", "primal_rg"), list(_cases()))
def test_batch_norm_tangent_matches_pytorch(training, has, tangent, primal_rg):
    values, graph, grads = _run(gt, training, has, tangent, primal_rg)
    e_values, e_graph, e_grads = _run(torch, training, has, tangent, primal_rg)
    np.testing.assert_allclose(values, e_values, rtol=1e-7, atol=1e-7)
    assert np.array_equal(np.signbit(values), np.signbit(e_values))
    assert graph == e_graph
    assert (grads is None) == (e_grads is None)
    for g, e in zip(grads or (), e_grads or (), strict=True):
        assert (g is None) == (e is None)
        if e is not None:
            np.testing.assert_allclose(g, e, rtol=1e-7, atol=1e-7)


def test_batch_norm_tangent_float32():
    """A float32 batch keeps its dtype in the tangent and PyTorch's values."""

    def run(module):
        fw = module.autograd.forward_ad
        x = module.tensor(X.astype(np.float32))
        with fw.dual_level():
            d = fw.make_dual(x, module.tensor(XT.astype(np.float32)))
            out = module.nn.functional.batch_norm(d, None, None, module.tensor(W.astype(
                np.float32)), None, training=True)
            t = fw.unpack_dual(out).tangent if module is torch else tangent_of(out)
            return t.dtype, (t.numpy() if module is torch else np.array(t._data))

    (dt, got), (edt, expected) = run(gt), run(torch)
    assert str(dt) == str(edt)
    np.testing.assert_allclose(got, expected, rtol=1.3e-6, atol=1e-5)
