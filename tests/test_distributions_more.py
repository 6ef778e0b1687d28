"""The distributions added for the tutorials (Exponential, Laplace, Geometric, Binomial,
OneHotCategorical, Gamma, Beta, Dirichlet, LogNormal, Independent, TransformedDistribution)
against PyTorch: seeded samples bit for bit (the gamma rejection sampler included, and the
generator left where PyTorch leaves it), log_prob/entropy/moments with their grad_fn, the
reparameterized gradients, reprs and validation errors."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402
from tests.test_parametrize import _both, _raises  # noqa: E402

SAMPLERS = [
    lambda D, lib: D.Exponential(lib.tensor([0.3, 4.0])).sample((3,)),
    lambda D, lib: D.Exponential(lib.tensor(2.0, dtype=lib.float64)).rsample((5,)),
    lambda D, lib: D.Laplace(lib.tensor([0.0, 2.0]), lib.tensor([1.0, 0.1])).sample((4,)),
    lambda D, lib: D.Geometric(lib.tensor([0.05, 0.5, 0.99])).sample((3,)),
    lambda D, lib: D.Geometric(logits=lib.tensor([-1.0, 2.0], dtype=lib.float64)).sample(),
    lambda D, lib: D.OneHotCategorical(logits=lib.tensor([[0.0, 1.0, -1.0],
                                                          [2.0, 0.0, 0.0]])).sample((3,)),
    lambda D, lib: D.Gamma(lib.tensor([0.01, 0.7, 1.0, 2.5, 90.0]), 2.0).sample((4,)),
    lambda D, lib: D.Gamma(lib.tensor([0.4, 6.0], dtype=lib.float64), lib.tensor(0.5,
                           dtype=lib.float64)).rsample((3,)),
    lambda D, lib: D.Beta(lib.tensor([0.2, 5.0]), lib.tensor([1.5, 0.5])).sample((3,)),
    lambda D, lib: D.Beta(2.0, 3.0).rsample((4,)),
    lambda D, lib: D.Dirichlet(lib.tensor([[0.1, 0.1, 0.1], [4.0, 1.0, 2.0]])).sample((2,)),
    lambda D, lib: D.Dirichlet(lib.tensor([0.5, 30.0], dtype=lib.float64)).rsample((3,)),
    lambda D, lib: D.LogNormal(lib.tensor([0.0, -1.0]), lib.tensor([0.5, 2.0])).sample((3,)),
    lambda D, lib: D.Binomial(lib.tensor([0.0, 4.0, 30.0, 500.0, 12.0]),
                              lib.tensor([0.5, 0.35, 0.5, 0.97, 1.0])).sample((40,)),
    lambda D, lib: D.Binomial(80, logits=lib.tensor([-3.0, 0.2, 4.0],
                                                    dtype=lib.float64)).sample((30,)),
    lambda D, lib: D.Independent(D.Laplace(lib.zeros(2, 2), lib.ones(2, 2)), 2).sample((2,)),
    lambda D, lib: D.TransformedDistribution(
        D.Exponential(lib.tensor([1.0, 3.0])),
        [D.transforms.AffineTransform(-1.0, 0.5), D.transforms.TanhTransform()]).sample((2,)),
]


@pytest.mark.parametrize("draw", range(len(SAMPLERS)))
def test_samples_bit_for_bit_and_generator_left_alike(draw):
    got = []
    for lib in (torch, gt):
        lib.manual_seed(draw + 5)
        value = SAMPLERS[draw](lib.distributions, lib)
        got.append((str(value.dtype), tuple(value.shape), value.numpy().tobytes(),
                    lib.rand(4).numpy().tobytes()))
    assert got[0] == got[1]


def test_gamma_sampler_over_many_shapes_of_alpha():
    got = []
    for lib in (torch, gt):
        lib.manual_seed(0)
        alpha = lib.linspace(0.05, 12.0, 60).reshape(3, 20)
        got.append([lib.distributions.Gamma(alpha, 1.0).sample().numpy().tobytes()
                    for _ in range(3)])
    assert got[0] == got[1]


@pytest.mark.parametrize("make,value", [
    (lambda D, lib, p: D.Exponential(p), lambda lib: lib.tensor([0.5, 3.0])),
    (lambda D, lib, p: D.Laplace(p, p * 2), lambda lib: lib.tensor([-1.0, 2.0])),
    (lambda D, lib, p: D.Gamma(p * 3, p), lambda lib: lib.tensor([0.7, 2.0])),
    (lambda D, lib, p: D.Beta(p * 2, p + 1), lambda lib: lib.tensor([0.2, 0.6])),
    (lambda D, lib, p: D.Dirichlet(lib.stack([p, p * 2, p + 1], -1)), lambda lib: lib.tensor(
        [0.2, 0.5, 0.3])),
    (lambda D, lib, p: D.Geometric(p / 4), lambda lib: lib.tensor([3.0, 0.0])),
    (lambda D, lib, p: D.Binomial(7, p / 3), lambda lib: lib.tensor([2.0, 5.0])),
    (lambda D, lib, p: D.Binomial(lib.tensor([6.0, 6.0]), logits=p), lambda lib: lib.tensor(
        [1.0, 6.0])),
    (lambda D, lib, p: D.LogNormal(p, p + 0.5), lambda lib: lib.tensor([0.3, 4.0])),
    (lambda D, lib, p: D.OneHotCategorical(lib.softmax(lib.stack([p, -p]), 0)),
     lambda lib: lib.tensor([0.0, 1.0])),
    (lambda D, lib, p: D.Independent(D.Normal(p, p + 1), 1), lambda lib: lib.tensor(
        [0.1, -0.4])),
], ids=["exponential", "laplace", "gamma", "beta", "dirichlet", "geometric", "binomial",
        "binomial-logits", "lognormal", "onehot", "independent"])
def test_log_prob_entropy_moments_and_their_gradients(make, value):
    def scenario(lib):
        p = lib.tensor([0.6, 1.3], requires_grad=True)
        dist = make(lib.distributions, lib, p)
        lp = dist.log_prob(value(lib))
        ent = dist.entropy()
        (lp.sum() + ent.sum() + dist.mean.sum() + dist.variance.sum()).backward()
        return [repr(dist), lp, ent, dist.mean, dist.variance, p.grad,
                tuple(dist.batch_shape), tuple(dist.event_shape), repr(dist.support)]

    _both(scenario)


@pytest.mark.parametrize("make", [
    lambda D, lib, p: D.Exponential(p).rsample((3,)),
    lambda D, lib, p: D.Laplace(p, p * 3).rsample((2,)),
    lambda D, lib, p: D.LogNormal(p, p).rsample((2,)),
    lambda D, lib, p: D.Gamma(lib.tensor([2.0, 0.5]), p).rsample((3,)),
    lambda D, lib, p: D.TransformedDistribution(D.Normal(p, 1.0),
                                                D.transforms.SigmoidTransform()).rsample((2,)),
    lambda D, lib, p: D.Independent(D.Normal(p, p), 1).rsample((2,)),
], ids=["exponential", "laplace", "lognormal", "gamma-rate", "sigmoid", "independent"])
def test_reparameterized_gradients(make):
    def scenario(lib):
        p = lib.tensor([0.8, 1.7], requires_grad=True)
        x = make(lib.distributions, lib, p)
        (x * lib.arange(1.0, x.numel() + 1).reshape(x.shape)).sum().backward()
        return [x, p.grad]

    _both(scenario)


def test_transformed_distribution_log_prob_nodes():
    def scenario(lib):
        D = lib.distributions
        loc = lib.tensor([0.3, -0.2], requires_grad=True)
        dist = D.TransformedDistribution(D.Normal(loc, 0.5),
                                         [D.transforms.AffineTransform(2.0, 3.0),
                                          D.transforms.ExpTransform()])
        y = lib.tensor([1.5, 40.0])
        lp = dist.log_prob(y)
        lp.sum().backward()
        return [lp, loc.grad, repr(dist.support), tuple(dist.batch_shape), dist.cdf(y),
                dist.icdf(lib.tensor([0.25, 0.75]))]

    _both(scenario)


@pytest.mark.parametrize("case", [
    lambda D, lib: D.Exponential(lib.tensor([-1.0])),
    lambda D, lib: D.Gamma(lib.tensor([1.0]), lib.tensor([0.0])),
    lambda D, lib: D.Dirichlet(lib.tensor(1.0)),
    lambda D, lib: D.Dirichlet(lib.tensor([1.0, -2.0])),
    lambda D, lib: D.Geometric(lib.tensor([0.0, 0.5])),
    lambda D, lib: D.Geometric(),
    lambda D, lib: D.Binomial(lib.tensor([2.5]), lib.tensor([0.5])),
    lambda D, lib: D.Exponential(lib.tensor([1.0])).log_prob(lib.tensor([-1.0])),
    lambda D, lib: D.Independent(D.Normal(lib.zeros(2), 1.0), 2),
    lambda D, lib: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
], ids=["rate", "gamma-rate", "dirichlet-scalar", "dirichlet-negative", "geometric-zero",
        "geometric-none", "binomial-count", "support", "independent-dims", "transforms"])
def test_validation_errors_as_pytorch(case):
    _raises(lambda lib: case(lib.distributions, lib))


def test_refusals_are_one_clear_message():
    conc = gt.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="reparameterized gradient of torch._sample_dirichlet"):
        gt.distributions.Beta(conc, 1.0).rsample()
    with pytest.raises(RuntimeError, match="not supported by gradcli"):
        gt.distributions.Dirichlet(conc).rsample()
    with gt.no_grad():
        assert gt.distributions.Dirichlet(conc).rsample().shape == (2,)
    assert gt.distributions.Beta(conc, 1.0).sample().requires_grad is False


def test_gamma_rate_gradient_matches_pytorch_values():
    vals = []
    for lib in (torch, gt):
        lib.manual_seed(1)
        rate = lib.tensor([0.5, 2.0], requires_grad=True)
        x = lib.distributions.Gamma(lib.tensor([3.0, 0.4]), rate).rsample((2,))
        x.sum().backward()
        vals.append((x.detach().numpy(), rate.grad.numpy(), type(x.grad_fn).__name__))
    np.testing.assert_allclose(vals[1][0], vals[0][0], rtol=1.3e-6)
    np.testing.assert_allclose(vals[1][1], vals[0][1], rtol=1.3e-6)
    assert vals[0][2] == vals[1][2]


@pytest.mark.parametrize("pair", [
    lambda D, lib, a: (D.Exponential(a), D.Exponential(a * 2 + 1)),
    lambda D, lib, a: (D.Gamma(a + 1, a), D.Gamma(a * 3, 2.0)),
    lambda D, lib, a: (D.Beta(a, a + 1), D.Beta(a * 2, 0.5)),
    lambda D, lib, a: (D.Dirichlet(lib.stack([a, a + 1], -1)),
                       D.Dirichlet(lib.stack([a * 2, a], -1))),
    lambda D, lib, a: (D.Laplace(a, a + 1), D.Laplace(-a, 2.0)),
    lambda D, lib, a: (D.Geometric(a / 3), D.Geometric(a / 4)),
    lambda D, lib, a: (D.Binomial(5, a / 3), D.Binomial(5, a / 4)),
    lambda D, lib, a: (D.OneHotCategorical(logits=lib.stack([a, -a], -1)),
                       D.OneHotCategorical(logits=lib.stack([-a, a * 2], -1))),
    lambda D, lib, a: (D.LogNormal(a, a + 1), D.LogNormal(0.0, a)),
    lambda D, lib, a: (D.Independent(D.Normal(a, 1.0), 1), D.Independent(D.Normal(-a, 2.0), 1)),
    lambda D, lib, a: (D.TransformedDistribution(D.Normal(a, 1.0), [
        D.transforms.AffineTransform(1.0, 2.0), D.transforms.ExpTransform()]),
        D.TransformedDistribution(D.Normal(-a, 3.0), [
            D.transforms.AffineTransform(1.0, 2.0), D.transforms.ExpTransform()])),
    lambda D, lib, a: (D.Exponential(a), D.Gamma(a + 2, 3.0)),
], ids=["exponential", "gamma", "beta", "dirichlet", "laplace", "geometric", "binomial",
        "onehot", "lognormal", "independent", "transformed", "exponential-gamma"])
def test_kl_divergence_pairs(pair):
    def scenario(lib):
        a = lib.tensor([0.7, 1.9], requires_grad=True)
        p, q = pair(lib.distributions, lib, a)
        kl = lib.distributions.kl_divergence(p, q)
        kl.sum().backward()
        return [kl, a.grad]

    _both(scenario)


def test_kl_of_differently_transformed_is_not_implemented_as_pytorch():
    def scenario(lib):
        D = lib.distributions
        p = D.TransformedDistribution(D.Normal(0.0, 1.0), D.transforms.ExpTransform())
        q = D.TransformedDistribution(D.Normal(0.0, 1.0), D.transforms.SigmoidTransform())
        D.kl_divergence(p, q)

    _raises(scenario)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma_rsample_gradient_in_every_region_of_pytorchs_approximation(dtype):
    """Concentrations below 1, between 1 and 8 and above 8 (draws near and far from alpha):
    the series, the rational fit and Rice's expansion all appear."""
    got = []
    for lib in (torch, gt):
        lib.manual_seed(4)
        conc = lib.tensor([0.3, 0.9, 2.0, 5.0, 9.0, 40.0, 300.0] * 4,
                          dtype=getattr(lib, dtype), requires_grad=True)
        x = lib.distributions.Gamma(conc, 2.0).rsample()
        (x * lib.linspace(-1, 1, x.numel(), dtype=x.dtype)).sum().backward()
        got.append((x.detach().numpy(), conc.grad.numpy(), type(x.grad_fn).__name__,
                    lib.rand(2).numpy().tobytes()))
    assert got[0][0].tobytes() == got[1][0].tobytes()
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1.3e-6 if dtype == "float32"
                               else 1e-7, atol=1e-5 if dtype == "float32" else 1e-7)
    assert got[0][2:] == got[1][2:]


def test_standard_gamma_grad_function():
    alpha = [0.5, 3.0, 12.0, 12.0, 50.0]
    x = [0.1, 2.5, 12.5, 4.0, 70.0]
    ref = torch._standard_gamma_grad(torch.tensor(alpha, dtype=torch.float64),
                                     torch.tensor(x, dtype=torch.float64))
    got = gt._standard_gamma_grad(gt.tensor(alpha, dtype=gt.float64),
                                  gt.tensor(x, dtype=gt.float64))
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-7, atol=1e-7)
