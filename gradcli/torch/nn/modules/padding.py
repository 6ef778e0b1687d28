"""The padding modules: Zero-, Constant-, Reflection-, Replication- and CircularPad 1d/2d/3d.
Each class has its own __init__ (as PyTorch's), so a wrong call names it. Each stores its padding as the full (left, right, top, bottom, front, back) tuple PyTorch
prints and calls F.pad with its mode."""

from __future__ import annotations

from gradcli.torch.nn import functional as F

from .layers import _ntuple
from .module import Module

__all__ = [f"{kind}Pad{n}d" for kind in ("Zero", "Constant", "Reflection", "Replication",
                                         "Circular") for n in (1, 2, 3)]


class _PadNd(Module):
    _dims = 1
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2 * self._dims)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _dims = 1

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding, value)


class ConstantPad2d(_ConstantPadNd):
    _dims = 2

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding, value)


class ConstantPad3d(_ConstantPadNd):
    _dims = 3

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding, value)


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    _dims, _mode = 1, "reflect"

    def __init__(self, padding) -> None:
        super().__init__(padding)


class ReflectionPad2d(_PadNd):
    _dims, _mode = 2, "reflect"

    def __init__(self, padding) -> None:
        super().__init__(padding)


class ReflectionPad3d(_PadNd):
    _dims, _mode = 3, "reflect"

    def __init__(self, padding) -> None:
        super().__init__(padding)


class ReplicationPad1d(_PadNd):
    _dims, _mode = 1, "replicate"

    def __init__(self, padding) -> None:
        super().__init__(padding)


class ReplicationPad2d(_PadNd):
    _dims, _mode = 2, "replicate"

    def __init__(self, padding) -> None:
        super().__init__(padding)


class ReplicationPad3d(_PadNd):
    _dims, _mode = 3, "replicate"

    def __init__(self, padding) -> None:
        super().__init__(padding)


class _CircularPadNd(_PadNd):
    """Checks the input's rank first (PyTorch's message), then F.pad's circular mode."""

    _mode = "circular"

    def forward(self, input):
        n = self._dims
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    _dims = 1

    def __init__(self, padding) -> None:
        super().__init__(padding)


class CircularPad2d(_CircularPadNd):
    _dims = 2

    def __init__(self, padding) -> None:
        super().__init__(padding)


class CircularPad3d(_CircularPadNd):
    _dims = 3

    def __init__(self, padding) -> None:
        super().__init__(padding)
