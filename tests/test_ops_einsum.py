"""torch.einsum (engine/ops/contraction.py) against PyTorch 2.13: values, grad_fn names
(which follow ATen's contraction: ViewBackward0 after a bmm that summed, MulBackward0 for
an outer product, SumBackward1 for one operand...), gradients, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)

CASES = [
    ("i->", [(3,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->i", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij,kj->ik", [(2, 3), (1, 3)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij,jk->", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("aij,jk->aik", [(1, 3, 4), (4, 4)]),
    ("ijk,ik->j", [(1, 2, 3), (1, 3)]),
    ("iji->j", [(1, 3, 1)]),
    ("i...->...", [(3, 3)]),
    ("...ik, ...j -> ij", [(1, 2, 3), (3,)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("i,i,i->i", [(3,), (3,), (3,)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ij,ij->", [(2, 3), (2, 3)]),
    ("ij,Ab->ijAb", [(2, 3), (4, 4)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 4)]),
    ("i,j", [(3,), (2,)]),
]


def _run(module, eq, arrays):
    xs = [module.tensor(a, requires_grad=True) for a in arrays]
    return module.einsum(eq, *xs), xs


@pytest.mark.parametrize("eq,shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_pytorch(eq, shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    t_out, t_in = _run(torch, eq, arrays)
    g_out, g_in = _run(gt, eq, arrays)
    assert tuple(g_out.shape) == tuple(t_out.shape)
    assert type(g_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    np.testing.assert_allclose(g_out._data, t_out.detach().numpy(), rtol=1e-7, atol=1e-7)
    cot = RNG.uniform(-1, 1, size=tuple(t_out.shape))
    t_g = torch.autograd.grad(t_out, t_in, torch.tensor(cot))
    g_g = gt.autograd.grad(g_out, g_in, gt.tensor(cot))
    for og, tg in zip(g_g, t_g, strict=True):
        np.testing.assert_allclose(og._data, tg.numpy(), rtol=1e-7, atol=1e-7)


def test_list_and_sublist_forms():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    t = torch.einsum("ij,jk->ik", [torch.tensor(a), torch.tensor(b)])
    g = gt.einsum("ij,jk->ik", [gt.tensor(a), gt.tensor(b)])
    np.testing.assert_allclose(g._data, t.numpy())
    t2 = torch.einsum(torch.tensor(a), [0, 1], torch.tensor(b), [1, 2], [0, 2])
    g2 = gt.einsum(gt.tensor(a), [0, 1], gt.tensor(b), [1, 2], [0, 2])
    np.testing.assert_allclose(g2._data, t2.numpy())


ERRORS = [
    ("ij,jk", [(2, 3)]),
    ("ij", [(2, 3), (3, 4)]),
    ("ijk", [(2, 3)]),
    ("i1", [(2,)]),
    ("ij->k", [(2, 3)]),
    ("ij->ii", [(2, 3)]),
    ("ii->i", [(2, 3)]),
    ("ij,jk->ik", [(2, 3), (4, 5)]),
    ("i.j", [(2, 3)]),
    ("...i...", [(2, 3)]),
    ("ij->..j.", [(2, 3)]),
]


@pytest.mark.parametrize("eq,shapes", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_pytorch(eq, shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]

    def outcome(module):
        try:
            module.einsum(eq, *[module.tensor(a) for a in arrays])
        except Exception as err:  # noqa: BLE001 - compared below
            return type(err).__name__, str(err)
        return None

    theirs = outcome(torch)
    assert theirs is not None
    assert outcome(gt) == theirs
