"""torch.special over gradcli's op table: every function declared `@public("torch.special.NAME")`."""

from __future__ import annotations

from gradcli.engine import ops as _ops  # noqa: F401  (declares every op)

from ._namespace import fill as _fill
from ._namespace import unsupported as _unsupported

_fill(globals(), "torch.special.")
__getattr__ = _unsupported("torch.special")
