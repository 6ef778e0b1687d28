"""take/put_'s argument checks in PyTorch's order (a long index, put_'s source dtype and
size, an empty tensor, the range: each with PyTorch's exception type and text), and the
in-place selu_/celu_ second derivatives at a zero result, against PyTorch 2.13."""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

CALLS = {
    "put_bool_source": lambda T: T.put(T.zeros(3), T.tensor([0]), T.tensor([True])),
    "put_long_source": lambda T: T.put(T.zeros(3), T.tensor([0]), T.tensor([1])),
    "put_double_source_inplace": lambda T: T.zeros(3).put_(
        T.tensor([0]), T.tensor([1.0], dtype=T.float64)),
    "put_count": lambda T: T.put(T.zeros(3), T.tensor([0, 1]), T.tensor([1.0])),
    "put_empty": lambda T: T.put(T.zeros(0), T.tensor([0]), T.tensor([1.0])),
    "put_empty_and_count": lambda T: T.put(T.zeros(0), T.tensor([0]), T.tensor([1.0, 2.0])),
    "put_float_index": lambda T: T.put(T.zeros(3), T.tensor([0.0]), T.tensor([1.0])),
    "put_int32_index": lambda T: T.put(T.zeros(3), T.tensor([0], dtype=T.int32),
                                       T.tensor([1.0])),
    "put_range": lambda T: T.put(T.zeros(3), T.tensor([5]), T.tensor([1.0])),
    "put_empty_bool_before_empty": lambda T: T.put(
        T.zeros(2, 0, dtype=T.float64), T.tensor([0]), T.tensor([False])),
    "take_int32_index": lambda T: T.take(T.zeros(3), T.tensor([0], dtype=T.int32)),
    "take_float_index_empty": lambda T: T.take(T.zeros(0), T.tensor([0.0])),
    "take_empty": lambda T: T.take(T.zeros(0), T.tensor([0])),
    "take_range": lambda T: T.take(T.zeros(2, 2), T.tensor([[0, 4]])),
}


def _outcome(T, call):
    try:
        return "value", call(T).tolist()
    except (RuntimeError, IndexError, TypeError) as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_take_put_checks_as_pytorch(name):
    assert _outcome(gt, CALLS[name]) == _outcome(torch, CALLS[name])


@pytest.mark.parametrize("value", [0.0, -0.0, -0.5, 0.7])
@pytest.mark.parametrize("fn, kwargs", [("selu_", {}), ("celu_", {"alpha": 1.5})])
def test_inplace_elu_family_second_derivative(fn, kwargs, value):
    def second(T):
        a = T.tensor([value], dtype=T.float64, requires_grad=True)
        r = getattr(T, fn)(a * 1, **kwargs)
        ga, = T.autograd.grad(r.sum(), a, create_graph=True)
        ga.sum().backward()
        return type(r.grad_fn).__name__, ga.tolist(), a.grad.tolist()

    mine, theirs = second(gt), second(torch)
    assert mine[0] == theirs[0]
    assert mine[1] == pytest.approx(theirs[1], rel=1e-12)
    assert mine[2] == pytest.approx(theirs[2], rel=1e-12, abs=0)
