"""prod / prod(dim) / cumprod gradients with zeros, -0., nan and inf, against PyTorch.

With zeros PyTorch's prod backward builds the product of the others from exclusive
cumprods (cat/narrow/flip/cumprod), so second and third order run through
CumprodBackward0, whose own backward is zero-aware (a direct formula without a graph, a
select/copy_ construction with create_graph). Values and grad_fn names along the graph
must match at first, second and third order.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def _names(t) -> list:
    """grad_fn names in depth-first order (UnsqueezeBackward0's own backward is left out:
    PyTorch squeezes where gradcli views)."""
    out, seen, stack = [], set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        name = type(fn).__name__
        out.append("ViewBackward0" if name == "SqueezeBackward1" else name)
        stack.extend(nf for nf, _ in reversed(fn.next_functions))
    return out


def _chain(lib, x, expr: str, dtype: str, create_last: bool):
    """r, dr/da, d2, d3 (create_graph until the last, which follows create_last)."""
    a = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    r = eval(expr, {"a": a, "torch": lib})  # noqa: S307 - expressions of this file
    w = lib.tensor(np.linspace(0.5, 1.5, max(r.numel(), 1))[:r.numel()].reshape(tuple(r.shape)),
                   dtype=getattr(lib, dtype))
    outs = [r]
    ga, = lib.autograd.grad((r * w).sum(), a, create_graph=True)
    outs.append(ga)
    for order in (2, 3):
        prev = outs[-1]
        if prev is None or prev.grad_fn is None:
            outs.append(None)
            continue
        w = lib.tensor(np.linspace(-1.0, 2.0, prev.numel()).reshape(tuple(prev.shape)),
                       dtype=getattr(lib, dtype))
        g, = lib.autograd.grad((prev * w).sum(), a, allow_unused=True,
                               create_graph=create_last or order < 3)
        outs.append(g)
    return outs


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t._data)


def _compare(x, expr: str, dtype: str, create_last: bool = True):
    want = _chain(torch, x, expr, dtype, create_last)
    got = _chain(gt, x, expr, dtype, create_last)
    tol = 1e-4 if dtype == "float32" else 1e-9
    zeros = bool((np.asarray(x) == 0).any())
    for order, (w, g) in enumerate(zip(want, got)):
        where = f"{expr} {dtype} order {order} of {x!r}"
        assert (w is None) == (g is None), where
        if w is None:
            continue
        wv, gv = _np(w), _np(g)
        assert wv.shape == gv.shape and wv.dtype == gv.dtype, where
        np.testing.assert_allclose(gv, wv, rtol=tol, atol=tol, equal_nan=True, err_msg=where)
        assert np.array_equal(np.signbit(gv[gv == 0]), np.signbit(wv[gv == 0])) or order > 1, where
        assert (w.grad_fn is None) == (g.grad_fn is None), where
        # (no zeros, third order: the engine's accumulation order and unsqueeze's backward
        # (a view here, squeeze in PyTorch) differ: names are not this file's concern there)
        if w.grad_fn is not None and (order < 3 or zeros):
            assert _names(g) == _names(w), where


def test_fuzz_case_second_order():
    """The differential fuzzer's case: gradcli gave nan where PyTorch has ones."""
    grads = []
    for lib in (torch, gt):
        a = lib.tensor([[0.0, -0.0, 0.0], [-0.0, NAN, NAN]], requires_grad=True)
        ga, = lib.autograd.grad(a.prod(0).sum(), a, create_graph=True)
        assert type(ga.grad_fn).__name__ == "MulBackward0"
        ga.sum().backward()
        grads.append(_np(a.grad))
    np.testing.assert_array_equal(grads[1], grads[0])
    assert grads[1][0].tolist() == [1.0, 1.0, 1.0] and grads[1][1, 0] == 1.0


CASES = [
    [[0.0, -0.0, 0.0], [-0.0, NAN, NAN]],
    [0.0, 2.0, 3.0],
    [2.0, 0.0, -3.0, 0.5],
    [0.0, 0.0, 3.0],
    [-0.0, INF, 2.0],
    [0.0, NAN, 1.5, 0.0],
    [[1.5, 0.0, -2.0], [INF, -0.5, 0.0], [0.0, 0.0, NAN]],
    [[[0.0, 2.0], [-1.0, 3.0]], [[INF, -0.0], [0.5, NAN]]],
    [[0.0], [2.0]],
    [[[0.0, 1.0, 2.0]]],
    [1.5, -2.0, 0.5],
    [[INF, 2.0], [NAN, -1.0]],
    [0.0],
    0.0,
    NAN,
]


def _exprs(x):
    nd = np.ndim(x)
    out = ["a.prod()"]
    for d in range(-nd, nd) if nd else (0,):
        out += [f"a.prod({d})", f"a.prod({d}, keepdim=True)", f"a.cumprod({d})"]
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("x", CASES, ids=range(len(CASES)))
def test_prod_and_cumprod_three_orders(x, dtype):
    for expr in _exprs(x):
        _compare(x, expr, dtype, create_last=True)
        _compare(x, expr, dtype, create_last=False)


def test_prod_random_zeros_nan_inf():
    rng = np.random.default_rng(7)
    pool = [0.0, -0.0, NAN, INF, -INF, 1.5, -0.5, 2.0, 0.0, 0.75]
    for _ in range(25):
        shape = tuple(int(k) for k in rng.integers(1, 4, size=int(rng.integers(1, 4))))
        x = rng.choice(pool, size=shape)
        x = np.where(rng.random(shape) < 0.4, rng.uniform(-2, 2, size=shape), x).tolist()
        for expr in _exprs(x):
            _compare(x, expr, "float64", create_last=bool(rng.integers(2)))


def test_cumprod_api():
    x = [[1.5, 0.0, -2.0], [3.0, 0.5, 4.0]]
    for dim in (0, 1, -1):
        want = torch.cumprod(torch.tensor(x), dim)
        got = gt.cumprod(gt.tensor(x), dim)
        assert _np(got).tolist() == want.tolist()
        assert _np(gt.tensor(x).cumprod(dim=dim)).tolist() == want.tolist()
    ints = gt.tensor([1, 2, 3], dtype=gt.int32).cumprod(0)
    assert ints.dtype == gt.int64 and _np(ints).tolist() == [1, 2, 6]
    assert gt.tensor([2.0, 3.0]).cumprod(0, dtype=gt.float64).dtype == gt.float64
    # float32 runs in double as PyTorch's CPU scan: 1e30 * 1e30 overflows, the next is back
    big = [1e30, 1e30, 1e-30]
    assert _np(gt.tensor(big).cumprod(0)).tolist() == torch.tensor(big).cumprod(0).tolist()
    a = gt.tensor(-0.0, requires_grad=True)
    assert math.copysign(1.0, float(a.cumprod(0))) == -1.0


def test_cumsum_float32_accumulates_in_double():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(2000).astype(np.float32)
    assert np.array_equal(_np(gt.tensor(x).cumsum(0)), torch.tensor(x).cumsum(0).numpy())
    y = rng.uniform(0.5, 1.6, 500).astype(np.float32)
    assert np.array_equal(_np(gt.tensor(y).cumprod(0)), torch.tensor(y).cumprod(0).numpy())


@pytest.mark.parametrize("x", [[0.0, 2.0, 3.0], [1.0, 2.0, 3.0], [[0.0, 2.0], [0.0, 3.0]]])
def test_dtype_argument(x):
    """prod(dtype=...) differentiates the input cast to the result's dtype (ToCopyBackward0)
    and the gradient comes back in the input's dtype."""
    for expr in ("a.prod(dtype=torch.float64)", "a.prod(0, dtype=torch.float64)",
                 "a.prod(-1, keepdim=True, dtype=torch.float64)", "a.cumprod(0, dtype=torch.float64)"):
        _compare(x, expr, "float32")
        _compare(x, expr, "float32", create_last=False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cumprod_backward_with_zeros_warns_nothing(dtype):
    """Positions after a zero are 0 without a 0/0 numpy warning reaching the user."""
    rows = [[1.0, 0.0, 2.0, 3.0], [0.0, 0.0, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0]]
    grads = []
    for mod in (gt, torch):
        x = mod.tensor(rows, dtype=getattr(mod, dtype), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            x.cumprod(1).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
