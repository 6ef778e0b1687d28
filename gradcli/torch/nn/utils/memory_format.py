"""torch.nn.utils.memory_format: store the weights of every (transposed) convolution of a
module tree in a memory format (channels_last for 2-D, channels_last_3d for 3-D), as
PyTorch's helpers do: a copy in that format replaces each weight's data in place, so the
Parameter objects (and optimizers holding them) stay the same."""

from __future__ import annotations

import gradcli.torch as torch

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        weight = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = weight.resize_(weight.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Conv2d / ConvTranspose2d weights of `module` and its children in `memory_format`."""
    return _convert(module, memory_format, (torch.nn.Conv2d, torch.nn.ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Conv3d / ConvTranspose3d weights of `module` and its children in `memory_format`."""
    return _convert(module, memory_format, (torch.nn.Conv3d, torch.nn.ConvTranspose3d))
