"""mm's and addmm's backward products (linalg._product): on arrays when nothing records,
through the Tensor ops when a graph is built (create_graph) or a dual level, autocast or
a size limit is on. Both give the same bits and PyTorch's gradients; the Modules' direct
calls (Linear's views.t, Flatten's views.flatten) give PyTorch's nodes and errors."""

import numpy as np
import pytest

import gradcli.torch as G
from gradcli.engine.ops import linalg

torch = pytest.importorskip("torch")


def _operands(T, dtype, transposed):
    a = T.tensor(np.linspace(-2, 3, 12).reshape(4, 3), dtype=dtype)
    b = T.tensor(np.linspace(1, -1, 15).reshape(3, 5), dtype=dtype)
    if transposed:  # column-major storage: the backward takes the transposed formula
        a = T.tensor(np.linspace(-2, 3, 12).reshape(3, 4), dtype=dtype).t()
        b = T.tensor(np.linspace(1, -1, 15).reshape(5, 3), dtype=dtype).t()
    return a.requires_grad_(), b.requires_grad_()


def _grads(T, op, dtype, transposed):
    a, b = _operands(T, dtype, transposed)
    bias = T.tensor(np.linspace(0.5, 1.5, 5), dtype=dtype, requires_grad=True)
    out = T.mm(a, b) if op == "mm" else T.addmm(bias, a, b, beta=0.5, alpha=2.0)
    weights = T.tensor(np.linspace(-1, 1, 20).reshape(4, 5), dtype=dtype)
    (out * weights).sum().backward()
    grads = [a.grad, b.grad] + ([bias.grad] if op == "addmm" else [])
    return [np.asarray(g.tolist()) for g in grads]


@pytest.mark.parametrize("op", ["mm", "addmm"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transposed", [False, True])
def test_gradients_are_pytorchs(op, dtype, transposed):
    ours = _grads(G, op, getattr(G, dtype), transposed)
    theirs = _grads(torch, op, getattr(torch, dtype), transposed)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o, t, rtol=1.3e-6, atol=1e-5)


@pytest.mark.parametrize("x_t,y_t", [(False, False), (True, False), (False, True)])
def test_array_path_and_tensor_path_give_the_same_bits(x_t, y_t):
    rng = np.random.default_rng(3)
    x = G.tensor(rng.standard_normal((40, 7) if not x_t else (7, 40)).astype(np.float32))
    y = G.tensor(rng.standard_normal((7, 9) if not y_t else (9, 7)).astype(np.float32))
    with G.no_grad():  # nothing records: the arrays
        fast = linalg._product(x, x_t, y, y_t)
    with G.enable_grad():  # grad mode on: the Tensor ops
        slow = linalg._product(x, x_t, y, y_t)
    assert fast._data.tobytes() == slow._data.tobytes()
    assert fast.shape == slow.shape and fast.grad_fn is None and fast._base is None


def _double_backward(T):
    a = T.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]], requires_grad=True)
    w = T.tensor([[0.3, -0.7], [1.1, 0.2]], requires_grad=True)
    bias = T.tensor([0.1, -0.2], requires_grad=True)
    out = T.nn.functional.linear(a, w, bias)
    (gw,) = T.autograd.grad((out ** 2).sum(), w, create_graph=True)
    (gw * gw).sum().backward()
    return type(gw.grad_fn).__name__, gw.tolist(), a.grad.tolist(), w.grad.tolist()


def test_create_graph_still_records_through_the_products():
    ours, theirs = _double_backward(G), _double_backward(torch)
    assert ours[0] == theirs[0]
    for o, t in zip(ours[1:], theirs[1:], strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-6, atol=1e-6)


def _forward_ad_through_linear(T):
    import importlib

    fwAD = importlib.import_module(T.__name__ + ".autograd.forward_ad")
    w = T.tensor([[0.3, -0.7, 0.2]], requires_grad=True)
    x = T.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    with fwAD.dual_level():
        dual = fwAD.make_dual(w, T.ones_like(w))
        out = T.nn.functional.linear(x, dual, T.tensor([0.5]))
        tangent = fwAD.unpack_dual(out).tangent.tolist()
        out.sum().backward()
    return tangent, w.grad.tolist()


def test_forward_ad_and_backward_together():
    assert _forward_ad_through_linear(G) == _forward_ad_through_linear(torch)


def _module_facts(T, start, end):
    model = T.nn.Sequential(T.nn.Linear(3, 2), T.nn.Flatten(start, end))
    x = T.tensor(np.linspace(-1, 1, 12).reshape(2, 2, 3), dtype=T.float32)
    y = model(x.reshape(4, 3).reshape(2, 2, 3)[0])
    return type(y.grad_fn).__name__, tuple(y.shape), y._base is not None


@pytest.mark.parametrize("start,end", [(0, 1), (0, -1), (1, 1), (-2, -1)])
def test_flatten_and_linear_direct_calls_are_pytorchs(start, end):
    ours = _module_facts(G, start, end)
    theirs = _module_facts(torch, start, end)
    assert ours == theirs


@pytest.mark.parametrize("start,end", [(2, 0), (0, 5)])
def test_flatten_errors_are_pytorchs(start, end):
    def message(T):
        try:
            T.nn.Flatten(start, end)(T.ones(2, 3))
        except (RuntimeError, IndexError) as err:
            return type(err).__name__, str(err)
        return None

    assert message(G) == message(torch)


@pytest.mark.parametrize("shape", [(3,), (1, 3), (4, 1), (1, 4, 1), (1,)])
def test_sum_to_without_a_graph_gives_the_graphs_bits(shape):
    from gradcli.engine.ops.registry import sum_to

    rng = np.random.default_rng(5)
    g = G.tensor(rng.standard_normal((6, 4, 3)).astype(np.float32))
    with G.no_grad():  # nothing records: sum_dim's forward on the array
        fast = sum_to(g, shape)
    with G.enable_grad():  # the op, as a create_graph backward runs it
        slow = sum_to(g, shape)
    assert tuple(fast.shape) == tuple(slow.shape) == shape
    assert fast._data.tobytes() == slow._data.tobytes()


def _broadcast_grads(T):
    x = T.tensor(np.linspace(-1, 2, 2000).reshape(2000, 1), dtype=T.float32, requires_grad=True)
    b = T.tensor([0.25], requires_grad=True)
    ((x + b) ** 2).sum().backward()
    return b.grad.tolist(), x.grad.shape


def test_broadcast_gradients_are_pytorchs():
    (ours, shape), (theirs, their_shape) = _broadcast_grads(G), _broadcast_grads(torch)
    assert tuple(shape) == tuple(their_shape)
    np.testing.assert_allclose(ours, theirs, rtol=1.3e-6)


def test_size_limit_keeps_the_array_paths_and_refuses_the_same_products():
    """With a size limit on (`gradcli run`'s --max-elements) a backward still takes the
    array paths (the same bits as the Tensor ops), and a product over the limit is refused
    with mm's own error before it allocates; a sum back to an input's shape is never
    larger than the gradient, so it has nothing to refuse."""
    from gradcli.engine import limits
    from gradcli.engine.ops.registry import sum_to

    rng = np.random.default_rng(11)
    x = G.tensor(rng.standard_normal((40, 7)).astype(np.float32))
    y = G.tensor(rng.standard_normal((7, 9)).astype(np.float32))
    g = G.tensor(rng.standard_normal((2000, 1)).astype(np.float32))
    before = limits.MAX_ELEMENTS[0]
    try:
        limits.MAX_ELEMENTS[0] = 360  # 40 x 9: just fits
        with G.no_grad():
            fast, fast_sum = linalg._product(x, False, y, False), sum_to(g, (1,))
        with G.enable_grad():
            slow, slow_sum = linalg._product(x, False, y, False), sum_to(g, (1,))
        assert fast._data.tobytes() == slow._data.tobytes()
        assert fast_sum._data.tobytes() == slow_sum._data.tobytes()
        assert fast.grad_fn is None and fast_sum.grad_fn is None
        limits.MAX_ELEMENTS[0] = 359
        refusals = []
        for mode in (G.no_grad, G.enable_grad):
            with mode(), pytest.raises(limits.AllocationLimitError) as err:
                linalg._product(x, False, y, False)
            refusals.append(str(err.value))
        assert refusals[0] == refusals[1] == "tensor of 360 elements exceeds the limit of 359 elements"
    finally:
        limits.MAX_ELEMENTS[0] = before
