"""The OpInfo sweep's leftovers fixed in round 18, against PyTorch 2.13: scatter_reduce
and index_reduce prod (zeros in the input and src, PyTorch's gradients and its
double-backward Error node and text), integer scatter_reduce without the input's own
values, the index order of torch.sort / argsort (stable=False) and torch.mode on long
rows with ties (std::sort's order), index_add of 0-d bools, gather with an empty index of
another rank; plus op_db's samples of each op through both."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _both(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(gt), fn(torch)


def _same(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs, strict=True):
            _same(o, t)
        return
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-7,
                               atol=1e-7)
    assert (ours.grad_fn is None) == (theirs.grad_fn is None)
    if theirs.grad_fn is not None:
        assert ours.grad_fn.name() == theirs.grad_fn.name()


@pytest.mark.parametrize("fn_name", ["scatter_reduce", "index_reduce"])
def test_prod_double_backward_error(fn_name):
    """PyTorch's test_scatter_index_reduce_prod_gradgrad_error: two zeros of src meeting
    in one place pass gradcheck, and gradgradcheck raises its text."""
    what = "src" if fn_name == "scatter_reduce" else "source"
    message = (f"{fn_name}(): Double backward is unsupported for {what} when >1 zeros in "
               f"{what} are scattered to the same position in self")
    for T in (gt, torch):
        inp = T.tensor([1.0], dtype=T.float64, requires_grad=True)
        src = T.tensor([0.0, 0.0], dtype=T.float64, requires_grad=True)
        idx = T.tensor([0, 0])
        fn = getattr(T, fn_name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert T.autograd.gradcheck(fn, (inp, 0, idx, src, "prod"), check_batched_grad=False)
            with pytest.raises(RuntimeError) as err:
                T.autograd.gradgradcheck(fn, (inp, 0, idx, src, "prod"))
            assert str(err.value) == message
            out = fn(inp, 0, idx, src, "prod")
            g_inp, g_src = T.autograd.grad(out.sum(), (inp, src), create_graph=True)
        assert g_src.grad_fn.name() == "torch::autograd::Error"
        assert type(g_src.grad_fn).__name__ == "Error"
        assert g_src.tolist() == [0.0, 0.0] and g_inp.tolist() == [0.0]


SCATTER_PROD = [
    ([0.0, 2, 3], [0.0, 5, 0, 4], [0, 0, 1, 2], True),
    ([1.0, 0, 3], [2.0, 0, 1, 4], [1, 1, 0, 2], False),
    ([2.0, 3], [0.0, 1.5, 2], [0, 1, 1], True),
    ([2.0, 3, 0], [1.5, -2, 0.5, 3], [2, 2, 0, 0], False),
]


@pytest.mark.parametrize("case", range(len(SCATTER_PROD)))
def test_scatter_reduce_prod_gradients_with_zeros(case):
    a, s, i, include_self = SCATTER_PROD[case]
    w = [1.0, -2.0, 3.0][:len(a)]

    def run(T):
        A = T.tensor(a, dtype=T.float64, requires_grad=True)
        S = T.tensor(s, dtype=T.float64, requires_grad=True)
        out = T.scatter_reduce(A, 0, T.tensor(i), S, "prod", include_self=include_self)
        ga, gs = T.autograd.grad((out * T.tensor(w, dtype=T.float64)).sum(), (A, S),
                                 create_graph=True)
        second = T.autograd.grad((ga * ga).sum() + (gs * gs).sum(), (A, S), allow_unused=True)
        return [out, ga, gs] + [g for g in second if g is not None]

    ours, theirs = _both(run)
    _same(ours[:3], theirs[:3])
    for o, t in zip(ours[3:], theirs[3:], strict=True):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "float64"])
def test_scatter_reduce_without_self_in_integers(reduce, dtype):
    def run(T):
        dt = getattr(T, dtype)
        x = T.tensor([[5, 2, 7], [1, 9, 3]], dtype=dt)
        src = T.tensor([[4, 6, 8], [2, 3, 1]], dtype=dt)
        idx = T.tensor([[0, 0, 2], [1, 2, 2]])
        return [T.scatter_reduce(x, 1, idx, src, reduce, include_self=inc)
                for inc in (True, False)]

    ours, theirs = _both(run)
    _same(ours, theirs)


def test_scatter_reduce_include_self_false_grad_node():
    def run(T):
        A = T.tensor([1.0, 2, 3], dtype=T.float64, requires_grad=True)
        S = T.tensor([0.5, 2, 1, 4], dtype=T.float64, requires_grad=True)
        out = T.scatter_reduce(A, 0, T.tensor([0, 0, 1, 1]), S, "amax", include_self=False)
        return list(T.autograd.grad(out.sum(), (A, S), create_graph=True))

    ours, theirs = _both(run)
    _same(ours, theirs)


def _rows(seed, shape, low, high, dtype):
    return np.random.default_rng(seed).integers(low, high, shape).astype(dtype)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dtype", ["bool", "int64", "float64", "float32"])
def test_unstable_sort_orders_ties_as_pytorch(seed, dtype):
    data = _rows(seed, (3, 17 + 61 * seed), 0, 2 if dtype == "bool" else 6, dtype)
    if dtype.startswith("float"):
        data[data == 5] = np.nan

    def run(T):
        x = T.tensor(data)
        return [x.sort(dim=1)[1], x.sort(dim=1, descending=True)[1],
                T.argsort(x.t(), dim=0), T.sort(x, stable=True, dim=1)[1],
                T.sort(x.t().contiguous(), 0, descending=True)[0]]

    ours, theirs = _both(run)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(o.numpy(), t.numpy())


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dtype", ["bool", "int64", "float32"])
def test_mode_index_of_long_rows(seed, dtype):
    data = _rows(seed, (2, 10 + 200 * seed), -3, 4, dtype)

    def run(T):
        x = T.tensor(data)
        return [*T.mode(x, 1), *T.mode(x.t(), 0, keepdim=True), *T.mode(x[0])]

    ours, theirs = _both(run)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(o.numpy(), t.numpy())


def test_index_add_of_0d_bools():
    def run(T):
        return [T.index_add(T.tensor(v), 0, T.tensor([0]), T.tensor(s), alpha=a)
                for v in (True, False) for s in (True, False) for a in (True, False)]

    ours, theirs = _both(run)
    _same(ours, theirs)


def test_gather_and_scatter_with_an_empty_index_of_another_rank():
    def run(T):
        x = T.tensor([1.0, 2, 3, 4, 5], dtype=T.float64, requires_grad=True)
        out = T.gather(x, 0, T.empty((2, 0), dtype=T.int64))
        (g,) = T.autograd.grad(out.sum(), x)
        y = T.ones((2, 3))
        return [out, g, T.gather(y, 0, T.empty((2, 0, 3), dtype=T.int64)),
                T.scatter_add(x.detach(), 0, T.empty((2, 0), dtype=T.int64), T.ones(3,
                              dtype=T.float64)),
                T.scatter(x.detach(), 0, T.empty((2, 0), dtype=T.int64), 1.0)]

    ours, theirs = _both(run)
    _same(ours, theirs)
    with pytest.raises(RuntimeError, match="Index tensor must have the same number of "):
        gt.gather(gt.ones(5), 0, gt.zeros((2, 1), dtype=gt.int64))


def _op_db(name):
    pytest.importorskip("expecttest")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    return [op for op in op_db if op.name == name]


def _conv(x):
    if isinstance(x, torch.Tensor):
        return gt.tensor(x.detach().numpy().copy(), dtype=getattr(gt, str(x.dtype)[6:]))
    if isinstance(x, (list, tuple)):
        return type(x)(_conv(i) for i in x)
    if isinstance(x, dict):
        return {k: _conv(v) for k, v in x.items()}
    return x


@pytest.mark.parametrize("name", ["mode", "sort", "argsort", "index_add", "gather",
                                  "scatter_reduce"])
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_op_db_samples(name, dtype):
    ran = 0
    for op in _op_db(name):
        tdt = getattr(torch, dtype)
        if tdt not in op.supported_dtypes("cpu"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            samples = list(op.sample_inputs("cpu", tdt))
        for s in samples:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    theirs = op.op(s.input, *s.args, **s.kwargs)
                except Exception:  # noqa: BLE001 - PyTorch refusing a sample
                    continue
                fn = getattr(gt, op.op.__name__, None) or getattr(gt.Tensor, op.op.__name__)
                ours = fn(_conv(s.input), *_conv(s.args), **_conv(s.kwargs))
            theirs = list(theirs) if isinstance(theirs, tuple) else [theirs]
            ours = list(ours) if isinstance(ours, tuple) else [ours]
            for o, t in zip(ours, theirs, strict=True):
                assert str(o.dtype) == str(t.dtype)
                np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-7, atol=1e-7)
            ran += 1
    if dtype != "bool" or name not in ("index_add", "scatter_reduce"):
        assert ran


def test_native_layer_norm_float32_rows_equal_to_their_mean():
    """op_db's 1-element rows: PyTorch's output is exactly the bias (0 without one) and its
    rstd is computed in float32 (eps rounded first)."""
    def run(T):
        x, w, b = T.tensor([-4.3228]), T.tensor([-8.4784]), T.tensor([-1.7658])
        return [*T.native_layer_norm(x, (1,), w, b, 1e-5), *T.native_layer_norm(x, (1,), w, None, 1e-5),
                *T.native_layer_norm(x, (1,), None, b, 1e-5),
                T.nn.functional.layer_norm(T.full((2, 3), 2.5), (3,))]

    ours, theirs = _both(run)
    for o, t in zip(ours, theirs, strict=True):
        assert o.tolist() == t.tolist()


@pytest.mark.parametrize("seed", range(4))
def test_layer_norm_float32_within_tolerance(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 70))
    x = rng.standard_normal((4, n)).astype(np.float32) * 5
    w = rng.standard_normal(n).astype(np.float32) * 5
    b = rng.standard_normal(n).astype(np.float32)

    def run(T):
        return [T.native_layer_norm(T.tensor(x), (n,), *wb, 1e-5)[i]
                for wb in ((T.tensor(w), T.tensor(b)), (None, T.tensor(b)), (T.tensor(w), None),
                           (None, None)) for i in (0, 2)]

    ours, theirs = _both(run)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1.3e-6, atol=1e-5)


def test_integer_pools_divide_as_c_and_local_response_norm_of_ints():
    x = np.arange(-40, 40).reshape(1, 1, 4, 5, 4) * 7 + 3

    def run(T):
        F = T.nn.functional
        out = [F.avg_pool3d(T.tensor(x), (2, 2, 3), stride=(2, 2, 1), divisor_override=d)
               for d in (-2, 3, -3, None)]
        out += [F.avg_pool2d(T.tensor(x[0]), (2, 3), divisor_override=d) for d in (-4, 5)]
        ints = T.tensor(np.random.default_rng(0).integers(-9, 10, (1, 6, 3, 2)))
        out += [F.local_response_norm(ints, s, alpha=3e-5, beta=0.5, k=1.25) for s in (2, 3)]
        out += [F.local_response_norm(ints[..., 0], 2, alpha=3e-2, beta=0.75, k=1.0)]
        return out

    ours, theirs = _both(run)
    for o, t in zip(ours, theirs, strict=True):
        assert str(o.dtype) == str(t.dtype)
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1.3e-6, atol=1e-5)
