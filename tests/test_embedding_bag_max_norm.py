"""F.embedding_bag with max_norm scales the rows its input names down in place (no graph)
before bagging, as PyTorch's; nn.EmbeddingBag relies on it; torch.embedding_bag (the
kernel with its offset2bag / bag_size / max_indices) and torch.embedding_renorm_ are
public as in PyTorch, and F.embedding_bag's checks come in PyTorch's order."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402


def _t(x):
    return torch.tensor(np.asarray(x.tolist()), dtype=getattr(torch, str(x.dtype)[6:]))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5])
@pytest.mark.parametrize("two_d", [False, True])
def test_functional_max_norm_renorms_named_rows_in_place(mode, norm_type, two_d):
    results = []
    for lib in (G, torch):
        lib.manual_seed(0)
        w = (lib.randn(6, 3) * 2).requires_grad_()
        if two_d:
            idx, offs = lib.tensor([[0, 2, 2], [5, 1, 0]]), None
        else:
            idx, offs = lib.tensor([0, 2, 2, 5, 1]), lib.tensor([0, 2, 2])
        before = w._version
        y = lib.nn.functional.embedding_bag(idx, w, offs, max_norm=1.25, norm_type=norm_type,
                                            mode=mode)
        y.sum().backward()
        results.append((y, w.detach().clone(), w.grad, w._version - before, y.grad_fn.name()))
    (y, w, gw, v, name), (ty, tw, tgw, tv, tname) = results
    torch.testing.assert_close(_t(y), ty)
    torch.testing.assert_close(_t(w), tw)
    torch.testing.assert_close(_t(gw), tgw)
    assert (v, name) == (tv, tname)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_module_with_max_norm_as_pytorch(mode):
    results = []
    for lib in (G, torch):
        lib.manual_seed(3)
        bag = lib.nn.EmbeddingBag(7, 4, max_norm=0.9, mode=mode, padding_idx=2)
        y = bag(lib.tensor([1, 2, 6, 6, 0]), lib.tensor([0, 3]))
        y.sum().backward()
        results.append((y, bag.weight.detach().clone(), bag.weight.grad, repr(bag)))
    (y, w, gw, r), (ty, tw, tgw, tr) = results
    torch.testing.assert_close(_t(y), ty)
    torch.testing.assert_close(_t(w), tw)
    torch.testing.assert_close(_t(gw), tgw)
    assert r == tr


# (include_last_offset with indices past the last offset: tests/test_embedding_bag_last_offset.py)
_KERNEL_CASES = [pytest.param(mode, pad, last, id=f"{mode}-{pad}-{last}")
                 for mode in (0, 1, 2) for pad in (None, 2) for last in (False, True)]


@pytest.mark.parametrize("mode, padding_idx, include_last_offset", _KERNEL_CASES)
def test_torch_embedding_bag_returns_pytorchs_four_tensors(mode, padding_idx,
                                                          include_last_offset):
    outs = []
    for lib in (G, torch):
        lib.manual_seed(0)
        w = lib.randn(5, 3, requires_grad=True)
        outs.append(lib.embedding_bag(w, lib.tensor([0, 2, 4, 1, 2]), lib.tensor([0, 2, 2]),
                                      False, mode, False, None, include_last_offset,
                                      padding_idx))
    ours, theirs = outs
    assert len(ours) == len(theirs) == 4
    torch.testing.assert_close(_t(ours[0]), theirs[0].detach())
    assert ours[0].grad_fn.name() == theirs[0].grad_fn.name()
    for a, b in zip(ours[1:], theirs[1:]):
        assert (a.tolist(), str(a.dtype), a.requires_grad) == \
            (b.tolist(), str(b.dtype), b.requires_grad)


def _outcome(call):
    out = []
    for lib in (G, torch):
        try:
            r = call(lib)
            out.append(("ok", None if r is None else tuple(r.shape)))
        except Exception as exc:  # the comparison is of the type and text
            out.append((type(exc).__name__, str(exc)))
    return out


def test_embedding_renorm_in_place_returns_its_input_as_pytorch():
    res = []
    for lib in (G, torch):
        lib.manual_seed(1)
        w = lib.randn(4, 3) * 3
        v = w._version
        r = lib.embedding_renorm_(w, lib.tensor([3, 0, 3]), 1.5, 2.0)
        res.append((r is w, w._version - v, w))
    assert res[0][:2] == res[1][:2] == (True, 1)
    torch.testing.assert_close(_t(res[0][2]), res[1][2])


@pytest.mark.parametrize("case", range(6))
def test_embedding_renorm_errors_as_pytorch(case):
    def call(lib):
        w = lib.ones(5, 3)
        args = [lambda: (w.requires_grad_(), lib.tensor([1]), 1.0, 2.0),
                lambda: (w, lib.tensor([7]), 1.0, 2.0),
                lambda: (w, lib.tensor([1.0]), 1.0, 2.0),
                lambda: (w[0], lib.tensor([1]), 1.0, 2.0),
                lambda: (w, lib.tensor([-1]), 1.0, 2.0),
                lambda: (w, lib.tensor([[1, 4]]), 0.5, 1.0)][case]()
        return lib.embedding_renorm_(*args)
    ours, theirs = _outcome(call)
    assert ours == theirs


BAG_CALLS = [
    (("f3", "w", [0]), {}), (("f3", "w", None), {}), (([1, 7], "w", [0]), {}),
    (([1, 2], "w", "f0"), {}), (([1, 2], "w", [1]), {}), (([1, 2], "w", [0, 3]), {}),
    (([1, 7], "w", [0]), {"max_norm": 1.0}), (("f3", "w", [0]), {"max_norm": 1.0}),
    (([1, 2], "w", [0]), {"mode": "x"}),
    (([1, 2], "w", [0]), {"mode": "max", "per_sample_weights": "f2"}),
    (([1, 2], "w", [0]), {"per_sample_weights": "f3"}), (([[1, 2], [3, 4]], "w", None), {}),
    (([[1, 2], [3, 4]], "w", [0]), {}), (([1, 2], "w", [0]), {"mode": "max", "sparse": True}),
    (([1, 2], "w", [0]), {"mode": "max", "scale_grad_by_freq": True}),
    (([[[1]]], "w", None), {}), (([1, 2], "w", [[0]]), {}), (([1, 2], "w3", [0]), {}),
]


@pytest.mark.parametrize("args, kwargs", BAG_CALLS, ids=str)
def test_embedding_bag_checks_in_pytorchs_order(args, kwargs):
    def make(lib, v):
        named = {"f3": lambda: lib.ones(3), "f2": lambda: lib.ones(2), "w": lambda: lib.ones(5, 3),
                 "w3": lambda: lib.ones(5, 3, 1), "f0": lambda: lib.tensor([0.0])}
        if isinstance(v, str):
            return named[v]()
        return None if v is None else lib.tensor(v)

    ours, theirs = _outcome(lambda lib: lib.nn.functional.embedding_bag(
        *[make(lib, v) for v in args],
        **{k: make(lib, v) if isinstance(v, str) else v for k, v in kwargs.items()}))
    assert ours == theirs


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_embedding_max_norm_renorms_through_embedding_renorm(norm_type):
    results = []
    for lib in (G, torch):
        lib.manual_seed(2)
        w = (lib.randn(5, 4) * 2).requires_grad_()
        y = lib.nn.functional.embedding(lib.tensor([[4, 0], [4, 2]]), w, max_norm=1.1,
                                        norm_type=norm_type)
        y.sum().backward()
        results.append((y, w.detach().clone(), w.grad, w._version))
    (y, w, gw, v), (ty, tw, tgw, tv) = results
    for a, b in ((y, ty), (w, tw), (gw, tgw)):
        torch.testing.assert_close(_t(a), b.detach())
    assert v == tv


@pytest.mark.parametrize("index", [[1.0], [9]])
def test_embedding_max_norm_errors_are_the_renorms(index):
    ours, theirs = _outcome(lambda lib: lib.nn.functional.embedding(
        lib.tensor(index), lib.ones(5, 3), max_norm=1.0))
    assert ours == theirs
