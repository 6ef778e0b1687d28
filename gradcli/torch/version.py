"""torch.version as a CPU-only PyTorch 2.13 build answers it.

Environment cells print `torch.version.cuda` (None: no CUDA build) next to
`torch.__version__`; a script that branches on `torch.version.hip` or `.xpu` sees None
too. `__version__` is the same comparable string as `torch.__version__`.
"""

from __future__ import annotations

from .torch_version import TorchVersion

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]

__version__ = TorchVersion("2.13.0+cpu")
cuda = None
hip = None
rocm = None
xpu = None
debug = False
#: the commit PyTorch 2.13.0 was built from, as its torch.version reports it
git_version = "cf30153c4c131c8164ee7798e5022d810682e2cb"
