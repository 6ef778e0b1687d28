"""torch.fft over gradcli's op table: every function declared `@public("torch.fft.NAME")`
(gradcli/engine/ops/fft.py). Loaded on first use, as torch.fft is reached."""

from __future__ import annotations

from gradcli.engine import ops as _ops  # noqa: F401  (declares every op)

from ._namespace import fill as _fill
from ._namespace import unsupported as _unsupported

_fill(globals(), "torch.fft.")
__getattr__ = _unsupported("torch.fft")
