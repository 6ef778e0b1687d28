"""Helpers the layer modules share: making parameter storage, checking factory kwargs."""

from __future__ import annotations

from gradcli.engine.ops.creation import empty

from ..parameter import Parameter


def new_param(shape, device=None, dtype=None) -> Parameter:
    """An uninitialised float parameter (reset_parameters fills it), on the CPU."""
    if device is not None:
        from ..modules.module import _check_device

        _check_device(device)
    return Parameter(empty(tuple(shape), dtype=dtype))


def new_buffer(shape, device=None, dtype=None):
    if device is not None:
        from ..modules.module import _check_device

        _check_device(device)
    return empty(tuple(shape), dtype=dtype)


def affine_parameters(module, shape, affine: bool, bias: bool, device=None, dtype=None) -> None:
    """The norms' weight and bias of `shape` (each registered as None when not affine, the
    bias also when bias=False), in PyTorch's order; reset_affine fills them."""
    if affine:
        module.weight = new_param(shape, device, dtype)
        if bias:
            module.bias = new_param(shape, device, dtype)
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def reset_affine(module) -> None:
    """The norms' initial affine parameters: weight ones, bias zeros (no draws)."""
    if module.weight is not None:
        from gradcli.torch.nn import init

        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)


def pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def single(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)
