"""Dropout: F.dropout in training mode, the identity in eval mode or with p=0."""

from __future__ import annotations

from .module import Module

__all__ = ["Dropout"]


def _dropout(input, p: float, training: bool, inplace: bool):
    from gradcli.torch.nn import functional

    try:
        dropout = functional.dropout
    except AttributeError:  # before the rng helper's F.dropout is merged
        raise RuntimeError("torch.nn.functional.dropout is not supported by gradcli") from None
    return dropout(input, p, training, inplace)


class Dropout(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        if not self.training or self.p == 0:
            return input  # what F.dropout returns then (PyTorch: the input itself)
        return _dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
