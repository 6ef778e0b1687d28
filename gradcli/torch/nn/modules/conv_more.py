"""Conv3d and ConvTranspose1d/2d/3d: options, parameters and repr as PyTorch keeps them.
The transposed layers hold their weight as (in_channels, out_channels // groups, *kernel),
so the seeded Kaiming draw (fan-in from that shape) gives PyTorch's numbers; the arithmetic
is F.conv3d / F.conv_transpose1d/2d/3d."""

from __future__ import annotations

from gradcli.torch.nn import functional as F

from ._common import new_param
from ._init import reset_weight_and_bias
from .layers import _ConvNd, _ntuple
from .module import Module

__all__ = ["Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


class Conv3d(_ConvNd):
    _dims = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        return self._conv(F.conv3d, input)


class _ConvTransposeNd(_ConvNd):
    """Not initialised through _ConvNd.__init__ (that one would make a forward-shaped weight
    and draw it): the same checks, then the transposed weight, then one draw."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {type(self).__name__}')
        Module.__init__(self)
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = True
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = [p for p in reversed(self.padding)
                                                 for _ in range(2)]
        self.weight = new_param((in_channels, out_channels // groups) + self.kernel_size,
                                device, dtype)
        if bias:
            self.bias = new_param((out_channels,), device, dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_weight_and_bias(self)

    def extra_repr(self) -> str:
        n = self._dims
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s

    def _output_padding(self, input, output_size) -> tuple:
        """The output_padding that makes the output `output_size` (PyTorch's checks and
        messages), or the layer's own when no size is asked for."""
        if output_size is None:
            return self.output_padding
        n = self._dims
        batched = input.dim() == n + 2
        lead = 2 if batched else 1
        output_size = list(output_size)
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must "
                             f"have {n} or {lead + n} elements (got {len(output_size)})")
        lows, highs = [], []
        for d in range(n):
            low = ((input.size(d + lead) - 1) * self.stride[d] - 2 * self.padding[d]
                   + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            lows.append(low)
            highs.append(low + self.stride[d] - 1)
        for size, low, high in zip(output_size, lows, highs):
            if size < low or size > high:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {lows} to {highs} (for an input of "
                                 f"{input.size()[2:]})")
        return [size - low for size, low in zip(output_size, lows)]

    def _transposed(self, conv, input, output_size):
        if self.padding_mode != "zeros":
            raise ValueError("Only `zeros` padding mode is supported for "
                             f"{type(self).__name__}")
        output_padding = self._output_padding(input, output_size)
        return conv(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                    self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        return self._transposed(F.conv_transpose1d, input, output_size)


class ConvTranspose2d(_ConvTransposeNd):
    _dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        return self._transposed(F.conv_transpose2d, input, output_size)


class ConvTranspose3d(_ConvTransposeNd):
    _dims = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        return self._transposed(F.conv_transpose3d, input, output_size)
