"""torch.autograd.forward_ad over gradcli's engine: dual levels and dual tensors."""

from __future__ import annotations

from gradcli.engine.forward_ad import (  # noqa: F401
    UnpackedDualTensor,
    dual_level,
    enter_dual_level,
    exit_dual_level,
    make_dual,
    unpack_dual,
)

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]

for _fn in (dual_level, enter_dual_level, exit_dual_level, make_dual, unpack_dual):
    _fn.__module__ = "torch.autograd.forward_ad"
del _fn
