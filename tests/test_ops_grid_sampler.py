"""torch.grid_sampler / grid_sampler_2d / grid_sampler_3d and F.grid_sample / F.affine_grid
against PyTorch: every OpInfo sample of op_db (values, dtypes, shapes, grad_fn names and
vector-Jacobian products, through gradcli.coverage.check_sample), the modes the OpInfos
leave out, second derivatives, gradcheck/gradgradcheck (OpInfo: supports_gradgrad), and
the errors with PyTorch's texts in PyTorch's order."""

from __future__ import annotations

import itertools
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

    _OPINFO = {op.name: op for op in op_db
               if op.name in ("grid_sampler_2d", "grid_sampler_3d", "nn.functional.grid_sample")}


def _samples(name, dtype, limit_numel=200_000):
    op = _OPINFO[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = []
        for s in op.sample_inputs("cpu", dtype, requires_grad=True):
            if s.input.numel() <= limit_numel:
                out.append(s)
    return op, out


def _bicubic(sample):
    return 2 in sample.args[1:2] or sample.kwargs.get("mode") == "bicubic"


def _run_samples(name, dtype):
    op, samples = _samples(name, dtype)
    assert samples
    fn = coverage.resolve(op)
    assert fn is not None, f"gradcli lacks {name}"
    coverage._CURRENT[0] = op.op
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, sample in enumerate(samples):
            if dtype == torch.float32 and _bicubic(sample):
                _as_accurate_as_pytorch(op, fn, sample, seed=i)
            else:
                coverage.check_sample(fn, sample, seed=i)
    return len(samples)


def _as_accurate_as_pytorch(op, fn, sample, seed):
    """float32 bicubic: PyTorch's own kernel sums sixteen taps in float32 and its grid
    gradient is up to 7e-5 off the exact (float64) value, beyond torch.testing's float32
    tolerance: gradcli's result must be as close to the exact value as PyTorch's is."""
    x, g = sample.input, sample.args[0] if sample.args else None
    rest, kwargs = sample.args[1:], dict(sample.kwargs)
    results = {}
    for key, T, dt in (("exact", torch, torch.float64), ("torch", torch, torch.float32),
                       ("ours", gt, gt.float32)):
        a = T.tensor(x.detach().numpy(), dtype=dt, requires_grad=True)
        b = T.tensor(g.detach().numpy(), dtype=dt, requires_grad=True)
        call = op.op if T is torch else fn
        out = call(a, b, *rest, **kwargs)
        cot = T.tensor(np.random.default_rng(seed).uniform(-1, 1, tuple(out.shape)), dtype=dt)
        ga, gb = T.autograd.grad(out, (a, b), cot)
        results[key] = [np.asarray(t.detach().numpy(), np.float64) for t in (out, ga, gb)]
        if key == "ours":
            assert str(out.dtype) == "torch.float32"
            assert type(out.grad_fn).__name__ == "GridSampler2DBackward0"
    for exact, theirs, ours in zip(*results.values(), strict=True):
        their_err = np.abs(theirs - exact).max()
        our_err = np.abs(ours - exact).max()
        assert our_err <= 1.5 * their_err + 2e-6, (our_err, their_err)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("name", ["grid_sampler_2d", "grid_sampler_3d",
                                  "nn.functional.grid_sample"])
def test_every_opinfo_sample(name, dtype):
    assert _run_samples(name, dtype) >= 12


def _pair(shape_in, shape_grid, seed, dtype=np.float64, grid_range=1.3):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, shape_in).astype(dtype)
    g = rng.uniform(-grid_range, grid_range, shape_grid).astype(dtype)
    return x, g


def _both(x, g):
    tx, tg = (torch.tensor(a, requires_grad=True) for a in (x, g))
    ox, og = (gt.tensor(a, requires_grad=True) for a in (x, g))
    return (tx, tg), (ox, og)


def _close(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    torch.testing.assert_close(torch.from_numpy(np.array(ours.detach().numpy())),
                               theirs.detach())


MODES_2D = list(itertools.product(range(3), range(3), (False, True)))
MODES_3D = list(itertools.product(range(2), range(3), (False, True)))


@pytest.mark.parametrize("mode,padding,align", MODES_3D)
def test_3d_every_mode_with_gradients(mode, padding, align):
    # the 3-d OpInfo samples only bilinear: nearest here too
    x, g = _pair((2, 3, 3, 4, 5), (2, 2, 3, 4, 3), seed=mode * 10 + padding, grid_range=1.6)
    (tx, tg), (ox, og) = _both(x, g)
    t = torch.grid_sampler_3d(tx, tg, mode, padding, align)
    o = gt.grid_sampler_3d(ox, og, mode, padding, align)
    _close(o, t)
    assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__ == "GridSampler3DBackward0"
    v = np.random.default_rng(5).uniform(-1, 1, tuple(t.shape))
    t.backward(torch.tensor(v))
    o.backward(gt.tensor(v))
    _close(ox.grad, tx.grad)
    _close(og.grad, tg.grad)


@pytest.mark.parametrize("mode,padding,align", MODES_2D)
def test_2d_second_derivatives_match(mode, padding, align):
    x, g = _pair((1, 2, 4, 5), (1, 3, 2, 2), seed=mode * 10 + padding)
    (tx, tg), (ox, og) = _both(x, g)
    v = np.random.default_rng(1).uniform(-1, 1, (1, 2, 3, 2))
    w = [np.random.default_rng(2).uniform(-1, 1, a.shape) for a in (x, g)]
    results = []
    for T, a, b in ((torch, tx, tg), (gt, ox, og)):
        out = T.grid_sampler_2d(a, b, mode, padding, align)
        ga, gb = T.autograd.grad(out, (a, b), T.tensor(v), create_graph=True)
        s = (ga * T.tensor(w[0])).sum() + (gb * T.tensor(w[1])).sum()
        names = (type(ga.grad_fn).__name__ if ga.grad_fn else None,
                 type(gb.grad_fn).__name__ if gb.grad_fn else None)
        assert names == ("GridSampler2DBackwardBackward0",) * 2
        second = T.autograd.grad(s, (a, b), allow_unused=True)
        results.append((ga, gb, names, second))
    (tga, tgb, _, tsec), (oga, ogb, _, osec) = results
    _close(oga, tga)
    _close(ogb, tgb)
    for o, t in zip(osec, tsec, strict=True):
        if t is None or o is None:
            assert o is None and t is None
        else:
            _close(o, t)


@pytest.mark.parametrize("mode,padding,align", [(0, 0, False), (0, 2, True), (2, 1, False),
                                                (2, 2, True), (1, 1, True)])
def test_gradcheck_and_gradgradcheck(mode, padding, align):
    x, g = _pair((1, 2, 3, 4), (1, 2, 2, 2), seed=3, grid_range=0.9)
    ox = gt.tensor(x, requires_grad=True)
    og = gt.tensor(g, requires_grad=mode != 1)  # (nearest: piecewise constant in the grid)

    def f(a, b):
        return gt.grid_sampler_2d(a, b, mode, padding, align)

    assert gt.autograd.gradcheck(f, (ox, og))
    assert gt.autograd.gradgradcheck(f, (ox, og))


@pytest.mark.parametrize("mode,padding,align", [(0, 0, True), (1, 2, False), (0, 1, False)])
def test_3d_gradcheck_and_gradgradcheck(mode, padding, align):
    x, g = _pair((1, 1, 2, 3, 2), (1, 1, 2, 2, 3), seed=4, grid_range=0.9)
    ox = gt.tensor(x, requires_grad=True)
    og = gt.tensor(g, requires_grad=mode != 1)

    def f(a, b):
        return gt.grid_sampler_3d(a, b, mode, padding, align)

    assert gt.autograd.gradcheck(f, (ox, og))
    assert gt.autograd.gradgradcheck(f, (ox, og))


@pytest.mark.parametrize("fname", ["grid_sampler", "grid_sampler_2d", "grid_sampler_3d"])
def test_dispatcher_and_kernels_agree_with_pytorch(fname):
    x, g = _pair((2, 3, 4, 5), (2, 3, 2, 2), seed=7)
    (tx, tg), (ox, og) = _both(x, g)
    if fname == "grid_sampler_3d":
        x3, g3 = _pair((2, 3, 4, 5, 2), (2, 3, 2, 2, 3), seed=8)
        (tx, tg), (ox, og) = _both(x3, g3)
    t = getattr(torch, fname)(tx, tg, 1, 1, True)
    o = getattr(gt, fname)(ox, og, 1, 1, True)
    _close(o, t)
    assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_spatial_transformer_affine_grid_then_grid_sample(mode, padding):
    # the spatial transformer tutorial's pair: a grid from theta, the image sampled on it
    rng = np.random.default_rng(11)
    theta = np.array([[[0.9, -0.3, 0.1], [0.25, 1.1, -0.2]],
                      [[1.2, 0.1, 0.0], [-0.1, 0.8, 0.3]]])
    img = rng.uniform(-1, 1, (2, 3, 6, 7))
    outs = []
    for T in (torch, gt):
        th = T.tensor(theta, requires_grad=True)
        im = T.tensor(img, requires_grad=True)
        grid = T.nn.functional.affine_grid(th, [2, 3, 5, 4], align_corners=False)
        out = T.nn.functional.grid_sample(im, grid, mode=mode, padding_mode=padding,
                                          align_corners=False)
        out.backward(T.tensor(rng.uniform(-1, 1, (2, 3, 5, 4)) * 0 + 1))
        outs.append((grid, out, th.grad, im.grad))
    (tg, to, tth, tim), (og, oo, oth, oim) = outs
    _close(og, tg)
    assert type(og.grad_fn).__name__ == type(tg.grad_fn).__name__ == "AffineGridGeneratorBackward0"
    _close(oo, to)
    assert type(oo.grad_fn).__name__ == "GridSampler2DBackward0"
    _close(oim, tim)
    _close(oth, tth)


@pytest.mark.parametrize("size", [[2, 3, 4, 5], [1, 1, 1, 1], [2, 2, 3, 4, 5], [1, 1, 1, 2, 1]])
@pytest.mark.parametrize("align", [False, True])
def test_affine_grid(size, align):
    rng = np.random.default_rng(len(size))
    nd = len(size) - 2
    theta = rng.uniform(-1, 1, (size[0], nd, nd + 1))
    tt, ot = torch.tensor(theta, requires_grad=True), gt.tensor(theta, requires_grad=True)
    t = torch.nn.functional.affine_grid(tt, size, align_corners=align)
    o = gt.nn.functional.affine_grid(ot, size, align_corners=align)
    _close(o, t)
    assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__
    v = rng.uniform(-1, 1, tuple(t.shape))
    t.backward(torch.tensor(v))
    o.backward(gt.tensor(v))
    _close(ot.grad, tt.grad)


AFFINE_ERRORS = [
    lambda T: T.nn.functional.affine_grid(T.zeros(1, 2, 3), [1, 1, 4], align_corners=False),
    lambda T: T.nn.functional.affine_grid(T.zeros(1, 3, 3), [1, 1, 4, 4], align_corners=False),
    lambda T: T.nn.functional.affine_grid(T.zeros(2, 2, 3), [1, 1, 4, 4], align_corners=False),
    lambda T: T.nn.functional.affine_grid(T.zeros(1, 2, 3, dtype=T.int64), [1, 1, 4, 4],
                                          align_corners=False),
    lambda T: T.nn.functional.affine_grid(T.zeros(1, 3, 4), [1, 1, 2, 2], align_corners=False),
    lambda T: T.nn.functional.affine_grid(T.zeros(1, 2, 3), [1, 1, 0, 4], align_corners=False),
    lambda T: T.nn.functional.affine_grid(T.zeros(1, 2, 3), (1, 1, 0, 4), align_corners=False),
    lambda T: T.nn.functional.affine_grid(T.zeros(2, 3, 4), [3, 1, 4, 4, 2],
                                          align_corners=True),
    lambda T: T.nn.functional.affine_grid(T.zeros(1, 2, 3), [0, 1, 1, 4], align_corners=True),
    lambda T: T.nn.functional.affine_grid(T.zeros(1, 2, 3), [1, 1, 1, -4], align_corners=True),
    lambda T: T.affine_grid_generator(T.zeros(1, 2, 3), [1, 1, 2], False),
    lambda T: T.affine_grid_generator(T.zeros(1, 2, 3), [1, 1, 2, 2, 2], False),
]


def test_affine_grid_unit_size_warns_and_skips_the_size_check_as_pytorch():
    for T in (torch, gt):
        with pytest.warns(UserWarning, match="unit-size grids when align_corners=True"):
            out = T.nn.functional.affine_grid(T.zeros(0, 2, 3), [0, 1, 1, 4],
                                              align_corners=True)
        assert tuple(out.shape) == (0, 1, 4, 2)


@pytest.mark.parametrize("case", range(len(AFFINE_ERRORS)))
def test_affine_grid_errors(case):
    assert_raises_as_pytorch(AFFINE_ERRORS[case], gt, torch)


def _x(T, *shape, dtype=None):
    return T.ones(*shape, dtype=dtype or T.float64)


ERRORS = {
    "batch": lambda T, f, m: f(_x(T, 1, 2, 3, 4), _x(T, 0, 2, 2, 2), m, 0, False),
    "rank_then_batch": lambda T, f, m: f(_x(T, 2, 3, 4), _x(T, 1, 2, 2, 2), m, 0, False),
    "last_dim": lambda T, f, m: f(_x(T, 1, 2, 3, 4), _x(T, 1, 2, 2, 1), m, 0, False),
    "empty_spatial": lambda T, f, m: f(_x(T, 1, 2, 0, 4), _x(T, 1, 2, 2, 2), m, 0, False),
    "input_dtype": lambda T, f, m: f(_x(T, 1, 2, 3, 4, dtype=T.int64),
                                     _x(T, 1, 2, 2, 2, dtype=T.int64), m, 0, False),
    "bool": lambda T, f, m: f(_x(T, 1, 2, 3, 4, dtype=T.bool), _x(T, 1, 2, 2, 2), m, 0, False),
    "grid_dtype": lambda T, f, m: f(_x(T, 1, 2, 3, 4, dtype=T.float32), _x(T, 1, 2, 2, 2),
                                    m, 0, False),
    "grid_dtype2": lambda T, f, m: f(_x(T, 1, 2, 3, 4), _x(T, 1, 2, 2, 2, dtype=T.int64),
                                     m, 0, False),
    "5d_in_4d_kernel": lambda T, f, m: f(_x(T, 1, 2, 3, 4, 2), _x(T, 1, 2, 2, 2, 3), m, 0,
                                         False),
    "4d_grid_for_5d": lambda T, f, m: f(_x(T, 1, 2, 3, 4, 2), _x(T, 1, 2, 2, 2), m, 0, False),
    "5d_grid_for_4d": lambda T, f, m: f(_x(T, 1, 2, 3, 4), _x(T, 1, 2, 2, 2, 3), m, 0, False),
    "3d_both": lambda T, f, m: f(_x(T, 2, 3, 4), _x(T, 2, 5, 1), m, 0, False),
    "6d_both": lambda T, f, m: f(_x(T, 1, 1, 2, 2, 2, 2), _x(T, 1, 1, 1, 1, 1, 4), m, 0, False),
    "empty_channels_ok": lambda T, f, m: f(_x(T, 1, 0, 3, 4), _x(T, 1, 2, 2, 2), m, 0,
                                           False).shape[1] + None,
}


@pytest.mark.parametrize("mode", [0, 2])
@pytest.mark.parametrize("fname", ["grid_sampler", "grid_sampler_2d", "grid_sampler_3d"])
@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_as_pytorch(case, fname, mode):
    call = lambda T: ERRORS[case](T, getattr(T, fname), mode)  # noqa: E731
    try:
        out = call(torch)
    except Exception:  # noqa: BLE001
        assert_raises_as_pytorch(call, gt, torch)
        return
    ours = call(gt)  # (a case one entry point accepts: the result is PyTorch's)
    assert tuple(ours.shape) == tuple(out.shape) and str(ours.dtype) == str(out.dtype)


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_grid_sample_errors_as_pytorch(case):
    names = {0: "bilinear", 2: "bicubic"}

    def call(T):
        F = T.nn.functional
        return ERRORS[case](T, lambda a, b, m, p, ac: F.grid_sample(
            a, b, mode=names[m], padding_mode="zeros", align_corners=ac), 2)

    assert_raises_as_pytorch(call, gt, torch)


@pytest.mark.parametrize("kwargs", [{"mode": "linear"}, {"padding_mode": "constant"},
                                    {"mode": 0}])
def test_grid_sample_mode_names(kwargs):
    assert_raises_as_pytorch(lambda T: T.nn.functional.grid_sample(
        _x(T, 1, 1, 2, 2), _x(T, 1, 1, 1, 2), align_corners=True, **kwargs), gt, torch)


def test_grid_sample_default_align_corners_warns_as_pytorch():
    for T in (torch, gt):
        with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
            T.nn.functional.grid_sample(_x(T, 1, 1, 2, 2), _x(T, 1, 1, 1, 2) * 0.3)


@pytest.mark.parametrize("call", [
    lambda T: T.grid_sampler_2d(_x(T, 1, 1, 2, 2), _x(T, 1, 1, 1, 2), "bilinear", 0, False),
    lambda T: T.grid_sampler_3d(_x(T, 1, 1, 2, 2, 2), _x(T, 1, 1, 1, 1, 3), 0, 0),
    lambda T: T.grid_sampler(_x(T, 1, 1, 2, 2), "grid", 0, 0, False),
])
def test_argument_errors_as_pytorch(call):
    assert_raises_as_pytorch(call, gt, torch)


@pytest.mark.parametrize("fname", ["grid_sampler_2d", "grid_sampler_3d"])
@pytest.mark.parametrize("modes", [(3, 0), (0, 3), (-1, 0)])
def test_mode_numbers_outside_the_enums_are_refused(fname, modes):
    # PyTorch's kernels leave the output unwritten there (garbage): gradcli refuses
    nd = 2 if fname.endswith("2d") else 3
    x = gt.ones(*(1, 1) + (2,) * nd)
    g = gt.zeros(*(1,) + (1,) * nd + (nd,))
    with pytest.raises(RuntimeError, match="expected interpolation_mode in 0, 1, 2"):
        getattr(gt, fname)(x, g, *modes, False)


@pytest.mark.parametrize("mode,padding,align", MODES_3D)
def test_3d_second_derivatives_and_nodes(mode, padding, align):
    x, g = _pair((1, 2, 3, 2, 3), (1, 2, 2, 1, 3), seed=mode * 10 + padding + 1)
    (tx, tg), (ox, og) = _both(x, g)
    v = np.random.default_rng(3).uniform(-1, 1, (1, 2, 2, 2, 1))
    res = []
    for T, a, b in ((torch, tx, tg), (gt, ox, og)):
        out = T.grid_sampler_3d(a, b, mode, padding, align)
        ga, gb = T.autograd.grad(out, (a, b), T.tensor(v), create_graph=True)
        assert type(ga.grad_fn).__name__ == "GridSampler3DBackwardBackward0"
        s = (ga * ga).sum() + (gb * gb * 3).sum()
        res.append((ga, gb) + T.autograd.grad(s, (a, b), allow_unused=True))
    for o, t in zip(res[1], res[0], strict=True):
        if t is None or o is None:
            assert o is None and t is None
        else:
            _close(o, t)
