"""The new ops whose result or work can be far larger than their inputs check
--max-elements before they allocate or loop (a program cannot exhaust memory or time
through them)."""

from __future__ import annotations

import pytest

import gradcli.torch as gt
from gradcli.engine import limits


@pytest.fixture
def budget():
    limits.MAX_ELEMENTS[0] = 1_000_000
    yield
    limits.MAX_ELEMENTS[0] = None


@pytest.mark.parametrize("call", [
    lambda x: gt.diag_embed(x, offset=100_000),
    lambda x: gt.diag(x, 100_000),
    lambda x: gt.block_diag(*[x.reshape(1, -1)] * 1000),
    lambda x: gt.combinations(gt.arange(2000.0), 3),
    lambda x: gt.mvlgamma(x + 10**7, 10**7),
])
def test_refused_before_allocating(budget, call):
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(limits.AllocationLimitError, match="exceeds the limit"):
        call(x)


def test_within_budget_still_runs(budget):
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    assert gt.diag_embed(x, offset=3).shape == (5, 5)
    assert gt.combinations(gt.arange(5.0), 2).shape == (10, 2)
