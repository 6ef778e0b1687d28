"""The activation modules beyond activation.py's: each keeps PyTorch's options (same names,
defaults and repr) and hands the call to its torch.nn.functional form, so values, grad_fn
names and errors are the functional's."""

from __future__ import annotations

from gradcli.torch.nn import functional as F

from ._common import new_param
from ._init import nn_init
from .module import Module

__all__ = ["Threshold", "RReLU", "Hardsigmoid", "Hardswish", "Mish", "CELU", "SELU", "GLU",
           "Hardshrink", "Softshrink", "LogSigmoid", "PReLU", "Softsign", "Tanhshrink",
           "Softmin", "Softmax2d"]


def _inplace_tail(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class _InplaceOnly(Module):
    """A module whose one option is `inplace` (shown in the repr only when set, and only by
    the classes that PyTorch gives an extra_repr)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_tail(self.inplace)}"


class RReLU(Module):
    """Random slopes in training (F.rrelu draws them from the global generator, as
    PyTorch's), the mean slope in eval mode."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_tail(self.inplace)}"


class Hardsigmoid(_InplaceOnly):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace)

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Hardswish(_InplaceOnly):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace)

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class Mish(_InplaceOnly):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace)

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class SELU(_InplaceOnly):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace)

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class CELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_tail(self.inplace)}"


class GLU(Module):
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Hardshrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__(lambd)

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class PReLU(Module):
    """One learnable slope (or one per channel), filled with `init` (no random draw)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = new_param((num_parameters,), device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn_init().constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softmin(Module):
    def __init__(self, dim=None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a 3-D or 4-D input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError("Softmax2d: expected input to be 3D or 4D, got "
                             f"{input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)
