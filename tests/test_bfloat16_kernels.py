"""bfloat16 kernels whose PyTorch arithmetic is bfloat16's, each operation rounded (not
widened to float32 and rounded once): logit, addr and linspace, bit for bit against
PyTorch (the OpInfo sweep's bfloat16 rows found them)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402

RNG = np.random.default_rng(11)


def _pair(values):
    arr = np.asarray(values, np.float32)
    return torch.tensor(arr).bfloat16(), G.tensor(arr).bfloat16()


@pytest.mark.parametrize("eps", [None, 1e-6, 0.05, 0.3])
def test_logit_as_pytorch(eps):
    values = np.concatenate([RNG.uniform(0, 1, 300), [0.0, 1.0, 0.5, -0.25, 1.5, np.nan]])
    theirs, ours = _pair(values)
    assert G.logit(ours, eps).tolist() == pytest.approx(torch.logit(theirs, eps).tolist(),
                                                        abs=0, rel=0, nan_ok=True)
    assert ours.logit(eps).dtype is G.bfloat16


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.2, 0.6), (0, 2), (-1.5, 0.3), (2, 0)])
def test_addr_as_pytorch(beta, alpha):
    m = RNG.standard_normal((5, 40)) * 5
    a = RNG.standard_normal(5) * 5
    b = RNG.standard_normal(40) * 5
    (tm, om), (ta, oa), (tb, ob) = _pair(m), _pair(a), _pair(b)
    theirs = torch.addr(tm, ta, tb, beta=beta, alpha=alpha)
    ours = G.addr(om, oa, ob, beta=beta, alpha=alpha)
    assert ours.dtype is G.bfloat16
    assert ours.tolist() == theirs.tolist()


def test_addr_with_a_number_for_input():
    (ta, oa), (tb, ob) = _pair(RNG.standard_normal(5) * 5), _pair(RNG.standard_normal(9) * 5)
    assert G.addr(G.tensor(-8.5, dtype=G.bfloat16), oa, ob).tolist() == \
        torch.addr(torch.tensor(-8.5, dtype=torch.bfloat16), ta, tb).tolist()


@pytest.mark.parametrize("start,end,steps", [
    (0, 1, 2), (0, 1, 3), (-5, 5, 11), (1e3, 1e4, 17), (-3, 7, 300), (0.1, 0.7, 1000),
    (-2.0, 1, 50), (-2.0, 4, 50), (3, -3, 41), (5, 5, 4)])
def test_linspace_as_pytorch(start, end, steps):
    ours = G.linspace(start, end, steps, dtype=G.bfloat16)
    assert ours.tolist() == torch.linspace(start, end, steps, dtype=torch.bfloat16).tolist()
    assert repr(ours) == repr(torch.linspace(start, end, steps, dtype=torch.bfloat16))
