"""Small float32 draws served from words drawn ahead (rng_sample._ahead_words, normals_ahead)
stay PyTorch's draws and PyTorch's generator state, however other draws, reseeding and
set_state interleave with them; and get_state's `next` after a whole block of words."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from rng_oracle import torch_with_vector_kernels

import gradcli.torch as gt
from gradcli.engine import rng_sample

torch = torch_with_vector_kernels()


def _same(ours, theirs):
    a = theirs.detach().numpy()
    assert a.dtype == ours._data.dtype and a.shape == ours._data.shape
    assert a.tobytes() == np.ascontiguousarray(ours._data).tobytes()


def _same_state(ours, theirs):
    assert ours._data.tobytes() == theirs.numpy().tobytes()


# each step: (name, argument); both libraries run it on their default generator
STEPS = {
    "randn": lambda T, n: T.randn(n),
    "randn2d": lambda T, n: T.randn(2, n // 2),
    "rand": lambda T, n: T.rand(n),
    "randint": lambda T, n: T.randint(0, 1000, (n,)),
    "randn64": lambda T, n: T.randn(n, dtype=T.float64),
    "normal_": lambda T, n: T.empty(n).normal_(1.5, 0.25),
    "normal": lambda T, n: T.normal(-2.0, 3.0, (n,)),
    "dropout": lambda T, n: T.nn.functional.dropout(T.ones(n), 0.5),
}


@pytest.mark.parametrize("seed", [0, 3, 2**40 + 1])
@pytest.mark.parametrize("offset", [0, 1, 5, 16])
def test_interleaved_draws(seed, offset):
    torch.manual_seed(seed)
    gt.manual_seed(seed)
    if offset:  # start off the 16-word grid of a fresh twist
        _same(gt.rand(offset), torch.rand(offset))
    plan = ([("randn", 16)] * 3 + [("rand", 3), ("randn", 32), ("randn2d", 48)] + [("randn", 16)] * 40
            + [("randint", 7), ("randn", 16), ("normal_", 16), ("normal", 32), ("randn64", 16),
               ("randn", 256), ("randn", 16), ("dropout", 16), ("randn", 17), ("randn", 16),
               ("randn", 3), ("randn", 16)] + [("randn", 64)] * 12)
    for step, (name, n) in enumerate(plan):
        _same(STEPS[name](gt, n), STEPS[name](torch, n))
        if step % 7 == 0:
            _same_state(gt.get_rng_state(), torch.get_rng_state())
    _same_state(gt.get_rng_state(), torch.get_rng_state())


def test_state_saved_and_restored_between_cached_draws():
    torch.manual_seed(11)
    gt.manual_seed(11)
    for _ in range(3):
        _same(gt.randn(16), torch.randn(16))
    saved_g, saved_t = gt.get_rng_state(), torch.get_rng_state()
    _same_state(saved_g, saved_t)
    first = [gt.randn(16) for _ in range(5)]
    gt.set_rng_state(saved_g)
    torch.set_rng_state(saved_t)
    for ours in first:
        theirs = torch.randn(16)
        _same(gt.randn(16), theirs)
        _same(ours, theirs)
    gt.manual_seed(11)
    torch.manual_seed(11)
    _same(gt.randn(16), torch.randn(16))


def test_generator_objects_keep_their_own_blocks():
    g1, t1 = gt.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    g2, t2 = gt.Generator().manual_seed(6), torch.Generator().manual_seed(6)
    for i in range(90):
        _same(gt.randn(16, generator=g1), torch.randn(16, generator=t1))
        if i % 3 == 0:
            _same(gt.randn(16, generator=g2), torch.randn(16, generator=t2))
            _same(gt.randn(16), torch.randn(16))
        _same_state(g1.get_state(), t1.get_state())
    _same_state(g2.get_state(), t2.get_state())


def test_the_shortcut_is_taken():
    """randn(16) and rand(16) draw the next words ahead, once for many draws, more while
    they are all used; the normals are made once for all blocks ahead; another draw drops
    them and the next look-ahead starts small again."""
    gen = gt.Generator().manual_seed(1)
    gt.randn(16, generator=gen)
    first = rng_sample._AHEAD_FIRST
    assert gen._ahead is not None and gen._ahead.shape == (first,)
    assert gen._ahead_normals.shape == (first,) and gen._ahead_i == 16
    kept = gen._ahead
    gt.randn(32, generator=gen)
    assert gen._ahead is kept and gen._ahead_i == 48
    gt.rand(16, generator=gen)
    assert gen._ahead is kept and gen._ahead_i == 64
    normals = gen._ahead_normals
    gt.randn(16, generator=gen)
    assert gen._ahead_normals is normals and gen._ahead_i == 80
    gt.rand(3, generator=gen)  # off the grid: the next normal draw draws ahead again
    assert gen._ahead is kept and gen._ahead_i == 83
    gt.randn(16, generator=gen)
    assert gen._ahead is not kept and gen._ahead_i == 16
    sizes = set()
    for _ in range(1100):
        gt.randn(16, generator=gen)
        sizes.add(gen._ahead.shape[0])
    assert sizes == {first * 2 ** k for k in range(8) if first * 2 ** k <= rng_sample._AHEAD_MOST}
    gt.randint(0, 5, (1,), generator=gen)
    assert gen._ahead is None
    gt.rand(5, generator=gen)
    assert gen._ahead.shape == (first,) and gen._ahead_normals is None


@pytest.mark.parametrize("seed", [0, 9])
def test_small_uniform_draws_across_twists(seed):
    """Draws served ahead cross the twister's 624-word blocks (a real draw moves it there)."""
    g, t = gt.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
    for i in range(700):
        n = (i * 7) % 40 + 1
        _same(gt.rand(n, generator=g), torch.rand(n, generator=t))
        if i % 50 == 0:
            _same(gt.randn(16, generator=g), torch.randn(16, generator=t))
            _same_state(g.get_state(), t.get_state())
    _same_state(g.get_state(), t.get_state())


@pytest.mark.parametrize("words", [0, 1, 623, 624, 625, 1248])
def test_state_next_after_whole_blocks(words):
    """With a twist due, PyTorch's `next` is 0 after seeding and 624 once a block is used."""
    g, t = gt.Generator().manual_seed(7), torch.Generator().manual_seed(7)
    if words:
        _same(gt.rand(words, generator=g), torch.rand(words, generator=t))
    _same_state(g.get_state(), t.get_state())
    copy = gt.Generator()
    copy.set_state(gt.tensor(t.get_state().numpy()))
    _same_state(copy.get_state(), t.get_state())
    _same(gt.rand(5, generator=copy), torch.rand(5, generator=t))


def test_state_next_field():
    g = gt.Generator().manual_seed(7)
    gt.rand(624, generator=g)
    seed, left, seeded, nxt = struct.unpack_from("<QiiQ", g.get_state()._data.tobytes())
    assert (seed, left, seeded, nxt) == (7, 1, 1, 624)


def test_fallback_when_layout_is_unknown(monkeypatch):
    """Without the twister's position (an unknown numpy layout) draws take the plain path."""
    monkeypatch.setattr(rng_sample, "_LAYOUT_OK", [False])
    g, t = gt.Generator().manual_seed(9), torch.Generator().manual_seed(9)
    for _ in range(5):
        _same(gt.randn(16, generator=g), torch.randn(16, generator=t))
    assert g._ahead is None
    _same_state(g.get_state(), t.get_state())
