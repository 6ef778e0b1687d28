"""Distribution.expand against PyTorch for every family: the expanded batch's parameters,
repr, seeded samples, log_prob, entropy and mean; validation carried over; the errors for a
shape that does not fit and for subclasses PyTorch refuses to expand; a transform with a
tensor parameter broadcasting its base distribution."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from comparison_helpers import assert_shown_as_pytorch  # noqa: E402

import gradcli.torch as gt  # noqa: E402


def _env(lib):
    return {"torch": lib, "D": lib.distributions, "v": lib.ones(2), "h": lib.ones(2) * 0.5,
            "z": lib.zeros(2), "c": lib.ones(3), "t1": lib.tensor(1.0)}


FAMILIES = [
    "D.Normal(z, 1.)", "D.HalfNormal(v)", "D.Independent(D.Normal(z, 1.), 1)",
    "D.MultivariateNormal(z, torch.eye(2))", "D.Bernoulli(logits=z)", "D.Bernoulli(probs=h)",
    "D.Categorical(c)", "D.Categorical(logits=c)", "D.Beta(v, 2.)", "D.Dirichlet(c)",
    "D.MixtureSameFamily(D.Categorical(v), D.Normal(z, 1.))", "D.Pareto(1., v)",
    "D.Gumbel(0., v)", "D.StudentT(v)", "D.LogNormal(0., v)", "D.RelaxedBernoulli(t1, h)",
    "D.RelaxedOneHotCategorical(t1, c)", "D.OneHotCategorical(c)", "D.Binomial(3, h)",
    "D.Geometric(h)", "D.Poisson(v)", "D.Kumaraswamy(v, 2.)", "D.Chi2(v)",
    "D.NegativeBinomial(3, h)", "D.Uniform(0., v)", "D.Gamma(v, 1.)", "D.Exponential(v)",
    "D.Laplace(0., v)", "D.Cauchy(0., v)", "D.Weibull(1., v)", "D.InverseGamma(v, 1.)",
    "D.FisherSnedecor(v, 2.)", "D.HalfCauchy(v)", "D.OneHotCategoricalStraightThrough(c)",
    "D.TransformedDistribution(D.Normal(0., 1.), [D.AffineTransform(z, 1.)])",
]


def _run(lib, code, use):
    lib.manual_seed(1)
    try:
        d = eval(code, _env(lib))  # noqa: S307 - the fixed strings above
        e = d.expand([3, 2] if d.batch_shape else [3])
        return use(e)
    except Exception as x:  # noqa: BLE001 - compared with PyTorch's
        return f"{type(x).__name__}: {x}"


USES = {
    "repr": lambda e: (e, e.batch_shape, e.event_shape, e._validate_args),
    "sample": lambda e: e.sample((2,)),
    "log_prob": lambda e: e.log_prob(e.sample((2,))),
    "entropy": lambda e: e.entropy(),
    "mean": lambda e: e.mean,
}


@pytest.mark.parametrize("use", USES)
@pytest.mark.parametrize("code", FAMILIES)
def test_expand_as_pytorch(code, use):
    mine, theirs = _run(gt, code, USES[use]), _run(torch, code, USES[use])
    if use in ("log_prob", "entropy", "mean") and isinstance(theirs, torch.Tensor):
        # (values within torch.testing's tolerances; the draws behind log_prob exactly)
        assert isinstance(mine, gt.Tensor) and mine.shape == theirs.shape
        torch.testing.assert_close(torch.tensor(mine.detach().numpy()), theirs.detach(),
                                   equal_nan=True)
    else:
        assert repr(mine).replace("gradcli.torch", "torch") == repr(theirs)


CODES = [
    "D.Normal(z, 1.).expand([4])", "D.Normal(z, 1.).expand((4, 3))",
    "D.Independent(D.Normal(z, 1.), 1).expand([5])",
    "D.Normal(0., 1., validate_args=False).expand([2])._validate_args",
    "D.Normal(0., 1.).expand([2]).log_prob(torch.tensor([1., 2., 3.]))",
    "D.Normal(0., 1.).expand([2]).log_prob(torch.tensor([1., 2.]))",
    "D.Normal(0., 1.).expand(torch.Size([2, 1])).sample((3,))",
    "D.TransformedDistribution(D.Normal(0., 1.), [D.AffineTransform(z, 1.)]).base_dist",
    "D.TransformedDistribution(D.Normal(0., 1.), D.AffineTransform(torch.ones(2, 1), c))"
    ".batch_shape",
    "D.Uniform(0., 1.).expand([2]).rsample()",
]


@pytest.mark.parametrize("code", CODES)
def test_as_pytorch(code):
    assert_shown_as_pytorch(code, _env, seed=1)


def test_gradient_flows_through_the_expanded_parameters():
    grads = []
    for lib in (torch, gt):
        loc = lib.tensor([0.5, -1.0], requires_grad=True)
        d = lib.distributions.Normal(loc, 2.0).expand([3, 2])
        d.log_prob(lib.arange(6.0).reshape(3, 2)).sum().backward()
        grads.append((repr(d.loc), loc.grad.tolist()))
    assert grads[0] == grads[1]


def test_subclasses_as_pytorch():
    results = []
    for lib in (torch, gt):
        D = lib.distributions

        class Custom(D.Normal):
            def __init__(self):
                super().__init__(0.0, 1.0)

        class Plain(D.Normal):
            pass

        class Own(D.Distribution):
            arg_constraints: dict = {}

        row = []
        for make in (Custom, lambda: Own(validate_args=False)):
            try:
                make().expand([2])
                row.append(None)
            except NotImplementedError as e:
                row.append(str(e).replace("Custom", "C"))
        expanded = Plain(0.0, 1.0).expand([2])
        row.append((type(expanded) is Plain, tuple(expanded.batch_shape)))
        results.append(row)
    assert results[0] == results[1]
    assert results[1][0].startswith("Subclass C of Normal")


def test_expand_in_a_program(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "expand.py"
    script.write_text(
        "import torch\nfrom torch.distributions import Normal\n"
        "torch.manual_seed(0)\nd = Normal(torch.zeros(2), 1.).expand([3, 2])\n"
        "print(d, d.batch_shape)\nprint(d.sample())\n")
    out = subprocess.run([sys.executable, "-m", "gradcli", "run", str(script)],
                         capture_output=True, text=True, timeout=120)
    torch.manual_seed(0)
    d = torch.distributions.Normal(torch.zeros(2), 1.).expand([3, 2])
    assert out.stdout == f"{d} {d.batch_shape}\n{d.sample()}\n"
