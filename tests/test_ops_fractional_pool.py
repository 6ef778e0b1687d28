"""F.fractional_max_pool2d / 3d against PyTorch: every OpInfo sample (PyTorch's wrapper
seeds both generators, so the windows come from the same random samples), the same
outputs and indices after manual_seed (the samples drawn as torch.rand draws them, in
float32 and float64), grad_fn names, gradients and second derivatives, and the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import gradcli.torch as gt  # noqa: E402
from gradcli import coverage  # noqa: E402
from tests.expr_compare import assert_raises_as_pytorch  # noqa: E402

NAMES = ("nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal.common_methods_invocations import op_db

    OPINFO = {op.name: op for op in op_db if op.name in NAMES}


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("name", NAMES)
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


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("nd,shape,kwargs", [
    (2, (2, 3, 9, 11), {"kernel_size": 3, "output_size": (4, 5)}),
    (2, (3, 10, 7), {"kernel_size": (2, 3), "output_ratio": (0.5, 0.5)}),
    (3, (2, 2, 7, 6, 8), {"kernel_size": 2, "output_size": (3, 4, 5)}),
    (3, (2, 6, 7, 9), {"kernel_size": (2, 3, 2), "output_ratio": (0.5, 0.6, 0.4)}),
])
def test_same_windows_after_manual_seed(nd, shape, kwargs, dtype):
    data = np.random.default_rng(nd).normal(size=shape).astype(dtype)
    res = []
    for T in (torch, gt):
        T.manual_seed(123)
        x = T.tensor(data, requires_grad=True)
        fn = getattr(T.nn.functional, f"fractional_max_pool{nd}d")
        out, idx = fn(x, return_indices=True, **kwargs)
        cot = T.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).astype(dtype))
        (g,) = T.autograd.grad(out, x, cot * x.sum().detach(), create_graph=True)
        (gg,) = T.autograd.grad((g * g).sum(), x, allow_unused=True)
        res.append((out, idx, g, type(out.grad_fn).__name__, type(g.grad_fn).__name__,
                    T.rand(2)))
    (to, ti, tg, tn, tgn, tr), (oo, oi, og, on, ogn, orr) = res
    assert (on, ogn) == (tn, tgn)
    np.testing.assert_array_equal(oi.numpy(), ti.numpy())
    np.testing.assert_array_equal(oo.detach().numpy(), to.detach().numpy())
    np.testing.assert_allclose(og.detach().numpy(), tg.detach().numpy(), rtol=1e-6)
    np.testing.assert_array_equal(orr.numpy(), tr.numpy())


ERRORS = [
    lambda T: T.nn.functional.fractional_max_pool2d(T.ones(1, 2, 5, 6), 3, output_size=4),
    lambda T: T.nn.functional.fractional_max_pool2d(T.ones(1, 2, 5, 6), 2, output_size=(6, 3)),
    lambda T: T.nn.functional.fractional_max_pool2d(T.ones(1, 2, 5, 6), 2, output_size=(3, 6)),
    lambda T: T.nn.functional.fractional_max_pool2d(T.ones(1, 2, 5, 6), 2, output_size=(6, 7)),
    lambda T: T.nn.functional.fractional_max_pool2d(T.ones(1, 2, 5, 6), 2),
    lambda T: T.nn.functional.fractional_max_pool2d(T.ones(1, 2, 5, 6), 2,
                                                     output_ratio=(0.5, 0.5, 0.5)),
    lambda T: T.nn.functional.fractional_max_pool2d(T.ones(1, 2, 5, 6), 2, output_ratio=0.5),
    lambda T: T.nn.functional.fractional_max_pool3d(T.ones(1, 2, 5, 6, 4), 2,
                                                     output_size=(5, 3, 3)),
    lambda T: T.nn.functional.fractional_max_pool3d(T.ones(1, 2, 5, 6, 4), 2,
                                                     output_size=(3, 6, 3)),
    lambda T: T.nn.functional.fractional_max_pool3d(T.ones(1, 2, 5, 6, 4), 2,
                                                     output_size=(3, 3, 4)),
    lambda T: T.nn.functional.fractional_max_pool2d(
        T.ones(1, 2, 5, 6, dtype=T.float64), 2, output_size=2, _random_samples=T.rand(1, 2, 2)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_as_pytorch(case):
    assert_raises_as_pytorch(ERRORS[case], gt, torch)
