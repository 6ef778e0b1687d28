"""Cauchy, HalfCauchy, HalfNormal, Gumbel, Pareto, Weibull, Chi2, StudentT and Poisson, the
Abs/Power/Softplus transforms and the per-family modules (`torch.distributions.normal`)
against PyTorch: seeded samples bit for bit with the generator left where PyTorch leaves
it, log_prob / cdf / icdf / entropy / moments with their grad_fn, the reparameterized and
log_prob gradients, reprs and validation errors."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402
from gradcli.lang import Limits  # noqa: E402
from gradcli.lang.session import run_source  # noqa: E402

BUDGET = dict(max_steps=20_000, max_depth=60, max_elements=1_000_000, max_length=100_000)


def _run(src: str):
    import io

    out, err = io.StringIO(), io.StringIO()
    code = run_source("import torch\n" + src, "dist.grad", limits=Limits(**BUDGET), stdout=out,
                      stderr=err)
    return code, out.getvalue(), err.getvalue()


def _t(lib, values, grad=False, dtype=None):
    return lib.tensor(values, dtype=dtype or lib.float64, requires_grad=grad)


#: name -> (parameters, a value inside the support, probabilities for icdf)
FAMILIES = {
    "Cauchy": (lambda L: (_t(L, [0.5, -1.0], True), _t(L, [1.5, 2.0], True)), [0.3, 2.0]),
    "HalfCauchy": (lambda L: (_t(L, [1.5, 2.0], True),), [0.3, 2.0]),
    "HalfNormal": (lambda L: (_t(L, [1.5, 2.0], True),), [0.3, 2.0]),
    "Gumbel": (lambda L: (_t(L, [0.5, -1.0], True), _t(L, [1.5, 2.0], True)), [0.3, 2.0]),
    "Pareto": (lambda L: (_t(L, [0.5, 1.0], True), _t(L, [1.5, 3.0], True)), [0.7, 2.0]),
    "Weibull": (lambda L: (_t(L, [0.5, 1.0], True), _t(L, [1.5, 3.0], True)), [0.7, 2.0]),
    "Chi2": (lambda L: (_t(L, [1.5, 3.0], True),), [0.7, 2.0]),
    "StudentT": (lambda L: (_t(L, [0.5, 1.5, 3.0], True), _t(L, [0.1, 0.2, 0.3], True),
                            _t(L, [1.0, 2.0, 3.0], True)), [0.7, 2.0, -1.0]),
    "Poisson": (lambda L: (_t(L, [1.5, 3.0], True),), [1.0, 4.0]),
    "InverseGamma": (lambda L: (_t(L, [1.5, 3.0], True), _t(L, [0.5, 2.0], True)), [0.7, 2.0]),
    "FisherSnedecor": (lambda L: (_t(L, [1.5, 5.0], True), _t(L, [3.5, 6.0], True)), [0.7, 2.0]),
    "Kumaraswamy": (lambda L: (_t(L, [1.5, 3.0], True), _t(L, [0.5, 2.0], True)), [0.3, 0.8]),
    "NegativeBinomial": (lambda L: (_t(L, [1.5, 5.0], True), None, _t(L, [-0.5, 0.3], True)),
                         [1.0, 4.0]),
}


def _outcome(fn):
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        return ("raises", type(e).__name__, str(e))
    return value


def _record(lib, name):
    make, value = FAMILIES[name]
    lib.manual_seed(11)
    params = make(lib)
    d = getattr(lib.distributions, name)(*params)
    params = [p for p in params if p is not None]
    out = {"repr": repr(d), "batch": tuple(d.batch_shape), "event": tuple(d.event_shape),
           "has_rsample": d.has_rsample, "support": repr(d.support)}
    s = d.sample((3,))
    out["sample"] = (str(s.dtype), s.numpy().tobytes())
    if d.has_rsample:
        r = d.rsample((2,))
        out["rsample"] = (r.detach().numpy().tobytes(), type(r.grad_fn).__name__)
        r.sum().backward(retain_graph=True)
        out["rsample_grads"] = [p.grad.numpy().copy() for p in params]
        for p in params:
            p.grad = None
    out["after"] = lib.rand(3).numpy().tobytes()  # (the generator left alike)
    lp = d.log_prob(_t(lib, value))
    out["log_prob"] = (lp.detach().numpy(), type(lp.grad_fn).__name__)
    lp.sum().backward(retain_graph=True)
    out["log_prob_grads"] = [p.grad.numpy().copy() for p in params]
    for attr in ("mean", "mode", "variance", "stddev"):
        out[attr] = _outcome(lambda attr=attr: getattr(d, attr).detach().numpy())
    out["entropy"] = _outcome(lambda: d.entropy().detach().numpy())
    out["cdf"] = _outcome(lambda: d.cdf(_t(lib, value)).detach().numpy())
    out["icdf"] = _outcome(lambda: d.icdf(_t(lib, [0.3] * len(value))).detach().numpy())
    return out


def _same(a, b, key=""):
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.shape == b.shape, key
        np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-12, equal_nan=True, err_msg=key)
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), key
        for x, y in zip(a, b):
            _same(x, y, key)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k], k)
    else:
        assert a == b, key


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_against_pytorch(name):
    _same(_record(torch, name), _record(gt, name))


SAMPLERS = [
    "HalfNormal(2.).sample((2, 3))",
    "Gumbel(0., 1.).sample((4,))",
    "Gumbel(torch.tensor([0., 1.]), 2.).rsample()",
    "Weibull(1., 2.).sample((3,))",
    "Cauchy(0., 1.).sample((5,))",
    "HalfCauchy(torch.tensor([1., 3.])).sample((2,))",
    "StudentT(3.).sample((3,))",
    "StudentT(torch.tensor([0.5, 30.]), 1., 2.).rsample((2,))",
    "Poisson(torch.tensor([2., 30., 0.])).sample((2,))",
    "Chi2(3.).sample((3,))",
    "Pareto(1., 2.).sample((3,))",
    "InverseGamma(2., 3.).sample((3,))",
    "Kumaraswamy(torch.tensor([0.5, 2.]), 3.).sample((2,))",
    "FisherSnedecor(3., torch.tensor([4., 9.])).sample((3,))",
    "NegativeBinomial(3., probs=torch.tensor([0.2, 0.7])).sample((3,))",
    "NegativeBinomial(torch.tensor(40.), logits=torch.tensor([-2., 0.7])).sample((2,))",
]


@pytest.mark.parametrize("code", SAMPLERS)
def test_float32_samples_with_the_generator_left_alike(code):
    got = []
    for lib in (torch, gt):
        lib.manual_seed(4)
        env = {"torch": lib, **vars(lib.distributions)}
        value = eval(code, env)  # noqa: S307 - the fixed strings above
        got.append((str(value.dtype), tuple(value.shape), value.numpy(),
                    lib.rand(2).numpy().tobytes()))
    (dtype, shape, values, after), mine = got
    assert mine[0] == dtype and mine[1] == shape and mine[3] == after
    # (the draws are PyTorch's bits; a transform's float32 log/exp may differ by an ulp)
    np.testing.assert_allclose(mine[2], values, rtol=1.3e-6, atol=1e-5)


ERRORS = [
    "Cauchy(0., -1.)", "HalfNormal(-1.)", "HalfCauchy(torch.tensor([1., -2.]))", "Chi2(-1.)",
    "StudentT(-1.)", "StudentT(2., 0., -1.)", "Poisson(-1.)", "Pareto(1., -1.)",
    "Weibull(-1., 1.)", "Gumbel(0., -1.)",
    "HalfNormal(1.).log_prob(torch.tensor(-1.))", "Poisson(2.).log_prob(torch.tensor(1.5))",
    "Pareto(1., 2.).log_prob(torch.tensor(0.5))", "Poisson(2.).rsample()",
    "Poisson(2.).cdf(torch.tensor(1.))", "StudentT(2.).icdf(torch.tensor(0.3))",
    "Cauchy(0., 1.).log_prob(3.)",
    "InverseGamma(-1., 1.)", "FisherSnedecor(-1., 2.)", "Kumaraswamy(1., -2.)",
    "Kumaraswamy(1., 2.).log_prob(torch.tensor(1.5))",
    "NegativeBinomial(-1., probs=torch.tensor([0.2, 0.7]))",
    "NegativeBinomial(3., probs=torch.tensor([0.2, 1.0]))", "NegativeBinomial(3.)",
    "NegativeBinomial(3., probs=0.3).log_prob(torch.tensor(2.5))",
]


@pytest.mark.parametrize("code", ERRORS)
def test_errors_as_pytorch(code):
    caught = []
    for lib in (torch, gt):
        env = {"torch": lib, **vars(lib.distributions)}
        with pytest.raises(Exception) as info:
            eval(code, env)  # noqa: S307 - the fixed strings above
        caught.append((type(info.value).__name__, str(info.value).replace("gradcli.torch", "torch")))
    assert caught[0] == caught[1]


REPRS = [
    "Chi2(torch.tensor([1., 2.]))", "HalfNormal(torch.tensor([1., 2.]))", "HalfCauchy(2.)",
    "Weibull(torch.tensor([1., 2.]), 1.)", "StudentT(torch.tensor([3., 4.]))", "Gumbel(0., 1.)",
    "Pareto(1., 2.)", "Cauchy(0., 1.)", "Poisson(torch.tensor([1., 2.]))",
    "InverseGamma(torch.tensor([1., 2.]), 1.)", "FisherSnedecor(3., 4.)",
    "NegativeBinomial(3., probs=torch.tensor([0.2, 0.7]))",
    "NegativeBinomial(torch.tensor([0., 2.]), probs=0.3).log_prob(torch.tensor(0.))",
    "FisherSnedecor(torch.tensor([1., 3.]), 5.).mode",
    "Kumaraswamy(torch.tensor([0.5, 2.]), 3.)", "Kumaraswamy(torch.tensor([0.5, 2.]), 3.).mode",
    "Pareto(1., 2.).support", "Weibull(1., 2.).support", "Chi2(3.).df",
    "PowerTransform(2.)", "AbsTransform()", "SoftplusTransform()",
    "SoftplusTransform()(torch.tensor([0.5, -3.]))",
    "SoftplusTransform().inv(torch.tensor([0.5, 3.]))",
    "SoftplusTransform().log_abs_det_jacobian(torch.tensor([0.5, -3.]), None)",
    "PowerTransform(torch.tensor([2., 0.5])).inv(torch.tensor([4., 3.]))",
    "PowerTransform(2.).log_abs_det_jacobian(torch.tensor([2.]), torch.tensor([4.]))",
    "PowerTransform(2.) == PowerTransform(torch.tensor(2.))", "AbsTransform().bijective",
    "TransformedDistribution(Normal(0., 1.), [SoftplusTransform()]).log_prob(torch.tensor(0.7))",
    "TransformedDistribution(Normal(0., 1.), AffineTransform(0., -2.)).cdf(torch.tensor(0.7))",
    "TransformedDistribution(Normal(0., 1.), AffineTransform(0., torch.tensor([-2., 3.])))"
    ".cdf(torch.tensor(0.7))",
    "Uniform(1., 3.).icdf(torch.tensor([0.25, 0.5]))", "Gamma(2., 3.).cdf(torch.tensor(0.4))",
    "Bernoulli(0.3).entropy().dtype", "identity_transform(torch.tensor([1., 2.]))",
]


@pytest.mark.parametrize("code", REPRS)
def test_reprs_and_values(code):
    got = []
    for lib in (torch, gt):
        env = {"torch": lib, **vars(lib.distributions)}
        got.append(repr(eval(code, env)).replace("gradcli.torch", "torch"))  # noqa: S307
    assert got[0] == got[1]


def test_every_family_module_imports_as_in_pytorch():
    import importlib

    for name in ("Normal", "Uniform", "Bernoulli", "Categorical", "Beta", "Gamma", "Cauchy",
                 "HalfNormal", "StudentT", "Poisson", "Chi2", "Weibull", "LogNormal",
                 "MultivariateNormal", "OneHotCategorical", "TransformedDistribution"):
        cls = getattr(torch.distributions, name)
        mine = getattr(gt.distributions, name)
        short = cls.__module__.rsplit(".", 1)[1]
        module = importlib.import_module("gradcli.torch.distributions." + short)
        assert getattr(module, name) is mine and mine.__module__ == cls.__module__


def test_programs_import_the_family_modules():
    code, out, err = _run(
        "from torch.distributions.normal import Normal\n"
        "from torch.distributions.half_normal import HalfNormal\n"
        "import torch.distributions.studentT as st\n"
        "torch.manual_seed(0)\n"
        "s = torch.tensor(2.0, requires_grad=True)\n"
        "lp = HalfNormal(s).log_prob(torch.tensor(1.0))\n"
        "lp.backward()\n"
        "print(lp, s.grad)\n"
        "print(st.StudentT(3.).sample((2,)))\n"
        "print(Normal(0., 1.).sample((2,)))\n")
    torch.manual_seed(0)
    s = torch.tensor(2.0, requires_grad=True)
    lp = torch.distributions.HalfNormal(s).log_prob(torch.tensor(1.0))
    lp.backward()
    expected = (f"{lp!s} {s.grad!s}\n{torch.distributions.StudentT(3.).sample((2,))}\n"
                f"{torch.distributions.Normal(0., 1.).sample((2,))}\n")
    assert code == 0, err
    assert out == expected


def test_family_modules_expose_no_internals():
    for src in ("import torch.distributions.cauchy as c\nc.__dict__",
                 "from torch.distributions.cauchy import __builtins__",
                 "from torch.distributions.cauchy import math",
                 "import torch.distributions.cauchy as c\nc.Cauchy.__init__.__globals__",
                 "from torch.distributions.derived_families import torch as t\nt.Cauchy"):
        code, out, err = _run(src)
        assert code != 0 and "Traceback" not in err, src
