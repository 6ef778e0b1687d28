"""torch functions take PyTorch's keyword names (`torch.matmul(input=a, other=b)`,
`torch.reshape(input=x, shape=...)`), as tutorials sometimes write them: each call is
made with keywords only, in gradcli and in PyTorch, and must give the same values."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

M = np.arange(4.0).reshape(2, 2) + 1
V = np.array([1.0, -2.0])
B = np.arange(8.0).reshape(2, 2, 2)
CALLS = {
    "matmul": dict(input=M, other=M), "mm": dict(input=M, mat2=M),
    "bmm": dict(input=B, mat2=B), "dot": dict(input=V, tensor=V), "mv": dict(input=M, vec=V),
    "outer": dict(input=V, vec2=V), "addmm": dict(input=M, mat1=M, mat2=M, beta=2, alpha=3),
    "transpose": dict(input=M, dim0=0, dim1=1), "t": dict(input=M),
    "reshape": dict(input=M, shape=(4,)), "permute": dict(input=B, dims=(2, 0, 1)),
    "flatten": dict(input=B, start_dim=1), "squeeze": dict(input=B[:1], dim=0),
    "unsqueeze": dict(input=M, dim=1), "clone": dict(input=M), "flip": dict(input=M, dims=(0,)),
    "chunk": dict(input=M, chunks=2, dim=1), "split": dict(tensor=M, split_size_or_sections=1),
    "matrix_exp": dict(input=M / 10),
}


def _call(mod, name, kwargs):
    args = {k: mod.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    out = getattr(mod, name)(**args)
    return [np.asarray(o.tolist()) for o in out] if isinstance(out, tuple) else np.asarray(out.tolist())


@pytest.mark.parametrize("name", sorted(CALLS))
def test_pytorchs_keyword_names(name):
    mine, theirs = _call(gt, name, CALLS[name]), _call(torch, name, CALLS[name])
    np.testing.assert_allclose(np.asarray(mine, dtype=float), np.asarray(theirs, dtype=float),
                               rtol=1e-7)


def test_tensor_methods_keep_their_positional_forms():
    x = gt.ones(2, 3)
    assert x.reshape(3, 2).shape == (3, 2) and x.reshape((6,)).shape == (6,)
    assert x.permute(1, 0).shape == (3, 2) and x.permute((1, 0)).shape == (3, 2)
    assert gt.reshape(x, (3, 2)).shape == (3, 2) and gt.permute(x, (1, 0)).shape == (3, 2)
