"""The generator's heavier parts, loaded on first use: the twister's seeding and
PyTorch's 5056-byte state layout (get_state / set_state)."""

from __future__ import annotations

import struct

import numpy as np

N = 624
STATE_BYTES = 5056
# the layout of PyTorch's state: initial seed (u64), left (i32), seeded (i32), next (u64),
# state[624] (u64 each), normal_x, normal_y, normal_rho (f64), normal_is_valid (i32),
# padding, next_float_normal_sample (f32), its valid flag (bool), padding
_HEAD = struct.Struct("<QiiQ")
_TAIL = struct.Struct("<dddi4xf?3x")


def init_key(seed: int) -> np.ndarray:
    """mt19937's standard initialisation of the 624 words from a 32-bit seed."""
    key = [0] * N
    x = key[0] = seed & 0xFFFFFFFF
    for j in range(1, N):
        x = key[j] = (1812433253 * (x ^ (x >> 30)) + j) & 0xFFFFFFFF
    return np.array(key, dtype=np.uint32)


def engine(gen):
    """A numpy MT19937 holding gen's twister state (its key and position)."""
    from numpy.random import MT19937

    bg = MT19937()
    key = gen._key
    if key is None:
        key = gen._key = init_key(gen._seed)  # kept: get_state tells a twist by it
    bg.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": gen._pos}}
    return bg


def get_state(gen):
    from .tensor import make

    if gen._bg is None:
        key, pos = (gen._key if gen._key is not None else init_key(gen._seed)), gen._pos
    else:
        st = gen._bg.state["state"]
        key, pos = st["key"], int(st["pos"])
    # numpy's pos counts the words used since the last twist (624: twist next);
    # PyTorch keeps next (the same count) and left (624 - next + 1; 1: twist next).
    # With a twist next, PyTorch's next is 0 after seeding and 624 after a whole block
    # of drawn words: a key that is no longer the starting one was twisted, then used up.
    nxt = pos
    if pos == N:
        nxt = gen._end_next if gen._bg is None or np.array_equal(key, gen._key) else N
    left = 1 if pos == N else N - pos + 1
    head = _HEAD.pack(gen._seed, left, 1, nxt)
    words = np.asarray(key).astype("<u8").tobytes()
    nd, nf = gen._next_double, gen._next_float
    tail = _TAIL.pack(0.0, nd if nd is not None else 0.0, 0.0, nd is not None,
                      nf if nf is not None else 0.0, nf is not None)
    return make(np.frombuffer(head + words + tail, dtype=np.uint8).copy())


def set_state(gen, new_state) -> None:
    from .tensor import Tensor

    if not isinstance(new_state, Tensor) or new_state._data.dtype != np.uint8:
        raise TypeError("RNG state must be a torch.ByteTensor")
    raw = np.ascontiguousarray(new_state._data).tobytes()
    if len(raw) != STATE_BYTES:
        raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_BYTES} but found the "
                           f"input RNG state size to be {len(raw)}")
    seed, left, seeded, nxt = _HEAD.unpack_from(raw, 0)
    key = np.frombuffer(raw, dtype="<u8", count=N, offset=_HEAD.size).astype(np.uint32)
    _, normal_y, _, normal_valid, next_float, float_valid = _TAIL.unpack_from(raw, _HEAD.size + 8 * N)
    nxt &= 0xFFFFFFFF
    if not (seeded == 1 and 0 < left <= N and nxt <= N):
        raise RuntimeError("Invalid mt19937 state")
    gen._seed = seed
    gen._bg = None
    gen._np_legacy = None
    gen._ahead = None
    gen._state_view = None
    gen._key = key
    # left == 1: the next draw twists (numpy: pos 624); otherwise the words up to `next`
    # are used (PyTorch's own states have next + left == 625 then)
    gen._pos = N if left == 1 else nxt
    gen._end_next = nxt if left == 1 else 0
    gen._next_double = normal_y if normal_valid else None
    gen._next_float = np.float32(next_float) if float_valid else None
