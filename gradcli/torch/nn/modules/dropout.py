"""Dropout: F.dropout in training mode, the identity in eval mode or with p=0; Dropout1d/2d/3d
(whole channels at once) hand every call to F.dropout1d/2d/3d, as PyTorch's modules do."""

from __future__ import annotations

from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d"]


def _dropout(input, p: float, training: bool, inplace: bool, name: str = "dropout"):
    from gradcli.torch.nn import functional

    try:
        dropout = getattr(functional, name)
    except AttributeError:  # before the rng helper's F.dropout is merged
        raise RuntimeError(f"torch.nn.functional.{name} is not supported by gradcli") from None
    return dropout(input, p, training, inplace)


class _DropoutNd(Module):
    """What every dropout module holds (PyTorch's _DropoutNd): p, checked, and inplace."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    def forward(self, input):
        if not self.training or self.p == 0:
            return input  # what F.dropout returns then (PyTorch: the input itself)
        return _dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    def forward(self, input):
        return _dropout(input, self.p, self.training, self.inplace, "dropout1d")


class Dropout2d(_DropoutNd):
    def forward(self, input):
        return _dropout(input, self.p, self.training, self.inplace, "dropout2d")


class Dropout3d(_DropoutNd):
    def forward(self, input):
        return _dropout(input, self.p, self.training, self.inplace, "dropout3d")
