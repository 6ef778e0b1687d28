"""torch.histogramdd: a D-dimensional histogram of the rows of an (..., D) tensor, as
PyTorch computes it: per dimension either `bins` equal bins between the data's (or
`range`'s) extremes (widened by 0.5 on each side when they coincide; 0 to 1 for no data),
or the given edges; each bin holds [edge_i, edge_i+1) except the last, which also holds its
right edge; points outside are dropped. density=True divides by the total and by each
bin's volume.

PyTorch declares no derivative: from an input that requires grad, the histogram and the
edges record NotImplemented nodes that raise on backward with PyTorch's texts.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .linalg_ext import _run_multi
from .registry import PUBLIC, defop, no_derivative, public

HIST_EDGES = defop("_histogramdd_bin_edges", "NotImplemented", None,
                   no_derivative("_histogramdd_bin_edges"),
                   "PyTorch declares no derivative for histogramdd's edges", multi=True)
HIST_COUNTS = defop("_histogramdd_from_bin_cts", "NotImplemented", None,
                    no_derivative("_histogramdd_from_bin_cts"),
                    "PyTorch declares no derivative for histogramdd", multi=True)


class _HistogramDD(tuple):
    __slots__ = ()
    __module__ = "torch.return_types"

    hist = property(lambda self: self[0])
    bin_edges = property(lambda self: self[1])

    def __repr__(self) -> str:
        return f"torch.return_types.histogramdd(\nhist={self[0]!r},\nbin_edges={self[1]!r})"

    __str__ = __repr__


_HistogramDD.__name__ = _HistogramDD.__qualname__ = "histogramdd"


def _edges_of(points: np.ndarray, bins, range_, dtype) -> list:
    dims = points.shape[1]
    if isinstance(bins, Tensor) or (isinstance(bins, (list, tuple)) and bins
                                    and isinstance(bins[0], Tensor)):
        edges = [bins] if isinstance(bins, Tensor) else list(bins)
        if len(edges) != dims:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                               "dimension of the input.")
        return [np.asarray(e._data, dtype) for e in edges]
    counts = [int(bins)] * dims if isinstance(bins, (int, np.integer)) else [int(b) for b in bins]
    if len(counts) != dims:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if range_ is not None and len(range_) != 2 * dims:
        raise RuntimeError("histogramdd: for a 2-dimensional input of shape, range should have "
                           f"{2 * dims} elements, but got {len(range_)}")
    out = []
    for d, count in enumerate(counts):
        if count <= 0:
            raise RuntimeError(f"histogramdd(): bins must be > 0, but got {count} for dimension "
                               f"{d}")
        if range_ is not None:
            low, high = float(range_[2 * d]), float(range_[2 * d + 1])
        elif points.shape[0]:
            low, high = float(points[:, d].min()), float(points[:, d].max())
        else:
            low, high = 0.0, 1.0
        if low > high:
            raise RuntimeError(f"histogramdd(): max must be larger than min, but got min {low} "
                               f"max {high} for dimension {d}")
        if low == high:
            low, high = low - 0.5, high + 0.5
        tensor_dtype = "float32" if dtype == np.float32 else "float64"
        out.append(_linspace(low, high, count + 1, tensor_dtype))
    return out


def _linspace(low, high, steps, dtype_name):
    from .. import dtypes

    return PUBLIC["torch.linspace"](low, high, steps, dtype=getattr(dtypes, dtype_name))._data


@public("torch.histogramdd")
def histogramdd(input: Tensor, bins=10, *, range=None, weight=None, density: bool = False):
    """(hist, bin_edges): the counts (or weights' sums) of input's rows per D-dimensional bin."""
    data = input._data
    if data.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    if data.dtype.kind != "f":
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{_word(input.dtype)}'")
    points = data.reshape(-1, data.shape[-1])
    edges = _edges_of(points, bins, range, data.dtype)
    weights = None
    if weight is not None:
        weights = weight._data.reshape(-1).astype(data.dtype)
    shape = tuple(len(e) - 1 for e in edges)
    hist = np.zeros(shape, data.dtype)
    inside = np.ones(points.shape[0], bool)
    index = []
    for d, e in enumerate(edges):
        x = points[:, d]
        inside &= (x >= e[0]) & (x <= e[-1])
        position = np.searchsorted(e, x, side="right") - 1
        index.append(np.clip(position, 0, len(e) - 2))
    picked = tuple(i[inside] for i in index)
    np.add.at(hist, picked, weights[inside] if weights is not None else 1)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            widths = np.diff(e).astype(data.dtype)
            hist = hist / widths.reshape([-1 if k == d else 1 for k in np.arange(len(edges))])
        hist = hist.astype(data.dtype, copy=False)
    edge_tensors = _run_multi(HIST_EDGES, (input,), (), edges, (True,) * len(edges))
    (counts,) = _run_multi(HIST_COUNTS, (input,), (), [hist], (True,))
    return tuple.__new__(_HistogramDD, (counts, tuple(edge_tensors)))


def _word(dtype) -> str:
    from .aliases_and_config import _scalar_name

    return _scalar_name(dtype)
