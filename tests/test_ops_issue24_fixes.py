"""Issue 24's silently wrong ops, each against PyTorch: values, dtypes, grad_fn names,
gradients (None vs a tensor) and error texts must match."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

NAN = math.nan


def _run(module, build):
    """build(module) -> (output, inputs); backward of out.sum() when it has a grad_fn."""
    try:
        out, inputs = build(module)
    except Exception as err:  # noqa: BLE001 - compared with PyTorch's
        return err, None, None
    grads = None
    if getattr(out, "grad_fn", None) is not None:
        out.sum().backward()
        grads = [None if t.grad is None else t.grad for t in inputs]
    return None, out, grads


def _same(build):
    terr, tout, tgrads = _run(torch, build)
    gerr, gout, ggrads = _run(gt, build)
    if terr is not None:
        assert gerr is not None, f"PyTorch raised {terr!r}; gradcli gave {gout!r}"
        assert (type(gerr).__name__, str(gerr)) == (type(terr).__name__, str(terr))
        return
    assert gerr is None, gerr
    if isinstance(tout, torch.Tensor):
        assert repr(gout) == repr(tout)
        assert str(gout.dtype) == str(tout.dtype)
        torch.testing.assert_close(torch.from_numpy(np.array(gout._data)), tout.detach(),
                                   equal_nan=True)
    else:
        assert gout == tout
    if tgrads is not None:
        assert len(ggrads) == len(tgrads)
        for g, t in zip(ggrads, tgrads, strict=True):
            assert (g is None) == (t is None), (g, t)
            if t is not None:
                assert tuple(g.shape) == tuple(t.shape) and str(g.dtype) == str(t.dtype)
                torch.testing.assert_close(torch.from_numpy(np.array(g._data)), t,
                                           equal_nan=True)


def _leaf(m, values, dtype=None):
    return m.tensor(values, dtype=dtype or m.float64, requires_grad=True)


# ---- clamp_min / clamp_max with tensor bounds (ClampMinBackward1, nan bounds, broadcasting)

@pytest.mark.parametrize("fn", ["clamp_min", "clamp_max"])
@pytest.mark.parametrize("bound", [[2.0, NAN, 1.0], [[1.5], [2.5]], 2.0, [2.0]])
def test_clamp_min_max_tensor_bound(fn, bound):
    def build(m):
        a = _leaf(m, [1.0, 2.0, 3.0])
        b = _leaf(m, bound)
        return getattr(m, fn)(a, b), (a, b)

    _same(build)


@pytest.mark.parametrize("fn", ["clamp_min", "clamp_max"])
def test_clamp_min_max_tensor_bound_method_and_promotion(fn):
    def build(m):
        a = _leaf(m, [1.0, 2.0, 3.0], m.float32)
        b = _leaf(m, [2.5, 1.0, NAN])
        return getattr(a, fn)(b), (a, b)

    _same(build)
    _same(lambda m: (getattr(m, fn)(m.tensor([1, 2, 3]), m.tensor(1.5)), ()))


@pytest.mark.parametrize("call", ["clamp_min", "clamp_max", "clamp"])
def test_nan_number_bound_gives_nan(call):
    _same(lambda m: (getattr(m, call)(_leaf(m, [1.0, -2.0]), NAN), ()))


def test_clamp_min_tensor_bound_in_place():
    def build(m):
        a = _leaf(m, [1.0, 2.0, 3.0])
        b = _leaf(m, [2.0, 0.5, 4.0])
        return a.clone().clamp_min_(b), (a, b)

    _same(build)


# ---- round(decimals=)

@pytest.mark.parametrize("decimals", [3, 1, -1, -2, 0])
def test_round_decimals(decimals):
    _same(lambda m: (_leaf(m, [1.23456, -2.5, 0.125, 1234.5678]).round(decimals=decimals), ()))
    _same(lambda m: (m.round(m.tensor([1.23456, 9.87654], dtype=m.float32), decimals=decimals),
                     ()))


def test_round_decimals_of_integers_raises():
    _same(lambda m: (m.tensor([1, 2]).round(decimals=2), ()))


# ---- Tensor.__rsub__(tensor) and torch.rsub

def test_rsub_tensor_gradients_reduced():
    def build(m):
        x = _leaf(m, [1.0, 2.0])
        y = _leaf(m, [[3.0], [4.0]])
        return x.__rsub__(y), (x, y)

    _same(build)


@pytest.mark.parametrize("other", ["tensor", "scalar"])
def test_torch_rsub_alpha(other):
    def build(m):
        x = _leaf(m, [1.0, 2.0])
        y = _leaf(m, [[3.0], [4.0]]) if other == "tensor" else 3
        return m.rsub(x, y, alpha=2), (x,) + ((y,) if other == "tensor" else ())

    _same(build)


# ---- Tensor.to(device, dtype, non_blocking, copy)

@pytest.mark.parametrize("args", [("cpu", "float32", False, True), ("cpu", "float32", False, False),
                                  ("float32", False, True), ("float32", False, False),
                                  ("cpu",), ("cpu", "float64"), ("other", False, True)])
def test_to_positional_copy(args):
    def build(m):
        x = m.tensor([1.0, 2.0])
        conv = [getattr(m, a) if a in ("float32", "float64") else x if a == "other" else a
                for a in args]
        y = x.to(*conv)
        return m.tensor([y is x, y.dtype == m.float64]), ()

    _same(build)


# ---- cat with an empty [0] input

@pytest.mark.parametrize("where", [0, 1])
def test_cat_empty_input_gets_empty_gradient(where):
    def build(m):
        e = m.tensor([], requires_grad=True)
        f = _leaf(m, [[1.0, 2.0]])
        parts = [e, f] if where == 0 else [f, e]
        return m.cat(parts), (e, f)

    _same(build)


# ---- narrow with a negative start

@pytest.mark.parametrize("args", [(0, -2, 2), (0, -5, 1), (0, -6, 1), (0, 6, 0), (0, 2, -1),
                                  (0, -2, 3), (1, 0, 1), (0, 5, 0), (-1, -3, 3)])
def test_narrow_negative_start(args):
    def build(m):
        x = _leaf(m, [0.0, 1.0, 2.0, 3.0, 4.0])
        return x.narrow(*args), (x,)

    _same(build)


# ---- masked_fill: a 0-d tensor value, a broadcasting mask, torch.masked_fill

MASK_2x2 = [[True, False], [False, False]]


@pytest.mark.parametrize("value", ["tensor", "number", "int_tensor"])
@pytest.mark.parametrize("mask", [[True, False], MASK_2x2])
def test_masked_fill_value_and_broadcasting_mask(value, mask):
    def build(m):
        a = _leaf(m, [1.0, 2.0])
        v = {"tensor": lambda: _leaf(m, 5.0), "number": lambda: 3.0,
             "int_tensor": lambda: m.tensor(3)}[value]()
        leaves = (a, v) if value == "tensor" else (a,)
        return a.masked_fill(m.tensor(mask), v), leaves

    _same(build)


def test_torch_masked_fill_and_errors():
    _same(lambda m: (m.masked_fill(_leaf(m, [1.0, 2.0]), m.tensor(MASK_2x2), 3.0), ()))
    _same(lambda m: (_leaf(m, [1.0, 2.0]).masked_fill(m.tensor([True, False]),
                                                       m.tensor([1.0, 2.0])), ()))
    _same(lambda m: (m.masked_fill(m.tensor([1.0, 2.0]), m.tensor([1, 0]), 1.0), ()))
    _same(lambda m: (m.tensor([1.0, 2.0]).masked_fill_(m.tensor(MASK_2x2), 1.0), ()))
    _same(lambda m: (m.tensor([1.0, 2.0]).masked_fill(m.tensor([True, False, True]), 1.0), ()))
    _same(lambda m: (m.tensor([1, 2]).masked_fill(m.tensor([True, False]), m.tensor(2.5)), ()))


def test_masked_fill_in_place_tensor_value_gradient():
    def build(m):
        a = _leaf(m, [1.0, 2.0, 3.0])
        v = _leaf(m, 7.0)
        return a * 1.0, (a, v)

    _same(build)

    def build_inplace(m):
        a = _leaf(m, [1.0, 2.0, 3.0])
        v = _leaf(m, 7.0)
        out = (a * 2).masked_fill_(m.tensor([True, False, True]), v)
        return out, (a, v)

    _same(build_inplace)
