"""The in-place fills and sampling functions against PyTorch 2.13, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from rng_oracle import torch_with_vector_kernels

import gradcli.torch as gt

torch = torch_with_vector_kernels()


def _same(a, b):
    a = a.detach().numpy()
    b = b.detach()._data
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a, np.ascontiguousarray(b), equal_nan=True), (a, b)
    assert a.tobytes() == np.ascontiguousarray(b).tobytes()


def _run(seed, fn):
    torch.manual_seed(seed)
    gt.manual_seed(seed)
    ra, rb = fn(torch), fn(gt)
    _same(ra, rb)
    _same(torch.rand(3), gt.rand(3))  # both generators moved on alike


FILLS = [
    lambda m, t: t.uniform_(),
    lambda m, t: t.uniform_(-2.5, 3.25),
    lambda m, t: t.normal_(),
    lambda m, t: t.normal_(1.5, 0.25),
    lambda m, t: t.bernoulli_(0.3),
    lambda m, t: t.exponential_(),
    lambda m, t: t.exponential_(2.5),
    lambda m, t: t.geometric_(0.3),
    lambda m, t: t.log_normal_(),
    lambda m, t: t.cauchy_(0.5, 2.0),
    lambda m, t: t.random_(),
    lambda m, t: t.random_(10),
    lambda m, t: t.random_(-3, 7),
]


@pytest.mark.parametrize("fill", range(len(FILLS)))
@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 33, 1000])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fills(fill, n, dtype):
    f = FILLS[fill]
    _run(fill + n, lambda m: f(m, m.empty(n, dtype=getattr(m, dtype))))


@pytest.mark.parametrize("fill", range(len(FILLS)))
def test_fills_noncontiguous(fill):
    f = FILLS[fill]
    _run(3, lambda m: f(m, m.zeros(9, 5).t()))
    _run(4, lambda m: f(m, m.zeros(6, 40)[:, ::2]))


def test_int_fills():
    _run(1, lambda m: m.zeros(20, dtype=m.int64).random_())
    _run(1, lambda m: m.zeros(20, dtype=m.int64).random_(-2**40, 2**41))
    _run(2, lambda m: m.zeros(20, dtype=m.int32).random_(0, 100))


@pytest.mark.parametrize("n", [1, 15, 16, 17, 100])
def test_normal_overloads(n):
    _run(n, lambda m: m.normal(2.0, 3.0, (n,)))
    _run(n, lambda m: m.normal(m.arange(float(n)), 0.5))
    _run(n, lambda m: m.normal(1.0, m.arange(float(n)) / n))
    _run(n, lambda m: m.normal(m.ones(n), m.ones(n) * 2))
    _run(n, lambda m: m.normal(m.zeros(n, dtype=m.float64), 2.0))


@pytest.mark.parametrize("n", [1, 16, 33])
def test_bernoulli(n):
    _run(n, lambda m: m.bernoulli(m.linspace(0, 1, n)))
    _run(n, lambda m: m.bernoulli(m.linspace(0, 1, n, dtype=m.float64)))
    _run(n, lambda m: m.empty(n).bernoulli_(m.linspace(0, 1, n)))
    _run(n, lambda m: m.ones(n).bernoulli(0.25))


def test_multinomial():
    p = [0.1, 0.2, 0.3, 0.4, 0.0, 2.0]
    for k in (1, 3, 5):
        _run(k, lambda m, k=k: m.multinomial(m.tensor(p), k))
        _run(k, lambda m, k=k: m.multinomial(m.tensor([p, p[::-1]]), k))
        _run(k, lambda m, k=k: m.multinomial(m.tensor(p, dtype=m.float64), k, True))
    _run(5, lambda m: m.multinomial(m.tensor([p, p[::-1]]), 50, replacement=True))


def test_graph_nodes():
    x = gt.ones(3, requires_grad=True)
    assert (x * 1).uniform_().grad_fn.name() == "UniformBackward0"
    assert (x * 1).normal_().grad_fn.name() == "NormalBackward0"
    assert (x * 1).bernoulli_(0.5).grad_fn.name() == "BernoulliBackward2"
    assert gt.bernoulli(gt.full((3,), 0.5, requires_grad=True)).grad_fn.name() == "BernoulliBackward0"
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        x.uniform_()


@pytest.mark.parametrize("call, kind, text", [
    ("m.empty(3).uniform_(2, 1)", RuntimeError, "uniform_ expects to return a [from, to) range, but found from=2 > to=1"),
    ("m.empty(3).normal_(0, -1)", RuntimeError, "normal expects std >= 0.0, but found std -1"),
    ("m.normal(0., -1., (3,))", RuntimeError, "normal expects std >= 0.0, but found std -1"),
    ("m.empty(3).bernoulli_(1.5)", RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=1.5"),
    ("m.multinomial(m.tensor([1., -1, 0]), 1)", RuntimeError, "probability tensor contains either `inf`, `nan` or element < 0"),
    ("m.multinomial(m.tensor([0., 0, 0]), 1)", RuntimeError, "invalid multinomial distribution (sum of probabilities <= 0)"),
    ("m.multinomial(m.tensor([1., 1, 1]), 0)", RuntimeError, "cannot sample n_sample <= 0 samples"),
    ("m.multinomial(m.tensor([1., 1, 1]), 4)", RuntimeError, "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
    ("m.empty(3).exponential_(-1)", RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=-1"),
    ("m.empty(3).geometric_(1.5)", RuntimeError, "geometric_ expects p to be in (0, 1), but got p=1.5"),
    ("m.empty(3).log_normal_(0, 0)", RuntimeError, "log_normal_ expects std > 0.0, but found std=0"),
    ("m.empty(3).cauchy_(0, -1)", RuntimeError, "cauchy_ expects sigma > 0.0, but found sigma=-1"),
    ("m.empty(3).random_(5, 2)", RuntimeError, "random_ expects 'from' to be less than 'to', but got from=5 >= to=2"),
    ("m.randperm(-1)", RuntimeError, "Trying to create tensor with negative dimension -1: [-1]"),
])
def test_errors(call, kind, text):
    for m in (torch, gt):
        with pytest.raises(kind) as info:
            eval(call, {"m": m})  # noqa: S307 - the test's own text
        assert str(info.value).splitlines()[0] == text


def test_normal_tensor_nodes_and_zero_gradients():
    for m in (torch, gt):
        m.manual_seed(0)
    for call in ("m.normal(x, 2.0)", "m.normal(1.0, s)", "m.normal(x, s)", "m.normal(y, s)"):
        out = []
        for m in (torch, gt):
            x = m.zeros(3, requires_grad=True)
            y = m.zeros(2, 1, requires_grad=True)
            s = m.ones(3, requires_grad=True)
            r = eval(call, {"m": m, "x": x, "s": s, "y": y})  # noqa: S307 - the test's own text
            r.sum().backward()
            grads = [t.grad for t in (x, y, s) if t.grad is not None]
            out.append((r.grad_fn.name(), tuple(r.shape), [g.tolist() for g in grads], r.tolist()))
        assert out[0] == out[1]


SIGNATURES = [
 "m.randn(0)", "m.rand(())", "m.randn(2, 0, 3)", "m.randn((2, 3))", "m.randn([2, 3])", "m.randn(size=(2, 3))", "m.rand(size=(4,))",
 "m.randint(3, 10, size=(4,))", "m.randint(10, size=(3,))", "m.randint(low=2, high=9, size=(3,))", "m.randint(5, (2, 2), dtype=m.float32)",
 "m.randperm(5, dtype=m.int32)", "m.randperm(n=4)", "m.normal(0.0, 1.0, size=(3,))", "m.normal(mean=m.zeros(3), std=1.0)",
 "m.rand(3, requires_grad=True)", "m.randn(2, dtype=m.float64, requires_grad=True)", "m.rand_like(m.ones(3), dtype=m.float64)",
 "m.randn_like(m.ones(2, 2), requires_grad=True)", "m.randint_like(m.ones(3), 2, 5)", "m.randint_like(m.ones(3), high=5)",
 "m.bernoulli(m.full((3,), 0.5), generator=m.Generator().manual_seed(1))", "m.ones(3).bernoulli_(p=0.5)",
 "m.empty(3).uniform_(a=1.0, b=2.0)", "m.empty(3).normal_(mean=1.0, std=0.1)", "m.empty(3).exponential_(lambd=2.0)",
 "m.empty(3).random_(to=5)", "m.empty(3).random_(2, to=5)", "m.ones(2, 3).multinomial(2)", "m.multinomial(m.ones(4), num_samples=2, replacement=True)",
 "m.empty(4).cauchy_(median=1.0, sigma=2.0)", "m.empty(4).log_normal_(mean=0.0, std=0.5)", "m.empty(4).geometric_(p=0.2)",
 "m.rand(2, 3).t().uniform_()", "m.randn(3, generator=None)", "m.rand(2, 2, out=None) if False else m.rand(2, 2)",
]


@pytest.mark.parametrize("call", SIGNATURES)
def test_signatures(call):
    """Keyword and positional spellings, dtypes and options print what PyTorch prints."""
    res = []
    for m in (torch, gt):
        m.manual_seed(0)
        try:
            res.append(repr(eval(call, {"m": m})))  # noqa: S307 - the test's own text
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            res.append(f"{type(e).__name__}: {str(e).splitlines()[0]}")
    assert res[0] == res[1]
