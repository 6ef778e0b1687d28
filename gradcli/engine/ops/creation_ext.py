"""Creation functions beyond creation.py that tutorials reach for (torch.logspace).

Computed with numpy at full accuracy; PyTorch's kernel takes the exponents from both ends
toward the middle (as linspace does), so the same split is kept here."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..limits import check_elements
from .creation import _finish, _num, _placed
from .registry import public


@public("torch.logspace")
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """base ** e for steps exponents e evenly spaced from start to end."""
    _placed(device)
    start, end = _num(start), _num(end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    check_elements((steps,))
    target = (dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()).np
    if steps == 1:
        exponents = np.array([start], dtype=np.float64)
    else:
        idx = np.arange(steps, dtype=np.float64)
        step = (end - start) / (steps - 1)
        exponents = np.where(idx < steps // 2, start + step * idx,
                             end - step * (steps - 1 - idx))
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.power(float(base), exponents)
        arr = values.astype(target) if target.kind in "fV" else np.trunc(values).astype(target)
    return _finish(arr, requires_grad)
