"""softmax / log_softmax / cross_entropy / logsumexp as PyTorch 2.13's CPU kernels compute
them (AVX2), bit for bit where the kernels are known:

- the row sums in the order of vec::reduce_all (one vector accumulator, the tail into its
  first lanes, the lanes folded in halves), over other dims a running sum from 0;
- float32 exp and log as SLEEF's expf8_u10 / logf8_u10 (the kernels' vector code) and
  glibc's expf (their scalar tails), which the rounded-once exp missed on ~9% of elements;
- the fused multiply-adds of the backwards (FMA contraction);
- nll_loss's cascade of partial sums.

logsumexp goes through torch.exp and torch.log (MKL's vsExp and vsLn, not emulated): its
checks count matching elements. float64 keeps numpy's exp and log (SLEEF's double
kernels are not emulated), so only float32 is compared bit for bit."""

import numpy as np
import pytest
from torch_kernels import both_on_threads, torch_with_measured_kernels

import gradcli.torch as gt
from gradcli.engine.kernels import softmax as softmax_kernels
from gradcli.engine.kernels.sleef import glibc_expf32, vec_exp32, vec_log32
from gradcli.engine.kernels.summation import dim_sums_in_order, nll_cascade_sum, softmax_row_sums


def test_row_sums_order_without_torch():
    # one float32 vector of 8 lanes plus a tail of 2: the tail goes into lanes 0 and 1,
    # then ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7))
    x = np.array([1e8, 1, 1, 1, -1e8, 1, 1, 1, 1, 1], dtype=np.float32)
    a = [x[0] + x[8], x[1] + x[9], *x[2:8]]
    a = np.array(a, dtype=np.float32)
    expected = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
    assert softmax_row_sums(x[None])[0] == expected
    short = np.array([[3.0, -0.0, 1e-30]])  # shorter than a vector: in order from the first
    assert softmax_row_sums(short)[0] == (3.0 + -0.0) + 1e-30
    assert softmax_row_sums(np.array([[-0.0]]))[0] == 0.0
    assert np.signbit(softmax_row_sums(np.array([[-0.0]]))[0])  # a row of one keeps -0.


def test_float64_row_sums_take_the_lanes_in_order():
    # float64 has no shuffle version of vec_reduce_all: its 4 lanes add in order,
    # ((a0+a1)+a2)+a3, where folding them would give (a0+a2)+(a1+a3) = 2 here
    x = np.array([[1e17, 1.0, -1e17, 1.0]])
    assert softmax_row_sums(x)[0] == 1.0


def test_float64_row_sums_are_pytorchs():
    # log_softmax's backward with an output of zeros is g - 1 * sum(g): the kernel's row
    # sum, bit for bit
    torch = torch_with_measured_kernels()
    rng = np.random.default_rng(3)
    differ = 0
    for _ in range(200):
        n = int(rng.integers(4, 60))
        g = rng.standard_normal((2, n)) * 10.0 ** rng.uniform(-3, 3, size=(2, n))
        theirs = torch._log_softmax_backward_data(torch.tensor(g), torch.zeros(2, n,
                                                  dtype=torch.float64), 1, torch.float64)
        differ += not np.array_equal(g - softmax_row_sums(g)[:, None], theirs.numpy())
    assert differ == 0


def test_dim_sums_run_in_order_for_every_layout():
    # a dim summed with one position inside it (shape (outer, n, 1)) must not fall to
    # numpy's pairwise sum: 1e8 + 1 + ... rounds each 1 away in order, not in pairs
    x = np.zeros((2, 12, 1), np.float32)
    x[:, 0] = 1e8
    x[:, 1:] = 4
    expected = np.float32(1e8)
    for _ in range(11):
        expected = np.float32(expected + np.float32(4))
    assert (dim_sums_in_order(x, 1) == expected).all()
    assert dim_sums_in_order(x, 1).shape == (2, 1, 1)
    assert not np.signbit(dim_sums_in_order(np.full((3, 1), -0.0), 0)).any()  # from +0.


def _nll_reference(values, positions):
    """nll_loss's loop: 8 partial sums, level j flushed into j+1 at multiples of 16^(j+1)."""
    kind = values.dtype.type
    levels = [kind(0)] * 8
    for value, at in zip(values, positions):
        levels[0] = kind(levels[0] + value)
        for j in range(7):
            if at & (15 << (4 * j)):
                break
            levels[j + 1], levels[j] = kind(levels[j + 1] + levels[j]), kind(0)
    total = kind(0)
    for level in levels:
        total = kind(total + level)
    return total


@pytest.mark.parametrize("n", [1, 5, 16, 17, 100, 256, 257, 300, 5000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nll_cascade_sum_without_torch(n, dtype):
    rng = np.random.default_rng(n)
    for drop in (0.0, 0.3):
        values = (rng.standard_normal(n) * 100).astype(dtype)
        kept = np.flatnonzero(rng.random(n) >= drop)
        ours = nll_cascade_sum(values[kept], kept)
        assert ours.dtype == dtype
        assert ours == _nll_reference(values[kept], kept)


def _sleef_exp_by_torch(torch, x):
    """SLEEF's exp of each x, by way of PyTorch's log_softmax backward over a last dim of
    [0, x...] with g = [-1, 0, ...]: g - exp(y) * sum(g) is exp(y), exactly, in vector code."""
    y = np.concatenate([[0], x]).astype(np.float32)[None]
    g = np.zeros_like(y)
    g[0, 0] = -1
    return torch._log_softmax_backward_data(
        torch.from_numpy(g), torch.from_numpy(y), 1, torch.float32).numpy()[0, 1:]


def _bits_equal(a, b):
    a, b = _array(a), _array(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _array(t):
    """A numpy array of a gradcli or torch tensor (or of an array)."""
    if isinstance(t, gt.Tensor):
        return t.detach()._data
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def test_vec_exp32_is_sleefs_expf():
    torch = torch_with_measured_kernels()
    rng = np.random.default_rng(0)
    x = np.concatenate([
        rng.standard_normal(40000) * 20, -rng.random(20000) * 110,
        rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32),
        [0, -0.0, -103.9, -104, -104.1, 88.7, 88.8, 100, 100.1, 1e30, -1e30, np.inf, -np.inf],
    ]).astype(np.float32)
    x = x[~np.isnan(x)]
    assert _bits_equal(vec_exp32(x), _sleef_exp_by_torch(torch, x))
    assert np.isnan(vec_exp32(np.array([np.nan], np.float32))).all()


def test_vec_log32_is_sleefs_logf():
    """SLEEF's log of a row sum, by way of log_softmax over rows [0, t]: -y[0] = log(1 +
    exp(t)), with exp SLEEF's (vec_exp32, checked above)."""
    torch = torch_with_measured_kernels()
    rng = np.random.default_rng(1)
    t = -np.abs(rng.standard_normal(60000) * 4).astype(np.float32)
    y = torch.log_softmax(torch.from_numpy(np.stack([np.zeros_like(t), t], 1)), 1).numpy()
    sums = np.float32(1) + vec_exp32(t)
    assert np.array_equal(vec_log32(sums), -y[:, 0])  # (-y: log 1 is +0., -y[0] -0.)
    special = np.array([0, -0.0, -1, np.inf, 1, 1e-45, 2 ** -127, 3e38], np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.log(special.astype(np.float64))
    np.testing.assert_allclose(vec_log32(special), expected, rtol=1e-6)


def test_glibc_expf32_is_the_scalar_tails_exp():
    """std::exp in the scalar code, by way of log_softmax's backward over a dim with one
    position inside it (scalar code only), g = [-1, 0, ...] down the dim."""
    torch = torch_with_measured_kernels()
    rng = np.random.default_rng(2)
    x = np.concatenate([-np.abs(rng.standard_normal(30000)) * 8, rng.uniform(-110, 95, 10000),
                        [0, -0.0, -87.4, -103.97, -104, 88.7, 88.8, np.inf, -np.inf]])
    y = np.concatenate([[0], x]).astype(np.float32)[:, None]
    g = np.zeros_like(y)
    g[0] = -1
    theirs = torch._log_softmax_backward_data(
        torch.from_numpy(g), torch.from_numpy(y), 0, torch.float32).numpy()[1:, 0]
    assert _bits_equal(glibc_expf32(y[1:, 0]), theirs)


SHAPES = [((2, 3), 1), ((2, 3), 0), ((4, 10), 1), ((4, 10), 0), ((8, 100), 0), ((3, 1000), 1),
          ((3, 1000), 0), ((5, 7, 9), 1), ((3, 17, 2), 0), ((4, 10, 1), 1), ((7,), 0),
          ((2, 3, 4, 5), 2), ((64, 33), 0)]


@pytest.mark.parametrize("shape,dim", SHAPES)
def test_softmax_family_is_pytorchs_bit_for_bit(shape, dim):
    """float32 softmax, log_softmax and both their gradients (the kernels' forward and
    backward for the last dim and for others: SLEEF's exp in vector code, glibc's in the
    scalar tails, the threads' ranges of _vec_softmax, the fused multiply-adds)."""
    torch = torch_with_measured_kernels()
    rng = np.random.default_rng(sum(shape) + dim)
    for _ in range(3):
        a = (rng.standard_normal(shape) * rng.choice([1, 3, 10])).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        for op in ("softmax", "log_softmax"):
            results = []
            for lib in (gt, torch):
                x = lib.tensor(a, requires_grad=True)
                y = getattr(lib, op)(x, dim)
                y.backward(lib.tensor(g))
                results.append((y, x.grad))
            for ours, theirs in zip(*results):
                assert _bits_equal(ours, theirs), op
                assert str(ours) == str(theirs)


def test_softmax_rows_with_masked_and_huge_entries():
    torch = torch_with_measured_kernels()
    a = np.array([[0.5, -np.inf, 2.0, -np.inf, 1.0, 0.25, -3.0, 7.0, 1.5],
                  [1e30, 1.0, -1e30, 0.0, 3.0, -2.0, 4.0, 5.0, 6.0]], np.float32)
    for op in ("softmax", "log_softmax"):
        for dim in (0, 1):
            ours = getattr(gt, op)(gt.tensor(a), dim)
            theirs = getattr(torch, op)(torch.tensor(a), dim)
            assert _bits_equal(ours, theirs) and str(ours) == str(theirs)


@pytest.mark.parametrize("n,classes", [(1, 3), (4, 10), (17, 5), (64, 10), (300, 7)])
def test_cross_entropy_is_pytorchs_bit_for_bit(n, classes):
    """Loss (nll_loss's cascade sum, divided by the total weight) and input gradient, for
    each reduction, with and without class weights and ignored targets."""
    torch = torch_with_measured_kernels()
    rng = np.random.default_rng(n * classes)
    a = (rng.standard_normal((n, classes)) * 3).astype(np.float32)
    target = rng.integers(0, classes, n)
    ignored = target.copy()
    ignored[rng.random(n) < 0.3] = -100
    weight = (rng.random(classes) + 0.1).astype(np.float32)
    for t in (target, ignored):
        for w in (None, weight):
            for reduction in ("mean", "sum", "none"):
                results = []
                for lib in (gt, torch):
                    x = lib.tensor(a, requires_grad=True)
                    kw = {"reduction": reduction}
                    if w is not None:
                        kw["weight"] = lib.tensor(w)
                    loss = lib.nn.functional.cross_entropy(x, lib.tensor(t), **kw)
                    (loss.sum() if reduction == "none" else loss).backward()
                    results.append((loss, x.grad))
                for ours, theirs in zip(*results):
                    assert np.array_equal(_array(ours), _array(theirs), equal_nan=True), (
                        reduction, w is not None)
                    assert str(ours) == str(theirs)


def test_logsumexp_is_pytorchs_order_around_mkls_exp_and_log():
    """PyTorch's logsumexp is amax, exp (MKL), sum over the dims (its order), log (MKL),
    + max. Given its exp, the sum is its bits; with the rounded-once exp and log ~90% of
    elements match (numpy's order and float32 kernels gave ~45%)."""
    torch = torch_with_measured_kernels()
    from gradcli.engine.ops.reductions import _sum_dims

    rng = np.random.default_rng(4)
    matched = total = 0
    for shape, dims in (((4, 10), (1,)), ((8, 100), (0,)), ((3, 1000), (0,)), ((5, 7), (0, 1))):
        for _ in range(4):
            a = (rng.standard_normal(shape) * 3).astype(np.float32)
            x = torch.from_numpy(a)
            e = (x - x.amax(dims, keepdim=True)).exp()
            assert _bits_equal(_sum_dims(e.numpy(), dims, True), e.sum(dims, keepdim=True).numpy())
            ours = _array(gt.logsumexp(gt.tensor(a), dims))
            matched += (ours == torch.logsumexp(x, dims).numpy()).sum()
            total += ours.size
    assert matched / total > 0.85


def test_softmax_backward_fma_steps_without_torch():
    # the running sum of g*y down a dim takes each product unrounded (a fused multiply-
    # add): -1 + (1 + 2^-12)^2 is 2^-11 + 2^-24 exactly; rounding the product to float32
    # first (a tie, to even: 1 + 2^-11) would give 2^-11
    g = np.array([[-1.0], [1 + 2.0 ** -12]], np.float32)
    y = np.array([[1.0], [1 + 2.0 ** -12]], np.float32)
    assert softmax_kernels._fused_dim_sums(g, y, 0)[0, 0] == np.float32(2.0 ** -11 + 2.0 ** -24)
    assert dim_sums_in_order(g * y, 0)[0, 0] == np.float32(2.0 ** -11)


def test_float32_sigmoid_is_pytorchs_bit_for_bit():
    torch = torch_with_measured_kernels()
    rng = np.random.default_rng(11)
    values = np.concatenate([rng.standard_normal(20000) * 5, rng.uniform(-110, 110, 20000),
                             [0.0, -0.0, np.inf, -np.inf, np.nan, 88.8, -88.8, 104.0, -104.0,
                              1e-30, -1e-30]]).astype(np.float32)
    theirs = torch.tensor(values).sigmoid().numpy()
    ours = np.asarray(gt.tensor(values).sigmoid().detach().tolist(), dtype=np.float32)
    assert np.array_equal(theirs.view(np.int32), ours.view(np.int32))


@pytest.mark.parametrize("threads", [1, 2])
def test_float32_sigmoid_tails_are_pytorchs_scalar_code(threads):
    """PyTorch's loop takes 16 elements at a time with SLEEF's exp and the last n % 16 of
    each thread's chunk with glibc's expf: every size up to 40 (all tail under 16), sizes
    around the thread split, and a transposed input (memory order)."""
    torch = torch_with_measured_kernels()
    rng = np.random.default_rng(12)
    with both_on_threads(torch, threads):
        for n in [*range(1, 41), 32767, 32785, 65535]:
            x = (rng.standard_normal(n) * 3).astype(np.float32)
            ours = gt.tensor(x).sigmoid()._data
            assert np.array_equal(ours.view(np.int32), torch.tensor(x).sigmoid().numpy().view(np.int32)), n
        x = (rng.standard_normal((5, 7)) * 3).astype(np.float32)
        ours = gt.tensor(x).t().sigmoid()._data
        assert np.array_equal(ours, torch.tensor(x).t().sigmoid().numpy())


def test_bce_with_logits_input_gradient_prints_as_pytorch():
    # sigmoid(x) - t cancels: a last-bit difference in sigmoid showed in 3.6% of these
    torch = torch_with_measured_kernels()
    rng = np.random.default_rng(5)
    differ = []
    for i in range(120):
        shape = [(3,), (4, 5), (8, 33), (2, 3)][i % 4]
        x = (rng.standard_normal(shape) * [1, 3, 10][i % 3]).astype(np.float32)
        t = rng.uniform(0, 1, shape).astype(np.float32)
        reduction = ["mean", "sum", "none"][i % 3]
        xt, xg = torch.tensor(x, requires_grad=True), gt.tensor(x, requires_grad=True)
        torch.nn.functional.binary_cross_entropy_with_logits(
            xt, torch.tensor(t), reduction=reduction).sum().backward()
        gt.nn.functional.binary_cross_entropy_with_logits(
            xg, gt.tensor(t), reduction=reduction).sum().backward()
        if str(xt.grad) != str(xg.grad):
            differ.append(i)
    assert differ == []


def test_fused_minus_product64_rounds_once_without_torch():
    from fractions import Fraction

    from gradcli.engine.kernels.fma import fused_minus_product64

    rng = np.random.default_rng(8)
    a = rng.standard_normal(3000) * 10.0 ** rng.uniform(-5, 5, 3000)
    b = rng.standard_normal(3000) * 10.0 ** rng.uniform(-5, 5, 3000)
    c = a * b * (1 + rng.standard_normal(3000) * 1e-12)  # near cancellation: where it shows
    ours = fused_minus_product64(c, a, b)
    exact = np.array([float(Fraction(ci) - Fraction(ai) * Fraction(bi))
                      for ai, bi, ci in zip(a, b, c)])
    assert np.array_equal(ours, exact)
    assert not np.array_equal(c - a * b, exact)  # two roundings differ on these
    assert fused_minus_product64(np.array([np.inf, 1.0]), np.array([1.0, 1e300]),
                                 np.array([1.0, 1e300])).tolist() == [np.inf, -np.inf]
