"""The one seeded generator of a run: seed 0 at start, `manual_seed(n)` reseeds.

gradcli's random numbers are its own (numpy's PCG64), not PyTorch's: the
same seed gives the same numbers on every run and machine.
"""

from __future__ import annotations

import numpy as np

# the generator is made on first use: numpy.random costs ~10 ms to import, which a run
# that draws no random number (every `gradcli grad`) need not pay
_state = {"rng": None, "seed": 0}


class Generator:
    """What manual_seed returns (torch returns its default generator)."""

    def __init__(self, seed: int):
        self._seed = seed

    def initial_seed(self) -> int:
        return self._seed

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {id(self):#x}>"


def manual_seed(seed) -> Generator:
    seed = int(seed)
    _state["rng"] = None  # made from the seed when first used
    _state["seed"] = seed
    return Generator(seed)


seed = manual_seed


def initial_seed() -> int:
    return _state["seed"]


def rng() -> np.random.Generator:
    gen = _state["rng"]
    if gen is None:
        gen = _state["rng"] = np.random.Generator(
            np.random.PCG64(_state["seed"] & 0xFFFFFFFFFFFFFFFF))
    return gen
