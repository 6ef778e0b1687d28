"""vmap's `randomness=` over gradcli's generator, with PyTorch's draws.

gradcli's vmap calls the function once per slice; PyTorch's runs it once over the
batched tensors. So a random op's batching rule decides what each slice sees, and it is
reproduced here at the level of the samplers every random op of gradcli goes through
(engine/rng_sample.py), which are wrapped while a vmap with randomness runs:

- "error": any draw raises PyTorch's error.
- "same": PyTorch draws once, unbatched, and every slice sees that draw: the first slice
  draws, the others see copies of its draws, call by call; the generator ends where one
  unbatched draw leaves it.
- "different": PyTorch draws once for the whole batch (randn(3) under a vmap of 4 is
  randn(4, 3)): the first slice makes each call for all slices at once and keeps its own
  share; the k-th call of slice b gets share b of the first slice's k-th call. The values
  are PyTorch's bit for bit as long as every slice makes the same calls (no control flow
  on the values); randperm has no batched form and draws per slice (as PyTorch's loop).
  bernoulli with a tensor p draws its uniforms for the whole batch and compares each
  slice's share with that slice's p.

Draws made inside a sampler (normal's uniforms) pass through: only the outermost call is
a random op's.
"""

from __future__ import annotations

import numpy as np

ERROR = ("vmap: called random operation while in randomness error mode. Please either use "
         "the 'same' or 'different' randomness flags on vmap or perform the randomness "
         "operation out of vmap")
# samplers whose second argument is the number of values drawn
_COUNTED = ("uniform01_f32", "uniform01_f64", "uniform", "normal_scalar", "normal",
            "random_from_to", "random_default", "bernoulli_scalar", "exponential",
            "geometric", "cauchy", "log_normal")
_OTHERS = ("randperm", "bernoulli_tensor")


class Randomness:
    """Entered around a vmap's loop (`mode`, `size` slices); `slice(b)` before each."""

    def __init__(self, mode: str, size: int):
        self.mode = mode
        self.size = size
        self.index = 0
        self.calls: list = []  # the first slice's draws, per call (mode "same"/"different")
        self.at = 0  # the next call of the current slice
        self.depth = 0
        self.saved: dict = {}

    def slice(self, index: int) -> None:
        self.index = index
        self.at = 0

    def __enter__(self):
        from gradcli.engine import rng_sample

        self.module = rng_sample
        for name in _COUNTED + _OTHERS:
            original = getattr(rng_sample, name)
            self.saved[name] = original
            setattr(rng_sample, name, self._wrapped(name, original))
        return self

    def __exit__(self, *exc) -> None:
        for name, original in self.saved.items():
            setattr(self.module, name, original)

    def _wrapped(self, name: str, original):
        def sampler(gen, *args):
            if self.depth:  # (a draw inside a sampler: part of that random op)
                return original(gen, *args)
            if self.mode == "error":
                raise RuntimeError(ERROR)
            self.depth += 1
            try:
                return self._draw(name, original, gen, args)
            finally:
                self.depth -= 1

        return sampler

    def _draw(self, name: str, original, gen, args):
        if self.index == 0:
            if self.mode == "same" or name == "randperm":
                out = original(gen, *args)
                self.calls.append((name, out))
                return out.copy() if name != "randperm" else out
            if name == "bernoulli_tensor":
                p = args[0]
                u = self.saved["uniform01_f64" if p.dtype == np.float64 else "uniform01_f32"](
                    gen, p.size * self.size)
                self.calls.append((name, u))
                return _below(u[:p.size], p)
            n = args[0]
            out = original(gen, n * self.size, *args[1:])
            self.calls.append((name, out))
            return out[:n].copy()
        call = self.calls[self.at] if self.at < len(self.calls) else None
        self.at += 1
        if call is None or call[0] != name:
            return original(gen, *args)  # (another sequence of calls: drawn afresh)
        held = call[1]
        if name == "randperm" and self.mode == "different":
            return original(gen, *args)
        if self.mode == "same":
            return held.copy()
        if name == "bernoulli_tensor":
            p = args[0]
            return _below(held[self.index * p.size:(self.index + 1) * p.size], p)
        n = args[0]
        return held[self.index * n:(self.index + 1) * n].copy()


def _below(u: np.ndarray, p: np.ndarray) -> np.ndarray:
    """bernoulli_tensor's comparison for given uniforms."""
    if p.dtype == np.float64:
        return u < p.ravel()
    return u < p.ravel().astype(np.float32)
