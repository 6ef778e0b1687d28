"""InstanceNorm1d/2d/3d: options, parameters, buffers, repr and warnings as PyTorch keeps
them; the arithmetic is F.instance_norm (engine/ops/instance_norm.py). Unlike BatchNorm,
the layer never counts batches (num_batches_tracked stays 0) and, by default, neither
learns an affine map nor tracks running statistics."""

from __future__ import annotations

import warnings

from gradcli.engine.ops.instance_norm import instance_norm

from .layers import _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(_NormBase):
    #: the rank of an input without a batch dimension (`_expected`: the ranks accepted)
    _no_batch_dim = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias)

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
                          "is not used because affine=False", UserWarning,
                          stacklevel=1)  # (PyTorch's points at its own line too)
        if input.dim() == self._no_batch_dim:  # one sample: normalised as a batch of one
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    _expected = (2, 3)
    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    _expected = (3, 4)
    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    _expected = (4, 5)
    _no_batch_dim = 4
