"""ContinuousBernoulli and the ExponentialFamily base against PyTorch: seeded samples,
log_prob / cdf / icdf / moments / entropy (closed form and the Bregman-divergence entropy
of the base class) on both sides of the unstable region near 0.5, gradients, reprs,
expand and validation errors."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from comparison_helpers import assert_shown_as_pytorch  # noqa: E402

import gradcli.torch as gt  # noqa: E402


def _env(lib):
    return {"torch": lib, "D": lib.distributions, "p": lib.tensor([0.2, 0.4995, 0.5, 0.9]),
            "lg": lib.tensor([-1.0, 0.001, 2.0]), "v": lib.tensor([0.1, 0.5, 0.7, 1.0])}


CB = "D.ContinuousBernoulli(p)"
CBL = "D.ContinuousBernoulli(logits=lg)"
CODES = [
    CB, CBL, CB + ".sample((2,))", CB + ".rsample()", CBL + ".sample()",
    CB + ".log_prob(v)", CBL + ".log_prob(torch.tensor(0.3))", CB + ".cdf(v)",
    CB + ".cdf(torch.tensor([-0.5, 0.2, 0.5, 2.0]))", CB + ".icdf(v)", CB + ".mean",
    CB + ".variance", CB + ".stddev", CB + ".entropy()", CBL + ".entropy()",
    "D.ExponentialFamily.entropy(" + CB + ")", "D.ExponentialFamily.entropy(" + CBL + ")",
    CB + ".expand([2, 4])", CB + ".expand([2, 4]).sample()", CB + ".param_shape",
    CB + ".support", CB + ".batch_shape", CB + ".has_rsample",
    "D.ContinuousBernoulli(0.3)", "D.ContinuousBernoulli(0.3).sample((3,))",
    "D.ContinuousBernoulli(torch.tensor([1.2]))",
    "D.ContinuousBernoulli(torch.tensor([1.2]), validate_args=True)",
    "D.ContinuousBernoulli(torch.tensor([1.2]), validate_args=False).probs",
    "D.ContinuousBernoulli()", "D.ContinuousBernoulli(p, lg)",
    CB + ".log_prob(torch.tensor([1.5, 0.2, 0.3, 0.4]))",
    "D.ContinuousBernoulli(p, lims=(0.3, 0.7)).mean",
    "D.continuous_bernoulli.ContinuousBernoulli(p).mode",
    "D.exp_family.ExponentialFamily(torch.Size([2])).entropy()",
]


@pytest.mark.parametrize("code", CODES)
def test_as_pytorch(code):
    assert_shown_as_pytorch(code, _env, seed=3)


@pytest.mark.parametrize("use", ["rsample", "log_prob", "entropy", "bregman", "mean", "cdf"])
def test_gradients_as_pytorch(use):
    grads = []
    for lib in (torch, gt):
        lib.manual_seed(5)
        p = lib.tensor([0.15, 0.4999, 0.62, 0.97], dtype=lib.float64, requires_grad=True)
        d = lib.distributions.ContinuousBernoulli(p)
        value = lib.tensor([0.3, 0.6, 0.9, 0.05], dtype=lib.float64)
        out = {"rsample": d.rsample, "log_prob": lambda d=d, v=value: d.log_prob(v),
               "entropy": d.entropy, "mean": lambda d=d: d.mean,
               "bregman": lambda d=d, D=lib.distributions: D.ExponentialFamily.entropy(d),
               "cdf": lambda d=d, v=value: d.cdf(v)}[use]()
        out.sum().backward()
        grads.append(None if p.grad is None else p.grad.numpy().copy())
    if grads[0] is None:
        assert grads[1] is None
    else:
        torch.testing.assert_close(torch.tensor(grads[1]), torch.tensor(grads[0]))


KL = ["D.ContinuousBernoulli(p)", "D.ContinuousBernoulli(torch.tensor([0.3, 0.6, 0.5, 0.1]))",
      "D.Beta(torch.tensor([2.0, 1.0, 0.5, 3.0]), 1.5)", "D.Pareto(1.0, 2.0)",
      "D.Exponential(torch.tensor([1.0, 2.0, 0.5, 3.0]))", "D.Normal(0.3, torch.ones(4))",
      "D.Uniform(torch.tensor([0.0, -1.0, 0.2, 0.1]), torch.tensor([1.0, 0.5, 0.9, 2.0]))",
      "D.Gamma(torch.ones(4), 1.0)", "D.Gumbel(torch.zeros(4), 1.0)",
      "D.Laplace(torch.zeros(4), 1.0)"]


@pytest.mark.parametrize("other", KL[1:])
@pytest.mark.parametrize("cb_first", [True, False])
def test_kl_pairs_as_pytorch(other, cb_first):
    pair = (KL[0], other) if cb_first else (other, KL[0])
    code = f"D.kl_divergence({pair[0]}, {pair[1]})"
    assert_shown_as_pytorch(code, _env)


SAME = ["D.Poisson(torch.tensor([1.0, 2.5]))", "D.Poisson(torch.tensor([3.0, 0.5]))",
        "D.Gumbel(torch.tensor([0.0, 1.0]), 2.0)", "D.Gumbel(torch.tensor([0.5, -1.0]), 0.7)",
        "D.HalfNormal(torch.tensor([1.0, 2.0]))", "D.HalfNormal(torch.tensor([0.5, 3.0]))",
        "D.Pareto(torch.tensor([1.0, 2.0]), 3.0)", "D.Pareto(torch.tensor([1.5, 1.0]), 2.0)",
        "D.Cauchy(torch.tensor([0.0, 1.0]), 2.0)", "D.Cauchy(torch.tensor([0.5, -1.0]), 0.7)",
        "D.MultivariateNormal(torch.zeros(2), torch.tensor([[2.0, 0.3], [0.3, 1.0]]))",
        "D.MultivariateNormal(torch.tensor([[1.0, -1.0], [0.0, 2.0]]), torch.eye(2))",
        "D.Beta(torch.tensor([2.0, 0.5]), 1.5)", "D.Beta(torch.tensor([1.0, 3.0]), 2.5)",
        "D.Exponential(torch.tensor([2.0, 0.5]))", "D.Exponential(torch.tensor([1.0, 3.0]))"]


@pytest.mark.parametrize("i", range(0, len(SAME), 2))
@pytest.mark.parametrize("swap", [False, True])
def test_same_family_kl_as_pytorch(i, swap):
    pair = (SAME[i + 1], SAME[i]) if swap else (SAME[i], SAME[i + 1])
    values = []
    for lib in (torch, gt):
        value = eval(f"D.kl_divergence({pair[0]}, {pair[1]})", _env(lib))  # noqa: S307
        values.append(value)
    assert repr(values[1]).replace("gradcli.torch", "torch") == repr(values[0])


@pytest.mark.parametrize("code", [
    "D.kl_divergence(D.MultivariateNormal(torch.zeros(2), torch.eye(2)),"
    " D.MultivariateNormal(torch.zeros(3), torch.eye(3)))",
    "D.kl_divergence(D.Poisson(torch.ones(2)), D.Gamma(torch.ones(2), 1.0))",
    "D.kl_divergence(D.Dirichlet(torch.ones(3)), D.Dirichlet(torch.tensor([1.0, 2.0, 3.0])))",
])
def test_kl_errors_and_fallbacks_as_pytorch(code):
    assert_shown_as_pytorch(code, _env)
