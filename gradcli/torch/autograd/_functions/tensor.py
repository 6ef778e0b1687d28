"""torch.autograd._functions.tensor.Resize: a reshape written as a custom Function (its
node is ResizeBackward); the element count may not change."""

from __future__ import annotations

import math

from gradcli.engine.custom_function import Function


class Resize(Function):
    @staticmethod
    def forward(ctx, tensor, sizes):
        ctx.sizes = sizes
        ctx.numel = math.prod(sizes)
        if tensor.numel() != ctx.numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({ctx.numel} elements in "
                f"total), but the given tensor has a size of {'x'.join(map(str, tensor.size()))} "
                f"({tensor.numel()} elements). autograd's resize can only change the shape of a "
                "given tensor, while preserving the number of elements. ")
        ctx.input_sizes = tensor.size()
        return tensor.contiguous().clone().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output):
        if grad_output.numel() != ctx.numel:
            raise AssertionError(
                f"Expected grad_output to have {ctx.numel} elements, but got "
                f"{grad_output.numel()}")
        return grad_output.contiguous().view(ctx.input_sizes), None


Resize.__module__ = "torch.autograd._functions.tensor"
