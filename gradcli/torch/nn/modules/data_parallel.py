"""DataParallel as PyTorch builds it on a machine without accelerators (gradcli's only
kind): it holds the module, no device ids, and calls the module directly, so code that
wraps a model "when several GPUs exist" runs unchanged (repr and state_dict keys gain
the `module.` level, as PyTorch's)."""

from __future__ import annotations

from .module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


DataParallel.__module__ = "torch.nn.parallel.data_parallel"
