"""PyTorch's checks of an input with an empty dimension, for the kernels that refuse one.

Pools, paddings, im2col/col2im and grid_sample reject an input whose non-batch dims
include a 0 before they compute anything; each kernel family has its own wording, kept
here so the op modules share one copy. Pure functions over shapes: no engine imports.
"""
from __future__ import annotations


def _dims(shape) -> str:
    return "[" + ", ".join(str(int(n)) for n in shape) + "]"


def pool2d_input(shape) -> None:
    """max_pool2d / avg_pool2d (and the 1-d forms that run them): every non-batch dim."""
    if any(n == 0 for n in shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{_dims(shape)}")


def pool3d_input(shape, fname: str) -> None:
    """max_pool3d / avg_pool3d; PyTorch's message names the zero length where it means the
    dimension, so it always says 'non-batch dimension 0'."""
    if any(n == 0 for n in shape[1:]):
        raise RuntimeError(f"{fname}(): Expected input's non-batch dimensions to have positive "
                           f"length, but input has a shape of {_dims(shape)} and non-batch "
                           "dimension 0 has length zero!")


def adaptive_input(shape, fname: str) -> None:
    for d in range(1, len(shape)):
        if shape[d] == 0:
            raise RuntimeError(f"{fname}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_dims(shape)} with dimension "
                               f"{d} being empty")


def padded_input(shape, nd: int) -> None:
    """reflection/replication padding and im2col over nd spatial dims."""
    if any(n == 0 for n in shape[1:]):
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{_dims(shape)}")


def col2im_input(shape) -> None:
    if any(n == 0 for n in shape[1:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{_dims(shape)}")


def grid_sampler_input(shape) -> None:
    for d in range(2, len(shape)):
        if shape[d] == 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {_dims(shape)} with dimension "
                               f"{d} being empty")
