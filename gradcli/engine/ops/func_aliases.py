"""torch.vmap: PyTorch's top-level name for torch.func.vmap.

torch.func loads forward-mode AD and the transforms, so it is imported on the first call
(a program that never maps pays nothing at start-up); torch.func.vmap is this same
function, as in PyTorch."""

from __future__ import annotations

from .registry import public


@public("torch.vmap")
def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    from gradcli.torch import func as transforms

    return transforms._vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)
