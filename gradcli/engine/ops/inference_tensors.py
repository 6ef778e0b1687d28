"""torch.is_inference: the function form of Tensor.is_inference (engine/inference.py
says what an inference tensor is)."""

from __future__ import annotations

from ..tensor import Tensor
from .registry import public

_MISSING = object()


@public("torch.is_inference")
def is_inference(input=_MISSING, *extra, **unknown) -> bool:  # noqa: A002 - PyTorch's keyword
    """Bad arguments get the texts of PyTorch's argument parser (checked in this order:
    a missing tensor, an unknown keyword, a wrong type, one argument too many)."""
    if input is _MISSING:
        raise TypeError('is_inference() missing 1 required positional arguments: "input"')
    if unknown:
        raise TypeError(f"is_inference() got an unexpected keyword argument '{next(iter(unknown))}'")
    if not isinstance(input, Tensor):
        raise TypeError("is_inference(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if extra:
        raise TypeError(f"is_inference() takes 1 positional argument but {1 + len(extra)} "
                        "were given")
    return input.is_inference()
