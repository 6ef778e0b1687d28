"""torch.arange's float32 and float64 values as PyTorch's CPU kernel computes them.

The kernel takes start and step in double and fills the result two vectors at a time, then
element by element for the rest, each thread its own slice (from 32,768 elements, one
slice per thread). An element of the scalar rest is start + step*i (one fused multiply-add,
rounded to the dtype); a vector starting at element i holds base + j*step for its lanes j,
where base is start + step*i rounded to the dtype first. So an element can differ in the
last bit from start + i*step: arange(0, 1, 0.02)[15] is 0.29999998 in float32, not 0.3.
Lane counts as measured against torch 2.13 on an AVX-512 CPU (its range kernels use 8
floats or 4 doubles a vector); with the switch off, plain start + i*step.
"""

from __future__ import annotations

import numpy as np

from .. import kernels as _switch
from ..parallel import get_num_threads
from .fma import fused_minus_product64

_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}
_GRAIN = 32768  # at::internal::GRAIN_SIZE: from this many elements the fill is split


def _fused(start, index, step):
    """start + step*index in float64 with one rounding (a fused multiply-add)."""
    return fused_minus_product64(np.float64(start), -np.asarray(index, np.float64), np.float64(step))


def arange(start, step, n: int, dtype: np.dtype):
    """The n values of arange(start, ..., step) in dtype (float32 or float64) in PyTorch's
    kernel's arithmetic, or None where it is not reproduced (other dtypes, switch off)."""
    dtype = np.dtype(dtype)
    lanes = _LANES.get(dtype)
    if lanes is None or not _switch.EXACT:
        return None
    index = np.arange(n, dtype=np.float64)
    out = _fused(start, index, step).astype(dtype)  # the scalar formula everywhere first
    threads = get_num_threads()
    parts = min(threads, -(-n // _GRAIN)) if n > _GRAIN and threads > 1 else 1
    size = -(-n // parts) if parts else n
    block = 2 * lanes
    for begin in range(0, n, max(size, 1)):
        length = min(n, begin + size) - begin
        vectors = (length // block) * 2  # whole pairs of vectors, from the slice's start
        if not vectors:
            continue
        firsts = begin + lanes * np.arange(vectors)
        base = _fused(start, firsts, step).astype(dtype).astype(np.float64)
        lane = np.arange(lanes, dtype=np.float64)
        filled = fused_minus_product64(base[:, None], -lane[None, :], np.float64(step))
        out[begin:begin + vectors * lanes] = filled.reshape(-1).astype(dtype)
    return out
