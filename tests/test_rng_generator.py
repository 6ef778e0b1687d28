"""PyTorch's CPU generator, bit for bit: seeding, 32/64-bit draws, state bytes, Generator
objects, fork_rng; and the draws of rand/randn/randint/randperm over seeds and sizes."""

from __future__ import annotations

import numpy as np
import pytest
from rng_oracle import torch_with_vector_kernels

import gradcli.torch as gt

torch = torch_with_vector_kernels()

SIZES = [1, 2, 15, 16, 17, 33, 1000]
SEEDS = [0, 1, 7, 12345, 2**32 + 5, 2**63 + 11]


def _both(seed, fn):
    torch.manual_seed(seed)
    gt.manual_seed(seed)
    return fn(torch), fn(gt)


def _same_bits(a, b):
    a = a.detach().numpy()
    b = b._data
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == np.ascontiguousarray(b).tobytes()


def test_the_three_numbers():
    gt.manual_seed(0)
    assert repr(gt.randn(3)) == "tensor([ 1.5410, -0.2934, -2.1788])"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rand_randn_bits(seed, n, dtype):
    for name in ("rand", "randn"):
        a, b = _both(seed, lambda m, name=name: (getattr(m, name)(n, dtype=getattr(m, dtype)), getattr(m, name)(3, n)))
        _same_bits(a[0], b[0])
        _same_bits(a[1], b[1])


@pytest.mark.parametrize("seed", [0, 3])
def test_randn_million_float32(seed):
    a, b = _both(seed, lambda m: m.randn(10**6 + 5))
    _same_bits(a, b)


@pytest.mark.parametrize("seed", [0, 3])
def test_rand_large_float32(seed):
    """From 4096 elements the uniforms are converted in place (another path)."""
    a, b = _both(seed, lambda m: (m.rand(10**6 + 3), m.rand(4096), m.rand(5000).uniform_(-2, 3)))
    for x, y in zip(a, b):
        _same_bits(x, y)


@pytest.mark.parametrize("seed", [0, 3])
def test_randn_large_float64(seed):
    a, b = _both(seed, lambda m: m.randn(4099 if seed else 10**6 + 7, dtype=m.float64))
    _same_bits(a, b)


def test_state_round_trips_with_pytorch():
    torch.manual_seed(5)
    torch.randn(3)  # leaves a cached normal in the state
    torch.rand(7)
    state = torch.get_rng_state()
    gt.manual_seed(5)
    gt.randn(3)
    gt.rand(7)
    mine = gt.get_rng_state()
    assert repr(mine.dtype) == "torch.uint8" and mine.shape == (5056,)
    assert mine._data.tobytes() == state.numpy().tobytes()
    # PyTorch's bytes into gradcli and on: the same next draws
    gt.set_rng_state(gt.tensor(state.numpy().astype(np.int64)).to(gt.uint8))
    _same_bits(torch.randn(5), gt.randn(5))
    # gradcli's bytes into PyTorch
    st = gt.get_rng_state()
    torch.set_rng_state(torch.from_numpy(st._data.copy()))
    _same_bits(torch.rand(20, dtype=torch.float64), gt.rand(20, dtype=gt.float64))


def test_generator_objects():
    g, h = torch.Generator(), gt.Generator()
    assert g.initial_seed() == h.initial_seed() == 67280421310721
    assert h.manual_seed(42) is h
    g.manual_seed(42)
    _same_bits(torch.randn(20, generator=g), gt.randn(20, generator=h))
    _same_bits(torch.rand(3, generator=g), gt.rand(3, generator=h))
    assert g.get_state().numpy().tobytes() == h.get_state()._data.tobytes()
    # the default generator is untouched by draws from another one
    gt.manual_seed(1)
    gt.randn(4, generator=h)
    torch.manual_seed(1)
    _same_bits(torch.rand(4), gt.rand(4))


def test_seed_values():
    assert gt.manual_seed(-1).initial_seed() == 2**64 - 1
    assert gt.initial_seed() == 2**64 - 1
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        gt.manual_seed(2**64)
    s = gt.seed()
    assert gt.initial_seed() == s


def test_fork_rng():
    gt.manual_seed(3)
    with gt.random.fork_rng():
        gt.randn(100)
    torch.manual_seed(3)
    _same_bits(torch.randn(4), gt.randn(4))


def test_bad_states():
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 5056 but found the input RNG state size to be 10"):
        gt.set_rng_state(gt.zeros(10).to(gt.uint8))
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        gt.set_rng_state(gt.zeros(5056))
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        gt.set_rng_state(gt.zeros(5056).to(gt.uint8))


@pytest.mark.parametrize("seed", [0, 9])
def test_randint_randperm(seed):
    for args in [(10, (7,)), (-5, 5, (3, 4)), (0, 2**40, (5,)), (3, 2**33 + 7, (17,))]:
        a, b = _both(seed, lambda m, args=args: m.randint(*args))
        _same_bits(a, b)
    for n in [0, 1, 2, 5, 100, 5000]:
        a, b = _both(seed, lambda m, n=n: m.randperm(n))
        _same_bits(a, b)


def test_like_and_noncontiguous():
    for name in ("rand_like", "randn_like"):
        a, b = _both(4, lambda m, name=name: getattr(m, name)(m.ones(20, 3).t()))
        _same_bits(a, b)
        a, b = _both(4, lambda m, name=name: (getattr(m, name)(m.ones(5, 2)), m.randint_like(m.ones(2, 3), 10)))
        _same_bits(a[0], b[0])
        _same_bits(a[1], b[1])


def test_errors():
    with pytest.raises(RuntimeError, match=r"random_ expects 'from' to be less than 'to', but got from=5 >= to=3"):
        gt.randint(5, 3, (2,))
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension -1: \[2, -1\]"):
        gt.rand(2, -1)
    with pytest.raises(NotImplementedError, match="\"normal_kernel_cpu\" not implemented for 'Long'"):
        gt.randn(3, dtype=gt.int64)
