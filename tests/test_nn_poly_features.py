"""The polynomial features the tutorials fit (x.unsqueeze(-1).pow(tensor([1, 2, 3])), x ** p)
in float32 carry PyTorch's bits where its pow runs the scalar loop (glibc's powf: short or
broadcast innermost dimensions, and every vector's tail), and agree within torch.testing's
tolerances where it runs SLEEF's vector code. numpy's own float32 power (an SVML kernel on
AVX-512 CPUs) missed PyTorch's bits on 7% of the features and changed with the CPU."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _both(build):
    ours = build(gt)
    theirs = build(torch).numpy()
    return np.asarray(ours.tolist(), theirs.dtype), theirs


def _points(m, n=2000):
    return m.linspace(-math.pi, math.pi, n)


@pytest.mark.parametrize("n", [2000, 37])
def test_broadcast_powers_are_pytorchs_bits(n):
    ours, theirs = _both(lambda m: _points(m, n).unsqueeze(-1).pow(m.tensor([1, 2, 3])))
    assert ours.dtype == theirs.dtype == np.float32
    assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("n", [7, 15])
def test_scalar_exponent_in_the_scalar_loop_is_raised_to_the_double(n):
    # PyTorch's scalar loop raises a float32 base to the double 1.3, not to float32(1.3)
    ours, theirs = _both(lambda m: _points(m, n).abs() ** 1.3)
    assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("n", [1999, 2000])
def test_vector_powers_agree_within_tolerance_and_tails_exactly(n):
    for build in (lambda m: (_points(m, n).abs() + 0.1) ** 2.7,
                  lambda m: _points(m, n).pow(m.full((n,), 3.0)),
                  lambda m: 2.5 ** _points(m, n)):
        ours, theirs = _both(build)
        torch.testing.assert_close(torch.from_numpy(ours), torch.from_numpy(theirs))
        tail = n % 16
        if tail:
            assert np.array_equal(ours[n - tail:], theirs[n - tail:])


def test_float64_powers_unchanged():
    ours, theirs = _both(lambda m: _points(m).double().abs().unsqueeze(-1).pow(m.tensor([1, 2, 3])) ** 1.3)
    assert ours.dtype == theirs.dtype == np.float64
    torch.testing.assert_close(torch.from_numpy(ours), torch.from_numpy(theirs))
