"""Small float32 matrix products are summed in the order PyTorch's MKL uses, so their last
bits (and what float32 prints) agree with PyTorch; other products stay on numpy's BLAS."""

import numpy as np
import pytest
from torch_kernels import torch_with_measured_kernels

import gradcli.engine.ops.linalg as linalg
import gradcli.torch as gt

torch = torch_with_measured_kernels(mkl=True)


@pytest.fixture
def blas_calls(monkeypatch):
    calls = []
    monkeypatch.setattr(linalg, "blas_called", calls.append)
    return calls


def _pair(rng, shape, transposed, dtype=np.float32):
    """The same matrix for gradcli and torch, stored row-major or as the transpose of a
    row-major matrix (torch allocates its own, aligned, copy, as a program's tensors are)."""
    x = rng.standard_normal(shape).astype(dtype)
    if transposed:
        stored = np.ascontiguousarray(x.T)
        return gt.tensor(stored).t(), torch.tensor(stored).t()
    return gt.tensor(x), torch.tensor(x)


def _same_bits(ours, theirs):
    a = ours._data if isinstance(ours, gt.Tensor) else ours
    b = theirs.detach().numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a.view(np.uint32 if a.dtype == np.float32 else np.uint64),
                          b.view(np.uint32 if b.dtype == np.float32 else np.uint64))


SHAPES = [(2, 3, 2), (3, 4, 5), (4, 8, 4), (5, 16, 3), (4, 100, 4), (2, 33, 2), (10, 10, 10),
          (9, 9, 9), (12, 9, 7), (2, 11, 6), (1, 20, 9), (16, 8, 16), (11, 8, 13), (5, 8, 17),
          (6, 8, 18), (7, 8, 24), (13, 6, 20), (6, 5, 40), (5, 3, 20), (10, 2, 39), (20, 4, 4),
          (3, 64, 12), (30, 64, 8), (5, 128, 4), (32, 8, 32), (12, 8, 64)]


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_mm_bits_match_torch(m, k, n, ta, blas_calls):
    rng = np.random.default_rng(m * 10000 + k * 100 + n)
    for _ in range(3):
        a, ta_ = _pair(rng, (m, k), ta)
        b, tb_ = _pair(rng, (k, n), False)
        _same_bits(a @ b, ta_ @ tb_)
    assert blas_calls == []  # all of these are emulated


def test_random_shapes_emulated_ones_match(blas_calls):
    """Over random shapes and layouts: every product not handed to BLAS matches torch."""
    rng = np.random.default_rng(0)
    emulated = 0
    for _ in range(300):
        m, k, n = (int(v) for v in rng.integers(1, 48, 3))
        ta, tb = bool(rng.integers(2)), bool(rng.integers(2))
        a, ta_ = _pair(rng, (m, k), ta)
        b, tb_ = _pair(rng, (k, n), tb)
        blas_calls.clear()
        ours = a @ b
        if not blas_calls:
            emulated += 1
            _same_bits(ours, ta_ @ tb_)
    assert emulated > 25


def test_signed_zeros_and_specials():
    a = np.array([[-1.0, -1.0, 2.0], [np.inf, 1.0, 0.0]], np.float32)
    b = np.array([[0.0, 1.0], [-0.0, np.nan], [0.0, 3.0]], np.float32)
    _same_bits(gt.tensor(a) @ gt.tensor(b), torch.tensor(a) @ torch.tensor(b))
    z = -np.ones((3, 4), np.float32)
    _same_bits(gt.tensor(z) @ gt.zeros(4, 5), torch.tensor(z) @ torch.zeros(4, 5))
    # the outer product (k == 1) keeps -0. products, as before
    u, v = np.array([[-1.0], [2.0]], np.float32), np.array([[0.0, 1.0]], np.float32)
    _same_bits(gt.tensor(u) @ gt.tensor(v), torch.tensor(u) @ torch.tensor(v))


def test_gradient_through_a_product_matches_torch():
    """y = x @ w (emulated) and w's gradient x.t() @ g (emulated); x's gradient g @ w.t()
    has its right operand stored transposed, which stays on BLAS, so it is not compared.
    (g comes from a product with a constant: tanh's backward rounds differently today.)"""
    rng = np.random.default_rng(5)
    for m, k, n in [(10, 10, 10), (4, 100, 4), (3, 4, 5), (6, 7, 3), (8, 5, 16)]:
        for _ in range(5):
            x = rng.standard_normal((m, k)).astype(np.float32)
            w = rng.standard_normal((k, n)).astype(np.float32)
            ours = gt.tensor(w, requires_grad=True)
            theirs = torch.tensor(w, requires_grad=True)
            c = rng.standard_normal((m, n)).astype(np.float32)
            ((gt.tensor(x) @ ours) * gt.tensor(c)).sum().backward()
            ((torch.tensor(x) @ theirs) * torch.tensor(c)).sum().backward()
            _same_bits(ours.grad, theirs.grad)
            assert str(ours.grad) == str(theirs.grad)


def test_printed_products_match_torch():
    rng = np.random.default_rng(6)
    for shape, scale in [((3, 4, 5), 1.0), ((10, 10, 10), 1.0), ((10, 10, 10), 100.0), ((2, 7, 3), 1.0)]:
        m, k, n = shape
        for _ in range(10):
            a = (rng.standard_normal((m, k)) * scale).astype(np.float32)
            b = rng.standard_normal((k, n)).astype(np.float32)
            assert str(gt.tensor(a) @ gt.tensor(b)) == str(torch.tensor(a) @ torch.tensor(b))
            assert str(gt.tensor(a).mm(gt.tensor(b))) == str(torch.tensor(a).mm(torch.tensor(b)))


def test_large_and_other_products_stay_on_blas(blas_calls):
    rng = np.random.default_rng(7)
    cases = [((512, 512), (512, 512), np.float64),  # the benchmark's product
             ((100, 100), (100, 100), np.float32),  # above the size bound
             ((16, 16), (16, 16), np.float32),  # the fused kernel with k above its bound
             ((4, 129), (129, 4), np.float32),  # k above the bound
             ((6, 6), (6, 6), np.float64),  # float64 is not emulated
             ((5, 7), (7, 1), np.float32)]  # n == 1 (gemv)
    for sa, sb, dt in cases:
        blas_calls.clear()
        a, b = rng.standard_normal(sa).astype(dt), rng.standard_normal(sb).astype(dt)
        out = gt.tensor(a) @ gt.tensor(b)
        assert len(blas_calls) == 1
        np.testing.assert_allclose(out._data, a @ b, rtol=1e-4)
    # a right operand stored transposed (x @ x.t()) is summed in an order not emulated here
    x = gt.tensor(rng.standard_normal((10, 10)).astype(np.float32))
    blas_calls.clear()
    x @ x.t()
    assert len(blas_calls) == 1


def test_emulation_is_close_to_the_exact_product():
    """Without torch's bits to compare: the emulated sums stay within float32 rounding."""
    rng = np.random.default_rng(8)
    for m, k, n in [(3, 4, 5), (10, 10, 10), (16, 16, 16), (7, 30, 24), (5, 64, 3)]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        out = (gt.tensor(a) @ gt.tensor(b))._data
        exact = a.astype(np.float64) @ b.astype(np.float64)
        bound = k * 2.0 ** -23 * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
        assert out.dtype == np.float32 and np.all(np.abs(out - exact) <= bound)
