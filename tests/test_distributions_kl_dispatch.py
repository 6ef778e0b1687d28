"""kl_divergence's dispatch as PyTorch's: the most specific registered pair both types
derive from, PyTorch's ambiguity warning when the first and the second class disagree on
which that is (once per pair, until a new pair is registered), register_kl's checks; and a
`gradcli run` program's own pairs end with it, as a process's do."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402

PROGRAM = """
class N2(D.Normal):
    pass
class N3(N2):
    pass
class U2(D.Uniform):
    pass
@D.register_kl(N2, D.Normal)
def first(p, q):
    return "N2-N"
@D.register_kl(D.Normal, N2)
def second(p, q):
    return "N-N2"
out = [D.kl_divergence(N2(0., 1.), N2(0., 1.)), D.kl_divergence(N3(0., 1.), N3(0., 1.)),
       D.kl_divergence(N3(0., 1.), N3(0., 1.)), D.kl_divergence(N2(0., 1.), D.Normal(0., 1.)),
       D.kl_divergence(D.Normal(0., 1.), N3(0., 1.)), D.kl_divergence(N2(0., 1.), U2(-1., 1.))]
@D.register_kl(N3, N3)
def third(p, q):
    return "N3-N3"
out.append(D.kl_divergence(N3(0., 1.), N3(0., 1.)))
out.append(D.kl_divergence(N2(0., 1.), N2(0., 1.)))
"""


def _dispatched(lib):
    env = {"D": lib.distributions}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(PROGRAM, env)  # noqa: S102 - the fixed program above
    said = [(w.category.__name__, str(w.message)) for w in caught]
    return [repr(v).replace("gradcli.torch", "torch") for v in env["out"]], said


def test_most_specific_pair_and_ambiguity_warning_as_pytorch():
    theirs, mine = _dispatched(torch), _dispatched(gt)
    assert mine == theirs
    assert ("RuntimeWarning", "Ambiguous kl_divergence(N2, N2). Please register_kl(N2, N2)") \
        in mine[1]


@pytest.mark.parametrize("make", [lambda D: D.register_kl("x", D.Normal),
                                  lambda D: D.register_kl(D.Normal, 3),
                                  lambda D: D.kl_divergence(D.Normal(0., 1.), D.Bernoulli(0.5))])
def test_register_and_missing_pair_errors_as_pytorch(make):
    got = []
    for lib in (torch, gt):
        with pytest.raises(Exception) as info:
            make(lib.distributions)
        got.append((type(info.value).__name__, str(info.value)))
    assert got[1] == got[0]


def test_a_programs_pairs_end_with_it(tmp_path):
    """`gradcli run a b`: b sees the library's pair, not the one a registered."""
    (tmp_path / "a.grad").write_text(
        "import torch\nD = torch.distributions\n"
        "@D.register_kl(D.Normal, D.Normal)\ndef mine(p, q):\n    return 'mine'\n"
        "print(D.kl_divergence(D.Normal(0., 1.), D.Normal(1., 1.)))\n")
    (tmp_path / "b.grad").write_text(
        "import torch\nD = torch.distributions\n"
        "print(D.kl_divergence(D.Normal(0., 1.), D.Normal(1., 1.)))\n")
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", "a.grad", "b.grad"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["mine", "tensor(0.5000)"]
