"""torch.svd_lowrank / torch.pca_lowrank against PyTorch: every OpInfo sample (PyTorch's
wrapper seeds both generators), and, after manual_seed, the very same factors as
PyTorch's (its Gaussian test matrix drawn bit for bit), the generator left in the same
state, grad_fn names of the composition, gradients, and the argument errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import gradcli.torch as gt  # noqa: E402
from gradcli import coverage  # noqa: E402
from tests.expr_compare import assert_raises_as_pytorch  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal.common_methods_invocations import op_db

    OPINFO = {op.name: op for op in op_db if op.name in ("svd_lowrank", "pca_lowrank")}


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("name", sorted(OPINFO))
def test_every_opinfo_sample(name, dtype):
    op = OPINFO[name]
    fn = coverage.resolve(op)
    coverage._CURRENT[0] = op.op
    count = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, sample in enumerate(op.sample_inputs("cpu", dtype, requires_grad=True)):
            coverage.check_sample(fn, sample, seed=i)
            count += 1
    assert count >= 4


def _run(T, name, shape, seed, **kwargs):
    T.manual_seed(seed)
    a = T.tensor(np.random.default_rng(seed).normal(size=shape), requires_grad=True)
    U, S, V = getattr(T, name)(a, **kwargs)
    loss = (U.abs().sum() + S.sum() + (V * V).sum())
    loss.backward()
    after = T.randn(3)
    names = [type(t.grad_fn).__name__ for t in (U, S, V)]
    return U, S, V, a.grad, after, names


def _signed(res):
    U, S, V = (np.array(t.detach().numpy()) for t in res[:3])
    rows = np.abs(U).argmax(-2)[..., None, :]
    sign = np.sign(np.take_along_axis(U, rows, -2))
    return (U * sign, S, V * sign, res[3].detach().numpy(), res[4], res[5])


@pytest.mark.parametrize("name,shape,kwargs", [
    ("svd_lowrank", (8, 5), {"q": 3}),
    ("svd_lowrank", (4, 9), {"q": 4, "niter": 1}),
    ("svd_lowrank", (2, 7, 6), {}),
    ("pca_lowrank", (10, 4), {}),
    ("pca_lowrank", (5, 8), {"q": 2, "center": False, "niter": 0}),
])
def test_same_factors_after_manual_seed(name, shape, kwargs):
    theirs = _run(torch, name, shape, 7, **kwargs)
    ours = _run(gt, name, shape, 7, **kwargs)
    assert ours[5] == theirs[5]
    # (singular vectors are defined up to a sign per column, which LAPACK builds choose
    # differently: both are normalized so each U column's largest entry is positive)
    ours, theirs = _signed(ours), _signed(theirs)
    for o, t in zip(ours[:5], theirs[:5], strict=True):
        o, t = (np.asarray(v.numpy() if hasattr(v, "numpy") else v) for v in (o, t))
        assert o.dtype == t.dtype and o.shape == t.shape
        np.testing.assert_allclose(o, t, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(ours[4], theirs[4])


@pytest.mark.parametrize("call", [
    lambda T: T.pca_lowrank(T.ones(4, 3, dtype=T.float64), q=4),
    lambda T: T.pca_lowrank(T.ones(4, 3, dtype=T.float64), q=-1),
    lambda T: T.pca_lowrank(T.ones(4, 3, dtype=T.float64), niter=-1),
])
def test_errors_as_pytorch(call):
    assert_raises_as_pytorch(call, gt, torch)
