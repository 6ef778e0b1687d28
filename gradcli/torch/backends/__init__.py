"""torch.backends as a CPU-only build reports it: no MPS, no CUDA, no cuDNN; oneDNN, MKL and
OpenMP there."""

from __future__ import annotations

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp  # noqa: F401
