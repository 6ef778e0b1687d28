"""PyTorch's CPU random generator, bit for bit: seed 0 at start, `manual_seed(n)` reseeds.

PyTorch's CPU generator is a 32-bit Mersenne Twister (mt19937) seeded with the standard
initialisation from the low 32 bits of the seed; `random()` is one tempered 32-bit output
and `random64()` two of them, the first as the high word. A generator also caches the
second value of a Box-Muller pair (`next_double_normal_sample`, and a float one only
PyTorch's CUDA-era code fills), which its state carries.

The twister itself is numpy's MT19937 (the same recurrence and tempering, in C): its
`random_raw` gives exactly the 32-bit outputs, and its (key, pos) state maps one to one
onto PyTorch's (state, left, next). Everything PyTorch adds on top (seeding, the 64-bit
draw, the normal cache, the 5056-byte state tensor) is here. numpy.random is imported
when a program first draws a number, so a run that draws none (every `gradcli grad`)
does not pay for it.
"""

from __future__ import annotations

import os
import struct

import numpy as np

_N = 624
#: c10's default seed of a new `torch.Generator()`
DEFAULT_SEED = 67280421310721
_U64 = (1 << 64) - 1
_STATE_BYTES = 5056
# the layout of PyTorch's state: initial seed (u64), left (i32), seeded (i32), next (u64),
# state[624] (u64 each), normal_x, normal_y, normal_rho (f64), normal_is_valid (i32),
# padding, next_float_normal_sample (f32), its valid flag (bool), padding
_HEAD = struct.Struct("<QiiQ")
_TAIL = struct.Struct("<dddi4xf?3x")


def _init_key(seed: int) -> np.ndarray:
    """mt19937's standard initialisation of the 624 words from a 32-bit seed."""
    key = [0] * _N
    x = key[0] = seed & 0xFFFFFFFF
    for j in range(1, _N):
        x = key[j] = (1812433253 * (x ^ (x >> 30)) + j) & 0xFFFFFFFF
    return np.array(key, dtype=np.uint32)


class Generator:
    """`torch.Generator`: PyTorch's CPU generator (the default one is `default_generator`)."""

    __slots__ = ("_seed", "_bg", "_np_gen", "_key", "_pos", "_next_double", "_next_float", "__weakref__")

    def __init__(self, device="cpu"):
        if str(device) != "cpu":
            raise RuntimeError(f"gradcli has only CPU generators, not {device!r}")
        self._set_seed(DEFAULT_SEED)

    @property
    def device(self):
        from .size import device

        return device("cpu")

    # ---- seeding and state ----
    def _set_seed(self, seed: int) -> None:
        self._seed = seed
        self._bg = None  # the twister is made from the seed on the first draw
        self._np_gen = None
        self._key = None
        self._pos = _N
        self._next_double = None
        self._next_float = None

    def manual_seed(self, seed) -> Generator:
        self._set_seed(_seed_value(seed))
        return self

    def seed(self) -> int:
        value = int.from_bytes(os.urandom(8), "little") & ((1 << 53) - 1)
        self._set_seed(value)
        return value

    def initial_seed(self) -> int:
        return self._seed

    def _engine(self):
        bg = self._bg
        if bg is None:
            from numpy.random import MT19937

            bg = self._bg = MT19937()
            key = self._key if self._key is not None else _init_key(self._seed)
            bg.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": self._pos}}
            self._key = None
        return bg

    def _words(self) -> tuple[np.ndarray, int]:
        if self._bg is None:
            return (self._key if self._key is not None else _init_key(self._seed)), self._pos
        st = self._bg.state["state"]
        return st["key"], int(st["pos"])

    def get_state(self):
        from .tensor import make

        key, pos = self._words()
        # numpy's pos counts the words used since the last twist (624: twist next);
        # PyTorch keeps next (the same count) and left (624 - next + 1; 1: twist next)
        nxt = 0 if pos == _N else pos
        left = 1 if pos == _N else _N - pos + 1
        head = _HEAD.pack(self._seed, left, 1, nxt)
        words = key.astype("<u8").tobytes()
        nd, nf = self._next_double, self._next_float
        tail = _TAIL.pack(0.0, nd if nd is not None else 0.0, 0.0, nd is not None,
                          nf if nf is not None else 0.0, nf is not None)
        data = np.frombuffer(head + words + tail, dtype=np.uint8).copy()
        return make(data)

    def set_state(self, new_state) -> Generator:
        from .tensor import Tensor

        if not isinstance(new_state, Tensor) or new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = np.ascontiguousarray(new_state._data).astype(np.uint8).tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the "
                               f"input RNG state size to be {len(raw)}")
        seed, left, seeded, nxt = _HEAD.unpack_from(raw, 0)
        key = np.frombuffer(raw, dtype="<u8", count=_N, offset=_HEAD.size).astype(np.uint32)
        _, normal_y, _, normal_valid, next_float, float_valid = _TAIL.unpack_from(raw, _HEAD.size + 8 * _N)
        if not (seeded == 1 and 0 < left <= _N and (nxt & 0xFFFFFFFF) <= _N):
            raise RuntimeError("Invalid mt19937 state")
        nxt &= 0xFFFFFFFF
        self._seed = seed
        self._bg = None
        self._np_gen = None
        self._key = key
        # left == 1 means the next draw twists (numpy: pos 624); otherwise words up to
        # `next` are used. PyTorch's own states always have next + left == 625 or left == 1.
        self._pos = _N if left == 1 else nxt
        self._next_double = normal_y if normal_valid else None
        self._next_float = np.float32(next_float) if float_valid else None
        return self

    def clone_state(self):
        return self.get_state()

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {id(self):#x}>"

    # ---- draws ----
    def random32(self, n: int) -> np.ndarray:
        """n tempered 32-bit outputs (PyTorch's `random()`), as uint64."""
        return self._engine().random_raw(n)

    def random32_words(self, n: int) -> np.ndarray:
        """The same n outputs as `random32`, as uint32 (half the memory: for large n).
        numpy's full-range 32-bit integers from MT19937 are its raw outputs, in order."""
        gen = self._np_gen
        if gen is None:
            from numpy.random import Generator as NumpyGenerator

            gen = self._np_gen = NumpyGenerator(self._engine())
        return gen.integers(0, 1 << 32, size=n, dtype=np.uint32)

    def random64(self, n: int) -> np.ndarray:
        """n 64-bit draws (PyTorch's `random64()`: two outputs, the first the high word)."""
        raw = self._engine().random_raw(2 * n)
        hi = raw[0::2]
        hi <<= np.uint64(32)
        hi |= raw[1::2]
        return hi


def _seed_value(seed) -> int:
    """PyTorch's unpacking of a seed: an integer in [-2**63, 2**64); negatives wrap."""
    if isinstance(seed, str):
        raise ValueError(f"invalid literal for int() with base 10: {seed!r}")
    value = int(seed)
    if value < -(1 << 63) or value > _U64:
        raise ValueError("Overflow when unpacking long long")
    return value & _U64


default_generator = Generator()
default_generator.manual_seed(0)


def manual_seed(seed) -> Generator:
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


def generator_of(generator) -> Generator:
    """The generator a sampling function uses: `generator=` or the default one."""
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a torch.Generator for argument 'generator', got {type(generator).__name__}")
    return generator
