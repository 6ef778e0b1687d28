"""LKJCholesky, Wishart, the CorrCholesky / Cat / Stack / CumulativeDistribution transforms,
the constraints they use, torch.distributions.utils and the cross-family kl_divergence
pairs, against PyTorch: reprs, values, gradients, error texts and seeded samples (the
onion method's and the Bartlett construction's draws, including Wishart's re-draw loop
and its warnings)."""

from __future__ import annotations

import io
import warnings

import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402
from gradcli.lang import Limits, Session  # noqa: E402
from tests.test_security_sandbox import BUDGET, assert_internal_refused, crawl  # noqa: E402


def _env(lib):
    D = lib.distributions
    return {"torch": lib, "D": D, "T": D.transforms, "C": D.constraints, "U": D.utils,
            "x6": lib.tensor([[0.3, -1.2, 0.8, 2.0, -0.4, 0.1], [1.5, 0.2, -0.7, 0.0, 0.9, -2.1]]),
            "cov": lib.tensor([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]]),
            "z": lib.tensor([[0.3, -1.2, 0.8, 2.0], [1.5, 0.2, -0.7, 0.1]]),
            "m": lib.arange(16.0).view(4, 4)}


def _run(code, lib, seed=3):
    """(PyTorch's sample() warnings come from one line of its own, which the "always"
    filter here shows each time; gradcli's, once per program: each code is a program.)"""
    from gradcli.engine.warn_site import forget_given

    forget_given()
    lib.manual_seed(seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = repr(eval(code, _env(lib)))  # noqa: S307 - the fixed strings below
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            value = f"{type(e).__name__}: {e}"
    said = sorted({str(w.message) for w in caught})
    return value.replace("gradcli.torch", "torch"), said


LKJ = "D.LKJCholesky(3, torch.tensor([0.5, 2.0]))"
W = "D.Wishart(torch.tensor([4.0, 6.5]), covariance_matrix=cov)"
CC = "T.CorrCholeskyTransform()"
CAT = "T.CatTransform([T.ExpTransform(), T.identity_transform, T.SigmoidTransform()], 1, [1, 2, 1])"
STACK = "T.StackTransform([T.ExpTransform(), T.TanhTransform(), T.AffineTransform(1.0, 2.0)], 0)"
CDF = "T.CumulativeDistributionTransform(D.Normal(0.0, 2.0))"
CODES = [
    # LKJCholesky
    LKJ, LKJ + ".sample()", LKJ + ".sample((2,))", LKJ + ".log_prob(" + LKJ + ".sample((2,)))",
    "D.LKJCholesky(2)", "D.LKJCholesky(4, 0.3).sample()", LKJ + ".expand((4, 2))",
    LKJ + ".expand((4, 2)).sample().shape", LKJ + ".support", LKJ + ".event_shape",
    "D.LKJCholesky(1)", "D.LKJCholesky(3, -1.0)", "D.LKJCholesky(3).log_prob(torch.ones(3, 3))",
    "D.LKJCholesky(3).log_prob(torch.eye(3))", "D.lkj_cholesky.LKJCholesky(3, 1.5)",
    # Wishart
    W, W + ".sample()", W + ".rsample((2,))", W + ".mean", W + ".mode", W + ".variance",
    W + ".entropy()", W + ".log_prob(" + W + ".sample((3,)))", W + ".covariance_matrix",
    W + ".precision_matrix", W + ".scale_tril", W + ".expand((3, 2))",
    W + ".expand((3, 2)).sample().shape",
    "D.Wishart(5.0, scale_tril=torch.linalg.cholesky(cov)).sample()",
    "D.Wishart(torch.tensor(3.0), precision_matrix=cov).sample((2,))",
    "D.Wishart(torch.tensor(3.0), precision_matrix=cov)",
    "D.Wishart(2.5, covariance_matrix=cov).sample()",
    "D.Wishart(2.5, covariance_matrix=cov).rsample(max_try_correction=0)",
    "D.Wishart(torch.tensor(2.5, dtype=torch.float64), covariance_matrix=cov.double()).mode",
    "D.Wishart(1.5, covariance_matrix=cov)", "D.Wishart(4.0)", "D.Wishart(4.0, torch.ones(3))",
    "D.Wishart(4.0, cov, scale_tril=cov)", "D.Wishart(4.0, cov).log_prob(-cov)",
    "D.Wishart(4.0, cov, validate_args=True).log_prob(torch.ones(3, 3))",
    "D.wishart.Wishart(4.0, cov).batch_shape",
    # the transforms
    CC + "(x6)", CC + ".inv(" + CC + "(x6))", CC + ".log_abs_det_jacobian(x6, " + CC + "(x6))",
    CC + ".forward_shape((5, 10))", CC + ".inverse_shape((2, 5, 5))", CC + ".forward_shape((7,))",
    CC + ".inverse_shape((2, 5))", CC + ".domain", CC + ".codomain", CC + " == " + CC,
    CAT + "(z)", CAT + ".inv(" + CAT + "(z))", CAT + ".log_abs_det_jacobian(z, " + CAT + "(z))",
    CAT + ".event_dim", CAT + ".length", CAT + ".domain.event_dim", CAT + ".bijective",
    CAT + ".codomain.check(" + CAT + "(z))", CAT + "(torch.ones(2, 5))", CAT + "(torch.ones(2, 4, 3))",
    "T.CatTransform([T.ExpTransform()], 0, [1, 2])", "T.CatTransform([1])",
    "T.CatTransform([T.ExpTransform(), T.ExpTransform()], 0, [2, 1]).with_cache(1)(torch.ones(3))",
    "T.CatTransform([T.ExpTransform(), T.ExpTransform()], -1, [2, 2])"
    ".log_abs_det_jacobian(z, z.exp())",
    STACK + "(z.T[:3])", STACK + ".inv(" + STACK + "(z.T[:3]))",
    STACK + ".log_abs_det_jacobian(z.T[:3], " + STACK + "(z.T[:3]))", STACK + ".domain.event_dim",
    STACK + ".codomain.check(" + STACK + "(z.T[:3]))", STACK + "(z)", STACK + ".bijective",
    CDF + "(z)", CDF + ".inv(" + CDF + "(z))", CDF + ".log_abs_det_jacobian(z, " + CDF + "(z))",
    CDF + ".domain", CDF + ".codomain", CDF + ".sign", CDF + ".with_cache()(z)",
    "D.TransformedDistribution(D.Normal(torch.zeros(2), 1.0), [" + CDF + "]).log_prob("
    "torch.tensor([0.2, 0.9]))",
    # constraint lookups and the new constraints
    "D.biject_to(C.corr_cholesky)", "D.transform_to(C.corr_cholesky)",
    "D.transform_to(C.positive_semidefinite)",
    "D.biject_to(C.cat([C.positive, C.real], 0, [2, 3]))(torch.ones(5))",
    "D.transform_to(C.stack([C.positive, C.unit_interval], 1))(z[:, :2])",
    "D.biject_to(C.stack([C.positive, C.unit_interval], 1)).transforms",
    "C.corr_cholesky.check(" + CC + "(x6))", "C.corr_cholesky.check(torch.eye(3) * 2)",
    "C.lower_triangular.check(m)", "C.lower_triangular.check(m.tril())",
    "C.square.check(torch.ones(2, 3, 3))", "C.square.check(torch.ones(3, 2))",
    "C.symmetric.check(cov)", "C.symmetric.check(m)", "C.positive_semidefinite.check(cov)",
    "C.positive_semidefinite.check(-cov)",
    "C.cat([C.positive, C.real], 1, [2, 2]).check(z)", "C.cat([C.real], 3).check(z)",
    "C.stack([C.positive, C.real], 0).check(z)", "C.stack([C.real_vector], -1).event_dim",
    "C.corr_cholesky", "C.positive_semidefinite", "C.cat([C.real])", "C.stack([C.real])",
    "C.dependent", "C.dependent(is_discrete=True, event_dim=1).event_dim",
    "C.dependent.event_dim", "C.dependent.check(z)", "C.is_dependent(C.dependent)",
    "C.is_dependent(C.real)", "C.boolean.is_discrete", "C.real.is_discrete",
    "C.independent(C.nonnegative_integer, 1).is_discrete", "C.one_hot.is_discrete",
    "C.cat([C.real, C.boolean]).is_discrete",
    # utils
    "U.broadcast_all(1.0, torch.ones(2, dtype=torch.float64))", "U.broadcast_all(2, 3.5)",
    "U.broadcast_all(torch.ones(2, 1), torch.zeros(3))", "U.broadcast_all([1.0])",
    "U.clamp_probs(torch.tensor([0.0, 0.5, 1.0]))",
    "U.clamp_probs(torch.tensor([0.0, 1.0], dtype=torch.float64))",
    "U.probs_to_logits(torch.tensor([0.0, 0.2, 0.8]))",
    "U.probs_to_logits(torch.tensor([0.0, 0.2, 0.8]), is_binary=True)",
    "U.logits_to_probs(torch.tensor([[0.2, 0.8, -1.0]]))",
    "U.logits_to_probs(torch.tensor([0.2, 0.8]), True)",
    "U.tril_matrix_to_vec(m)", "U.tril_matrix_to_vec(m, -1)", "U.tril_matrix_to_vec(m, 2)",
    "U.tril_matrix_to_vec(m, 4)", "U.tril_matrix_to_vec(m, -5)",
    "U.vec_to_tril_matrix(torch.arange(6.0))", "U.vec_to_tril_matrix(torch.arange(3.0), -1)",
    "U.vec_to_tril_matrix(torch.arange(12.0).view(2, 6))", "U.vec_to_tril_matrix(torch.ones(4))",
    "U.vec_to_tril_matrix(torch.arange(5.0), 1)", "U.euler_constant",
]


@pytest.mark.parametrize("code", CODES)
def test_as_pytorch(code):
    """Each expression's repr (or its error), and the warnings it gives, as PyTorch's."""
    assert _run(code, gt) == _run(code, torch)


SAMPLES = [
    ("D.Wishart(torch.tensor([4.0, 6.5]), covariance_matrix=torch.eye(3))", "sample((2,))", True),
    ("D.Wishart(torch.tensor(3.0, dtype=torch.float64), scale_tril=torch.eye(3, "
     "dtype=torch.float64))", "rsample((2, 2))", True),
    ("D.Wishart(2.5, covariance_matrix=torch.eye(3))", "sample()", True),
    ("D.Wishart(torch.tensor([4.0, 6.5]), covariance_matrix=cov)", "sample((2,))", False),
    ("D.Wishart(7.0, precision_matrix=cov.double())", "sample((3,))", False),
    ("D.LKJCholesky(2, torch.tensor([0.5, 2.0], dtype=torch.float64))", "sample((2,))", True),
    ("D.LKJCholesky(3, 1.0)", "sample((2,))", True),
    ("D.LKJCholesky(4, torch.tensor([0.5, 2.0]))", "sample((3,))", False),
]


@pytest.mark.parametrize("make,call,exact", SAMPLES)
def test_seeded_samples_as_pytorch(make, call, exact):
    """The same draws in the same order (Wishart's chi-square and randn, its re-draws;
    LKJ's Beta and randn), so the generator is left where PyTorch leaves it and the samples
    are PyTorch's: bit for bit where the arithmetic after the draws is exact in both
    (identity scales, small LKJ), else within tolerance (a float32 matrix product adds in
    another order; PyTorch's vectorized sqrt is not always correctly rounded)."""
    out = []
    for lib in (torch, gt):
        lib.manual_seed(11)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = eval(f"{make}.{call}", _env(lib))  # noqa: S307 - the fixed strings above
        out.append((value.tolist(), lib.rand(1).item()))
    assert out[1][1] == out[0][1]
    if exact:
        assert out[1][0] == out[0][0]
    else:
        torch.testing.assert_close(torch.tensor(out[1][0]), torch.tensor(out[0][0]))


def _grads_or_error(lib, which):
    try:
        return _grads(lib, which)
    except RuntimeError as e:
        return str(e)


def _grads(lib, which):
    D = lib.distributions
    f64 = lib.float64
    L = lib.tensor([[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [0.1, -0.3, 0.7]], dtype=f64,
                   requires_grad=True)
    df = lib.tensor([4.0, 6.5], dtype=f64, requires_grad=True)
    conc = lib.tensor([0.5, 2.0], dtype=f64, requires_grad=True)
    x = lib.tensor([[0.3, -1.2, 0.8], [1.5, 0.2, -0.7]], dtype=f64, requires_grad=True)
    lib.manual_seed(4)
    if which == "wishart_rsample":
        # (PyTorch's re-draw loop writes into the mask its index_put saved: backward
        # refuses, with the same error on both sides)
        out = D.Wishart(df, scale_tril=L).rsample((2,)).pow(2).sum()
    elif which == "wishart_log_prob":
        value = lib.tensor([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]], dtype=f64)
        out = D.Wishart(df, scale_tril=L).log_prob(value).sum()
    elif which == "wishart_entropy":
        out = D.Wishart(df, scale_tril=L).entropy().sum()
    elif which == "wishart_moments":
        w = D.Wishart(df, scale_tril=L)
        out = (w.mean.sum() + w.variance.sum() + w.precision_matrix.sum())
    elif which == "lkj_log_prob":
        d = D.LKJCholesky(3, conc)
        out = d.log_prob(D.transforms.CorrCholeskyTransform()(x.detach())).sum()
    else:
        t = D.transforms.CorrCholeskyTransform()
        y = t(x)
        out = y.pow(3).sum() + t.log_abs_det_jacobian(x, y).sum() + t.inv(y).sum()
    out.backward()
    return [None if v.grad is None else v.grad.numpy().copy() for v in (L, df, conc, x)]


@pytest.mark.parametrize("which", [
    "wishart_rsample", "wishart_log_prob", "wishart_entropy", "wishart_moments",
    "lkj_log_prob", "corr_cholesky"])
def test_gradients_as_pytorch(which):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, ours = _grads_or_error(torch, which), _grads_or_error(gt, which)
    if isinstance(theirs, str):
        assert ours == theirs
        return
    assert [g is None for g in ours] == [g is None for g in theirs]
    for a, b in zip(ours, theirs):
        if b is not None:
            torch.testing.assert_close(torch.tensor(a), torch.tensor(b))


# --------------------------------------------------------------- kl_divergence pairs
def _family(lib, name):
    D = lib.distributions

    def t(*v):
        return lib.tensor(v, dtype=lib.float64, requires_grad=True)
    return {
        "Bernoulli": lambda: D.Bernoulli(t(0.3, 0.6)),
        "Poisson": lambda: D.Poisson(t(1.5, 2.5)),
        "Binomial": lambda: D.Binomial(5, t(0.3, 0.6)),
        "Beta": lambda: D.Beta(t(1.5, 2.0), t(2.5, 0.7)),
        "Exponential": lambda: D.Exponential(t(1.5, 0.5)),
        "Gamma": lambda: D.Gamma(t(1.5, 3.0), t(2.0, 0.5)),
        "Normal": lambda: D.Normal(t(0.3, -1.0), t(1.5, 0.7)),
        "Pareto": lambda: D.Pareto(t(0.5, 1.5), t(2.5, 3.5)),
        "Uniform": lambda: D.Uniform(t(0.1, -0.2), t(0.7, 0.9)),
        "Gumbel": lambda: D.Gumbel(t(0.3, -1.0), t(1.5, 0.7)),
        "Laplace": lambda: D.Laplace(t(0.3, -1.0), t(1.5, 0.7)),
        "LowRankMultivariateNormal": lambda: D.LowRankMultivariateNormal(
            t(0.1, 0.2, 0.3), lib.tensor([[1.0], [0.5], [0.2]], dtype=lib.float64,
                                         requires_grad=True), t(1.0, 2.0, 0.5)),
        "MultivariateNormal": lambda: D.MultivariateNormal(
            t(0.3, 0.1, -0.2), scale_tril=lib.tensor(
                [[1.0, 0, 0], [0.5, 2.0, 0], [0.1, 0.2, 0.7]], dtype=lib.float64,
                requires_grad=True)),
    }[name]()


CROSS = [("Bernoulli", "Poisson"), ("Beta", "Exponential"), ("Beta", "Gamma"),
         ("Beta", "Normal"), ("Beta", "Pareto"), ("Beta", "Uniform"), ("Exponential", "Beta"),
         ("Exponential", "Gumbel"), ("Exponential", "Normal"), ("Exponential", "Pareto"),
         ("Exponential", "Uniform"), ("Gamma", "Beta"), ("Gamma", "Exponential"),
         ("Gamma", "Gumbel"), ("Gamma", "Normal"), ("Gamma", "Pareto"), ("Gamma", "Uniform"),
         ("Gumbel", "Beta"), ("Gumbel", "Exponential"), ("Gumbel", "Gamma"),
         ("Gumbel", "Normal"), ("Gumbel", "Pareto"), ("Gumbel", "Uniform"), ("Laplace", "Beta"),
         ("Laplace", "Exponential"), ("Laplace", "Gamma"), ("Laplace", "Normal"),
         ("Laplace", "Pareto"), ("Laplace", "Uniform"),
         ("LowRankMultivariateNormal", "LowRankMultivariateNormal"),
         ("LowRankMultivariateNormal", "MultivariateNormal"),
         ("MultivariateNormal", "LowRankMultivariateNormal"), ("Normal", "Beta"),
         ("Normal", "Exponential"), ("Normal", "Gamma"), ("Normal", "Gumbel"),
         ("Normal", "Laplace"), ("Normal", "Pareto"), ("Pareto", "Beta"),
         ("Pareto", "Exponential"), ("Pareto", "Gamma"), ("Pareto", "Normal"),
         ("Pareto", "Uniform"), ("Poisson", "Bernoulli"), ("Poisson", "Binomial"),
         ("Uniform", "Beta"), ("Uniform", "Exponential"), ("Uniform", "Gamma"),
         ("Uniform", "Gumbel"), ("Uniform", "Pareto")]


@pytest.mark.parametrize("p,q", CROSS)
def test_cross_family_kl_as_pytorch(p, q):
    """Values (infinities included) and, where finite, the gradients of every parameter."""
    got = []
    for lib in (torch, gt):
        dp, dq = _family(lib, p), _family(lib, q)
        value = lib.distributions.kl_divergence(dp, dq)
        names = ("loc", "scale", "rate", "probs", "concentration1", "concentration0",
                 "concentration", "low", "high", "alpha", "cov_factor", "cov_diag")
        leaves = [v for d in (dp, dq) for v in (getattr(d, n, None) for n in names)
                  if v is not None and v.is_leaf]
        grads = None
        if value.requires_grad and bool(lib.isfinite(value).all()):
            grads = [g if g is None else g.numpy()
                     for g in lib.autograd.grad(value.sum(), leaves, allow_unused=True)]
        got.append((value.detach().numpy(), grads))
    torch.testing.assert_close(torch.tensor(got[1][0]), torch.tensor(got[0][0]))
    assert (got[1][1] is None) == (got[0][1] is None)
    for a, b in zip(got[1][1] or [], got[0][1] or []):
        assert (a is None) == (b is None)
        if b is not None:
            torch.testing.assert_close(torch.tensor(a), torch.tensor(b))


def test_every_pytorch_kl_pair_is_registered():
    from gradcli.torch.distributions import kl

    theirs = {(a.__name__, b.__name__) for a, b in torch.distributions.kl._KL_REGISTRY}
    ours = {(a.__name__, b.__name__) for a, b in kl._KL}
    assert theirs - ours == set()


@pytest.mark.parametrize("code", [
    "D.kl_divergence(D.Chi2(torch.tensor([2.0, 3.0])), D.Exponential(torch.tensor(1.5)))",
    "D.kl_divergence(D.Exponential(torch.tensor([2.0])), D.Chi2(torch.tensor([3.0])))",
    "D.kl_divergence(D.Uniform(torch.tensor([0.5]), 2.0), D.Chi2(torch.tensor([3.0])))",
    "D.kl_divergence(D.HalfNormal(torch.tensor([2.0])), D.Normal(0.0, 1.0))",
    "D.kl_divergence(D.LowRankMultivariateNormal(torch.zeros(2), torch.ones(2, 1), "
    "torch.ones(2)), D.LowRankMultivariateNormal(torch.zeros(3), torch.ones(3, 1), torch.ones(3)))",
    "D.kl_divergence(D.LowRankMultivariateNormal(torch.zeros(2), torch.ones(2, 1), "
    "torch.ones(2)), D.MultivariateNormal(torch.zeros(3), torch.eye(3)))",
    "D.kl_divergence(D.Wishart(4.0, cov), D.Wishart(5.0, cov))",
    "D.kl_divergence(D.LKJCholesky(3), D.LKJCholesky(3))",
])
def test_kl_dispatch_and_errors_as_pytorch(code):
    assert _run(code, gt) == _run(code, torch)


# ----------------------------------------------------------------------- programs
PROGRAM = """
import torch
import torch.distributions as D
from torch.distributions import constraints
from torch.distributions.utils import broadcast_all, lazy_property, probs_to_logits
from torch.distributions.transforms import CatTransform, StackTransform, CorrCholeskyTransform
from torch.distributions.transforms import CumulativeDistributionTransform
class Holder:
    def __init__(self, rate):
        self.rate, = broadcast_all(rate)
    @lazy_property
    def scale(self):
        print("computing", torch.is_grad_enabled())
        return 1 / self.rate
    @constraints.dependent_property(event_dim=0)
    def supp(self):
        return constraints.greater_than(self.rate)
h = Holder(torch.tensor([1.0, 2.0], requires_grad=True))
with torch.no_grad():
    print(h.scale)
print(h.scale, h.supp, Holder.supp.event_dim, constraints.is_dependent(Holder.supp))
torch.manual_seed(0)
lkj = D.LKJCholesky(3, 0.5)
w = D.Wishart(torch.tensor(4.0), covariance_matrix=torch.eye(3))
s = w.sample()
print(lkj.sample(), s, w.log_prob(s), w)
print(D.Wishart(2.5, covariance_matrix=torch.eye(3)).sample().shape)
cc = CorrCholeskyTransform()
cat = CatTransform([D.transforms.ExpTransform(), D.transforms.SigmoidTransform()], 0, [1, 3])
st = StackTransform([D.transforms.ExpTransform(), D.transforms.identity_transform])
cdf = CumulativeDistributionTransform(D.Normal(0.0, 1.0))
y = cc(torch.tensor([0.1, 0.2, 0.3]))
print(y, cat(torch.ones(4)).shape, st(torch.ones(2, 3)), cdf(torch.tensor([0.5])))
print(D.kl_divergence(D.Normal(0.0, 1.0), D.Laplace(0.0, 1.0)), probs_to_logits(torch.tensor([0.5])))
made = [h, Holder, lkj, w, s, cc, cat, st, cdf, y, D.utils, D.wishart, D.lkj_cholesky]
more = [constraints.dependent, constraints.corr_cholesky, constraints.cat([constraints.real]),
        lkj.support, w.support, w.arg_constraints, cat.domain, st.codomain,
        D.biject_to(constraints.corr_cholesky)]
"""

EXPECTED = """\
computing True
tensor([1.0000, 0.5000], grad_fn=<MulBackward0>)
tensor([1.0000, 0.5000], grad_fn=<MulBackward0>) GreaterThan(lower_bound=tensor([1., 2.], \
requires_grad=True)) 0 True
"""


def test_programs_use_the_new_names_and_print_as_pytorch():
    out, err = io.StringIO(), io.StringIO()
    s = Session(stdout=out, stderr=err, limits=Limits(**BUDGET))
    s.run(PROGRAM, "names.grad")
    text = out.getvalue()
    assert text.startswith(EXPECTED), text
    assert "Wishart(covariance_matrix: torch.Size([3, 3]), df: 4.0)" in text
    assert "Singular sample detected." in err.getvalue()
    assert "Low df values detected." in err.getvalue()
    roots = [(k, s.globals[k]) for k in ("made", "more", "D", "constraints", "lazy_property",
                                         "broadcast_all", "Holder", "h")]
    kept, bad = crawl(roots)
    assert not bad, bad[:20]
    assert {"Wishart", "LKJCholesky", "CatTransform", "StackTransform", "_CorrCholesky",
            "CumulativeDistributionTransform", "_Dependent"} <= {type(o).__name__ for o in kept}


@pytest.mark.parametrize("attack", [
    "torch.distributions.Wishart(4.0, torch.eye(2))._unbroadcasted_scale_tril",
    "torch.distributions.Wishart(4.0, torch.eye(2))._dist_chi2",
    "torch.distributions.LKJCholesky(3)._beta",
    "torch.distributions.utils._broadcast_all",
    "torch.distributions.utils._lazy_property_and_property",
    "torch.distributions.constraints._Dependent",
    "torch.distributions.constraints.dependent._event_dim",
    "torch.distributions.wishart._warn",
    "torch.distributions.utils.torch",
    "torch.distributions.transforms.CatTransform([])._cached_x_y",
    "torch.distributions.utils.lazy_property(len).__get__",
])
def test_internals_refused(attack):
    assert_internal_refused(attack)
