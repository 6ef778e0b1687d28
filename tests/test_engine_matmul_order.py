"""Small float32 matrix products are summed in the order PyTorch's MKL uses, so their last
bits (and what float32 prints) agree with PyTorch; other products stay on numpy's BLAS."""

import numpy as np
import pytest
from torch_kernels import both_on_threads, torch_with_measured_kernels

import gradcli.engine.ops.linalg as linalg
import gradcli.torch as gt

torch = torch_with_measured_kernels(mkl=True)


@pytest.fixture
def blas_calls(monkeypatch):
    """The shapes of the products that went to numpy's BLAS (not emulated)."""
    calls = []
    product = linalg.blas_product

    def recording(a, b):
        calls.append((a.shape, b.shape))
        return product(a, b)

    monkeypatch.setattr(linalg, "blas_product", recording)
    return calls


def _pair(rng, shape, transposed, dtype=np.float32, scale=1.0):
    """The same matrix for gradcli and torch, stored row-major or as the transpose of a
    row-major matrix (torch allocates its own, aligned, copy, as a program's tensors are);
    the stored array is a fresh C-ordered copy, so a one-row matrix's transpose has the
    strides torch gives it, which picks MKL's kernel for a 1x1 result."""
    x = (rng.standard_normal(shape) * scale).astype(dtype)
    if transposed:
        stored = x.T.copy()
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


# (m, k, n): peels of 0..3 floats (rows i*k floats in), 4- and 8-wide lanes, tails, the fused
# kernel whole or on groups of 4 rows only, one row or column (gemv), and the largest sizes
T_SHAPES = [(2, 2, 2), (2, 3, 5), (3, 4, 4), (2, 5, 4), (2, 6, 4), (2, 7, 4), (4, 8, 9), (2, 9, 2),
            (3, 9, 5), (2, 12, 2), (2, 13, 4), (3, 17, 6), (2, 21, 3), (5, 18, 7), (2, 33, 2),
            (3, 100, 11), (4, 128, 3), (9, 13, 1), (3, 64, 12), (5, 6, 37), (7, 8, 13),
            (6, 8, 40), (12, 8, 30), (16, 4, 20), (8, 7, 12), (1, 5, 5), (1, 17, 5), (1, 32, 7),
            (1, 21, 10), (1, 128, 3), (5, 21, 1), (130, 7, 1), (1, 13, 1), (1, 3, 1), (11, 11, 11),
            (64, 2, 3), (2, 128, 64)]


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("m,k,n,tb", [s + (False,) for s in SHAPES] + [s + (True,) for s in T_SHAPES])
def test_mm_bits_match_torch(m, k, n, ta, tb, blas_calls):
    """b stored (SHAPES) or stored transposed (T_SHAPES), a either way."""
    rng = np.random.default_rng(m * 10000 + k * 100 + n)
    for _ in range(3):
        a, ta_ = _pair(rng, (m, k), ta)
        b, tb_ = _pair(rng, (k, n), tb)
        _same_bits(a @ b, ta_ @ tb_)
    assert blas_calls == []  # all of these are emulated


def test_random_shapes_emulated_ones_match(blas_calls):
    """Over random shapes and layouts: every product not handed to BLAS matches torch."""
    rng = np.random.default_rng(0)
    emulated = 0
    for _ in range(300):
        m, k, n = (int(v) for v in rng.integers(1, 48, 3))
        ta, tb = bool(rng.integers(2)), bool(rng.integers(2))
        emulated += _matches_if_emulated(rng, m, k, n, ta, tb, blas_calls)
    assert emulated > 25


def _matches_if_emulated(rng, m, k, n, ta, tb, blas_calls) -> bool:
    """A random product: whether gradcli emulated it (no BLAS call), checked against torch
    bit for bit if so."""
    a, ta_ = _pair(rng, (m, k), ta)
    b, tb_ = _pair(rng, (k, n), tb)
    blas_calls.clear()
    ours = a @ b
    if blas_calls:
        return False
    _same_bits(ours, ta_ @ tb_)
    return True


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
             ((6, 9), (9, 20), np.float32)]  # the fused kernel with k above its bound
    for sa, sb, dt in cases:
        blas_calls.clear()
        a, b = rng.standard_normal(sa).astype(dt), rng.standard_normal(sb).astype(dt)
        out = gt.tensor(a) @ gt.tensor(b)
        assert len(blas_calls) == 1
        np.testing.assert_allclose(out._data, a @ b, rtol=1e-4)
    # the same bound for a right operand stored transposed
    x = gt.tensor(rng.standard_normal((16, 12)).astype(np.float32))
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


# --- a right operand stored transposed (x @ W.t(), F.linear, every product's gradient), the
# gemv products (a result of one row or column), addmm's bias and scales, mm's backward ---


@pytest.mark.parametrize("m,k,n", [(1, 7, 9), (1, 40, 3), (6, 9, 1), (1, 1, 4), (1, 12, 1), (1, 30, 1)])
def test_one_row_or_column_bits_match_torch(m, k, n, blas_calls):
    """gemv-like products, every layout of both operands (a 1x1 result's kernel depends on how
    b is stored)."""
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    for ta in (False, True):
        for tb in (False, True):
            for _ in range(3):
                a, ta_ = _pair(rng, (m, k), ta)
                b, tb_ = _pair(rng, (k, n), tb)
                _same_bits(a @ b, ta_ @ tb_)
    assert k == 1 or blas_calls == []


def test_random_shapes_and_layouts_match(blas_calls):
    """Random shapes within the bounds and all four layouts: every emulated product matches."""
    rng = np.random.default_rng(11)
    emulated = 0
    for _ in range(400):
        k = int(rng.integers(2, 80))
        m, n = (int(v) for v in rng.integers(1, 40, 2))
        if rng.random() < 0.3:
            m, n = (1, n) if rng.random() < 0.5 else (m, 1)
        ta, tb = bool(rng.integers(2)), bool(rng.integers(2))
        emulated += _matches_if_emulated(rng, m, k, n, ta, tb, blas_calls)
    assert emulated > 150


def test_linear_and_addmm_match_torch(blas_calls):
    """F.linear is addmm(bias, x, W.t()); PyTorch copies the bias into the result and MKL
    adds it where its kernel does (first for a stored right operand, last for a transposed one),
    alpha and beta included."""
    rng = np.random.default_rng(12)
    F, tF = gt.nn.functional, torch.nn.functional
    for m, k, n in [(4, 10, 3), (10, 10, 10), (3, 9, 20), (8, 6, 16), (1, 20, 5), (7, 12, 1),
                    (2, 11, 13), (3, 30, 2), (5, 8, 7), (12, 5, 24), (1, 3, 1)]:
        for _ in range(3):
            x, tx = _pair(rng, (m, k), False)
            w, tw = _pair(rng, (n, k), False)
            bias = rng.standard_normal(n).astype(np.float32)
            _same_bits(F.linear(x, w, gt.tensor(bias)), tF.linear(tx, tw, torch.tensor(bias)))
            _same_bits(F.linear(x, w), tF.linear(tx, tw))
            for tb in (False, True):
                b, tb_ = _pair(rng, (k, n), tb)
                for beta, alpha in [(1, 1), (0, 1), (1, 0.3), (0.7, 1), (-1.5, 2.5)]:
                    shape = [(n,), (1, n), (m, 1), (m, n)][int(rng.integers(4))]
                    c = rng.standard_normal(shape).astype(np.float32)
                    _same_bits(gt.addmm(gt.tensor(c), x, b, beta=beta, alpha=alpha),
                               torch.addmm(torch.tensor(c), tx, tb_, beta=beta, alpha=alpha))
    assert blas_calls == []


def test_addmm_bias_starts_the_sum_in_the_peeled_and_fused_parts():
    rng = np.random.default_rng(13)
    for m, k, n in [(9, 9, 9), (7, 10, 11), (3, 11, 6), (5, 7, 20), (13, 8, 12), (6, 5, 30)]:
        for ta in (False, True):
            for _ in range(3):
                a, ta_ = _pair(rng, (m, k), ta)
                b, tb_ = _pair(rng, (k, n), False)
                c = rng.standard_normal(n).astype(np.float32)
                for beta, alpha in [(1, 1), (0.5, 1.7)]:
                    _same_bits(gt.addmm(gt.tensor(c), a, b, beta=beta, alpha=alpha),
                               torch.addmm(torch.tensor(c), ta_, tb_, beta=beta, alpha=alpha))


def _grads(lib, x, w, bias, c, form):
    x = lib.tensor(x, requires_grad=True)
    w = lib.tensor(w, requires_grad=True)
    if form == "x @ w.t()":
        y = x @ w.t()
    elif form == "x @ w":
        y = x @ w
    elif form == "x.t() @ w":  # x stored (k, m): mm's first operand is column-major
        y = x.t() @ w
    else:
        y = lib.nn.functional.linear(x, w, lib.tensor(bias))
    (y * lib.tensor(c)).sum().backward()
    return y, x.grad, w.grad


@pytest.mark.parametrize("form", ["x @ w.t()", "x @ w", "x.t() @ w", "linear"])
def test_backward_grads_match_torch(form, blas_calls):
    """Both gradients of a product: PyTorch computes an input's gradient transposed when the
    input is stored column by column (W.t(), x.t()), which changes the products' order.
    (Sizes below 12: every product here and in the backward is emulated, but for an inner
    size of 1 with a result of one row or column, which is one product either way.)"""
    rng = np.random.default_rng(14)
    for _ in range(40):
        m, k, n = (int(v) for v in rng.integers(1, 12, 3))
        x = rng.standard_normal((k, m) if form == "x.t() @ w" else (m, k)).astype(np.float32)
        w = rng.standard_normal((k, n) if form in ("x @ w", "x.t() @ w") else (n, k)).astype(np.float32)
        bias = rng.standard_normal(n).astype(np.float32)
        c = rng.standard_normal((m, n)).astype(np.float32)
        ours, theirs = _grads(gt, x, w, bias, c, form), _grads(torch, x, w, bias, c, form)
        for o, t in zip(ours, theirs):
            _same_bits(o, t)
    assert len(blas_calls) < 10


def test_printed_transposed_products_and_grads_match_torch():
    rng = np.random.default_rng(15)
    for (m, k, n), scale in [((3, 4, 5), 1.0), ((10, 10, 10), 1.0), ((10, 10, 10), 100.0),
                             ((1, 7, 3), 1.0), ((6, 9, 1), 1.0), ((8, 6, 11), 1.0)]:
        for _ in range(8):
            x = (rng.standard_normal((m, k)) * scale).astype(np.float32)
            w = rng.standard_normal((n, k)).astype(np.float32)
            bias = rng.standard_normal(n).astype(np.float32)
            c = rng.standard_normal((m, n)).astype(np.float32)
            assert str(gt.tensor(x) @ gt.tensor(w).t()) == str(torch.tensor(x) @ torch.tensor(w).t())
            ours, theirs = _grads(gt, x, w, bias, c, "linear"), _grads(torch, x, w, bias, c, "linear")
            for o, t in zip(ours, theirs):
                assert str(o.detach()) == str(t.detach())


def test_transposed_signed_zeros_and_specials():
    """Every kernel starts its sums from +0, so zero products sum to +0."""
    z = -np.ones((3, 5), np.float32)
    for n in (1, 2, 7, 13):
        w = np.zeros((n, 5), np.float32)
        _same_bits(gt.tensor(z) @ gt.tensor(w).t(), torch.tensor(z) @ torch.tensor(w).t())
        _same_bits(gt.tensor(z[:1]) @ gt.tensor(w).t(), torch.tensor(z[:1]) @ torch.tensor(w).t())
    a = np.array([[-1.0, np.inf, 2.0, 0.0, 1.0], [np.nan, 1.0, 0.0, -0.0, 3.0]], np.float32)
    w = np.array([[0.0, 1.0, -0.0, 5.0, 1.0], [1.0, 0.0, 2.0, 1.0, -1.0]], np.float32)
    _same_bits(gt.tensor(a) @ gt.tensor(w).t(), torch.tensor(a) @ torch.tensor(w).t())


def test_one_thread_fused_kernel_covers_every_row():
    """With two threads MKL's fused kernel leaves the rows after the last group of 4 to the
    others; with one (torch.set_num_threads(1), mirrored by gradcli's) it covers them all."""
    rng = np.random.default_rng(16)
    for threads in (1, 2):
        with both_on_threads(torch, threads):
            for m, k, n in [(5, 6, 20), (7, 8, 13), (10, 5, 30), (6, 7, 17)]:
                for tb in (False, True):
                    a, ta_ = _pair(rng, (m, k), False)
                    b, tb_ = _pair(rng, (k, n), tb)
                    _same_bits(a @ b, ta_ @ tb_)
