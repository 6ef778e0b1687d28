"""torch.nn.functional.lp_pool3d (LPPool3d's arithmetic): composed, as PyTorch composes it,
of avg_pool3d over x**p, sign/abs/relu, the window volume and the p-th root, so values and
the graph (PowBackward0 on top) are PyTorch's; p = +-inf takes the max pool of |x|."""

from __future__ import annotations

from ..tensor import Tensor
from .conv_ext import _tuple, avg_pool3d, infinite_norm_pool, max_pool3d
from .registry import public


@public("torch.nn.functional.lp_pool3d")
def lp_pool3d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    kd, kh, kw = _tuple(kernel_size, 3)
    pooled = infinite_norm_pool(input, norm_type, kernel_size, stride, ceil_mode, max_pool3d)
    if pooled is not None:
        return pooled
    if stride is not None:
        out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool3d(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kd * kh * kw).pow(1.0 / norm_type)
