"""Large float32 normal draws, whose Box-Muller blocks are shared over the engine's threads
(kernels/boxmuller._fill_split): PyTorch's bits and generator state on one thread and on
two, at the split threshold and past it, with a tail block, mean/std and the half types;
and a failing piece on a helper thread reaches the caller."""

from __future__ import annotations

import numpy as np
import pytest
from rng_oracle import torch_with_vector_kernels

import gradcli.torch as gt
from gradcli.engine import parallel
from gradcli.engine.kernels import boxmuller

torch = torch_with_vector_kernels()

SPLIT = boxmuller._SPLIT_BLOCKS * 16
SIZES = [SPLIT - 16, SPLIT, SPLIT + 16 * 3 + 5, 3 * SPLIT + 1, 200_003]


@pytest.fixture(params=[1, 2], ids=["one-thread", "two-threads"])
def threads(request):
    before = parallel.get_num_threads()
    parallel.set_num_threads(request.param)
    yield request.param
    parallel.set_num_threads(before)


def _same_bits(a, b):
    a = a.detach().numpy()
    b = np.ascontiguousarray(b._data)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("n", SIZES)
def test_randn_bits_and_state(n, threads):
    torch.manual_seed(n)
    gt.manual_seed(n)
    _same_bits(torch.randn(n), gt.randn(n))
    _same_bits(torch.randn(19), gt.randn(19))  # the generator stands where PyTorch's does
    assert torch.get_rng_state().numpy().tobytes() == gt.get_rng_state().numpy().tobytes()


def test_normal_mean_std_and_half_types(threads):
    n = 3 * SPLIT + 16 * 9 + 3
    torch.manual_seed(11)
    gt.manual_seed(11)
    _same_bits(torch.empty(n).normal_(0.25, 3.5), gt.empty(n).normal_(0.25, 3.5))
    # (numpy has no bfloat16: compared as float32, which holds every bfloat16 exactly)
    _same_bits(torch.randn(n, dtype=torch.bfloat16).float(), gt.randn(n, dtype=gt.bfloat16).float())
    _same_bits(torch.randn(n, dtype=torch.float16), gt.randn(n, dtype=gt.float16))


def test_a_failing_piece_is_raised_and_the_pool_still_serves(monkeypatch):
    if parallel.POOL.cores < 2:
        pytest.skip("one core: no helper thread to fail")
    before = parallel.get_num_threads()
    parallel.set_num_threads(2)
    real = boxmuller._fill_range

    def failing(blocks, mean, std, lo, hi):
        if lo > 0:  # the helper's piece
            raise MemoryError("helper piece")
        real(blocks, mean, std, lo, hi)

    monkeypatch.setattr(boxmuller, "_fill_range", failing)
    try:
        with pytest.raises(MemoryError, match="helper piece"):
            gt.randn(4 * SPLIT)
    finally:
        monkeypatch.setattr(boxmuller, "_fill_range", real)
        parallel.set_num_threads(before)
    torch.manual_seed(2)
    gt.manual_seed(2)
    _same_bits(torch.randn(4 * SPLIT), gt.randn(4 * SPLIT))
