"""The parametrization machinery a .grad program can now reach (parametrized modules with
their made-on-the-spot class and property, ParametrizationList, the norm hooks, cached())
stays inside the sandbox: the attribute crawler finds nothing unsafe, the class walk and
the module internals are refused, and the CLI runs the tutorial's idioms as PyTorch does."""

import io
import subprocess
import sys

import pytest

from gradcli.lang import Limits, Session
from tests.test_security_sandbox import BUDGET, crawl

PROGRAM = """
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils import parametrizations as P

class Sym(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)
    def right_inverse(self, A):
        return A.triu()

lin = nn.Linear(3, 3)
parametrize.register_parametrization(lin, "weight", Sym())
lin.weight = torch.eye(3)
wn = P.weight_norm(nn.Linear(2, 2))
sn = P.spectral_norm(nn.Linear(3, 2))
orth = P.orthogonal(nn.Linear(3, 3))
old = torch.nn.utils.spectral_norm(nn.Linear(2, 2))
old2 = torch.nn.utils.weight_norm(nn.Linear(2, 2))
ctx = parametrize.cached()
kind = type(lin)
chain = lin.parametrizations.weight
steps = [m.parametrizations.weight[0] for m in (wn, sn, orth)]
lazy = [nn.LazyConv2d(2, 3), nn.LazyBatchNorm2d(), nn.LazyConv1d(1, 1), nn.LazyBatchNorm1d()]
lazy[0](torch.ones(1, 1, 4, 4))
"""


def _session():
    s = Session(stdout=io.StringIO(), limits=Limits(**BUDGET))
    s.run(PROGRAM, "parametrize.grad")
    return s


def test_crawl_finds_nothing_unsafe():
    s = _session()
    roots = [(k, s.globals[k]) for k in ("lin", "wn", "sn", "orth", "old", "old2", "ctx",
                                         "kind", "chain", "parametrize", "P", "steps", "lazy")]
    kept, bad = crawl(roots)
    assert not bad, bad[:20]
    reached = {type(obj).__name__ for obj in kept}
    assert {"ParametrizedLinear", "ParametrizationList", "ModuleDict", "_SpectralNorm",
            "_Orthogonal", "_WeightNorm", "Conv2d", "LazyBatchNorm2d",
            "UninitializedBuffer"} <= reached, reached


@pytest.mark.parametrize("attack", [
    "type(lin).__bases__",
    "lin.__class__",
    "parametrize._cache",
    "chain.__dict__",
    "type(lin).weight.fget.__globals__",
    "old._forward_pre_hooks",
    "P._make_orthogonal",
    "sn.parametrizations.weight[0]._power_method",
])
def test_internals_are_refused(attack):
    s = Session(stdout=io.StringIO(), limits=Limits(**BUDGET))
    with pytest.raises(Exception) as info:
        s.run(PROGRAM + f"\nx = {attack}\n", "parametrize.grad")
    assert "not allowed" in str(info.value) or "not supported" in str(info.value), \
        str(info.value)


CLI_PROGRAM = """\
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize
torch.manual_seed(0)

class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)

layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Skew())
print(layer)
print(layer.weight)
layer(torch.ones(1, 3)).sum().backward()
print(layer.parametrizations.weight.original.grad)
torch.nn.utils.parametrizations.spectral_norm(layer, "bias")
print(dict(layer.named_buffers()))
parametrize.remove_parametrizations(layer, "weight")
print(layer)
"""


def test_cli_run_prints_what_pytorch_prints(tmp_path):
    pytest.importorskip("torch")
    prog = tmp_path / "skew.py"
    prog.write_text(CLI_PROGRAM)
    ref = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert ref.returncode == 0, ref.stderr
    assert got.returncode == 0, got.stderr
    assert "ParametrizedLinear(" in got.stdout
    assert got.stdout == ref.stdout


DIST_PROGRAM = """
import torch
import torch.distributions as D
dists = [D.Exponential(torch.tensor([1.0])), D.Laplace(0.0, 1.0), D.Gamma(2.0, 1.0),
         D.Beta(2.0, 3.0), D.Dirichlet(torch.ones(3)), D.Binomial(4, torch.tensor(0.5)),
         D.Geometric(torch.tensor(0.3)), D.OneHotCategorical(torch.ones(3)),
         D.LogNormal(0.0, 1.0), D.Independent(D.Normal(torch.zeros(2), 1.0), 1),
         D.TransformedDistribution(D.Normal(0.0, 1.0), [D.transforms.AffineTransform(1.0, 2.0),
                                                        D.transforms.ExpTransform()])]
draws = [d.sample() for d in dists[:5]]
parts = [D.transforms.SigmoidTransform(), D.transforms.TanhTransform().inv,
         D.constraints.independent(D.constraints.positive, 1), D.constraints.one_hot]
"""


def test_distributions_crawl_finds_nothing_unsafe():
    s = Session(stdout=io.StringIO(), limits=Limits(**BUDGET))
    s.run(DIST_PROGRAM, "dists.grad")
    kept, bad = crawl([(k, s.globals[k]) for k in ("dists", "draws", "parts", "D")])
    assert not bad, bad[:20]
    reached = {type(obj).__name__ for obj in kept}
    assert {"Gamma", "Dirichlet", "LogNormal", "Independent", "ExpTransform",
            "_InverseTransform"} <= reached, reached


@pytest.mark.parametrize("attack", ["D.families._gamma_one", "dists[0]._validate_args",
                                    "parts[1]._inv", "D.transforms.Transform._call"])
def test_distribution_internals_are_refused(attack):
    s = Session(stdout=io.StringIO(), limits=Limits(**BUDGET))
    with pytest.raises(Exception) as info:
        s.run(DIST_PROGRAM + f"\nx = {attack}\n", "dists.grad")
    assert "not allowed" in str(info.value) or "not supported" in str(info.value), \
        str(info.value)
