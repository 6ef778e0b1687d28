"""InstanceNorm1d/2d/3d: options, parameters, buffers, repr and warnings as PyTorch keeps
them; the arithmetic is F.instance_norm (engine/ops/instance_norm.py). Unlike BatchNorm,
the layer never counts batches (num_batches_tracked stays 0) and, by default, neither
learns an affine map nor tracks running statistics."""

from __future__ import annotations

import warnings

from gradcli.engine.grad_mode import no_grad
from gradcli.engine.ops.creation import tensor as _tensor
from gradcli.engine.ops.instance_norm import instance_norm

from ._common import new_buffer, new_param
from ._init import nn_init
from .module import Module

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(Module):
    #: input ranks accepted, and the rank of an input without a batch dimension
    _ranks: tuple = ()
    _no_batch_dim = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = new_param((num_features,), device, dtype)
            if bias:
                self.bias = new_param((num_features,), device, dtype)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", new_buffer((num_features,), device, dtype))
            self.register_buffer("running_var", new_buffer((num_features,), device, dtype))
            self.register_buffer("num_batches_tracked", _tensor(0))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init = nn_init()
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input) -> None:
        if input.dim() not in self._ranks:
            kinds = " or ".join(f"{d}D" for d in self._ranks)
            raise ValueError(f"expected {kinds} input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input):
        return instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                             self.training or not self.track_running_stats,
                             self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. "
                          "You can silence this warning by not passing in num_features, which "
                          "is not used because affine=False", UserWarning, stacklevel=3)
        if input.dim() == self._no_batch_dim:  # one sample: normalised as a batch of one
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    _ranks = (2, 3)
    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    _ranks = (3, 4)
    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    _ranks = (4, 5)
    _no_batch_dim = 4
