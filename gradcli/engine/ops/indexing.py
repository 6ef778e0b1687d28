"""Indexing ops: masked_fill, and the gather/scatter/index_* family.

Each op is one `defop` entry plus its entry point declared `@public` under PyTorch's
names; the Tensor methods, in-place variants and facade names follow from that.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, _c_name
from .registry import defop, public, run_op


def _masked_fill_grads(c, g):
    mask = c.meta_tensor(0) if c.meta else None
    if len(c.next_functions) == 1:
        return (g.masked_fill(mask, 0.0),)
    return (g.masked_fill(mask, 0.0) if c.needs(0) else None,
            g.masked_fill(mask.logical_not(), 0.0) if c.needs(1) else None)


MASKED_FILL = defop("masked_fill", "MaskedFillBackward0",
                    lambda a, mask, value: np.where(mask, value, a).astype(a.dtype, copy=False),
                    _masked_fill_grads, "d masked_fill(a, m, v)/da = 1 where not m", save="meta",
                    broadcast=True, torch_call="a.masked_fill(a > 0, 2.5)")
MASKED_FILL_TENSOR = defop(
    "masked_fill_tensor", "MaskedFillBackward1",
    lambda a, value, mask: np.where(mask, value, a).astype(a.dtype, copy=False),
    _masked_fill_grads, "d masked_fill(a, m, v)/da = 1 where not m, d/dv = sum where m",
    save="meta", broadcast=True, torch_call="torch.masked_fill(a, a > 0, b.sum())")


def _check_mask(mask) -> None:
    if mask._data.dtype != np.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_c_name(mask.dtype)}")


def _broadcast_check(mask, a) -> None:
    try:
        np.broadcast_shapes(mask._data.shape, a._data.shape)
    except ValueError:
        from .shape import broadcast_error

        broadcast_error(mask._data.shape, a._data.shape)


@public("torch.masked_fill", "Tensor.masked_fill")
def masked_fill(input, mask, value):
    """masked_fill.Scalar (MaskedFillBackward0) or masked_fill.Tensor (a 0-d value tensor,
    MaskedFillBackward1, whose gradient is the sum over the mask); the mask may broadcast
    the input, whose gradient is then summed back."""
    from .elementwise import _checked_int

    if not isinstance(value, (Tensor, int, float, bool)):
        got = type(value).__name__
        raise TypeError(
            f"masked_fill() received an invalid combination of arguments - got (Tensor, {got}), "
            "but expected one of:\n * (Tensor mask, Tensor value)\n      didn't match because "
            f"some of the arguments have invalid types: (Tensor, !{got}!)\n * (Tensor mask, "
            "Number value)\n      didn't match because some of the arguments have invalid "
            f"types: (Tensor, !{got}!)\n")
    _check_mask(mask)
    _broadcast_check(mask, input)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        return run_op(MASKED_FILL_TENSOR, (input, value), (mask._data,),
                      arrays=(input._data, value._data))
    v = _checked_int(value, input.dtype)
    return run_op(MASKED_FILL, (input,), (mask._data, v))


@public("Tensor.masked_fill_")
def masked_fill_(input, mask, value):
    """In place; allowed on an expanded tensor (one value per location), with PyTorch's warning."""
    from ..tensor import has_internal_overlap

    if has_internal_overlap(input._data):
        import warnings

        warnings.warn(
            "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor "
            "before performing this operation. This also applies to advanced indexing e.g. "
            "tensor[mask] = scalar", UserWarning, stacklevel=2)
    return input._apply_inplace(lambda old: masked_fill(old, mask, value), overlap_ok=True)

