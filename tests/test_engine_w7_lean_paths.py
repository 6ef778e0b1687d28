"""The one-call paths W7's step now takes (view_op fused with run_unary and _as_view, the
quiet forward wrapper keyed by thread, SGD's update in place, sum_to straight to
SumBackward1) give what the general paths gave, and what PyTorch gives."""

import threading
import warnings

import numpy as np
import pytest

import gradcli.torch as G
from gradcli.torch.optim.optimizer import axpy, axpy_into

torch = pytest.importorskip("torch")


def _view_facts(T):
    w = T.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    facts = {}
    with T.no_grad():
        v = w.t()
        facts["no_grad"] = (v.requires_grad, v.grad_fn is None, v.is_leaf, v._base is w)
    try:
        v.mul_(2)
        facts["write"] = None
    except RuntimeError as err:
        facts["write"] = str(err).split(".")[0]
    u = w.t()
    facts["grad"] = (u.requires_grad, type(u.grad_fn).__name__, u._base is w)
    f = u.flatten(0, -1)
    facts["flatten"] = (type(f.grad_fn).__name__, f._base is w, tuple(f.shape))
    f.sum().backward()
    facts["w.grad"] = w.grad.tolist()
    return facts


def test_views_with_and_without_grad_mode_are_pytorchs():
    assert _view_facts(G) == _view_facts(torch)


def test_bias_gradient_summed_back_is_pytorchs():
    """sum_to over broadcast rows (SumBackward1 under create_graph, plain values without)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((257, 3)).astype(np.float32)
    out = {}
    for name, T in (("g", G), ("t", torch)):
        b = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = T.tensor(x) + b
        (g,) = T.autograd.grad((y * y).sum(), b, create_graph=True)
        out[name] = (type(g.grad_fn).__name__, np.asarray(g.tolist(), np.float32).tobytes())
        b2 = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
        (T.tensor(x) * b2).sum().backward()
        out[name] += (np.asarray(b2.grad.tolist(), np.float32).tobytes(),)
    assert out["g"] == out["t"]


def test_quiet_forwards_in_threads_leave_numpy_state_alone():
    """An op in a new thread (its own quiet Context) computes inf/nan silently, and neither
    thread's numpy error state changes."""
    before = np.geterr()
    results = []

    def work():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            a = G.tensor([1.0, 0.0, -1.0])
            results.append(((a / G.tensor(0.0)).tolist(), np.geterr()))

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3
    for values, state in results:
        assert values[0] == float("inf") and values[2] == float("-inf") and values[1] != values[1]
        assert state == before
    assert np.geterr() == before


def test_axpy_into_is_axpy_bit_for_bit():
    rng = np.random.default_rng(11)
    for dtype in (np.float32, np.float64):
        for alpha in (-1e-6, 0.1, -3.0):
            x = (rng.standard_normal(64) * 10.0 ** rng.integers(-8, 8, 64)).astype(dtype)
            y = rng.standard_normal(64).astype(dtype)
            want = axpy(alpha, x, y)
            got = y.copy()
            axpy_into(alpha, x, got)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_axpy_into_small_parameters_are_axpy_bit_for_bit():
    """Parameters of up to 16 elements (a bias, Linear(3, 1)'s weight) are updated in Python
    floats: the same bits as the float64 buffer, for wide exponents, signed zeros,
    infinities, nan, overflow to inf and layouts that are not contiguous."""
    rng = np.random.default_rng(12)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.4e38, -3.4e38],
                        np.float32)
    for n in (1, 3, 7, 16):
        for kind in range(4):
            for alpha in (-1e-6, 0.1, -3.0, 1e30):
                x = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(np.float32)
                y = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(np.float32)
                if kind == 1:
                    x, y = rng.choice(specials, n), rng.choice(specials, n)
                with np.errstate(all="ignore"):
                    want = axpy(alpha, x, y)
                    got = y.copy()
                    if kind == 2:  # (1, n) as Linear's weight, and its gradient
                        got = got.reshape(1, n)
                        axpy_into(alpha, x.reshape(1, n), got)
                    elif kind == 3:  # a strided parameter (a column of a wider buffer)
                        buffer = np.zeros((n, 2), np.float32)
                        buffer[:, 1] = y
                        got = buffer[:, 1]
                        axpy_into(alpha, x, got)
                        assert (buffer[:, 0] == 0).all()
                    else:
                        axpy_into(alpha, x, got)
                assert got.dtype == want.dtype and got.tobytes() == want.reshape(-1).tobytes()


def test_sgd_steps_match_pytorch():
    w0 = np.array([[0.1, -0.2, 0.05]], np.float32)
    rng = np.random.default_rng(2)
    xs = rng.standard_normal((50, 3)).astype(np.float32)
    finals = []
    for T in (G, torch):
        model = T.nn.Sequential(T.nn.Linear(3, 1), T.nn.Flatten(0, 1))
        with T.no_grad():
            model[0].weight.copy_(T.tensor(w0))
            model[0].bias.fill_(0.3)
        opt = T.optim.SGD(model.parameters(), lr=1e-3)
        x, y = T.tensor(xs), T.tensor(xs[:, 0] * 2.0)
        for _ in range(20):
            loss = T.nn.MSELoss(reduction="sum")(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        finals.append(np.asarray(model[0].weight.tolist(), np.float32))
    # (torch.testing's float32 tolerances: 50 rows of products round as MKL's up to an ulp)
    np.testing.assert_allclose(finals[0], finals[1], rtol=1.3e-6, atol=1e-5)


def _addmm_outcome(T, bias, a, b):
    try:
        out = T.addmm(bias, a, b)
    except (RuntimeError, TypeError, NotImplementedError) as err:
        return type(err).__name__, str(err)
    return tuple(out.shape), out.tolist()


@pytest.mark.parametrize("case", [
    ((2,), (3, 2), (2, 2), "bool"),  # the Bool refusal comes after the bias expands
    ((3, 1), (2, 2), (2, 2), "float32"),  # a bias that does not expand
    ((3,), (2, 2), (2, 3), "float32"),  # a Linear's bias
    ((2, 3), (2, 2), (2, 3), "float32"),  # a whole matrix
    ((), (2, 2), (2, 3), "float32"),  # a 0-d bias expands
    ((1, 3), (2, 2), (2, 3), "float32"),
    ((2, 1), (2, 2), (2, 3), "float32"),
    ((4,), (2, 2), (2, 3), "float32"),
    ((2, 2, 3), (2, 2), (2, 3), "float32"),  # more dims than the product's
    ((3,), (2, 3), (2, 3), "float32"),  # shapes that cannot be multiplied
    ((3,), (2, 2, 1), (2, 3), "float32"),  # mat1 not a matrix
])
def test_addmm_checks_are_pytorchs(case):
    bias, m1, m2, dtype = case

    def outcome(T):
        dt = getattr(T, dtype)
        return _addmm_outcome(T, T.ones(bias, dtype=dt), T.ones(m1, dtype=dt), T.ones(m2, dtype=dt))
    assert outcome(G) == outcome(torch)


def test_addmm_mixed_dtypes_and_non_tensors_are_pytorchs():
    def outcome(T, which):
        args = [T.ones(3), T.ones(2, 2), T.ones(2, 3)]
        if which == "int":
            args[1] = T.ones(2, 2, dtype=T.int64)
        elif which == "bias":
            args[0] = T.ones(3, dtype=T.float64)
        else:
            args[2] = [[1.0]]
        return _addmm_outcome(T, *args)
    for which in ("int", "bias", "list"):
        assert outcome(G, which) == outcome(torch, which)


@pytest.mark.parametrize("rows", [2000, 1999, 7])
@pytest.mark.parametrize("k", [2, 3, 4])
def test_linear_short_rows_forward_is_pytorchs_bit_for_bit(rows, k):
    """nn.Linear(k, 1) over many rows (W7's forward: the columns summed in MKL's order, the
    final + 0 folded into the bias): PyTorch's bits, zeros' signs included."""
    from gradcli.engine.kernels import mkl_intel

    if mkl_intel.isa() in (None, "amd"):
        pytest.skip("MKL runs its AMD kernels here (their orders: tests/test_kernels_mkl_*)")
    rng = np.random.default_rng(rows * 10 + k)
    x = rng.standard_normal((rows, k)).astype(np.float32) * np.float32(3)
    x[rng.random((rows, k)) < 0.2] = 0.0
    x[rng.random((rows, k)) < 0.1] *= -1
    x[:4] = -0.0
    w = rng.standard_normal((1, k)).astype(np.float32)
    for bias in (0.3, -0.0, 0.0):
        outs = []
        for T in (G, torch):
            lin = T.nn.Linear(k, 1)
            with T.no_grad():
                lin.weight.copy_(T.tensor(w))
                lin.bias.fill_(bias)
            y = lin(T.tensor(x))
            assert type(y.grad_fn).__name__ == "AddmmBackward0"
            outs.append(np.asarray(y.detach().tolist(), np.float32))
        assert outs[0].tobytes() == outs[1].tobytes()
