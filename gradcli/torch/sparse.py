"""torch.sparse over gradcli's op table: the sparse COO functions (mm, addmm, sum) declared
`@public("torch.sparse.NAME")` in engine/ops/sparse_coo.py."""

from __future__ import annotations

from gradcli.engine import ops as _ops  # noqa: F401  (declares every op)

from ._namespace import fill as _fill
from ._namespace import unsupported as _unsupported

_fill(globals(), "torch.sparse.")
__getattr__ = _unsupported("torch.sparse")
