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

The random ops whose tensor argument is a parameter of the distribution (bernoulli's
probabilities, normal's mean and std, poisson's rates, multinomial's weights) have no
"same" batching rule in PyTorch: with a batched parameter they raise. gradcli sees a
batched parameter as one whose values differ between slices (one equal in every slice
passes, as an unbatched one does). rrelu has no batching rule at all.
"""

from __future__ import annotations

import threading

import numpy as np

ERROR = ("vmap: called random operation while in randomness error mode. Please either use "
         "the 'same' or 'different' randomness flags on vmap or perform the randomness "
         "operation out of vmap")
# samplers whose second argument is the number of values drawn
_COUNTED = ("uniform01_f32", "uniform01_f64", "uniform", "normal_scalar", "normal",
            "random_from_to", "random_default", "bernoulli_scalar", "exponential",
            "geometric", "cauchy", "log_normal")
_OTHERS = ("randperm", "bernoulli_tensor")
SAME_BATCHED = ("Vmap does not currently support same randomness with a batched tensor input. "
                "Please file an issue with functorch")
# (namespace, attribute, the positions of the distribution's tensor parameters: None for
# every tensor argument) of the random ops PyTorch refuses a batched parameter under "same"
_PARAMETERISED = (("torch", "bernoulli", None), ("torch", "normal", None),
                  ("torch", "poisson", None), ("torch", "multinomial", None),
                  ("torch", "binomial", None), ("Tensor", "bernoulli", None),
                  ("Tensor", "multinomial", None), ("Tensor", "bernoulli_", (1, "p")))
# ops vmap has no batching rule for (PyTorch names the ATen op)
_UNSUPPORTED = (("torch", "rrelu", "rrelu"), ("torch", "rrelu_", "rrelu_"),
                ("F", "rrelu", "rrelu"), ("F", "rrelu_", "rrelu_"))


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
        self.patched: list = []  # (owner, attribute, original) of the public ops wrapped
        self.operands: list = []  # the first slice's parameters, per parameterised call
        self.op_at = 0
        self.thread = None  # the thread running the vmap (another thread's draws pass)
        self.active = False

    def mine(self) -> bool:
        """Whether a wrapped call belongs to this vmap: made by its thread while it runs
        (the wrappers are module attributes, seen by every thread)."""
        return self.active and threading.get_ident() == self.thread

    def slice(self, index: int) -> None:
        self.index = index
        self.at = 0
        self.op_at = 0

    def __enter__(self):
        from gradcli.engine import rng_sample

        self.module = rng_sample
        self.thread = threading.get_ident()
        self.active = True
        for name in _COUNTED + _OTHERS:
            original = getattr(rng_sample, name)
            self.saved[name] = original
            setattr(rng_sample, name, self._wrapped(name, original))
        import gradcli.torch as torch
        from gradcli.engine.tensor import Tensor

        owners = {"torch": torch, "Tensor": Tensor, "F": torch.nn.functional}
        for owner, attr, aten in _UNSUPPORTED:
            self._patch(owners[owner], attr, _unsupported(aten, self, getattr(owners[owner], attr, None)))
        if self.mode == "different":
            for attr in _IN_PLACE_RANDOM:
                original = Tensor.__dict__.get(attr)
                if original is not None:
                    self._patch(Tensor, attr, _batched_self_only(original, self))
        if self.mode == "same":
            for owner, attr, where in _PARAMETERISED:
                original = getattr(owners[owner], attr, None)
                if original is not None:
                    self._patch(owners[owner], attr, self._checked(original, where))
        return self

    def _patch(self, owner, attr: str, replacement) -> None:
        original = owner.__dict__.get(attr) if isinstance(owner, type) else \
            getattr(owner, attr, None)
        if original is None:
            return
        self.patched.append((owner, attr, original))
        setattr(owner, attr, replacement)

    def __exit__(self, *exc) -> None:
        self.active = False
        for name, original in self.saved.items():
            setattr(self.module, name, original)
        for owner, attr, original in reversed(self.patched):
            setattr(owner, attr, original)
        self.patched.clear()

    def _checked(self, original, where):
        """`original` raising PyTorch's error when a parameter is batched: the k-th
        parameterised call of each slice compares its tensor parameters with the first
        slice's."""
        import gradcli.torch as torch
        from gradcli.engine.tensor import Tensor

        from . import func_batched

        def call(*args, **kwargs):
            if not self.mine():
                return original(*args, **kwargs)
            if where is None:
                params = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
            else:
                pos, key = where
                picked = args[pos] if len(args) > pos else kwargs.get(key)
                params = [picked] if isinstance(picked, Tensor) else []
            if any(func_batched.is_batched(p) for p in params):
                raise RuntimeError(SAME_BATCHED)  # (before any draw, as PyTorch's)
            arrays = [np.array(p._data) for p in params]
            if self.index == 0:
                # (with the generator's state before the draw: PyTorch raises before it)
                self.operands.append((arrays, torch.get_rng_state()))
            else:
                first = self.operands[self.op_at] if self.op_at < len(self.operands) else None
                if first is not None and (len(first[0]) != len(arrays) or any(
                        a.shape != b.shape or not np.array_equal(a, b, equal_nan=True)
                        for a, b in zip(first[0], arrays, strict=False))):
                    torch.set_rng_state(first[1])
                    raise RuntimeError(SAME_BATCHED)
            self.op_at += 1
            return original(*args, **kwargs)

        return call

    def _wrapped(self, name: str, original):
        def sampler(gen, *args):
            if self.depth or not self.mine():  # (a draw inside a sampler: part of that random op)
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


# Tensor's in-place random fills: under "different" the tensor filled must be batched
_IN_PLACE_RANDOM = ("random_", "normal_", "bernoulli_", "cauchy_", "exponential_",
                    "geometric_", "log_normal_", "uniform_")
DIFFERENT_UNBATCHED = ("vmap: Cannot ask for different inplace randomness on an unbatched "
                       "tensor. This will appear like same randomness. If this is necessary "
                       "for your usage, please file an issue with functorch.")


def _batched_self_only(original, owner):
    from . import func_batched

    def fill(self, *args, **kwargs):
        if not owner.mine():
            return original(self, *args, **kwargs)
        mine = func_batched._depth(self)
        if any(func_batched._depth(a) > mine for a in (*args, *kwargs.values())):
            name = original.__name__.rstrip("_")
            raise RuntimeError(func_batched.INPLACE.replace("inplace arithmetic",
                                                            f"inplace {name}"))
        # (gradcli's own ops fill fresh tensors of their own, dropout's mask: not refused)
        if not mine and func_batched._called_by_user(1):
            raise RuntimeError(DIFFERENT_UNBATCHED)
        return original(self, *args, **kwargs)

    fill.__name__ = fill.__qualname__ = original.__name__
    return fill


def _unsupported(aten: str, owner, original):
    def call(*args, **kwargs):
        if not owner.mine() and original is not None:
            return original(*args, **kwargs)
        raise RuntimeError(f"vmap: we do not yet support aten::{aten}. Please file an issue")

    return call


def _below(u: np.ndarray, p: np.ndarray) -> np.ndarray:
    """bernoulli_tensor's comparison for given uniforms."""
    if p.dtype == np.float64:
        return u < p.ravel()
    return u < p.ravel().astype(np.float32)
