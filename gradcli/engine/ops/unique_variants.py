"""torch.unique_consecutive and the internal unique functions PyTorch exposes
(torch._unique, torch._unique2, torch._VF.unique_dim), over sorting.py's unique.

Like torch.unique, each records a node with no derivative on its values (PyTorch's
UniqueConsecutiveBackward0, UniqueBackward0, Unique2Backward0, UniqueDimBackward0);
the inverse indices and counts are plain int64 tensors.
"""

from __future__ import annotations

import types

import numpy as np

from ..tensor import _wrap_dim, make
from .registry import defop, public, run_unary
from .sorting import _no_derivative, _unique_dim, _unique_flat


def _runs(rows: np.ndarray):
    """Consecutive runs of equal rows (2-d: one row per slice; NaN never equals NaN):
    the index of each run's first row, each row's run number and the run lengths."""
    n = rows.shape[0]
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    change = np.ones(n, dtype=bool)
    if n > 1:
        change[1:] = np.any(rows[1:] != rows[:-1], axis=1)
    starts = np.flatnonzero(change)
    inverse = np.cumsum(change) - 1
    counts = np.diff(np.append(starts, n))
    return starts, inverse.astype(np.int64), counts.astype(np.int64)


def _consecutive(a: np.ndarray, dim):
    if dim is None:
        flat = a.reshape(-1)
        starts, inverse, counts = _runs(flat.reshape(-1, 1))
        return flat[starts], inverse.reshape(a.shape), counts
    moved = np.moveaxis(a, dim, 0)
    starts, inverse, counts = _runs(moved.reshape(moved.shape[0], -1))
    return np.moveaxis(moved[starts], 0, dim), inverse, counts


UNIQUE_CONSECUTIVE = defop(
    "unique_consecutive", "UniqueConsecutiveBackward0",
    lambda a, dim: np.ascontiguousarray(_consecutive(a, dim)[0]),
    _no_derivative("unique_consecutive"), "unique_consecutive has no derivative")
UNIQUE_V1 = defop("unique_v1", "UniqueBackward0", lambda a: _unique_flat(a)[0],
                  _no_derivative("_unique"), "unique has no derivative")
UNIQUE_V2 = defop("unique_v2", "Unique2Backward0", lambda a: _unique_flat(a)[0],
                  _no_derivative("_unique2"), "unique has no derivative")
UNIQUE_DIM_VF = defop("unique_dim_vf", "UniqueDimBackward0",
                      lambda a, dim: _unique_dim(a, dim)[0],
                      _no_derivative("unique_dim"), "unique has no derivative")

_EMPTY = np.zeros(0, np.int64)


@public("torch.unique_consecutive", "Tensor.unique_consecutive")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Each run of equal consecutive values (or slices along `dim`) once, with the run
    number of every element and the run lengths if asked."""
    a = input._data
    d = None if dim is None else _wrap_dim(dim, a.ndim)
    _, inverse, counts = _consecutive(a, d)
    out = [run_unary(UNIQUE_CONSECUTIVE, input, (d,))]
    if return_inverse:
        out.append(make(inverse))
    if return_counts:
        out.append(make(counts))
    return out[0] if len(out) == 1 else tuple(out)


@public("torch._unique")
def _unique(input, sorted=True, return_inverse=False):
    """ATen's _unique: (values, inverse), the inverse empty unless asked."""
    _, inverse, _ = _unique_flat(input._data)
    return run_unary(UNIQUE_V1, input), make(inverse if return_inverse else _EMPTY.copy())


@public("torch._unique2")
def _unique2(input, sorted=True, return_inverse=False, return_counts=False):
    """ATen's _unique2: (values, inverse, counts), the last two empty unless asked."""
    _, inverse, counts = _unique_flat(input._data)
    return (run_unary(UNIQUE_V2, input), make(inverse if return_inverse else _EMPTY.copy()),
            make(counts if return_counts else _EMPTY.copy()))


def _unique_dim_vf(input, dim, sorted=True, return_inverse=False, return_counts=False):
    """torch._VF.unique_dim: (values, inverse, counts); ATen's kernel fills both whatever
    the flags say."""
    d = _wrap_dim(dim, input._data.ndim)
    _, inverse, counts = _unique_dim(input._data, d)
    return run_unary(UNIQUE_DIM_VF, input, (d,)), make(inverse), make(counts)


public("torch._VF")(types.SimpleNamespace(unique_dim=_unique_dim_vf))
