"""aten.slice, _unsafe_masked_index, _unsafe_masked_index_put_accumulate,
max_pool2d_with_indices_backward, native_dropout_backward, _safe_softmax (and
F.max_pool2d_with_indices) against PyTorch: every OpInfo sample of op_db in float64 and
float32 (values, dtypes, shapes, grad_fn names, vector-Jacobian products through
gradcli.coverage.check_sample), second derivatives with PyTorch's node names,
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

NAMES = ("slice", "_unsafe_masked_index", "_unsafe_masked_index_put_accumulate",
         "max_pool2d_with_indices_backward", "native_dropout_backward",
         "torch.ops.aten._safe_softmax.default", "_segment_reduce.lengths",
         "_segment_reduce.offsets", "_batch_norm_with_update", "_upsample_bilinear2d_aa")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal.common_methods_invocations import op_db

    OPINFO = {coverage.op_id(op): op for op in op_db if coverage.op_id(op) in NAMES}


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("name", NAMES)
def test_every_opinfo_sample(name, dtype):
    op = OPINFO[name]
    fn = coverage.resolve(op)
    assert fn is not None, f"gradcli lacks {name}"
    coverage._CURRENT[0] = op.op
    count = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for source in (op.sample_inputs, op.reference_inputs):
            for i, sample in enumerate(source("cpu", dtype, requires_grad=True)):
                if i >= 120:
                    break
                if name == "_upsample_bilinear2d_aa" and dtype == torch.float32:
                    _aa_as_accurate_as_pytorch(op, fn, sample)
                    count += 1
                    continue
                try:
                    coverage.check_sample(fn, sample, seed=i)
                except coverage.Unsupported:
                    continue
                count += 1
    assert count >= 2


def _aa_as_accurate_as_pytorch(op, fn, sample):
    """float32 antialiased interpolation: PyTorch's kernel computes its weights and sums
    in float32 (up to 2e-5 off the float64 result on these samples, past torch.testing's
    float32 tolerance): gradcli's must be at least as close to the float64 result."""
    x = sample.input.detach()
    exact = op.op(x.double(), *sample.args, **sample.kwargs)
    theirs = op.op(x, *sample.args, **sample.kwargs)
    ours = fn(gt.tensor(x.numpy(), requires_grad=True), *sample.args, **sample.kwargs)
    assert str(ours.dtype) == "torch.float32"
    assert type(ours.grad_fn).__name__ == "UpsampleBilinear2DAaBackward0"
    ref = exact.numpy()
    their_err = np.abs(theirs.numpy().astype(np.float64) - ref).max()
    our_err = np.abs(ours.detach().numpy().astype(np.float64) - ref).max()
    assert our_err <= their_err + 1e-6, (our_err, their_err)


def _t(T, a, grad=True):
    return T.tensor(a, requires_grad=grad)


def _second_order(build, arrays, seed=0):
    """build(T, *leaves) -> output; the first gradients with create_graph (their grad_fn
    names) and the second derivatives of a random projection, for both libraries."""
    rng = np.random.default_rng(seed)
    res = []
    for T in (torch, gt):
        leaves = [_t(T, a) for a in arrays]
        out = build(T, *leaves)
        v = T.tensor(np.random.default_rng(seed).uniform(-1, 1, tuple(out.shape)))
        firsts = T.autograd.grad(out, leaves, v, create_graph=True, allow_unused=True)
        names = [type(f.grad_fn).__name__ if f is not None and f.grad_fn else None
                 for f in firsts]
        s = sum(((f * T.tensor(np.random.default_rng(seed + 1 + k).uniform(
            -1, 1, tuple(f.shape)))).sum() for k, f in enumerate(firsts)
            if f is not None and f.requires_grad), T.zeros((), dtype=T.float64))
        seconds = T.autograd.grad(s, leaves, allow_unused=True) if s.requires_grad else [
            None] * len(leaves)
        res.append((type(out.grad_fn).__name__, firsts, names, seconds))
    del rng
    return res


def _close(o, t):
    if t is None or o is None:
        other = t if o is None else o
        assert other is None or not np.any(other.detach().numpy())
        return
    assert str(o.dtype) == str(t.dtype) and tuple(o.shape) == tuple(t.shape)
    torch.testing.assert_close(torch.from_numpy(np.array(o.detach().numpy())), t.detach())


def _compare_second_order(res):
    (tn, tf, tnames, ts), (on, of, onames, os_) = res
    assert on == tn
    assert onames == tnames
    for o, t in zip(of, tf, strict=True):
        _close(o, t)
    for o, t in zip(os_, ts, strict=True):
        _close(o, t)


def _mask_and_indices(T):
    mask = T.tensor([[True, False, True, True], [False, True, True, True]])
    i0 = T.tensor([[0], [2]])
    i1 = T.tensor([[3, 1, 5, 0]])
    return mask, [i0, i1]


def test_masked_index_pair_are_each_others_gradients():
    x = np.random.default_rng(0).uniform(-1, 1, (3, 4))

    def build(T, a):
        mask, idx = _mask_and_indices(T)
        return T._unsafe_masked_index(a, mask, idx, -2.5) ** 2

    res = _second_order(build, [x])
    _compare_second_order(res)
    assert res[1][2] == ["UnsafeMaskedIndexPutAccumulateBackward0"]


def test_masked_index_put_accumulate_second_order():
    x = np.random.default_rng(1).uniform(-1, 1, (3, 4))
    v = np.random.default_rng(2).uniform(-1, 1, (2, 4))

    def build(T, a, b):
        mask, idx = _mask_and_indices(T)
        return T._unsafe_masked_index_put_accumulate(a, mask, idx, b * b) ** 2

    _compare_second_order(_second_order(build, [x, v]))


def test_max_pool2d_backward_second_order():
    x = np.random.default_rng(3).uniform(-1, 1, (2, 2, 5, 6))

    def build(T, a):
        out, idx = T.nn.functional.max_pool2d_with_indices(a, 3, 2, 1, 1, True)
        g = out.detach() * 0 + a.sum() * 0 + T.ones(tuple(out.shape), dtype=T.float64)
        g = g * (a * a).mean()
        return T.ops.aten.max_pool2d_with_indices_backward(g, a, [3, 3], [2, 2], [1, 1],
                                                          [1, 1], True, idx)

    res = _second_order(build, [x])
    _compare_second_order(res)
    assert res[1][0] == "MaxPool2DWithIndicesBackwardBackward0"


def test_native_dropout_backward_second_order():
    g = np.random.default_rng(4).uniform(-1, 1, (3, 5))
    m = np.random.default_rng(5).uniform(0, 1, (3, 5)) > 0.4

    def build(T, a):
        return T.ops.aten.native_dropout_backward(a * a, T.tensor(m), 2.5) ** 2

    res = _second_order(build, [g])
    _compare_second_order(res)
    assert res[1][0] == "PowBackward0"


def test_native_dropout_backward_of_itself():
    g = np.random.default_rng(6).uniform(-1, 1, (4, 3))
    m = np.random.default_rng(7).uniform(0, 1, (4, 3)) > 0.5
    names, firsts = [], []
    for T in (torch, gt):
        a = _t(T, g)
        out = T.ops.aten.native_dropout_backward(a, T.tensor(m), 1.5)
        (first,) = T.autograd.grad(out, a, T.ones_like(out) * a, create_graph=True)
        names.append((type(out.grad_fn).__name__, type(first.grad_fn).__name__))
        firsts.append(first)
    assert names[0] == names[1]
    _close(firsts[1], firsts[0])


@pytest.mark.parametrize("case", ["masked_index", "put_accumulate", "pool_backward",
                                  "dropout_backward", "slice", "safe_softmax"])
def test_gradcheck_and_gradgradcheck(case):
    rng = np.random.default_rng(8)
    mask, idx = _mask_and_indices(gt)
    if case == "masked_index":
        args = (gt.tensor(rng.uniform(-1, 1, (3, 4)), requires_grad=True),)

        def f(a):
            return gt._unsafe_masked_index(a, mask, idx, 1.5)
    elif case == "put_accumulate":
        args = (gt.tensor(rng.uniform(-1, 1, (3, 4)), requires_grad=True),
                gt.tensor(rng.uniform(-1, 1, (2, 4)), requires_grad=True))

        def f(a, b):
            return gt._unsafe_masked_index_put_accumulate(a, mask, idx, b)
    elif case == "pool_backward":
        x = gt.tensor(rng.uniform(-1, 1, (1, 2, 4, 4)))
        _, pool_idx = gt.nn.functional.max_pool2d_with_indices(x, 2)
        args = (gt.tensor(rng.uniform(-1, 1, (1, 2, 2, 2)), requires_grad=True),)

        def f(g):
            return gt.ops.aten.max_pool2d_with_indices_backward(g, x, [2, 2], [2, 2], [0, 0],
                                                               [1, 1], False, pool_idx)
    elif case == "dropout_backward":
        keep = gt.tensor(rng.uniform(0, 1, (3, 4)) > 0.5)
        args = (gt.tensor(rng.uniform(-1, 1, (3, 4)), requires_grad=True),)

        def f(g):
            return gt.ops.aten.native_dropout_backward(g, keep, 2.0)
    elif case == "slice":
        args = (gt.tensor(rng.uniform(-1, 1, (5, 4)), requires_grad=True),)

        def f(a):
            return gt.ops.aten.slice.Tensor(a, 0, 1, -1, 2)
    else:
        args = (gt.tensor(rng.uniform(-1, 1, (3, 4)), requires_grad=True),)

        def f(a):
            return gt.ops.aten._safe_softmax.default(a, 1)
    assert gt.autograd.gradcheck(f, args)
    assert gt.autograd.gradgradcheck(f, args)


def test_safe_softmax_all_masked_rows_are_zero_as_pytorch():
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.5, -np.inf, 1.0]])
    t = torch.ops.aten._safe_softmax.default(_t(torch, x), 1)
    o = gt.ops.aten._safe_softmax.default(_t(gt, x), 1)
    _close(o, t)
    assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__ == "SafeSoftmaxBackward0"


def _aten(T):
    return T.ops.aten


def _x(T):
    return T.ones(3, 4, dtype=T.float64)


def _m(T):
    return T.ones(3, 4, dtype=T.bool)


def _idx(T):
    return [T.arange(3).view(3, 1), T.arange(4).view(1, 4)]


def _pool(T, grad_shape, idx_shape, kernel=(2, 2), grad_dtype=None, x_shape=(1, 1, 4, 4)):
    return _aten(T).max_pool2d_with_indices_backward(
        T.ones(*grad_shape, dtype=grad_dtype or T.float64), T.ones(*x_shape, dtype=T.float64),
        list(kernel), [2, 2], [0, 0], [1, 1], False, T.zeros(*idx_shape, dtype=T.int64))


CASES = {
    "slice_0d": lambda T: _aten(T).slice.Tensor(T.tensor(1.0), 0),
    "slice_step0": lambda T: _aten(T).slice.Tensor(_x(T), 0, 0, 2, 0),
    "slice_dim": lambda T: _aten(T).slice.Tensor(_x(T), 2),
    "slice_negative": lambda T: _aten(T).slice.Tensor(_x(T), -1, -3, -1, 2),
    "slice_past_end": lambda T: _aten(T).slice.Tensor(_x(T), 1, 10, 20),
    "slice_backwards": lambda T: _aten(T).slice.Tensor(_x(T), 1, 3, 1),
    "slice_default": lambda T: _aten(T).slice.Tensor(_x(T)),
    "mi_float_index": lambda T: T._unsafe_masked_index(
        _x(T), _m(T), [_idx(T)[0].double(), _idx(T)[1]], 0.0),
    "mi_int_mask": lambda T: T._unsafe_masked_index(_x(T), _m(T).long(), _idx(T), 0.0),
    "mi_int32": lambda T: T._unsafe_masked_index(_x(T), _m(T), [i.int() for i in _idx(T)], 0.0),
    "mi_empty": lambda T: T._unsafe_masked_index(_x(T)[:0], _m(T)[:0],
                                                 [_idx(T)[0][:0], _idx(T)[1]], 2.0),
    "mi_one_index": lambda T: T._unsafe_masked_index(_x(T), _m(T)[:, :1], _idx(T)[:1], 1.5),
    "mi_none": lambda T: T._unsafe_masked_index(_x(T), _m(T), [None, _idx(T)[1]], 1.5),
    "mi_int_input": lambda T: T._unsafe_masked_index(_x(T).long(), _m(T), _idx(T), 2),
    "mp_float_index": lambda T: T._unsafe_masked_index_put_accumulate(
        _x(T), _m(T), [_idx(T)[0].double(), _idx(T)[1]], _x(T)),
    "mp_dtype": lambda T: T._unsafe_masked_index_put_accumulate(_x(T), _m(T), _idx(T),
                                                                _x(T).float()),
    "mp_shape": lambda T: T._unsafe_masked_index_put_accumulate(_x(T), _m(T), _idx(T),
                                                                _x(T)[:2]),
    "mp_broadcast": lambda T: T._unsafe_masked_index_put_accumulate(_x(T), _m(T), _idx(T),
                                                                    _x(T)[:1]),
    "mp_int_mask": lambda T: T._unsafe_masked_index_put_accumulate(_x(T), _m(T).long(),
                                                                   _idx(T), _x(T)),
    "mi_mask_wider": lambda T: T._unsafe_masked_index(
        T.ones(3, dtype=T.float64), T.ones(2, 3, dtype=T.bool), [T.tensor([0, 1, 2])], 0.),
    "mi_mask_mismatch": lambda T: T._unsafe_masked_index(
        T.ones(3, dtype=T.float64), T.ones(2, dtype=T.bool), [T.tensor([0, 1, 2])], 0.),
    "mp_mask_wider": lambda T: T._unsafe_masked_index_put_accumulate(
        T.ones(3, dtype=T.float64), T.ones(2, 3, dtype=T.bool), [T.tensor([0, 1, 2])],
        T.ones(3, dtype=T.float64)),
    "mp_mask_mismatch": lambda T: T._unsafe_masked_index_put_accumulate(
        T.ones(3, dtype=T.float64), T.ones(2, dtype=T.bool), [T.tensor([0, 1, 2])],
        T.ones(3, dtype=T.float64)),
    "mp_values_wider": lambda T: T._unsafe_masked_index_put_accumulate(
        T.ones(3, dtype=T.float64), T.ones(3, dtype=T.bool), [T.tensor([0, 1, 2])],
        T.ones(2, 3, dtype=T.float64)),
    "sr_reduce": lambda T: T.segment_reduce(_x(T), "avg", lengths=T.tensor([3])),
    "sr_none": lambda T: T.segment_reduce(_x(T), "sum"),
    "sr_indices": lambda T: T.segment_reduce(_x(T), "sum", lengths=T.tensor([3]),
                                             indices=T.tensor([3])),
    "sr_axis": lambda T: T.segment_reduce(_x(T), "sum", lengths=T.tensor([[1, 3]] * 3), axis=0),
    "sr_axis_range": lambda T: T.segment_reduce(_x(T), "sum", lengths=T.tensor([3]), axis=2),
    "sr_rank": lambda T: T.segment_reduce(_x(T), "sum", lengths=T.tensor([[[3]]])),
    "sr_sum": lambda T: T.segment_reduce(_x(T), "sum", lengths=T.tensor([1, 1])),
    "sr_negative": lambda T: T.segment_reduce(_x(T), "max", lengths=T.tensor([4, -1])),
    "sr_unsafe": lambda T: T.segment_reduce(_x(T), "max", lengths=T.tensor([2, 0]),
                                            unsafe=True),
    "sr_float_lengths": lambda T: T.segment_reduce(_x(T), "sum", lengths=T.tensor([2, 1.])),
    "sr_int_lengths": lambda T: T.segment_reduce(_x(T), "amin", lengths=T.tensor([2, 1]).int()),
    "sr_int_data": lambda T: T.segment_reduce(_x(T).long(), "sum", lengths=T.tensor([3])),
    "sr_empty": lambda T: T.segment_reduce(_x(T)[:0], "sum", lengths=T.tensor([0])),
    "sr_offsets": lambda T: T.segment_reduce(_x(T), "amax", offsets=T.tensor([0, 1, 3])),
    "sr_both": lambda T: T.segment_reduce(_x(T), "prod", lengths=T.tensor([3]),
                                          offsets=T.tensor([0, 1, 3])),
    "nd_float_mask": lambda T: _aten(T).native_dropout_backward(_x(T), _x(T), 2.0),
    "nd_int_mask": lambda T: _aten(T).native_dropout_backward(_x(T), _x(T).long(), 2.0),
    "nd_broadcast": lambda T: _aten(T).native_dropout_backward(_x(T), _m(T)[:1], 2.0),
    "nd_shapes": lambda T: _aten(T).native_dropout_backward(_x(T), _m(T)[:2], 2.0),
    "nd_int_grad": lambda T: _aten(T).native_dropout_backward(_x(T).long(), _m(T), 2.0),
    "nd_float32": lambda T: _aten(T).native_dropout_backward(_x(T).float(), _m(T), 2.0),
    "pool_indices_shape": lambda T: _pool(T, (1, 1, 2, 2), (1, 1, 2, 1)),
    "pool_grad_shape": lambda T: _pool(T, (1, 1, 3, 2), (1, 1, 2, 2)),
    "pool_dtype": lambda T: _pool(T, (1, 1, 2, 2), (1, 1, 2, 2), grad_dtype=T.float32),
    "pool_ok": lambda T: _pool(T, (1, 1, 2, 2), (1, 1, 2, 2)),
    "pool_3d": lambda T: _pool(T, (1, 2, 2), (1, 2, 2), x_shape=(1, 4, 4)),
    "pool_kernel_mismatch": lambda T: _pool(T, (1, 1, 2, 2), (1, 1, 2, 2), kernel=(3, 3)),
    "pool_with_indices": lambda T: T.nn.functional.max_pool2d_with_indices(
        T.arange(16.).view(1, 1, 4, 4), 2),
}


def _outcome(call, T):
    try:
        return "ok", call(T)
    except Exception as err:  # noqa: BLE001
        return "raised", err


@pytest.mark.parametrize("case", sorted(CASES))
def test_results_and_errors_as_pytorch(case):
    kind, theirs = _outcome(CASES[case], torch)
    if kind == "raised":
        assert_raises_as_pytorch(CASES[case], gt, torch)
        return
    ours = CASES[case](gt)
    pairs = list(zip(ours, theirs, strict=True)) if isinstance(theirs, tuple) else [
        (ours, theirs)]
    for o, t in pairs:
        assert str(o.dtype) == str(t.dtype)
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_array_equal(o.numpy(), t.numpy())


@pytest.mark.parametrize("reduce", ["max", "min", "prod", "mean", "sum"])
def test_segment_reduce_ties_zeros_and_nans_in_backward(reduce):
    # max/min ties share a positive gradient only (PyTorch's kernel), prod's zeros take
    # the product of the others, NaNs win
    data = np.array([[1.0, 3.0, 3.0, 0.0, 0.0, 2.0, np.nan, 5.0],
                     [2.0, 2.0, -1.0, 0.0, 4.0, 4.0, 1.0, 1.0]]).T
    cot = np.array([[0.5, -1.5, 2.0, 1.0], [-0.5, 1.0, 3.0, -2.0]]).T
    res = []
    for T in (torch, gt):
        a = T.tensor(data, requires_grad=True)
        out = T.segment_reduce(a, reduce, lengths=T.tensor([3, 2, 0, 3]), initial=None
                               if reduce != "prod" else 2.0)
        out.backward(T.tensor(np.concatenate([cot[:2], cot[2:3] * 0, cot[3:]])))
        res.append((out, a.grad))
    (to, tg), (oo, og) = res
    assert type(oo.grad_fn).__name__ == "SegmentReduceBackward0"
    torch.testing.assert_close(torch.from_numpy(oo.detach().numpy()), to.detach(),
                               equal_nan=True)
    torch.testing.assert_close(torch.from_numpy(og.numpy()), tg, equal_nan=True)


def test_segment_reduce_gradient_has_no_derivative_as_pytorch():
    def call(T):
        x = T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64, requires_grad=True)
        out = T.segment_reduce(x * x, "prod", lengths=T.tensor([2, 2]))
        (g,) = T.autograd.grad(out.sum(), x, create_graph=True)
        return T.autograd.grad(g.sum(), x)

    assert_raises_as_pytorch(call, gt, torch)


@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm_with_update_updates_running_stats_as_pytorch(affine):
    rng = np.random.default_rng(9)
    x = rng.normal(size=(4, 3, 5))
    w, b = rng.uniform(0.5, 1.5, 3), rng.normal(size=3)
    res = []
    for T in (torch, gt):
        rm, rv = T.tensor(rng.normal(size=3) * 0 + 0.25), T.tensor(np.full(3, 2.0))
        xt = T.tensor(x, requires_grad=True)
        wt, bt = (T.tensor(w, requires_grad=True), T.tensor(b, requires_grad=True)) if affine \
            else (None, None)
        out, mean, invstd, reserve = T.ops.aten._batch_norm_with_update(
            xt, wt, bt, rm, rv, 0.3, 1e-4)
        cot = T.tensor(np.linspace(-1, 1, x.size).reshape(x.shape))
        if not affine:  # (PyTorch's backward needs a weight: both refuse alike)
            with pytest.raises(RuntimeError, match="for argument #2 'weight'"):
                out.backward(cot)
            res.append([type(out.grad_fn).__name__, out, mean, invstd, reserve, rm, rv])
            continue
        out.backward(cot)
        res.append([type(out.grad_fn).__name__, out, mean, invstd, reserve, rm, rv, xt.grad]
                   + ([wt.grad, bt.grad] if affine else []))
    assert res[0][0] == res[1][0] == "BatchNormWithUpdateBackward0"
    for o, t in zip(res[1][1:], res[0][1:], strict=True):
        _close(o, t)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", [
    {"size": (3, 4)}, {"size": (13, 5)}, {"size": (7, 30)}, {"scale_factor": 0.37},
    {"scale_factor": (1.7, 0.45)}, {"size": (4, 9), "align_corners": True},
    {"scale_factor": 0.5, "recompute_scale_factor": True}, {"size": 1},
])
def test_interpolate_antialias_bilinear(kwargs, dtype):
    data = np.random.default_rng(3).normal(size=(2, 3, 11, 14)).astype(dtype)
    res = []
    for T in (torch, gt):
        x = T.tensor(data, requires_grad=True)
        out = T.nn.functional.interpolate(x, mode="bilinear", antialias=True, **kwargs)
        cot = T.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).astype(dtype))
        (g,) = T.autograd.grad(out, x, cot * x.sum(), create_graph=True)
        (gg,) = T.autograd.grad(g.square().sum(), x)
        res.append((type(out.grad_fn).__name__, out, g, gg))
    assert res[0][0] == res[1][0] == "UpsampleBilinear2DAaBackward0"
    for o, t in zip(res[1][1:], res[0][1:], strict=True):
        _close(o, t)
