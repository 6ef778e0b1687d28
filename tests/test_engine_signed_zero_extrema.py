"""max()/min()/amax/amin return +0. or -0. as PyTorch does when the result is a zero.

+0. and -0. compare equal, so which one a reduction returns depends on its kernel's
order (engine/kernels/extrema.py: _zero_as_reduce_all, zero_as_kernel), and it prints
("tensor(-0.)" against "tensor(0.)"). PyTorch is the oracle: tensors of zeros of both
signs with a few negatives, over shapes that take every path of its kernels (scalar
loops, vector blocks, outer reductions, the thread split of 32,768 elements or more,
transposed views).
"""

from __future__ import annotations

import numpy as np
import pytest
from torch_kernels import torch_with_measured_kernels

import gradcli.torch as G

torch = torch_with_measured_kernels()

SHAPES = [(5,), (9,), (17,), (40,), (3, 4), (2, 20), (20, 2), (3, 17), (4, 3, 5), (2, 3)]


def _zeros_and_negatives(shape, seed, negatives=0.2):
    rng = np.random.default_rng(seed)
    signs = (1 - negatives) / 2
    return rng.choice([0.0, -0.0, -1.0], size=shape, p=[signs, signs, negatives])


def _signs(t) -> list:
    return np.signbit(np.asarray(t.tolist(), dtype=np.float64)).tolist()


def _calls(ndim):
    yield "max", None
    yield "min", None
    for name in ("amax", "amin"):
        yield name, None
        for d in range(ndim):
            yield name, d


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_small_tensors_pick_pytorchs_zero(shape, dtype):
    differ = []
    for seed in range(40):
        values = _zeros_and_negatives(shape, seed)
        ours = G.tensor(values, dtype=getattr(G, dtype))
        theirs = torch.tensor(values, dtype=getattr(torch, dtype))
        for name, dim in _calls(len(shape)):
            args = () if dim is None else (dim,)
            a, b = getattr(ours, name)(*args), getattr(theirs, name)(*args)
            if _signs(a) != _signs(b) or str(a).replace("grad_fn", "") != str(b):
                differ.append((seed, name, dim))
    assert differ == []


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(40000,), (3, 20000), (20000, 3)], ids=str)
def test_large_and_transposed_tensors_pick_pytorchs_zero(shape, dtype):
    differ = []
    for seed in range(6):
        values = _zeros_and_negatives(shape, seed, negatives=0.1)
        ours = G.tensor(values, dtype=getattr(G, dtype))
        theirs = torch.tensor(values, dtype=getattr(torch, dtype))
        pairs = [(ours, theirs)] + ([(ours.T, theirs.T)] if len(shape) == 2 else [])
        for a, b in pairs:
            for name, dim in _calls(a.dim()):
                args = () if dim is None else (dim,)
                if _signs(getattr(a, name)(*args)) != _signs(getattr(b, name)(*args)):
                    differ.append((seed, tuple(a.shape), name, dim))
    assert differ == []


def test_nonzero_results_and_their_gradients_are_untouched():
    x = G.tensor([[0.0, -0.0, 2.0], [-0.0, 3.0, -1.0]], requires_grad=True)
    out = x.amax(0)
    assert out.tolist() == [0.0, 3.0, 2.0]
    out.sum().backward()
    # the column of tied zeros splits its gradient between them, as PyTorch's does
    assert x.grad.tolist() == [[0.5, 0.0, 1.0], [0.5, 1.0, 0.0]]
