"""Dropout in training mode, as ATen's CPU path draws it: a noise tensor (the input's
shape, or (N, C, 1, ...) for the feature forms) filled by bernoulli_(1 - p) from the
generator, scaled, and multiplied in, so the graph holds MulBackward0 (AddBackward0 for
the alpha forms) and the kept elements are PyTorch's after manual_seed."""

from __future__ import annotations

import math

import numpy as np

from .tensor import Tensor, make
from .warn_site import warn_at_caller

_ALPHA = 1.7580993408473766  # SELU's alpha * scale: the value dropped units take


def _check_p(p) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input: Tensor, p: float, feature: bool) -> Tensor:
    arr = input._data
    if feature:
        if arr.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = arr.shape[:2] + (1,) * (arr.ndim - 2)
        noise = make(np.empty(shape, arr.dtype))
    else:  # empty_like: input's layout, so the draws follow its memory order
        noise = make(np.empty_like(arr))
    noise.bernoulli_(1 - p)
    return noise


def _dropout_impl(input: Tensor, p: float, train: bool, feature: bool, alpha: bool, inplace: bool):
    if p == 0 or not train or input._data.size == 0:
        return input
    if p == 1:
        zero = make(np.zeros((), input._data.dtype))
        return input.mul_(zero) if inplace else input * zero
    noise = _noise(input, p, feature)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = noise.add(-1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
        noise.mul_(a)
        out = input.mul_(noise) if inplace else input * noise
        return out.add_(b)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    return _dropout_impl(input, p, training, False, False, inplace)


def _aten_form(feature: bool, alpha: bool, inplace: bool):
    """torch.dropout & co (ATen's own functions): p out of range is a RuntimeError there."""

    def fn(input, p, train):
        if p < 0 or p > 1:
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
        return _dropout_impl(input, p, train, feature, alpha, inplace)

    return fn


torch_dropout = _aten_form(False, False, False)
torch_dropout_ = _aten_form(False, False, True)
torch_alpha_dropout = _aten_form(False, True, False)
torch_alpha_dropout_ = _aten_form(False, True, True)
torch_feature_dropout = _aten_form(True, False, False)
torch_feature_dropout_ = _aten_form(True, False, True)
torch_feature_alpha_dropout = _aten_form(True, True, False)
torch_feature_alpha_dropout_ = _aten_form(True, True, True)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _dropout_impl(input, p, training, False, True, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _dropout_impl(input, p, training, True, True, inplace)


def _batched(input, p, training, inplace, batched: bool):
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _dropout_impl(input, p, training, True, False, inplace)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    dim = input.dim()
    if dim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {dim}D input. Note that dropout1d "
            "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
            "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _batched(input, p, training, inplace, dim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    dim = input.dim()
    if dim not in (3, 4):
        warn_at_caller(
            f"dropout2d: Received a {dim}-D input to dropout2d, which is deprecated and will result in "
            "an error in a future release. To retain the behavior and silence this warning, please use "
            "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with "
            "2 spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
            "inputs).")
    if dim == 3:
        warn_at_caller(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
            "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
            "This behavior will change in a future release to interpret the input as one without a "
            "batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, "
            "please switch to using dropout1d instead.")
    return _dropout_impl(input, p, training, True, False, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    dim = input.dim()
    if dim not in (4, 5):
        warn_at_caller(
            f"dropout3d: Received a {dim}-D input to dropout3d, which is deprecated and will result in "
            "an error in a future release. To retain the behavior and silence this warning, please use "
            "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with "
            "3 spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
            "inputs).")
    return _batched(input, p, training, inplace, dim == 5)
