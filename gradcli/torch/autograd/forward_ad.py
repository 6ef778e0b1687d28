"""torch.autograd.forward_ad over gradcli's engine: dual levels and dual tensors."""

from __future__ import annotations

from gradcli.engine.forward_ad import (  # noqa: F401
    UnpackedDualTensor,
    _set_fwd_grad_enabled,
    dual_level,
    enter_dual_level,
    exit_dual_level,
    make_dual,
    unpack_dual,
)
from gradcli.engine.forward_ad import is_fwd_grad_enabled as _is_fwd_grad_enabled  # noqa: F401

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]

for _fn in (dual_level, enter_dual_level, exit_dual_level, make_dual, unpack_dual):
    _fn.__module__ = "torch.autograd.forward_ad"
del _fn


def __getattr__(name: str):
    """`_current_level`: the active dual level, -1 when none (read live, as PyTorch's global)."""
    if name == "_current_level":
        from gradcli.engine.forward_ad import _LEVEL

        return _LEVEL[0]
    raise AttributeError(f"module 'torch.autograd.forward_ad' has no attribute '{name}'")
