"""MixtureSameFamily, Multinomial, OneHotCategoricalStraightThrough, RelaxedBernoulli and
RelaxedOneHotCategorical (with their log-space bases in torch.distributions.relaxed_bernoulli
/ relaxed_categorical) and the multinomial / mixture constraints against PyTorch: seeded
samples, log_prob / moments / entropy, gradients through rsample and log_prob, reprs and
validation errors."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from comparison_helpers import assert_shown_as_pytorch  # noqa: E402

import gradcli.torch as gt  # noqa: E402


def _env(lib):
    return {"torch": lib, "D": lib.distributions, "lg": lib.tensor([0.1, -0.5, 1.0]),
            "mu": lib.tensor([-1.0, 0.0, 2.0]), "sd": lib.tensor([0.5, 1.0, 2.0]),
            "mu2": lib.tensor([[-1.0, 0.0], [0.0, 1.0], [2.0, 2.0]]), "sd2": lib.ones(3, 2)}


MIX = "D.MixtureSameFamily(D.Categorical(logits=lg), D.Normal(mu, sd))"
MIX2 = "D.MixtureSameFamily(D.Categorical(logits=lg), D.Independent(D.Normal(mu2, sd2), 1))"
CODES = [
    MIX, MIX + ".sample((4,))", MIX + ".log_prob(torch.tensor([0.3, -1., 2.]))",
    MIX + ".mean", MIX + ".variance", MIX + ".cdf(torch.tensor(0.5))", MIX + ".support",
    MIX + ".batch_shape, " + MIX + ".event_shape",
    MIX2 + ".sample((3,))", MIX2 + ".log_prob(torch.ones(2, 2))", MIX2 + ".mean",
    MIX2 + ".variance", MIX2 + ".event_shape",
    "D.MixtureSameFamily(D.Categorical(logits=lg[:2]), D.Normal(mu, sd))",
    "D.MixtureSameFamily(D.Normal(mu, sd), D.Normal(mu, sd))",
    "D.MixtureSameFamily(D.Categorical(logits=lg), D.HalfNormal(sd)).log_prob(torch.tensor(-1.))",
    "D.Multinomial(10, probs=torch.tensor([0.2, 0.3, 0.5]))",
    "D.Multinomial(10, probs=torch.tensor([0.2, 0.3, 0.5])).sample((3,))",
    "D.Multinomial(10, logits=lg).log_prob(torch.tensor([2., 3., 5.]))",
    "D.Multinomial(4, probs=torch.tensor([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])).entropy()",
    "D.Multinomial(4, probs=torch.tensor([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])).mean",
    "D.Multinomial(4, probs=torch.tensor([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])).variance",
    "D.Multinomial(4, probs=torch.tensor([0.2, 0.3, 0.5])).log_prob(torch.tensor([2., 3., 5.]))",
    "D.Multinomial(4.5, probs=torch.tensor([0.2, 0.3, 0.5]))",
    "D.Multinomial(4, probs=torch.tensor([-0.2, 0.3, 0.5]))",
    "D.Multinomial(4, probs=torch.tensor([0.2, 0.3, 0.5])).support",
    "D.RelaxedBernoulli(torch.tensor(0.5), probs=torch.tensor([0.1, 0.9]))",
    "D.RelaxedBernoulli(torch.tensor(0.5), probs=torch.tensor([0.1, 0.9])).rsample((3,))",
    "D.RelaxedBernoulli(torch.tensor(0.5), logits=lg).rsample()",
    "D.RelaxedBernoulli(torch.tensor(0.5), logits=lg).log_prob(torch.tensor([0.2, 0.5, 0.9]))",
    "D.RelaxedBernoulli(torch.tensor(0.5), logits=lg).base_dist",
    "D.RelaxedBernoulli(torch.tensor(0.5), probs=torch.tensor([1.5]))",
    "D.RelaxedBernoulli(torch.tensor(0.5))",
    "D.RelaxedOneHotCategorical(torch.tensor(0.5), logits=lg)",
    "D.RelaxedOneHotCategorical(torch.tensor(0.5), logits=lg).rsample((2,))",
    "D.RelaxedOneHotCategorical(torch.tensor(0.5), probs=torch.tensor([0.2, 0.3, 0.5]))"
    ".log_prob(torch.tensor([0.2, 0.3, 0.5]))",
    "D.RelaxedOneHotCategorical(torch.tensor(0.5), logits=lg).base_dist",
    "D.relaxed_bernoulli.LogitRelaxedBernoulli(torch.tensor(0.5), probs=0.3)",
    "D.relaxed_bernoulli.LogitRelaxedBernoulli(torch.tensor(0.5), probs=0.3).rsample((2,))",
    "D.relaxed_categorical.ExpRelaxedCategorical(torch.tensor(0.5), logits=lg).rsample()",
    "D.OneHotCategoricalStraightThrough(logits=lg)",
    "D.OneHotCategoricalStraightThrough(logits=lg).rsample((2,))",
    "D.OneHotCategoricalStraightThrough(logits=lg).has_rsample",
    "D.constraints.multinomial(3)",
    "D.constraints.MixtureSameFamilyConstraint(D.constraints.positive)",
    "D.constraints.multinomial(3).check(torch.tensor([[1., 2.], [3., 1.]]))",
    "D.constraints.MixtureSameFamilyConstraint(3)",
]


@pytest.mark.parametrize("code", CODES)
def test_as_pytorch(code):
    assert_shown_as_pytorch(code, _env, seed=1)


def _grads(lib, make, use):
    lib.manual_seed(2)
    logits = lib.tensor([0.3, -0.2, 1.1], dtype=lib.float64, requires_grad=True)
    temp = lib.tensor(0.7, dtype=lib.float64, requires_grad=True)
    d = make(lib.distributions, lib, logits, temp)
    out = use(d, lib)
    out.backward()
    return (out.detach().numpy(), type(out.grad_fn).__name__, logits.grad.numpy(),
            None if temp.grad is None else temp.grad.numpy())


GRADS = [
    (lambda D, L, lg, t: D.RelaxedOneHotCategorical(t, logits=lg),
     lambda d, L: (d.rsample((2,)) * L.arange(3.0, dtype=L.float64)).sum()),
    (lambda D, L, lg, t: D.RelaxedOneHotCategorical(t, logits=lg),
     lambda d, L: d.log_prob(L.tensor([0.2, 0.3, 0.5], dtype=L.float64))),
    (lambda D, L, lg, t: D.RelaxedBernoulli(t, logits=lg),
     lambda d, L: (d.rsample((3,)) ** 2).sum()),
    (lambda D, L, lg, t: D.RelaxedBernoulli(t, logits=lg),
     lambda d, L: d.log_prob(L.tensor([0.2, 0.5, 0.9], dtype=L.float64)).sum()),
    (lambda D, L, lg, t: D.MixtureSameFamily(
        D.Categorical(logits=lg), D.Normal(lg * 2, t.expand(3))),
     lambda d, L: d.log_prob(L.tensor([0.3, -1.0], dtype=L.float64)).sum()),
    (lambda D, L, lg, t: D.OneHotCategoricalStraightThrough(logits=lg),
     lambda d, L: (d.rsample((3,)) * L.arange(3.0, dtype=L.float64)).sum()),
    (lambda D, L, lg, t: D.Multinomial(5, logits=lg),
     lambda d, L: d.log_prob(L.tensor([1.0, 0.0, 4.0], dtype=L.float64))),
]


@pytest.mark.parametrize("case", range(len(GRADS)))
def test_gradients_as_pytorch(case):
    make, use = GRADS[case]
    want, mine = _grads(torch, make, use), _grads(gt, make, use)
    assert want[1] == mine[1]
    for a, b in zip(want[::2] + want[3:], mine[::2] + mine[3:]):
        if a is None:
            assert b is None
        else:
            np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-12)


def test_family_modules():
    import importlib

    for short, names in (("mixture_same_family", ["MixtureSameFamily"]),
                         ("multinomial", ["Multinomial"]),
                         ("relaxed_bernoulli", ["RelaxedBernoulli", "LogitRelaxedBernoulli"]),
                         ("relaxed_categorical", ["RelaxedOneHotCategorical",
                                                  "ExpRelaxedCategorical"])):
        mine = importlib.import_module("gradcli.torch.distributions." + short)
        theirs = importlib.import_module("torch.distributions." + short)
        for name in names:
            assert getattr(mine, name).__module__ == getattr(theirs, name).__module__
    assert not hasattr(gt.distributions, "LogitRelaxedBernoulli")
    assert not hasattr(torch.distributions, "LogitRelaxedBernoulli")
