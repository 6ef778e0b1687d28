"""torch.quasirandom.SobolEngine: (scrambled) Sobol sequences, PyTorch's draws bit for bit.

The direction numbers are Joe and Kuo's (search criterion D(6), 21201 dimensions), the
table PyTorch compiles in; scipy ships the same table (stats/_sobol_direction_numbers.npz),
read here on first use. The state is built, advanced (one XOR of the direction number of
the lowest zero bit of the point's index per point) and scrambled (Owen's linear matrix
scrambling from randint draws of the engine's generator, plus a random digital shift) as
PyTorch's kernels do, so seeded scrambled points match PyTorch's exactly.
"""

from __future__ import annotations

import numpy as np

import gradcli.torch as _torch
from gradcli.engine.tensor import make as _make

__all__ = ["SobolEngine"]

_TABLE: list = []


def _direction_table():
    """(poly, vinit) of Joe and Kuo's table, loaded once."""
    if not _TABLE:
        import importlib.util
        import os

        spec = importlib.util.find_spec("scipy")  # (the file only: importing scipy.stats costs ~2 s)
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError("torch.quasirandom.SobolEngine needs scipy's table of Sobol "
                               "direction numbers: install scipy")
        path = os.path.join(spec.submodule_search_locations[0], "stats",
                            "_sobol_direction_numbers.npz")
        with np.load(path) as table:
            _TABLE.extend((table["poly"], table["vinit"]))
    return _TABLE


def _initial_state(dimension: int, maxbit: int) -> np.ndarray:
    """The direction numbers v[d, j] (as integers scaled by 2**(maxbit - 1 - j)): the first
    m of each dimension from the table, the rest by the recurrence of its primitive
    polynomial of degree m (Bratley and Fox), all dimensions at once."""
    state = np.zeros((dimension, maxbit), dtype=np.int64)
    state[0, :] = 1
    if dimension > 1:
        poly, vinit = _direction_table()
        p = poly[1:dimension].astype(np.int64)
        degree = np.floor(np.log2(p)).astype(np.int64)
        degree += (1 << (degree + 1)) <= p  # (exact bit length - 1 where log2 rounds down)
        degree -= (1 << degree) > p
        rows = state[1:]
        width = vinit.shape[1]
        first = np.arange(maxbit)[None, :] < degree[:, None]
        rows[:, :width][first[:, :width]] = vinit[1:dimension][first[:, :width]]
        for j in range(maxbit):
            todo = j >= degree
            if not todo.any():
                continue
            newv = rows[np.arange(len(rows)), np.maximum(j - degree, 0)].copy()
            for k in range(int(degree[todo].max())):
                use = todo & (k < degree) & (((p >> np.maximum(degree - 1 - k, 0)) & 1) == 1)
                if use.any():
                    newv[use] ^= rows[use, j - k - 1] << (k + 1)
            rows[todo, j] = newv[todo]
    return state << (maxbit - 1 - np.arange(maxbit))[None, :]


def _parity(x: np.ndarray) -> np.ndarray:
    for shift in (32, 16, 8, 4, 2, 1):
        x = x ^ (x >> shift)
    return x & 1


def _rightmost_zero(n: int) -> int:
    """The index of the lowest zero bit of n."""
    return ((~n) & (n + 1)).bit_length() - 1


class SobolEngine:
    r"""An engine for (scrambled) Sobol sequences of up to 21201 dimensions, drawing the
    same points as PyTorch's (scrambling draws from a generator seeded with `seed`, or the
    default generator without one)."""

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality "
                             f"for SobolEngine is [1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self.sobolstate = _make(_initial_state(dimension, self.MAXBIT))
        if not self.scramble:
            self.shift = _torch.zeros(self.dimension, dtype=_torch.int64)
        else:
            self._scramble()
        self.quasi = self.shift.clone(memory_format=_torch.contiguous_format)
        self._first_point = (self.quasi / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _advance(self, count: int, start: int, dtype):
        """count points after the point of index `start` (None: only move quasi)."""
        state = self.sobolstate._data
        quasi = self.quasi._data.copy()
        rows = None if dtype is None else np.empty((count, self.dimension), dtype=np.int64)
        for i in range(count):
            quasi ^= state[:, _rightmost_zero(start + i)]
            if rows is not None:
                rows[i] = quasi
        self.quasi = _make(quasi)
        if rows is None:
            return None
        npdt = dtype.np
        return _make(rows.astype(npdt) * npdt.type(1.0 / (1 << self.MAXBIT)))

    def draw(self, n: int = 1, out=None, dtype=None):
        """The next n points of the sequence as an (n, dimension) tensor."""
        if dtype is None:
            dtype = _torch.get_default_dtype()
        if self.num_generated == 0:
            if n == 1:
                result = self._first_point.to(dtype)
            else:
                result = self._advance(n - 1, 0, dtype)
                result = _torch.cat((self._first_point.to(dtype), result), dim=-2)
        else:
            result = self._advance(n, self.num_generated - 1, dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m: int, out=None, dtype=None):
        """The next 2**m points; the total drawn must stay a power of 2."""
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError("The balance properties of Sobol' points require "
                             f"n to be a power of 2. {self.num_generated} points have been "
                             f"previously generated, then: n={self.num_generated}+2**{m}="
                             f"{total_n}. If you still want to do this, please use "
                             "'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Back to the first point."""
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skip n points."""
        if self.num_generated == 0:
            self._advance(n - 1, 0, None)
        else:
            self._advance(n, self.num_generated - 1, None)
        self.num_generated += n
        return self

    def _scramble(self):
        """A random digital shift and random lower-triangular bit matrices (unit diagonal)
        applied to every dimension's direction numbers, drawn as PyTorch draws them."""
        g = None
        if self.seed is not None:
            g = _torch.Generator()
            g.manual_seed(self.seed)
        bits = self.MAXBIT
        shift_ints = _torch.randint(2, (self.dimension, bits), generator=g)
        self.shift = _torch.mv(shift_ints, _torch.pow(2, _torch.arange(0, bits)))
        ltm = _torch.randint(2, (self.dimension, bits, bits), generator=g).tril()._data.copy()
        ltm[:, np.arange(bits), np.arange(bits)] = 1
        weights = np.left_shift(1, np.arange(bits - 1, -1, -1, dtype=np.int64))
        rows = (ltm * weights).sum(-1)  # (dimension, bits): each matrix row as an integer
        state = self.sobolstate._data
        scrambled = np.zeros_like(state)
        for p in range(bits):
            scrambled |= _parity(rows[:, p, None] & state) << (bits - 1 - p)
        self.sobolstate = _make(scrambled)

    def __repr__(self):
        fmt_string = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt_string += ["scramble=True"]
        if self.seed is not None:
            fmt_string += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fmt_string) + ")"


SobolEngine.__module__ = "torch.quasirandom"
