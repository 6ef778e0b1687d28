"""Large float32 normal draws, whose uniforms are drawn a segment at a time and transformed
by the engine's threads while the next segment is drawn (kernels/boxmuller.
normal_draw_fill_f32): PyTorch's bits and generator state on one thread and on several,
around every segment and length boundary, and a failure in a helper reaches the caller."""

from __future__ import annotations

import numpy as np
import pytest
from rng_oracle import torch_with_vector_kernels

import gradcli.torch as gt
from gradcli.engine import parallel, rng_sample
from gradcli.engine.kernels import boxmuller

torch = torch_with_vector_kernels()

SEGMENT = boxmuller._SEGMENT_BLOCKS * 16
#: the first size drawn by segments, one segment and a bit, several segments with a
#: partial last one, and lengths that are not multiples of 16 (the tail block)
SIZES = [rng_sample._DRAW_FILL_MIN, rng_sample._DRAW_FILL_MIN - 16, SEGMENT + 16,
         3 * SEGMENT + 5 * 16 + 7, 5 * SEGMENT + 1, 200_003]


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
    # the generator stands where PyTorch's does: the next draws agree
    _same_bits(torch.randn(19), gt.randn(19))
    assert torch.get_rng_state().numpy().tobytes() == gt.get_rng_state().numpy().tobytes()


@pytest.mark.parametrize("n", [SEGMENT * 3 + 16 * 9 + 3])
def test_normal_mean_std_and_half_types(n, threads):
    torch.manual_seed(11)
    gt.manual_seed(11)
    _same_bits(torch.empty(n).normal_(0.25, 3.5), gt.empty(n).normal_(0.25, 3.5))
    # (numpy has no bfloat16: compared as float32, which holds every bfloat16 exactly)
    _same_bits(torch.randn(n, dtype=torch.bfloat16).float(), gt.randn(n, dtype=gt.bfloat16).float())
    _same_bits(torch.randn(n, dtype=torch.float16), gt.randn(n, dtype=gt.float16))


def test_the_threads_give_one_threads_bits():
    draws = []
    for count in (1, 2):
        before = parallel.get_num_threads()
        parallel.set_num_threads(count)
        try:
            gt.manual_seed(4)
            draws.append(gt.randn(10**6 + 9)._data.tobytes())
        finally:
            parallel.set_num_threads(before)
    assert draws[0] == draws[1]


def test_a_failing_segment_is_raised_and_the_helpers_stop(monkeypatch):
    if parallel.POOL.cores < 2:
        pytest.skip("one core: no helper thread to fail")
    before = parallel.get_num_threads()
    parallel.set_num_threads(2)
    real = boxmuller._fill_into
    calls = []

    def failing(uniforms, out, mean, std):
        calls.append(1)
        if len(calls) == 3:
            raise MemoryError("segment 3")
        real(uniforms, out, mean, std)

    monkeypatch.setattr(boxmuller, "_fill_into", failing)
    try:
        with pytest.raises(MemoryError, match="segment 3"):
            gt.randn(8 * SEGMENT)
    finally:
        parallel.set_num_threads(before)
    monkeypatch.setattr(boxmuller, "_fill_into", real)
    # the pool still serves: a later draw is PyTorch's
    torch.manual_seed(2)
    gt.manual_seed(2)
    _same_bits(torch.randn(4 * SEGMENT), gt.randn(4 * SEGMENT))
