"""Random compositions of ops, against PyTorch 2.13.

The op-table tests check each op alone; here hypothesis builds chains of one to
four ops (unary, reductions, views, indexing, broadcasting binaries, matmul) over
0-d, vector and matrix float64 inputs, and the value, dtype, shape, grad_fn name,
requires_grad and the gradients of both inputs (or the exact error) must agree.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradcli.torch as gt

UNARY = [
    "x.exp()", "x.sin()", "x.tanh()", "x.sigmoid()", "x.relu()", "x.abs()", "x * 2", "x + 1", "-x",
    "x.sum(0)", "x.mean(-1, keepdim=True)", "x.max(0)[0]", "x.amax(-1)",
    "x.t() if x.dim() == 2 else x", "x.unsqueeze(0)", "x.squeeze()", "x.flip(0)", "x.cumsum(0)",
    "x.softmax(-1)", "x.log_softmax(0)", "x[0]", "x[..., :1]", "x.reshape(-1)",
    "x.clamp(-0.5, 0.5)", "x.pow(2)", "x.norm(dim=0)", "x.std(0)", "x.logsumexp(0)",
    "torch.cat([x, x], 0)", "torch.stack([x, x], -1)", "x.expand(2, *x.shape)",
    "x.repeat(2, *([1] * x.dim()))", "x.prod(0)", "x.square()", "x.sum()", "x.var()",
    "x.transpose(0, -1)", "x.view(-1)", "x[None]", "x.clone()", "x.abs().sqrt()",
]
BINARY = [
    "x + y", "x * y", "x - y", "x / (y.abs() + 1)", "torch.maximum(x, y)", "torch.where(x > y, x, y)",
    "x @ y.t() if x.dim() == 2 and y.dim() == 2 else x * y", "torch.minimum(x, y * 2)",
]
SHAPES = [(), (3,), (2, 3), (3, 3)]


def _chain(data) -> str:
    expr = "a"
    for _ in range(data.draw(st.integers(1, 4), label="length")):
        if data.draw(st.booleans(), label="binary"):
            expr = data.draw(st.sampled_from(BINARY)).replace("x", f"({expr})").replace("y", "b")
        else:
            expr = data.draw(st.sampled_from(UNARY)).replace("x", f"({expr})")
    return expr


def _run(module, expr, a_np, b_np):
    a = module.tensor(a_np, requires_grad=True)
    b = module.tensor(b_np, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = eval(expr, {"torch": module}, {"a": a, "b": b})  # noqa: S307 - built above
            if out.requires_grad:
                out.sum().backward()
        except Exception as err:  # noqa: BLE001 - compared with PyTorch's
            return None, (type(err).__name__, str(err))
    return (out, a.grad, b.grad), None


@settings(max_examples=800, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_chains_match_pytorch(data):
    torch = pytest.importorskip("torch")
    expr = _chain(data)
    shape = data.draw(st.sampled_from(SHAPES), label="shape")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    a_np = np.asarray(rng.uniform(-2, 2, size=shape).round(2))
    b_np = np.asarray(rng.uniform(-2, 2, size=shape).round(2))

    theirs, terr = _run(torch, expr, a_np, b_np)
    ours, gerr = _run(gt, expr, a_np, b_np)
    assert gerr == terr, expr
    if terr is not None:
        return
    (t_out, t_ga, t_gb), (g_out, g_ga, g_gb) = theirs, ours
    assert str(g_out.dtype) == str(t_out.dtype), expr
    assert tuple(g_out.shape) == tuple(t_out.shape), expr
    assert g_out.requires_grad == t_out.requires_grad, expr
    assert type(g_out.grad_fn).__name__ == type(t_out.grad_fn).__name__, expr
    np.testing.assert_allclose(g_out._data, t_out.detach().numpy(), rtol=1e-9, atol=1e-12,
                               err_msg=expr)
    for g, t in ((g_ga, t_ga), (g_gb, t_gb)):
        assert (g is None) == (t is None), expr
        if t is not None:
            np.testing.assert_allclose(g._data, t.numpy(), rtol=1e-9, atol=1e-12, err_msg=expr)
