"""AlphaDropout and FeatureAlphaDropout: the SELU-preserving dropouts, random in training
(F.alpha_dropout / F.feature_alpha_dropout draw from the global generator as PyTorch's),
the identity in eval mode."""

from __future__ import annotations

from gradcli.torch.nn import functional as F

from .dropout import _DropoutNd

__all__ = ["AlphaDropout", "FeatureAlphaDropout"]


class AlphaDropout(_DropoutNd):
    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
