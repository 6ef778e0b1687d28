"""PyTorch's CPU random generator, bit for bit: seed 0 at start, `manual_seed(n)` reseeds.

PyTorch's CPU generator is a 32-bit Mersenne Twister (mt19937) seeded with the standard
initialisation from the low 32 bits of the seed; `random()` is one tempered 32-bit output
and `random64()` two of them, the first as the high word. A generator also caches the
second value of a scalar Box-Muller pair, which its state carries.

The twister itself is numpy's MT19937 (the same recurrence and tempering, in C): its raw
outputs are exactly PyTorch's 32-bit draws, and its (key, pos) state maps one to one onto
PyTorch's (state, left, next). PyTorch's own parts (seeding, the 64-bit draw, the normal
cache, the 5056-byte state tensor) are here and in rng_state.py, which loads, with
numpy.random, when a program first draws: a run that draws nothing does not pay for it.
"""

from __future__ import annotations

import numpy as np

#: c10's default seed of a new `torch.Generator()`
DEFAULT_SEED = 67280421310721
_U64 = (1 << 64) - 1


class Generator:
    """`torch.Generator`: PyTorch's CPU generator (the default one is `default_generator`)."""

    __module__ = "torch._C"  # PyTorch's class name: <class 'torch._C.Generator'>
    __slots__ = ("_seed", "_bg", "_np_legacy", "_key", "_pos", "_next_double", "_next_float",
                 "_end_next", "_ahead", "_ahead_i", "_ahead_normals", "_state_view", "__weakref__")

    def __init__(self, device="cpu"):
        if str(device) != "cpu":
            raise RuntimeError(f"gradcli has only CPU generators, not {device!r}")
        self._set_seed(DEFAULT_SEED)

    @property
    def device(self):
        from .size import device

        return device("cpu")

    def _set_seed(self, seed: int) -> None:
        self._seed = seed
        self._bg = None  # the twister is made from the seed on the first draw
        self._np_legacy = None
        self._key = None  # set_state's words (then the twister's starting key)
        self._pos = 624
        self._end_next = 0  # PyTorch's `next` while the starting words wait for a twist
        self._next_double = None
        self._next_float = None
        self._ahead = None  # uniforms of the words ahead (rng_sample._ahead_words)
        self._ahead_i = 0
        self._ahead_normals = None  # their normals, once a normal draw asked
        self._state_view = None

    def manual_seed(self, seed) -> Generator:
        self._set_seed(_seed_value(seed))
        return self

    def seed(self) -> int:
        import os

        value = int.from_bytes(os.urandom(8), "little") & ((1 << 53) - 1)
        self._set_seed(value)
        return value

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        from . import rng_state

        return rng_state.get_state(self)

    def set_state(self, new_state) -> Generator:
        from . import rng_state

        rng_state.set_state(self, new_state)
        return self

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {id(self):#x}>"

    # ---- draws ----
    def _engine(self):
        bg = self._bg
        if bg is None:
            from . import rng_state

            bg = self._bg = rng_state.engine(self)
        return bg

    def random32(self, n: int) -> np.ndarray:
        """n tempered 32-bit outputs (PyTorch's `random()`), as uint64."""
        self._ahead = None  # (every other draw ends what was drawn ahead)
        return (self._bg or self._engine()).random_raw(n)

    def random24_words(self, n: int) -> np.ndarray:
        """The low 24 bits of the next n outputs (what a float32 uniform keeps), as uint32.
        numpy's legacy RandomState draws integers in [0, 2**k) as one output masked to its
        low k bits (its stream is frozen, NEP 19): the masking comes with the draw, and a
        uint32 array takes half the memory of `random32`'s uint64."""
        self._ahead = None
        legacy = self._np_legacy
        if legacy is None:
            from numpy.random import RandomState

            legacy = self._np_legacy = RandomState(self._engine())
        return legacy.randint(0, 1 << 24, size=n, dtype=np.uint32)

    def random64(self, n: int) -> np.ndarray:
        """n 64-bit draws (PyTorch's `random64()`: two outputs, the first the high word)."""
        self._ahead = None
        raw = (self._bg or self._engine()).random_raw(2 * n)
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
