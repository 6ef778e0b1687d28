"""torch.utils.data.dataloader: DataLoader and the collate functions under the module name
PyTorch files them in."""

from __future__ import annotations

from . import DataLoader, default_collate, default_convert

__all__ = ["DataLoader", "default_collate", "default_convert"]
