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


def pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def single(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)
