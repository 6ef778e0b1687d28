"""torch.poisson (gradcli/engine/ops/tut_ops.py) against real PyTorch: seeded draws bit for bit
on both sides of rate 10 (product of uniforms below, PTRS rejection above), the generator's
state afterwards, dtypes, PoissonBackward0's zero gradient, and the error texts."""

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

CASES = [
    "T.poisson(T.tensor([1.5, 12.0]))",
    "T.poisson(T.tensor([0.0, 3.0]), generator=T.Generator().manual_seed(1))",
    "T.poisson(T.rand(4, 5) * 30)",
    "T.poisson(T.full((3, 4), 9.99, dtype=T.float64))",
    "T.poisson(T.full((3, 4), 250.0).t())",
    "T.poisson(T.ones(2, 3).t() * T.tensor([0.5, 50.0, 4.0]).unsqueeze(1))",
    "(T.poisson(T.full((50,), 10.0)), T.rand(2))",
    "T.poisson(T.tensor([1e-3, 0.0, 1e4]))",
]


@pytest.mark.parametrize("expr", CASES)
def test_draws_as_pytorch(expr):
    def run(T):
        T.manual_seed(0)
        return repr(eval(expr, {"T": T}))

    assert run(gt) == run(torch)


def test_gradient_is_zero_as_pytorch():
    def run(T):
        T.manual_seed(0)
        rate = T.tensor([1.5, 12.0], requires_grad=True)
        drawn = T.poisson(rate)
        (drawn * 3).sum().backward()
        return repr((drawn, rate.grad))

    assert run(gt) == run(torch)


@pytest.mark.parametrize("expr", ["T.poisson(T.tensor([-1.0]))", "T.poisson(T.tensor([1, 2]))"])
def test_errors_as_pytorch(expr):
    seen = []
    for T in (gt, torch):
        with pytest.raises(Exception) as info:
            eval(expr, {"T": T})
        seen.append((type(info.value).__name__, str(info.value)))
    assert seen[0] == seen[1]
