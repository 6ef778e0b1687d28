"""Issue #23's tutorial names (gumbel_softmax, torch.range, asarray, the *_with_indices
pools, relu_, native_channel_shuffle) against PyTorch: values, seeded draws, grad_fn
names, warnings and errors."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402


def _both(fn):
    """fn(lib) under both libraries: (ours, theirs) results or (type, message) errors."""
    out = []
    for lib in (gt, torch):
        try:
            out.append(fn(lib))
        except Exception as err:  # noqa: BLE001 - compared below
            out.append((type(err).__name__, str(err)))
    return out


def _same(a, b, exact=False):
    assert str(a.dtype) == str(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    x, y = a.detach().numpy(), b.detach().numpy()
    if exact:
        assert np.array_equal(x, y)
    else:
        np.testing.assert_allclose(x, y, rtol=1.3e-6, atol=1e-5)


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("dim", [-1, 0])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gumbel_softmax_seeded_as_pytorch(hard, dim, dtype):
    results, grads = [], []
    for lib in (gt, torch):
        lib.manual_seed(7)
        x = lib.randn(4, 6, dtype=getattr(lib, dtype)).t().requires_grad_()
        y = lib.nn.functional.gumbel_softmax(x, tau=0.5, hard=hard, dim=dim)
        (y * lib.arange(4.0, dtype=y.dtype)).sum().backward()
        results.append(y)
        grads.append(x.grad)
    assert type(results[0].grad_fn).__name__ == type(results[1].grad_fn).__name__
    _same(*results, exact=hard)
    _same(*grads)


def test_gumbel_softmax_eps_warns():
    for lib in (gt, torch):
        with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
            lib.nn.functional.gumbel_softmax(lib.zeros(3), eps=1e-3)


@pytest.mark.parametrize("args, kwargs", [
    ((1, 4), {}), ((0, 1, 0.3), {}), ((0, 1, 0.1), {"dtype": "float64"}), ((4, 1, -1), {}),
    ((1, 4), {"dtype": "int64"}), ((1.5, 3), {}), ((1.7, 5.2, 1.5), {"dtype": "int32"}),
    ((-2, 2, 0.5), {"requires_grad": True}), ((1, 4, 0), {}), ((4, 1), {}), ((1, 4, -1), {}),
    ((1, 3), {"dtype": "int64", "requires_grad": True}), ((5,), {}),
])
def test_range_as_pytorch(args, kwargs):
    def call(lib):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            result = lib.range(*args, **kw)
        assert any("torch.range is deprecated" in str(w.message) for w in seen)
        return result

    ours, theirs = _both(call)
    if isinstance(theirs, tuple):
        assert ours == theirs
    else:
        _same(ours, theirs, exact=True)
        assert ours.requires_grad == theirs.requires_grad


def test_range_warning_points_at_caller():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        gt.range(0, 2)
    assert seen[0].filename == __file__


def test_range_out():
    for lib in (gt, torch):
        out = lib.empty(0, dtype=lib.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.range(0, 1, 0.25, out=out)
        assert out.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]


def _make(lib, kind):
    if kind == "list":
        return [1, 2, 3]
    if kind == "floats":
        return [[1.0, 2.5], [3, 4]]
    if kind == "scalar":
        return 3.5
    if kind == "ragged":
        return [[1, 2], [3]]
    if kind == "np":
        return np.arange(3.0)
    if kind == "np32":
        return np.arange(3, dtype=np.int32)
    if kind == "tensor":
        return lib.ones(3)
    if kind == "npscalar":
        return np.float32(2)
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["list", "floats", "scalar", "ragged", "np", "np32",
                                  "tensor", "npscalar"])
@pytest.mark.parametrize("opts", [{}, {"copy": True}, {"copy": False}, {"dtype": "float64"},
                                  {"dtype": "float64", "copy": False},
                                  {"dtype": "int32", "copy": True}, {"requires_grad": True}])
def test_asarray_as_pytorch(kind, opts):
    def call(lib):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in opts.items()}
        obj = _make(lib, kind)
        result = lib.asarray(obj, **kw)
        aliases = None
        if isinstance(obj, np.ndarray):
            obj.flat[0] = 42  # (does the result share the array's memory?)
            aliases = result.flatten()[0].item() == 42
        elif kind == "tensor":
            aliases = result is obj
        return result, aliases

    ours, theirs = _both(call)
    if isinstance(theirs[0], str):
        assert ours == theirs
        return
    _same(ours[0], theirs[0], exact=True)
    assert ours[1] == theirs[1]
    assert ours[0].requires_grad == theirs[0].requires_grad


def test_asarray_requires_grad_rules():
    for lib in (gt, torch):
        leaf = lib.ones(3, requires_grad=True)
        mid = leaf * 2
        detached = lib.asarray(mid, requires_grad=False)
        assert detached.grad_fn is None and not detached.requires_grad
        kept = lib.asarray(mid, dtype=lib.float64)  # (a conversion keeps the graph)
        assert type(kept.grad_fn).__name__ == "ToCopyBackward0"
        assert lib.asarray(leaf, requires_grad=False) is leaf and not leaf.requires_grad


def test_asarray_refuses_raw_buffers():
    with pytest.raises(TypeError, match="not supported by gradcli"):
        gt.asarray(b"abcd")


@pytest.mark.parametrize("name, args", [
    ("max_pool1d_with_indices", (2,)), ("max_pool3d_with_indices", (2,)),
    ("adaptive_max_pool1d_with_indices", (2,)), ("adaptive_max_pool2d_with_indices", (2,)),
    ("adaptive_max_pool3d_with_indices", (2,)), ("max_pool2d_with_indices", (2,)),
])
def test_pools_with_indices(name, args):
    dims = 1 if "1d" in name else 2 if "2d" in name else 3
    data = np.random.default_rng(1).standard_normal((1, 2) + (5,) * dims).astype(np.float32)
    outs = []
    for lib in (gt, torch):
        x = lib.tensor(data, requires_grad=True)
        values, indices = getattr(lib.nn.functional, name)(x, *args)
        values.sum().backward()
        outs.append((values, indices, x.grad))
    (v1, i1, g1), (v2, i2, g2) = outs
    _same(v1, v2, exact=True)
    _same(i1, i2, exact=True)
    _same(g1, g2)
    assert type(v1.grad_fn).__name__ == type(v2.grad_fn).__name__


def test_torch_max_pool1d_with_indices():
    data = np.random.default_rng(2).standard_normal((2, 3, 7)).astype(np.float32)
    for kwargs in ({}, {"stride": 1}, {"padding": 1, "ceil_mode": True}):
        ours = gt.max_pool1d_with_indices(gt.tensor(data), 3, **kwargs)
        theirs = torch.max_pool1d_with_indices(torch.tensor(data), 3, **kwargs)
        _same(ours[0], theirs[0], exact=True)
        _same(ours[1], theirs[1], exact=True)


def test_relu_():
    for lib in (gt, torch):
        x = lib.tensor([-1.0, 2.0])
        assert lib.nn.functional.relu_(x) is x and x.tolist() == [0.0, 2.0]


def test_native_channel_shuffle():
    data = np.arange(24.0).reshape(1, 6, 4)
    outs = []
    for lib in (gt, torch):
        x = lib.tensor(data, requires_grad=True)
        y = lib.nn.functional.native_channel_shuffle(x, 3)
        assert type(y.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match=r"derivative for aten::native_channel_shuffle "
                                               r"is not implemented"):
            y.sum().backward()
        outs.append(y)
    _same(*outs, exact=True)
    for args in ((np.zeros(4), 2), (np.zeros((1, 3, 2)), 2), (np.zeros((1, 4, 2)), 0)):
        ours, theirs = _both(lambda lib, a=args: lib.native_channel_shuffle(lib.tensor(a[0]), a[1]))
        assert ours == theirs
