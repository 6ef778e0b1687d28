"""torch.distributions (Normal, Bernoulli, Categorical, Uniform, kl_divergence) against real
PyTorch in plain Python; what a .grad program reaches through them stays in the sandbox; and
torch.bernoulli draws a non-contiguous p in PyTorch's order (the fix Bernoulli.sample needed).
The .grad side is the tut_distributions conformance case."""

import io

import pytest

import gradcli.torch as gt
from gradcli.lang import Limits, Session
from tests.test_security_sandbox import BUDGET, assert_internal_refused, crawl

torch = pytest.importorskip("torch")

CASES = [
    "D.Normal(0., 1.)",
    "D.Normal(T.zeros(2), 1.)",
    "(lambda d: (d.sample(), d.sample((2, 3)), d.rsample((2,))))(D.Normal(T.zeros(2), 2.))",
    "(lambda d: (d.log_prob(T.tensor([0.1, -2.0])), d.entropy(), d.cdf(T.tensor(0.2)),"
    " d.icdf(T.tensor(0.7)), d.mean, d.stddev, d.variance, d.batch_shape, d.event_shape))"
    "(D.Normal(T.tensor([0.5, 1.0]), T.tensor([1.0, 3.0])))",
    "(lambda d: (d, d.logits, d, d.sample((4,)), d.log_prob(T.tensor([1.0, 0.0])),"
    " d.entropy(), d.mean, d.variance))(D.Bernoulli(T.tensor([0.3, 0.9])))",
    "(lambda d: (d, d.probs, d, d.sample()))(D.Bernoulli(logits=T.tensor(0.3)))",
    "(lambda d: (d, d.probs, d.sample((2,)), d.entropy(), d.log_prob(T.tensor([2, 0])),"
    " d.mode, d.enumerate_support(), d.batch_shape, d.param_shape))"
    "(D.Categorical(logits=T.tensor([[1.0, 2.0, 0.5], [0.0, 0.0, 0.0]])))",
    "(lambda d: (d, d.sample((3, 2)), d.logits))(D.Categorical(T.tensor([0.1, 0.2, 0.7])))",
    "(lambda d: (d, d.sample(), d.rsample((2,)), d.log_prob(T.tensor([1.0, 4.0])),"
    " d.entropy(), d.mean, d.stddev, d.cdf(T.tensor([0.5, 4.0]))))"
    "(D.Uniform(T.tensor([0.0, 1.0]), T.tensor([2.0, 5.0])))",
    "D.kl_divergence(D.Normal(T.zeros(2), T.ones(2)), D.Normal(T.ones(2), 2 * T.ones(2)))",
    "D.kl_divergence(D.Categorical(probs=T.tensor([0.2, 0.8, 0.0])),"
    " D.Categorical(probs=T.tensor([0.5, 0.5, 0.0])))",
    "D.kl_divergence(D.Bernoulli(T.tensor([0.2, 0.0])), D.Bernoulli(T.tensor([0.5, 0.5])))",
    "D.kl_divergence(D.Uniform(0.0, 1.0), D.Uniform(-1.0, 2.0))",
    "D.kl_divergence(D.Normal(0., 1.), D.Uniform(0., 1.))",
    "D.kl_divergence(D.Uniform(T.tensor([0.0, 1.0]), T.tensor([1.0, 3.0])), D.Normal(0.5, 2.0))",
    "D.Normal(0., 1., validate_args=False).log_prob(T.tensor(float('nan')))",
    "(type(D.Normal(0., 1.)), type(D.Categorical(T.ones(2))))",
    "T.bernoulli(T.rand(3, 4, generator=T.Generator().manual_seed(1)).t(),"
    " generator=T.Generator().manual_seed(2))",
    "T.bernoulli(T.tensor([0.3, 0.9]).expand(4, 2), generator=T.Generator().manual_seed(2))",
    "T.rand(2, 3, generator=T.Generator().manual_seed(1)).t().bernoulli(0.4,"
    " generator=T.Generator().manual_seed(3))",
    "(lambda m: (m, m.sample(), m.batch_shape, m.event_shape))"
    "(D.MultivariateNormal(T.zeros(2), T.eye(2)))",
    "(lambda m: (m.sample((4,)), m.log_prob(T.tensor([[0.0, 1.0], [2.0, -1.0]])), m.entropy(),"
    " m.mean, m.variance, m.scale_tril, m, m.precision_matrix, m))"
    "(D.MultivariateNormal(T.tensor([1.0, -1.0]), T.tensor([[2.0, 0.3], [0.3, 0.5]])))",
    "(lambda m: (m.scale_tril, m.sample(), m.log_prob(T.zeros(2))))"
    "(D.MultivariateNormal(T.tensor([1.0, -1.0]),"
    " precision_matrix=T.inverse(T.tensor([[2.0, 0.3], [0.3, 0.5]]))))",
    "(lambda m: (m, m.batch_shape, m.rsample((2,)).shape, m.log_prob(T.ones(3, 2)), m.entropy(),"
    " m.covariance_matrix[0]))"
    "(D.MultivariateNormal(T.zeros(3, 2), scale_tril=T.tensor([[1.0, 0.0], [0.5, 2.0]])))",
    "T.broadcast_shapes((2, 1), (3,))",
    "(T.broadcast_shapes(), T.broadcast_shapes(5, (2, 1)), T.broadcast_shapes(T.Size([1, 4]), [3, 1]))",
    "T.broadcast_shapes((3, 1, 2), (4, 1), (1,))",
]


def _value(expr, T):
    T.manual_seed(0)
    return repr(eval(expr, {"T": T, "D": T.distributions}))


@pytest.mark.parametrize("expr", CASES)
def test_same_as_pytorch(expr):
    assert _value(expr, gt) == _value(expr, torch)


def test_rsample_gradients_as_pytorch():
    def run(T):
        T.manual_seed(0)
        mu = T.tensor([0.5, -0.2], requires_grad=True)
        sigma = T.tensor([1.0, 2.0], requires_grad=True)
        d = T.distributions.Normal(mu, sigma)
        z = d.rsample()
        loss = -d.log_prob(z).sum() + d.entropy().sum()
        loss.backward()
        return repr((z, loss, mu.grad, sigma.grad))

    assert run(gt) == run(torch)


def test_multivariate_normal_gradients_as_pytorch():
    def run(T):
        T.manual_seed(0)
        loc = T.tensor([0.5, 0.2], requires_grad=True)
        scale = T.tensor([[1.0, 0.0], [0.3, 0.8]], requires_grad=True)
        d = T.distributions.MultivariateNormal(loc, scale_tril=scale)
        z = d.rsample()
        (-d.log_prob(z)).backward()
        return [z.tolist(), loc.grad.tolist(), scale.grad.tolist()]

    g, t = run(gt), run(torch)
    for a, b in zip(g, t):
        torch.testing.assert_close(torch.tensor(a), torch.tensor(b))


@pytest.mark.parametrize("expr", [
    "D.Normal(T.tensor([0.]), T.tensor([-1.]))",
    "D.Normal(0., -1.)",
    "D.Bernoulli(T.tensor([1.5]))",
    "D.Categorical(T.tensor([0.5, -0.1]))",
    "D.Normal(0., 1.).log_prob(T.tensor(float('nan')))",
    "D.Bernoulli(0.3).log_prob(T.tensor(0.5))",
    "D.Bernoulli()",
    "D.Categorical(T.tensor([0.5, 0.5]), T.tensor([0., 0.]))",
    "D.Uniform(1., 0.)",
    "D.Normal(0., 1.).log_prob(0.5)",
    "D.Normal(T.zeros(2), 1.).log_prob(T.zeros(3))",
    "D.Categorical(T.tensor([0.5, 0.5])).log_prob(T.tensor(3))",
    "D.MultivariateNormal(T.zeros(2), T.tensor([[1.0, 2], [0, 1]]))",
    "D.MultivariateNormal(T.zeros(2))",
    "D.MultivariateNormal(T.tensor(0.0), T.eye(1))",
    "D.MultivariateNormal(T.zeros(2), scale_tril=T.tensor([[1.0, 2], [0, 1]]))",
    "D.MultivariateNormal(T.zeros(2), T.eye(2)).log_prob(T.zeros(3))",
    "D.MultivariateNormal(T.zeros(2), T.ones(2))",
    "T.broadcast_shapes((2,), (3,))",
    "T.broadcast_shapes((2, 3), (4, 1, 2))",
    "T.broadcast_shapes((-1,), (2,))",
    "T.broadcast_shapes((2.0,), (2,))",
])
def test_errors_as_pytorch(expr):
    seen = []
    for T in (gt, torch):
        with pytest.raises(Exception) as info:
            eval(expr, {"T": T, "D": T.distributions})
        seen.append((type(info.value).__name__, str(info.value)))
    assert seen[0] == seen[1]


def test_missing_distribution_says_not_supported():
    # (every public name of PyTorch's torch.distributions exists here now)
    with pytest.raises(AttributeError, match="^torch.distributions.NoSuchFamily is not "
                                             "supported by gradcli$"):
        gt.distributions.NoSuchFamily  # noqa: B018


PROGRAM = """
import torch
from torch.distributions import Normal, Categorical, Bernoulli, Uniform, kl_divergence
import torch.distributions as dist
n = Normal(torch.zeros(2), torch.ones(2))
c = Categorical(logits=torch.tensor([1.0, 2.0]))
b = Bernoulli(torch.tensor([0.3]))
u = Uniform(0.0, 1.0)
mv = dist.MultivariateNormal(torch.zeros(2), torch.eye(2))
made = [mv, mv.sample(), mv.precision_matrix, n, c, b, u, c.probs, b.logits, n.sample(), c.sample((2,)), kl_divergence(n, n), dist.constraints.simplex, n.support, u.support]
"""


def test_sandbox_crawl_of_distributions():
    s = Session(stdout=io.StringIO(), limits=Limits(**BUDGET))
    s.run(PROGRAM, "tut3dist.grad")
    roots = [(k, s.globals[k]) for k in ("made", "dist", "kl_divergence", "Normal")]
    kept, bad = crawl(roots)
    assert not bad, bad[:20]
    assert {"Normal", "Categorical", "_Simplex"} <= {type(o).__name__ for o in kept}


@pytest.mark.parametrize("attack", [
    "torch.distributions.Normal(0., 1.)._params",
    "torch.distributions.Normal(0., 1.).__dict__",
    "getattr(torch.distributions.Categorical(torch.ones(2)), '_' + 'num_events')",
    "torch.distributions.Normal.__init__",
    "torch.distributions.kl._KL",
])
def test_internals_refused(attack):
    assert_internal_refused(attack)
