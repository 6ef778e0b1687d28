"""LowRankMultivariateNormal against PyTorch: reprs, moments and the covariance /
precision / scale_tril matrices, seeded samples, log_prob and entropy (also batched and
expanded), gradients through rsample and log_prob, and the shape and validation errors."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from comparison_helpers import assert_shown_as_pytorch  # noqa: E402

import gradcli.torch as gt  # noqa: E402


def _env(lib):
    return {"torch": lib, "D": lib.distributions,
            "W": lib.tensor([[1.0, 0.5], [0.2, -0.3], [0.0, 1.0]]),
            "d": lib.tensor([0.5, 1.0, 2.0]), "mu": lib.tensor([0.1, -0.2, 0.3])}


LR = "D.LowRankMultivariateNormal(mu, W, d)"
LRB = "D.LowRankMultivariateNormal(torch.zeros(2, 3), W, d)"
CODES = [
    LR, LR + ".mean", LR + ".variance", LR + ".covariance_matrix", LR + ".precision_matrix",
    LR + ".scale_tril", LR + ".sample((2,))", LR + ".rsample()",
    LR + ".log_prob(torch.tensor([0.5, 0.5, -1.0]))", LR + ".entropy()",
    LR + ".expand([2])", LR + ".expand([2]).log_prob(torch.zeros(3))",
    LRB + ".batch_shape", LRB + ".entropy()", LRB + ".log_prob(torch.ones(3))",
    LRB + ".sample()", LR + ".support", LR + ".event_shape",
    "D.LowRankMultivariateNormal(torch.tensor(1.), W, d)",
    "D.LowRankMultivariateNormal(mu, torch.ones(3), d)",
    "D.LowRankMultivariateNormal(mu, torch.ones(2, 2), d)",
    "D.LowRankMultivariateNormal(mu, W, torch.ones(2))",
    "D.LowRankMultivariateNormal(mu, W, -d)",
    "D.LowRankMultivariateNormal(torch.zeros(4, 3), torch.ones(3, 3, 2), d)",
    "D.lowrank_multivariate_normal.LowRankMultivariateNormal(mu, W, d).has_rsample",
]


@pytest.mark.parametrize("code", CODES)
def test_as_pytorch(code):
    assert_shown_as_pytorch(code, _env, seed=4)


@pytest.mark.parametrize("what", ["rsample", "log_prob", "entropy", "precision"])
def test_gradients_as_pytorch(what):
    grads = []
    for lib in (torch, gt):
        lib.manual_seed(9)
        f64 = lib.float64
        mu = lib.tensor([0.1, -0.2, 0.3], dtype=f64, requires_grad=True)
        W = lib.tensor([[1.0, 0.5], [0.2, -0.3], [0.0, 1.0]], dtype=f64, requires_grad=True)
        d = lib.tensor([0.5, 1.0, 2.0], dtype=f64, requires_grad=True)
        dist = lib.distributions.LowRankMultivariateNormal(mu, W, d)
        out = {"rsample": lambda dist=dist: dist.rsample((2,)),
               "log_prob": lambda dist=dist, lib=lib: dist.log_prob(
                   lib.tensor([0.5, 0.5, -1.0], dtype=lib.float64)),
               "entropy": dist.entropy,
               "precision": lambda dist=dist: dist.precision_matrix}[what]()
        out.sum().backward()
        grads.append([None if t.grad is None else t.grad.numpy().copy() for t in (mu, W, d)])
    for mine, theirs in zip(grads[1], grads[0]):
        if theirs is None:
            assert mine is None
        else:
            torch.testing.assert_close(torch.tensor(mine), torch.tensor(theirs))
