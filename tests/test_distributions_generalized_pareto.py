"""GeneralizedPareto against PyTorch: positive, zero and negative concentrations (the
bounded support), seeded samples, log_prob / cdf / icdf / survival, moments where they
exist, entropy, expand, gradients, reprs and errors."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from comparison_helpers import assert_shown_as_pytorch  # noqa: E402

import gradcli.torch as gt  # noqa: E402


def _env(lib):
    return {"torch": lib, "D": lib.distributions, "loc": lib.tensor([0.0, 1.0, -1.0]),
            "sc": lib.tensor([1.0, 2.0, 0.5]), "k": lib.tensor([0.3, 0.0, -0.4]),
            "v": lib.tensor([0.5, 2.0, -0.5])}


GP = "D.GeneralizedPareto(loc, sc, k)"
CODES = [
    GP, GP + ".support", GP + ".mean", GP + ".variance", GP + ".entropy()", GP + ".mode",
    GP + ".sample((2,))", GP + ".rsample()", GP + ".log_prob(v)", GP + ".cdf(v)",
    GP + ".icdf(torch.tensor([0.1, 0.5, 0.9]))", GP + ".log_survival_function(v)",
    GP + ".log_cdf(v)", GP + ".log_prob(torch.tensor([-1., 1., 0.]))",
    GP + ".expand([2, 3])", GP + ".expand([2, 3]).sample()",
    "D.GeneralizedPareto(0., 1., 0.5)", "D.GeneralizedPareto(0., 1., 0.5).sample((2,))",
    "D.GeneralizedPareto(0., 1., 1.5).mean", "D.GeneralizedPareto(0., 1., 0.7).variance",
    "D.GeneralizedPareto(0., -1., 0.)", "D.generalized_pareto.GeneralizedPareto(0., 1., 0.).batch_shape",
]


@pytest.mark.parametrize("code", CODES)
def test_as_pytorch(code):
    assert_shown_as_pytorch(code, _env, seed=6)


@pytest.mark.parametrize("what", ["rsample", "log_prob", "cdf"])
def test_gradients_as_pytorch(what):
    grads = []
    for lib in (torch, gt):
        lib.manual_seed(8)
        f64 = lib.float32  # (PyTorch's log_prob/cdf refuse float64: isclose against a float)
        params = [lib.tensor(v, dtype=f64, requires_grad=True)
                  for v in ([0.0, 1.0, -1.0], [1.0, 2.0, 0.5], [0.3, 0.1, -0.4])]
        d = lib.distributions.GeneralizedPareto(*params)
        value = lib.tensor([0.5, 2.0, -0.5], dtype=f64)
        out = {"rsample": lambda d=d: d.rsample((2,)),
               "log_prob": lambda d=d, v=value: d.log_prob(v),
               "cdf": lambda d=d, v=value: d.cdf(v)}[what]()
        out.sum().backward()
        grads.append([p.grad.numpy().copy() for p in params])
    for mine, theirs in zip(grads[1], grads[0]):
        torch.testing.assert_close(torch.tensor(mine), torch.tensor(theirs))
