"""Batch norm computes in PyTorch's CPU order (engine/kernels/batch_norm.py), so float32
outputs, running statistics and native_batch_norm's saved statistics carry PyTorch's bits:
BatchNorm1d/2d/3d in training and evaluation, over several steps, shapes (one element per
image, the kernel's row-wise path, and larger images), seeds and thread counts.

The bit-for-bit tests need PyTorch's AVX2 kernels (tests/torch_kernels.py; its AVX-512 ones
give the same bits here, its kernels without FMA do not). Gradients, float64 and layouts
PyTorch takes another path for (a non-contiguous input) are compared within
torch.testing's tolerances, on any CPU: their last bits follow vector widths or double
fused multiply-adds that are not reproduced."""

from __future__ import annotations

import numpy as np
import pytest
from torch_kernels import both_on_threads, torch_with_measured_kernels

import gradcli.torch as gt
from gradcli.engine import kernels
from gradcli.engine.kernels import batch_norm as order

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (2, 5), (20, 7), (64, 33), (7, 3, 1), (5, 3, 6), (2, 3, 17), (4, 2, 3, 3),
          (8, 4, 5, 5), (4, 3, 1, 1), (3, 5, 2, 2, 2), (2, 3, 4, 1, 5)]
MODULE = {2: "BatchNorm1d", 3: "BatchNorm1d", 4: "BatchNorm2d", 5: "BatchNorm3d"}


def _pair(shape, affine, momentum=0.1, seed=0):
    c = shape[1]
    ref = getattr(torch.nn, MODULE[len(shape)])(c, affine=affine, momentum=momentum)
    ours = getattr(gt.nn, MODULE[len(shape)])(c, affine=affine, momentum=momentum)
    if affine:
        g = torch.Generator().manual_seed(seed + 100)
        w, b = torch.rand(c, generator=g) + 0.5, torch.rand(c, generator=g) - 0.5
        with torch.no_grad():
            ref.weight.copy_(w)
            ref.bias.copy_(b)
        with gt.no_grad():
            ours.weight.copy_(gt.tensor(w.numpy().copy()))
            ours.bias.copy_(gt.tensor(b.numpy().copy()))
    return ref, ours


def _inputs(shape, seed, steps):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=g) * 3 + 1 for _ in range(steps)]


def _bits_equal(ours, ref):
    a, b = np.asarray(ours), ref.detach().numpy()
    assert a.dtype == b.dtype
    np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_modules_float32_bits_training_then_eval(shape, threads):
    torch_ = torch_with_measured_kernels()
    with both_on_threads(torch_, threads):
        for seed, affine, momentum in ((0, True, 0.1), (1, False, 0.1), (2, True, None),
                                       (3, True, 0.25)):
            ref, ours = _pair(shape, affine, momentum, seed)
            for x in _inputs(shape, seed, 3):
                ref_y = ref(x)
                our_y = ours(gt.tensor(x.numpy().copy()))
                _bits_equal(our_y._data, ref_y)
                _bits_equal(ours.running_mean._data, ref.running_mean)
                _bits_equal(ours.running_var._data, ref.running_var)
                assert int(ours.num_batches_tracked) == int(ref.num_batches_tracked)
            ref.eval()
            ours.eval()
            for x in _inputs(shape, seed + 50, 2):
                with torch.no_grad():
                    ref_y = ref(x)
                with gt.no_grad():
                    our_y = ours(gt.tensor(x.numpy().copy()))
                _bits_equal(our_y._data, ref_y)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(3, 4), (9, 6), (5, 3, 6), (4, 2, 3, 3)],
                         ids=lambda s: "x".join(map(str, s)))
def test_native_batch_norm_saved_statistics_bits(shape, threads):
    torch_ = torch_with_measured_kernels()
    with both_on_threads(torch_, threads):
        for x in _inputs(shape, 7, 4):
            out, mean, invstd = torch_.native_batch_norm(x, None, None, None, None, True,
                                                         0.1, 1e-5)
            g_out, g_mean, g_invstd = gt.native_batch_norm(
                gt.tensor(x.numpy().copy()), None, None, None, None, True, 0.1, 1e-5)
            _bits_equal(g_out._data, out)
            _bits_equal(g_mean._data, mean)
            _bits_equal(g_invstd._data, invstd)


def test_functional_eps_and_momentum_bits():
    torch_ = torch_with_measured_kernels()
    x = _inputs((6, 5, 4), 11, 1)[0]
    for eps, momentum in ((1e-3, 0.3), (0.5, 0.9), (1e-5, 1.0)):
        rm, rv = torch_.zeros(5), torch_.ones(5)
        grm, grv = gt.zeros(5), gt.ones(5)
        ref = torch_.nn.functional.batch_norm(x, rm, rv, None, None, True, momentum, eps)
        ours = gt.nn.functional.batch_norm(gt.tensor(x.numpy().copy()), grm, grv, None, None,
                                           True, momentum, eps)
        _bits_equal(ours._data, ref)
        _bits_equal(grm._data, rm)
        _bits_equal(grv._data, rv)
        ref = torch_.nn.functional.batch_norm(x, rm, rv, None, None, False, momentum, eps)
        ours = gt.nn.functional.batch_norm(gt.tensor(x.numpy().copy()), grm, grv, None, None,
                                           False, momentum, eps)
        _bits_equal(ours._data, ref)


def test_fma32_rounds_once():
    """fma32 agrees with an exact rational computation rounded to float32, halfway cases
    (where float64's sum lands on a float32 tie) included."""
    from fractions import Fraction

    rng = np.random.default_rng(5)
    a = rng.standard_normal(2000).astype(np.float32)
    b = rng.standard_normal(2000).astype(np.float32)
    c = rng.standard_normal(2000).astype(np.float32)
    # float64's sum lands on a float32 halfway point while the exact value lies just below
    # it: (1 + 2^-18) * 2^-24 (1 - 2^-18) = 2^-24 - 2^-60 added to 1 + 2^-23 (a tie to even
    # would round up, the exact value rounds down), and the same negated
    a[:2] = np.float32(1 + 2.0 ** -18)
    b[:2] = np.float32([2.0 ** -24 * (1 - 2.0 ** -18), -(2.0 ** -24) * (1 - 2.0 ** -18)])
    c[:2] = np.float32([1 + 2.0 ** -23, -(1 + 2.0 ** -23)])
    # and plain ties and tiny products
    a[2:4], b[2:4], c[2:4] = np.float32(1.0), np.float32(2.0 ** -24), np.float32(1.0)
    a[4:8], b[4:8], c[4:8] = np.float32([1.0, -1.0, 3.0, -3.0]), np.float32(2.0 ** -60), 1
    naive = np.float32(np.float64(a[:2]) * np.float64(b[:2]) + np.float64(c[:2]))
    assert (naive != np.float32([1 + 2.0 ** -23, -(1 + 2.0 ** -23)])).all()  # (the trap)
    got = order.fma32(a, b, c)
    for i in range(len(a)):
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        want = np.float32(float(exact))  # (float64 first: exact enough away from ties)
        lo, hi = np.nextafter(want, np.float32(-np.inf)), np.nextafter(want, np.float32(np.inf))
        best = min((want, lo, hi), key=lambda v: (abs(Fraction(float(v)) - exact),
                                                  int(np.float32(v).view(np.uint32)) & 1))
        assert got[i] == best, (i, a[i], b[i], c[i], got[i], best)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("shape", [(6, 4), (5, 3, 6), (4, 3, 2, 5), (3, 2, 2, 3, 2)],
                         ids=lambda s: "x".join(map(str, s)))
def test_training_values_and_gradients_within_tolerance(shape, contiguous, dtype):
    g = torch.Generator().manual_seed(3)
    dt = getattr(torch, dtype)
    x = torch.randn(shape, generator=g, dtype=dt) * 2 + 0.5
    c = shape[1]
    w, b = torch.rand(c, generator=g, dtype=dt), torch.rand(c, generator=g, dtype=dt)
    grad = torch.randn(shape, generator=g, dtype=dt)
    if contiguous:
        xt, xg = x.clone(), gt.tensor(x.numpy().copy())
    else:  # the same values through a transposed view
        xt = x.transpose(0, -1).contiguous().transpose(0, -1)
        xg = gt.tensor(x.transpose(0, -1).contiguous().numpy().copy()).transpose(0, -1)
        assert not xt.is_contiguous() and not xg.is_contiguous()
    xt.requires_grad_()
    xg.requires_grad_()
    wt, bt = w.clone().requires_grad_(), b.clone().requires_grad_()
    wg = gt.tensor(w.numpy().copy(), requires_grad=True)
    bg = gt.tensor(b.numpy().copy(), requires_grad=True)
    rmt, rvt = torch.zeros(c, dtype=dt), torch.ones(c, dtype=dt)
    rmg, rvg = gt.zeros(c, dtype=getattr(gt, dtype)), gt.ones(c, dtype=getattr(gt, dtype))
    yt = torch.nn.functional.batch_norm(xt, rmt, rvt, wt, bt, True, 0.3, 1e-3)
    yg = gt.nn.functional.batch_norm(xg, rmg, rvg, wg, bg, True, 0.3, 1e-3)
    yt.backward(grad)
    yg.backward(gt.tensor(grad.numpy().copy()))
    for ours, ref in ((yg, yt), (xg.grad, xt.grad), (wg.grad, wt.grad), (bg.grad, bt.grad),
                      (rmg, rmt), (rvg, rvt)):
        torch.testing.assert_close(torch.from_numpy(ours.detach().numpy().copy()),
                                   ref.detach())
    assert yg.grad_fn.name() == yt.grad_fn.name()


def test_exact_switch_off_stays_within_tolerance(monkeypatch):
    monkeypatch.setattr(kernels, "EXACT", False)
    monkeypatch.setattr(order, "fma32", None)  # the emulation is not reached
    for shape in ((9, 4), (4, 3, 5)):
        x = _inputs(shape, 21, 1)[0]
        ref, ours = _pair(shape, True)
        torch.testing.assert_close(
            torch.from_numpy(ours(gt.tensor(x.numpy().copy())).detach().numpy().copy()),
            ref(x).detach())
        torch.testing.assert_close(torch.from_numpy(ours.running_var.numpy().copy()),
                                   ref.running_var)


def test_batchnorm3d_module_surface():
    ref, ours = torch.nn.BatchNorm3d(3), gt.nn.BatchNorm3d(3)
    assert repr(ours) == repr(ref)
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in ref.named_buffers()]
    with pytest.raises(ValueError) as ours_err:
        ours(gt.zeros(2, 3, 4))
    with pytest.raises(ValueError) as ref_err:
        ref(torch.zeros(2, 3, 4))
    assert str(ours_err.value) == str(ref_err.value)


def test_fma_squares_is_a_running_fma():
    """The variance's row loop equals acc = fma32(d, d, acc) row by row, ties included
    (1 + (2^-12)^2 lands exactly on a float32 halfway point)."""
    rng = np.random.default_rng(9)
    dev = (rng.standard_normal((50, 6)) * rng.choice([1e-4, 1.0, 1e3], (50, 6))).astype(np.float32)
    dev[0, 0], dev[1, 0] = 1.0, 2.0 ** -12
    dev[0, 1], dev[1, 1] = np.float32(1 + 2.0 ** -23), 2.0 ** -12
    acc = np.zeros(6, np.float32)
    for row in dev:
        acc = order.fma32(row, row, acc)
    got = order._fma_squares32(dev)
    np.testing.assert_array_equal(got.astype(np.float32), acc)
    dev2 = dev[:2, :2]
    assert order._fma_squares32(dev2)[0] == 1.0  # the tie to even


@pytest.mark.parametrize("training,eps", [(True, 0.0), (True, -1e-3), (False, -1e-5)])
def test_eps_checks_match_pytorch(training, eps):
    x = torch.randn(4, 3)
    rm, rv = torch.zeros(3), torch.ones(3)
    with pytest.raises(ValueError) as ref:
        torch.nn.functional.batch_norm(x, rm, rv, training=training, eps=eps)
    with pytest.raises(ValueError) as ours:
        gt.nn.functional.batch_norm(gt.tensor(x.numpy().copy()), gt.zeros(3), gt.ones(3),
                                    training=training, eps=eps)
    assert str(ours.value) == str(ref.value)


def test_eval_with_zero_eps_is_allowed():
    x = torch.randn(4, 3)
    ref = torch.nn.functional.batch_norm(x, torch.zeros(3), torch.ones(3), eps=0.0)
    ours = gt.nn.functional.batch_norm(gt.tensor(x.numpy().copy()), gt.zeros(3), gt.ones(3),
                                       eps=0.0)
    torch.testing.assert_close(torch.from_numpy(ours.numpy().copy()), ref)
