"""biject_to / transform_to and the Softmax, StickBreaking, LowerCholesky, PositiveDefinite,
Independent and Reshape transforms against PyTorch: which transform each constraint gets
(reprs), forward and inverse values, log-Jacobians, shapes, gradients, errors, and a
TransformedDistribution through the stick-breaking map."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from comparison_helpers import assert_shown_as_pytorch  # noqa: E402

import gradcli.torch as gt  # noqa: E402


def _env(lib):
    D = lib.distributions
    return {"torch": lib, "D": D, "C": D.constraints, "T": D.transforms,
            "bt": D.biject_to, "tt": D.transform_to,
            "x": lib.tensor([[0.3, -1.2, 0.5], [2.0, 0.1, -0.4]]),
            "m": lib.tensor([[0.3, -1.2], [0.5, 0.8]]),
            "p": lib.tensor([0.2, 0.3, 0.5])}


CONSTRAINTS = ["C.real", "C.positive", "C.nonnegative", "C.greater_than(2.)",
               "C.greater_than_eq(-1.)", "C.less_than(3.)", "C.unit_interval",
               "C.interval(-2., 5.)", "C.half_open_interval(0., 2.)", "C.simplex",
               "C.real_vector", "C.independent(C.positive, 1)", "C.lower_cholesky",
               "C.positive_definite", "C.boolean", "C.nonnegative_integer",
               "C.integer_interval(0, 3)", "C.one_hot"]

CODES = []
for _c in CONSTRAINTS:
    CODES += [f"bt({_c})", f"tt({_c})"]
CODES += [
    "bt(C.positive)(x)", "bt(C.positive).inv(torch.tensor([1., 2.]))",
    "bt(C.interval(-2., 5.))(x)", "bt(C.interval(-2., 5.)).inv(torch.tensor([0., 4.]))",
    "bt(C.less_than(3.))(x)", "tt(C.independent(C.positive, 1))(x)",
    "T.StickBreakingTransform()(x)", "T.StickBreakingTransform().inv(p)",
    "T.StickBreakingTransform().log_abs_det_jacobian(x, T.StickBreakingTransform()(x))",
    "T.StickBreakingTransform().forward_shape((2, 3)), "
    "T.StickBreakingTransform().inverse_shape(torch.Size([2, 3]))",
    "T.StickBreakingTransform().forward_shape(())",
    "T.StickBreakingTransform().domain, T.StickBreakingTransform().codomain",
    "T.SoftmaxTransform()(x)", "T.SoftmaxTransform().inv(p)",
    "T.SoftmaxTransform().log_abs_det_jacobian(x, x)",
    "T.LowerCholeskyTransform()(m)", "T.LowerCholeskyTransform().inv(torch.tensor([[2., 0.], [1., 3.]]))",
    "T.PositiveDefiniteTransform()(m)",
    "T.PositiveDefiniteTransform().inv(torch.tensor([[2., 1.], [1., 3.]]))",
    "T.IndependentTransform(T.ExpTransform(), 1)",
    "T.IndependentTransform(T.ExpTransform(), 1).log_abs_det_jacobian(x, x.exp())",
    "T.IndependentTransform(T.ExpTransform(), 1).inv(torch.tensor(2.))",
    "T.IndependentTransform(T.ExpTransform(), 2).domain",
    "T.ReshapeTransform((2, 3), (3, 2))(x)", "T.ReshapeTransform((2, 3), (6,)).inv(x.reshape(6))",
    "T.ReshapeTransform((2, 3), (6,)).log_abs_det_jacobian(x, x.reshape(6))",
    "T.ReshapeTransform((2, 3), (6,)).forward_shape((4, 2, 3))",
    "T.ReshapeTransform((2, 3), (6,)).forward_shape((4, 3, 2))",
    "T.ReshapeTransform((2, 3), (5,))",
    "T.ExpTransform().with_cache(1)(x)", "T.IndependentTransform(T.ExpTransform(), 1, cache_size=1)",
    "D.TransformedDistribution(D.Normal(torch.zeros(2), 1.), T.StickBreakingTransform())",
    "D.TransformedDistribution(D.Normal(torch.zeros(2), 1.), T.StickBreakingTransform())"
    ".log_prob(p)",
    "D.TransformedDistribution(D.Normal(torch.zeros(2), 1.), T.StickBreakingTransform())"
    ".sample((2,))",
    "D.TransformedDistribution(D.Normal(torch.zeros(2), 1.), T.StickBreakingTransform())"
    ".event_shape",
    "D.TransformedDistribution(D.Normal(0., 1.), T.StickBreakingTransform())",
    "bt(D.Normal(0., 1.).arg_constraints['scale'])(torch.zeros(2))",
    "tt(D.Dirichlet(p).support)(torch.zeros(3))",
    "bt(D.Beta(2., 3.).support).inv(torch.tensor(0.25))",
]


@pytest.mark.parametrize("code", CODES)
def test_as_pytorch(code):
    assert_shown_as_pytorch(code, _env, seed=1)


@pytest.mark.parametrize("make", [
    "bt(C.simplex)", "tt(C.simplex)", "tt(C.lower_cholesky)", "tt(C.positive_definite)",
    "bt(C.interval(-2., 5.))", "bt(C.independent(C.greater_than(1.), 1))"])
def test_gradients_as_pytorch(make):
    results = []
    for lib in (torch, gt):
        env = _env(lib)
        t = eval(make, env)  # noqa: S307 - the fixed strings above
        shape = (2, 2) if "cholesky" in make or "definite" in make else (3,)
        x = lib.linspace(-0.7, 0.9, 4 if len(shape) == 2 else 3,
                         dtype=lib.float64).reshape(shape).requires_grad_()
        y = t(x)
        (y * lib.arange(1.0, y.numel() + 1, dtype=lib.float64).reshape(y.shape)).sum().backward()
        results.append((y.detach().numpy().copy() if lib is gt else y.detach().numpy(),
                        x.grad.numpy().copy()))
    for mine, theirs in zip(results[1], results[0]):
        torch.testing.assert_close(torch.tensor(mine), torch.tensor(theirs))


def test_registering_a_constraint():
    out = []
    for lib in (torch, gt):
        D = lib.distributions
        registry = D.constraint_registry.ConstraintRegistry()
        registry.register(D.constraints.positive, lambda c, D=D: D.transforms.ExpTransform())
        try:
            registry.register(3, lambda c: None)
        except TypeError as e:
            err = str(e)
        out.append((repr(registry(D.constraints.greater_than(4.0))), err))
    assert out[0] == out[1]


def test_in_a_program(tmp_path):
    import subprocess
    import sys

    code = ("import torch\nfrom torch.distributions import biject_to, constraints\n"
            "u = torch.zeros(3, requires_grad=True)\n"
            "p = biject_to(constraints.simplex)(u)\n(p * torch.arange(4.)).sum().backward()\n"
            "print(p, u.grad)\nprint(biject_to(constraints.positive))\n")
    script = tmp_path / "bij.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, "-m", "gradcli", "run", str(script)],
                         capture_output=True, text=True, timeout=120)
    u = torch.zeros(3, requires_grad=True)
    D = torch.distributions
    p = D.biject_to(D.constraints.simplex)(u)
    (p * torch.arange(4.)).sum().backward()
    assert out.stdout == f"{p} {u.grad}\n{D.biject_to(D.constraints.positive)}\n"


LN = "D.LogisticNormal(torch.tensor([0.1, -0.5]), torch.tensor([1.0, 2.0]))"


@pytest.mark.parametrize("code", [
    LN, LN + ".batch_shape, " + LN + ".event_shape", LN + ".support", LN + ".loc",
    LN + ".sample((2,))", LN + ".rsample()", LN + ".log_prob(torch.tensor([0.2, 0.3, 0.5]))",
    LN + ".log_prob(torch.tensor([0.2, 0.3, 0.6]))", LN + ".entropy()",
    LN + ".expand([3]).log_prob(torch.tensor([0.2, 0.3, 0.5]))", LN + ".expand([3])",
    "D.LogisticNormal(0., 1.).sample()", "D.LogisticNormal(0., 1.).event_shape",
    "D.LogisticNormal(0., -1.)", "D.logistic_normal.LogisticNormal(0., 1.).has_rsample",
])
def test_logistic_normal_as_pytorch(code):
    test_as_pytorch(code)


def test_logistic_normal_gradients_as_pytorch():
    grads = []
    for lib in (torch, gt):
        lib.manual_seed(2)
        loc = lib.tensor([0.1, -0.5], dtype=lib.float64, requires_grad=True)
        scale = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        d = lib.distributions.LogisticNormal(loc, scale)
        (d.rsample((3,)).pow(2).sum() + d.log_prob(
            lib.tensor([0.2, 0.3, 0.5], dtype=lib.float64))).backward()
        grads.append((loc.grad.numpy().copy(), scale.grad.numpy().copy()))
    for mine, theirs in zip(grads[1], grads[0]):
        torch.testing.assert_close(torch.tensor(mine), torch.tensor(theirs))
