"""F.linear_cross_entropy against PyTorch on every OpInfo sample of its three entries
(the reference path, and the chunked path with options, reduced and not): values,
dtypes, shapes, grad_fn names (the chunked custom op's generated backward node, and
SqueezeBackward1 over it for an unbatched input) and vector-Jacobian products."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import gradcli.torch as gt  # noqa: E402
from gradcli import coverage  # noqa: E402

IDS = ("nn.functional.linear_cross_entropy", "nn.functional.linear_cross_entropy.chunked",
       "nn.functional.linear_cross_entropy.chunked_none")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal.common_methods_invocations import op_db

    OPINFO = {coverage.op_id(op): op for op in op_db if coverage.op_id(op) in IDS}


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("name", IDS)
def test_every_opinfo_sample(name, dtype):
    op = OPINFO[name]
    fn = coverage.resolve(op)
    coverage._CURRENT[0] = op.op
    count = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, sample in enumerate(op.sample_inputs("cpu", dtype, requires_grad=True)):
            try:
                coverage.check_sample(fn, sample, seed=i)
            except coverage.Unsupported:
                continue
            count += 1
    assert count >= 4


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("bias", [False, True])
def test_chunked_node_and_gradients(reduction, bias):
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(6, 4)), rng.normal(size=(5, 4)), rng.normal(size=5)
    target = np.array([0, 4, 2, -100, 1, 3])
    cls = torch.nn.LinearCrossEntropyOptions
    res = []
    for T in (torch, gt):
        leaves = [T.tensor(a, requires_grad=True) for a in (x, w, b)]
        out = T.nn.functional.linear_cross_entropy(
            leaves[0], leaves[1], T.tensor(target), linear_bias=leaves[2] if bias else None,
            reduction=reduction, options=cls(batch_chunk_size=2))
        out.sum().backward()
        res.append((type(out.grad_fn).__name__, out.detach().numpy(),
                    [None if t.grad is None else t.grad.numpy() for t in leaves]))
    (tn, to, tg), (on, oo, og) = res
    assert on == tn
    np.testing.assert_allclose(oo, to, rtol=1e-7, atol=1e-7)
    for o, t in zip(og, tg, strict=True):
        assert (o is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(o, t, rtol=1e-7, atol=1e-7)


def test_options_ignored_with_label_smoothing_warns_as_pytorch():
    msgs = []
    for T in (torch, gt):
        with pytest.warns(UserWarning) as rec:
            T.nn.functional.linear_cross_entropy(
                T.ones(2, 3, dtype=T.float64), T.ones(4, 3, dtype=T.float64),
                T.tensor([0, 1]), label_smoothing=0.1,
                options=torch.nn.LinearCrossEntropyOptions())
        msgs.append([str(r.message) for r in rec if "options" in str(r.message)])
    assert msgs[0] == msgs[1]
