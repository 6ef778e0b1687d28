"""torch.ormqr against PyTorch: every OpInfo sample (batches, empty and wide/tall
reflectors, left/right, transposed) in float64 and float32 through
gradcli.coverage.check_sample (values, dtype, OrmqrBackward0, vector-Jacobian products),
gradcheck/gradgradcheck, and the errors with PyTorch's texts."""

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

    OP = next(op for op in op_db if op.name == "ormqr")


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
def test_every_opinfo_sample(dtype):
    fn = coverage.resolve(OP)
    coverage._CURRENT[0] = OP.op
    count = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, sample in enumerate(OP.sample_inputs("cpu", dtype, requires_grad=True)):
            coverage.check_sample(fn, sample, seed=i)
            count += 1
    assert count >= 100


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_gradcheck_and_gradgradcheck(left, transpose):
    a = torch.randn(4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    refl, tau = torch.geqrf(a)
    other = np.random.default_rng(2).normal(size=(4, 2) if left else (2, 4))
    args = (gt.tensor(refl.numpy(), requires_grad=True),
            gt.tensor(tau.numpy(), requires_grad=True), gt.tensor(other, requires_grad=True))

    def f(x, t, c):
        return gt.ormqr(x, t, c, left=left, transpose=transpose)

    assert type(f(*args).grad_fn).__name__ == "OrmqrBackward0"
    assert gt.autograd.gradcheck(f, args)
    assert gt.autograd.gradgradcheck(f, args)


def _abc(T, a_shape=(5, 3), tau_shape=(3,), c_shape=(5, 2), dtypes=(None, None, None)):
    f64 = T.float64
    return (T.ones(a_shape, dtype=dtypes[0] or f64), T.ones(tau_shape, dtype=dtypes[1] or f64),
            T.ones(c_shape, dtype=dtypes[2] or f64))


ERRORS = {
    "other_rows": lambda T: T.ormqr(*_abc(T, c_shape=(4, 2))),
    "tau_empty": lambda T: T.ormqr(*_abc(T, tau_shape=(0,))),
    "tau_long": lambda T: T.ormqr(*_abc(T, tau_shape=(6,))),
    "tau_0d": lambda T: T.ormqr(*_abc(T, tau_shape=())),
    "input_1d": lambda T: T.ormqr(*_abc(T, a_shape=(5,))),
    "other_1d": lambda T: T.ormqr(*_abc(T, c_shape=(5,))),
    "dtype_tau": lambda T: T.ormqr(*_abc(T, dtypes=(None, T.float32, None))),
    "dtype_other": lambda T: T.ormqr(*_abc(T, dtypes=(None, None, T.float32))),
    "dtype_input": lambda T: T.ormqr(*_abc(T, dtypes=(T.float32, None, None))),
    "ints": lambda T: T.ormqr(*_abc(T, dtypes=(T.int64,) * 3)),
    "other_rank": lambda T: T.ormqr(*_abc(T, a_shape=(2, 5, 3), tau_shape=(2, 3))),
    "tau_rank": lambda T: T.ormqr(*_abc(T, a_shape=(2, 5, 3), c_shape=(2, 5, 2))),
    "right_cols": lambda T: T.ormqr(*_abc(T), left=False),
    "tau_batch": lambda T: T.ormqr(*_abc(T, a_shape=(2, 5, 3), tau_shape=(3, 3),
                                         c_shape=(2, 5, 2))),
    "other_batch": lambda T: T.ormqr(*_abc(T, a_shape=(2, 5, 3), tau_shape=(2, 3),
                                           c_shape=(3, 5, 2))),
    "method": lambda T: _abc(T)[0].ormqr(*_abc(T)[1:], transpose=True),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_as_pytorch(case):
    try:
        theirs = ERRORS[case](torch)
    except Exception:  # noqa: BLE001
        assert_raises_as_pytorch(ERRORS[case], gt, torch)
        return
    ours = ERRORS[case](gt)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
