"""Seeded draws of bfloat16 and float16 tensors are PyTorch's bit for bit: rand/uniform_
(a value that rounds up to the top of the range becomes the bottom, as PyTorch keeps
[from, to)), randn/normal_ (whole float32 blocks of 16, the last ending the tensor, cast),
and the generator's state after them."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402


def _values(t) -> list:
    return t.float().tolist()


DRAWS = {
    "rand": lambda L, dt, n: L.rand(n, dtype=dt),
    "randn": lambda L, dt, n: L.randn(n, dtype=dt),
    "uniform_": lambda L, dt, n: L.empty(n, dtype=dt).uniform_(-2, 3),
    "normal_": lambda L, dt, n: L.empty(n, dtype=dt).normal_(1.5, 2.0),
    "randn_2d": lambda L, dt, n: L.randn(2, n, dtype=dt),
}


@pytest.mark.parametrize("n", [5, 16, 17, 40, 1000, 4099])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("draw", list(DRAWS))
def test_seeded_draws_as_pytorch(draw, dtype, n):
    results = []
    for lib in (torch, G):
        lib.manual_seed(11)
        values = DRAWS[draw](lib, getattr(lib, dtype), n)
        after = lib.randn(3)  # the generator's state after the draw
        assert str(values.dtype) == f"torch.{dtype}"
        results.append((_values(values), after.tolist()))
    assert results[1] == results[0]


def test_rand_never_reaches_one():
    G.manual_seed(3)
    values = np.asarray(G.rand(20000, dtype=G.bfloat16).float().tolist())
    assert values.max() < 1.0
    torch.manual_seed(3)
    assert values.tolist() == torch.rand(20000, dtype=torch.bfloat16).float().tolist()
