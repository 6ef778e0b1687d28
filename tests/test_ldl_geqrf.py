"""geqrf and linalg.ldl_factor / ldl_factor_ex / ldl_solve against PyTorch: LAPACK's packed
outputs, pivots, solutions, batches, the refusing nodes and the argument errors."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402

RNG = np.random.default_rng(8)


def _tol(dtype):
    return dict(rtol=1e-7, atol=1e-7) if dtype == "float64" else dict(rtol=1.3e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(3, 2), (2, 4), (4, 4), (2, 3, 3), (0, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_geqrf(shape, dtype):
    data = RNG.standard_normal(shape).astype(dtype)
    outs = []
    for lib in (gt, torch):
        x = lib.tensor(data, requires_grad=True)
        result = lib.geqrf(x)
        assert type(result).__name__ == "geqrf"
        outs.append(result)
    for ours, theirs in zip(outs[0], outs[1]):
        assert ours.shape == theirs.shape and str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **_tol(dtype))
    assert type(outs[0].a.grad_fn).__name__ == "GeqrfBackward0"
    assert gt.tensor(data).geqrf().tau.shape == outs[1].tau.shape
    if data.size:
        with pytest.raises(RuntimeError, match="the derivative for 'geqrf' is not implemented"):
            outs[0].a.sum().backward()


def _symmetric(shape, dtype):
    a = RNG.standard_normal(shape)
    return (a + np.swapaxes(a, -1, -2)).astype(dtype)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (1, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ldl_factor_and_solve(shape, dtype):
    data = _symmetric(shape, dtype)
    rhs = RNG.standard_normal(shape[:-1] + (2,)).astype(dtype)
    outs = []
    for lib in (gt, torch):
        A = lib.tensor(data, requires_grad=True)
        LD, pivots = lib.linalg.ldl_factor(A)
        ex = lib.linalg.ldl_factor_ex(A)
        X = lib.linalg.ldl_solve(LD.detach(), pivots, lib.tensor(rhs))
        outs.append((LD, pivots, ex, X))
    (ld1, p1, ex1, x1), (ld2, p2, ex2, x2) = outs
    np.testing.assert_allclose(ld1.detach().numpy(), ld2.detach().numpy(), **_tol(dtype))
    assert np.array_equal(p1.numpy(), p2.numpy()) and p1.dtype == gt.int32
    assert np.array_equal(ex1.info.numpy(), ex2.info.numpy())
    assert type(ex1).__name__ == "linalg_ldl_factor_ex"
    np.testing.assert_allclose(x1.numpy(), x2.numpy(), rtol=1e-4 if dtype == "float32" else 1e-7,
                               atol=1e-4 if dtype == "float32" else 1e-7)
    assert type(ld1.grad_fn).__name__ == type(ld2.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not "
                                           "implemented"):
        ld1.sum().backward()


def test_ldl_solve_refuses_backward():
    for lib in (gt, torch):
        A = lib.tensor(_symmetric((3, 3), "float64"))
        LD, pivots = lib.linalg.ldl_factor(A)
        B = lib.ones(3, 1, dtype=lib.float64, requires_grad=True)
        X = lib.linalg.ldl_solve(LD, pivots, B)
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not "
                                               "implemented"):
            X.sum().backward()


@pytest.mark.parametrize("call", [
    lambda lib: lib.geqrf(lib.ones(3)),
    lambda lib: lib.linalg.ldl_factor(lib.ones(3)),
    lambda lib: lib.linalg.ldl_factor(lib.ones(3, 2)),
    lambda lib: lib.linalg.ldl_factor_ex(lib.ones(2, 3)),
    lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.ones(3, dtype=lib.int32), lib.ones(2, 1)),
])
def test_errors(call):
    seen = []
    for lib in (gt, torch):
        with pytest.raises(RuntimeError) as info:
            call(lib)
        seen.append(str(info.value))
    assert seen[0] == seen[1]
