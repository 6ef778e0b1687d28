"""torch.nn.parallel: only DataParallel, which on a machine without accelerators holds
the module and calls it (tutorials `import torch.nn.parallel` before wrapping a model
"when several GPUs exist")."""

from __future__ import annotations

from .modules.data_parallel import DataParallel

__all__ = ["DataParallel"]
