"""VonMises against PyTorch: seeded samples from the rejection sampler (and where it leaves
the generator), log_prob on both sides of the Bessel approximations' switch at 3.75,
variance, gradients, expand (which validates again, as PyTorch's), reprs and errors."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from comparison_helpers import assert_shown_as_pytorch  # noqa: E402

import gradcli.torch as gt  # noqa: E402


def _env(lib):
    return {"torch": lib, "D": lib.distributions,
            "loc": lib.tensor([0.5, -2.0, 3.0, 0.0]), "k": lib.tensor([0.1, 2.0, 3.74, 8.0]),
            "v": lib.tensor([0.1, 1.0, -3.0, 3.1])}


VM = "D.VonMises(loc, k)"
CODES = [
    VM, VM + ".sample()", VM + ".sample((3, 2))", "(" + VM + ".sample((5,)), torch.rand(2))",
    VM + ".log_prob(v)", VM + ".variance", VM + ".mean", VM + ".mode", VM + ".batch_shape",
    "D.VonMises(1., 1e-6).sample((3,))", "D.VonMises(0., 40.).sample((4,))",
    "D.VonMises(torch.tensor(0., dtype=torch.float64), 2.).sample((3,))",
    "D.VonMises(0., 5.).expand([2]).sample()", "D.VonMises(0., 5.).expand([2, 3])",
    "D.VonMises(0., -1.)", "D.VonMises(0., -1., validate_args=False).expand([2])",
    VM + ".entropy()", VM + ".rsample()", VM + ".cdf(v)", VM + ".support",
    "D.von_mises.VonMises(0., 1.).has_rsample",
]


@pytest.mark.parametrize("code", CODES)
def test_as_pytorch(code):
    assert_shown_as_pytorch(code, _env, seed=7)


@pytest.mark.parametrize("what", ["log_prob", "variance"])
def test_gradients_as_pytorch(what):
    grads = []
    for lib in (torch, gt):
        loc = lib.tensor([0.5, -2.0, 1.0], dtype=lib.float64, requires_grad=True)
        k = lib.tensor([0.3, 3.0, 6.0], dtype=lib.float64, requires_grad=True)
        d = lib.distributions.VonMises(loc, k)
        out = d.log_prob(lib.tensor([0.2, 0.4, -1.0], dtype=lib.float64)) \
            if what == "log_prob" else d.variance
        out.sum().backward()
        grads.append([None if g is None else g.numpy().copy() for g in (loc.grad, k.grad)])
    for mine, theirs in zip(grads[1], grads[0]):
        if theirs is None:
            assert mine is None
        else:
            torch.testing.assert_close(torch.tensor(mine), torch.tensor(theirs))
