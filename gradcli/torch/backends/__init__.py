"""torch.backends as a CPU-only build reports it: no MPS, no CUDA, no cuDNN."""

from __future__ import annotations

from . import cuda, cudnn, mps  # noqa: F401
