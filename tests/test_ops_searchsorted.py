"""torch.searchsorted and torch.bucketize against PyTorch 2.13: ATen's binary search (NaN
values go past the end, a NaN boundary is larger than every number), rows of an N-d
boundaries tensor, scalars, sorter, int32 results, never a gradient, and its errors; and
Tensor.data_ptr()'s relations between views of one storage."""

from __future__ import annotations

import math

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

NAN = math.nan


def _cases(T):
    s = T.tensor([1.0, 2.0, 3.0])
    with_nan = T.tensor([1.0, 2.0, 3.0, NAN])
    rows = T.tensor([[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]])
    return [
        lambda: T.searchsorted(s, T.tensor([0.5, 1.0, 2.5, 3.0, 9.0])),
        lambda: T.searchsorted(s, T.tensor([0.5, 1.0, 2.5, 3.0, 9.0]), right=True),
        lambda: T.searchsorted(s, T.tensor([1.0, 3.0]), side="right"),
        lambda: T.searchsorted(with_nan, T.tensor([NAN, 2.0, 0.5, 5.0])),
        lambda: T.searchsorted(with_nan, T.tensor([NAN, 2.0, 0.5, 5.0]), right=True),
        lambda: T.searchsorted(s, 2.0),
        lambda: T.searchsorted(s, 2, right=True),
        lambda: T.searchsorted(s, T.tensor(2.0)),
        lambda: T.searchsorted(s, T.tensor([[1, 2], [3, 4]])),
        lambda: T.searchsorted(s.double(), T.tensor([1.5])),
        lambda: T.searchsorted(rows, T.tensor([[2.5], [2.5]])),
        lambda: T.searchsorted(rows, T.tensor([[0.0, 2.0, 9.0], [2.0, 3.5, 4.0]]), right=True),
        lambda: T.searchsorted(T.tensor([3.0, 1.0, 2.0]), T.tensor([2.5, 0.0]),
                               sorter=T.tensor([1, 2, 0])),
        lambda: T.searchsorted(s, T.tensor([1.0]), out_int32=True),
        lambda: T.searchsorted(s, T.empty(0)),
        lambda: T.searchsorted(T.empty(0), T.tensor([1.0])),
        lambda: T.searchsorted(T.ones(2, 3), T.ones(3, 2)),
        lambda: T.searchsorted(s, T.tensor([1.0]), right=True, side="left"),
        lambda: T.searchsorted(s, T.tensor([1.0]), side="middle"),
        lambda: T.searchsorted(T.tensor(1.0), T.tensor([1.0])),
        lambda: T.searchsorted(s, T.tensor([1.0]), sorter=T.tensor([0, 1])),
        lambda: T.searchsorted(s, T.tensor([1.0]), sorter=T.tensor([0.0, 1.0, 2.0])),
        lambda: T.searchsorted(T.ones(2, 3), 1.0),
        lambda: T.bucketize(T.tensor([[0.5, 2.0]]), s),
        lambda: T.bucketize(T.tensor([[0.5, 2.0]]), s, right=True, out_int32=True),
        lambda: T.bucketize(2.0, s),
        lambda: T.bucketize(T.tensor([1.0]), T.ones(2, 2)),
    ]


def _show(f):
    try:
        r = f()
    except RuntimeError as e:
        return f"RuntimeError: {e}"
    return f"{r!r} {r.dtype} {r.requires_grad}"


@pytest.mark.parametrize("i", range(len(_cases(gt))))
def test_searchsorted_and_bucketize_match_pytorch(i):
    assert _show(_cases(gt)[i]) == _show(_cases(torch)[i])


def test_the_result_never_requires_grad():
    x = gt.rand(5, requires_grad=True)
    bins = gt.linspace(0, 1.0, steps=10, requires_grad=True)
    for out in (gt.searchsorted(bins, x), gt.bucketize(x, bins)):
        assert out.dtype == gt.int64 and not out.requires_grad and out.grad_fn is None


def test_data_ptr_relations_match_pytorch():
    def relations(T):
        x = T.arange(6.0).reshape(2, 3)
        return (x[1].data_ptr() - x.data_ptr(), x[:, 1].data_ptr() - x.data_ptr(),
                x.view(-1).data_ptr() == x.data_ptr(), x.t().data_ptr() == x.data_ptr(),
                x.clone().data_ptr() == x.data_ptr(), T.empty(0).data_ptr(),
                isinstance(x.data_ptr(), int))

    assert relations(gt) == relations(torch)


def _unique_cases(T):
    nan = math.nan
    x = T.tensor([3.0, 1.0, 2.0, 3.0, nan, 1.0, nan])
    m = T.tensor([[1, 2], [1, 2], [0, 5]])
    return [
        lambda: T.unique(x),
        lambda: T.unique(x, sorted=False),
        lambda: T.unique(x, return_inverse=True, return_counts=True),
        lambda: x.unique(return_counts=True),
        lambda: T.unique(m, dim=0, return_inverse=True, return_counts=True),
        lambda: T.unique(m, dim=1),
        lambda: T.unique(m, dim=-1, return_inverse=True),
        lambda: T.unique(T.tensor([2, 1, 2])),
        lambda: T.unique(T.tensor(3.0)),
        lambda: T.unique(T.empty(0), return_inverse=True, return_counts=True),
        lambda: T.unique(T.tensor([[1.0, 2.0], [2.0, 1.0]])),
        lambda: T.unique(T.ones(2, 2), dim=2),
    ]


def _show_all(f):
    try:
        r = f()
    except (RuntimeError, IndexError) as e:
        return f"{type(e).__name__}: {e}"
    rs = r if isinstance(r, tuple) else (r,)
    return [f"{t!r} {t.dtype}" for t in rs]


@pytest.mark.parametrize("i", range(len(_unique_cases(gt))))
def test_unique_matches_pytorch(i):
    assert _show_all(_unique_cases(gt)[i]) == _show_all(_unique_cases(torch)[i])


def test_unique_has_a_node_without_derivative():
    def run(T, **kw):
        y = T.tensor([[1.0, 2.0], [1.0, 2.0]], requires_grad=True)
        u = T.unique(y, **kw)
        try:
            u.sum().backward()
        except NotImplementedError as e:
            return type(u.grad_fn).__name__, u.requires_grad, str(e)
        return None

    for kw in ({}, {"dim": 0}):
        assert run(gt, **kw) == run(torch, **kw)
        assert run(gt, **kw)[0].startswith("Unique")
