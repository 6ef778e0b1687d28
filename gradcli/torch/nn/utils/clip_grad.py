"""torch.nn.utils.clip_grad: the clipping functions under their module's own name (scripts
import them as `from torch.nn.utils.clip_grad import clip_grad_norm_`)."""

from __future__ import annotations

from . import (  # noqa: F401
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_"]
