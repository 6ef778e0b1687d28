"""Conv3d and ConvTranspose1d/2d/3d: options, parameters and repr as PyTorch keeps them.
The transposed layers hold their weight as (in_channels, out_channels // groups, *kernel),
so the seeded Kaiming draw (fan-in from that shape) gives PyTorch's numbers; the arithmetic
is F.conv3d / F.conv_transpose1d/2d/3d."""

from __future__ import annotations

from gradcli.torch.nn import functional as F

from .layers import _ConvNd

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
    """_ConvNd with transposed=True (the weight in x out/groups), zeros padding only."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, transposed=True,
                         output_padding=output_padding)

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
