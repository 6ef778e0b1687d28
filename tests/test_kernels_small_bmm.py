"""bmm, baddbmm and batched matmul of small matrices (inner size x rows x columns below 400,
ATen's own loop) bit for bit against PyTorch in float32 and float64, on any CPU (no BLAS
is involved), their gradients too; larger products stay on numpy's BLAS (tolerances)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402
from gradcli.engine import kernels  # noqa: E402

RNG = np.random.default_rng(5)
SHAPES = [(1, 1, 1, 1), (3, 3, 4, 1), (3, 3, 1, 4), (2, 5, 7, 6), (4, 1, 399, 1), (2, 7, 8, 7),
          (1, 19, 1, 21)]


def _lib_pair(dtype, *arrays):
    return ([torch.tensor(a, dtype=getattr(torch, dtype)) for a in arrays],
            [G.tensor(a, dtype=getattr(G, dtype)) for a in arrays])


def _bits(t):
    return np.asarray(t.detach().tolist())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_bmm_and_matmul_as_pytorchs_loop(shape, dtype):
    b, m, k, n = shape
    x, y = RNG.standard_normal((b, m, k)) * 3, RNG.standard_normal((b, k, n))
    (tx, ty), (ox, oy) = _lib_pair(dtype, x, y)
    assert np.array_equal(_bits(G.bmm(ox, oy)), _bits(torch.bmm(tx, ty)))
    four = (tx.unsqueeze(0) @ ty.unsqueeze(0), ox.unsqueeze(0) @ oy.unsqueeze(0))
    assert np.array_equal(_bits(four[1]), _bits(four[0]))


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1), (1, 0.3), (-2, 0)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_baddbmm_as_pytorchs_loop(beta, alpha, dtype):
    x, y = RNG.standard_normal((3, 4, 5)), RNG.standard_normal((3, 5, 6))
    bias = RNG.standard_normal((4, 6))
    bias[0, 0] = np.nan  # (beta == 0 ignores the bias, nan included)
    (tb, tx, ty), (ob, ox, oy) = _lib_pair(dtype, bias, x, y)
    theirs = torch.baddbmm(tb, tx, ty, beta=beta, alpha=alpha)
    ours = G.baddbmm(ob, ox, oy, beta=beta, alpha=alpha)
    np.testing.assert_array_equal(_bits(ours), _bits(theirs))


def test_small_bmm_gradients_bit_for_bit():
    # the backward is bmm too (g @ b^T, a^T @ g): in the same loop's order
    x, y, c = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 5)), RNG.standard_normal((2, 3, 5))
    (tx, ty, tc), (ox, oy, oc) = _lib_pair("float32", x, y, c)
    for t in (tx, ty, ox, oy):
        t.requires_grad_()
    torch.bmm(tx, ty).backward(tc)
    G.bmm(ox, oy).backward(oc)
    assert np.array_equal(_bits(ox.grad), _bits(tx.grad))
    assert np.array_equal(_bits(oy.grad), _bits(ty.grad))


def test_signed_zero_and_non_finite_as_pytorchs():
    x = np.array([[[-0.0, 1.0], [np.inf, -0.0]]])
    y = np.array([[[0.0, -0.0], [-0.0, np.nan]]])
    (tx, ty), (ox, oy) = _lib_pair("float32", x, y)
    theirs, ours = _bits(torch.bmm(tx, ty)), _bits(G.bmm(ox, oy))
    np.testing.assert_array_equal(ours, theirs)
    assert (np.signbit(ours) == np.signbit(theirs)).all()


def test_large_products_and_switch_off_stay_close(monkeypatch):
    x, y = RNG.standard_normal((2, 10, 8)), RNG.standard_normal((2, 8, 10))  # 800 >= 400
    (tx, ty), (ox, oy) = _lib_pair("float32", x, y)
    torch.testing.assert_close(torch.tensor(_bits(G.bmm(ox, oy)), dtype=torch.float32),
                               torch.bmm(tx, ty))
    monkeypatch.setattr(kernels, "EXACT", False)
    x, y = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 5))
    (tx, ty), (ox, oy) = _lib_pair("float32", x, y)
    torch.testing.assert_close(torch.tensor(_bits(G.bmm(ox, oy)), dtype=torch.float32),
                               torch.bmm(tx, ty))


@pytest.mark.parametrize("op", ["bmm", "baddbmm"])
def test_small_products_of_transposed_operands_are_row_major(op):
    """The result is a fresh row-major tensor as ATen's, whatever the operands' strides:
    attention transposes the product and calls contiguous(), whose copy (CloneBackward0)
    depends on it."""
    x, y = RNG.standard_normal((3, 4, 2)), RNG.standard_normal((2, 4, 5))
    got = []
    for lib in (torch, G):
        a, b = lib.tensor(x).transpose(0, 1), lib.tensor(y).transpose(0, 1)
        out = lib.bmm(a, b) if op == "bmm" else lib.baddbmm(lib.zeros(4, 1, 5, dtype=a.dtype), a, b)
        got.append((out.stride(), out.transpose(0, 1).is_contiguous()))
    assert got[0] == got[1]
