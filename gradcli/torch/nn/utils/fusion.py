"""torch.nn.utils.fusion: fold an eval-mode BatchNorm into the convolution or linear layer
before it (scale the weight by gamma / sqrt(var + eps) per output channel, shift the
bias), as PyTorch's helpers do, in the same order of operations so the floats agree."""

from __future__ import annotations

import copy

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _eval_only(layer, bn) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def _filled(bn_rm, bn_w, bn_b):
    from gradcli import torch

    return (torch.ones_like(bn_rm) if bn_w is None else bn_w,
            torch.zeros_like(bn_rm) if bn_b is None else bn_b)


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The (weight, bias) Parameters of the convolution with the BatchNorm folded in."""
    from gradcli import torch

    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    if conv_b is None:
        conv_b = torch.zeros_like(bn_rm)
    bn_w, bn_b = _filled(bn_rm, bn_w, bn_b)
    inverse_std = torch.rsqrt(bn_rv + bn_eps)
    # output channels are dim 0 of a convolution's weight, dim 1 of a transposed one's
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.dim() - 2)
    weight = (conv_w * (bn_w * inverse_std).reshape(shape)).to(dtype=weight_dtype)
    bias = ((conv_b - bn_rm) * inverse_std * bn_w + bn_b).to(dtype=bias_dtype)
    return (torch.nn.Parameter(weight, conv_w.requires_grad),
            torch.nn.Parameter(bias, conv_b.requires_grad))


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of the eval-mode convolution with the eval-mode BatchNorm after it folded in."""
    _eval_only(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The (weight, bias) Parameters of the linear layer with the BatchNorm folded in."""
    from gradcli import torch

    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    if linear_b is None:
        linear_b = torch.zeros_like(bn_rm)
    scale = bn_w * torch.rsqrt(bn_rv + bn_eps)
    weight = linear_w * scale.unsqueeze(-1).to(dtype=weight_dtype)
    bias = ((linear_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return (torch.nn.Parameter(weight, linear_w.requires_grad),
            torch.nn.Parameter(bias, linear_b.requires_grad))


def fuse_linear_bn_eval(linear, bn):
    """A copy of the eval-mode linear layer with the eval-mode BatchNorm after it folded in."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
            f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    _eval_only(linear, bn)
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused
