"""GroupNorm, RMSNorm, LocalResponseNorm and CrossMapLRN2d: options, parameters and reprs as
PyTorch keeps them (the affine parameters start at ones and zeros: no random draw)."""

from __future__ import annotations

from gradcli.torch.nn import functional as F

from ._common import affine_parameters, new_param, reset_affine
from ._init import nn_init
from .module import Module

__all__ = ["GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]


class GroupNorm(Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        affine_parameters(self, (num_channels,), affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """eps=None means the dtype's machine epsilon (F.rms_norm's rule)."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = new_param(self.normalized_shape, device, dtype)
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            nn_init().ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(LocalResponseNorm):
    """The legacy 4-D cross-channel LRN (its default k is the int 1, as the repr shows),
    through its own autograd Function as PyTorch's (grad_fn CrossMapLRN2dBackward)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k=1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        return _cross_map_function().apply(input, self.size, self.alpha, self.beta, self.k)


def _window_sums(values, size: int):
    """scale's running channel sums as PyTorch's legacy loop forms them: channel 0 sums the
    first (size-1)//2 + 1 channels; each next channel adds the one entering on the right
    and drops the one leaving on the left only once past the leading pad."""
    import numpy as np

    channels = values.shape[1]
    lead = int((size - 1) / 2 + 1)
    sums = np.empty_like(values)
    sums[:, 0] = values[:, :min(lead, channels)].sum(axis=1)
    for c in range(1, channels):
        sums[:, c] = sums[:, c - 1]
        if c < channels - lead + 1:
            sums[:, c] += values[:, c + lead - 1]
        if c > lead:
            sums[:, c] -= values[:, c - lead]
    return sums


_FUNCTION = []


def _cross_map_function():
    """The autograd Function, made on first use (gradcli.torch.autograd loads then)."""
    if _FUNCTION:
        return _FUNCTION[0]
    import numpy as np

    import gradcli.torch as torch

    class CrossMapLRN2d(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
            if input.dim() != 4:
                raise ValueError("CrossMapLRN2d: Expected input to be 4D, got "
                                 f"{input.dim()}D instead.")
            x = input.detach().numpy()
            scale = _window_sums(x * x, size) * x.dtype.type(alpha / size) + x.dtype.type(k)
            out = scale ** x.dtype.type(-beta) * x
            # (a program may read ctx's attributes through grad_fn: tensors, never arrays)
            ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
            ctx.scale = torch.from_numpy(scale.astype(x.dtype))
            output = torch.from_numpy(out.astype(x.dtype))
            ctx.save_for_backward(input, output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, output = ctx.saved_tensors
            x, out, g = (t.detach().numpy() for t in (input, output, grad_output))
            size, scale = ctx.size, ctx.scale.numpy()
            channels = x.shape[1]
            # each channel's gradient takes the ratios g*out/scale of a window of `size`
            # channels, offset by PyTorch's inverse pre-pad
            offset = int(size - (size - 1) / 2)
            ratio = g * out / scale
            padded = np.zeros((x.shape[0], channels + size - 1) + x.shape[2:], x.dtype)
            padded[:, offset:offset + channels] = ratio
            cumulative = np.concatenate([np.zeros_like(padded[:, :1]),
                                         np.cumsum(padded, axis=1)], axis=1)
            window = cumulative[:, size:size + channels] - cumulative[:, :channels]
            coefficient = x.dtype.type(2 * ctx.alpha * ctx.beta / size)
            grad = scale ** x.dtype.type(-ctx.beta) * g - coefficient * x * window
            return torch.from_numpy(grad.astype(x.dtype)), None, None, None, None

    _FUNCTION.append(CrossMapLRN2d)
    return CrossMapLRN2d
