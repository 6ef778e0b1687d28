"""torch.nn.functional over gradcli's op table."""

from __future__ import annotations

from gradcli.engine.ops.elementwise import sigmoid, tanh  # noqa: F401
from gradcli.engine.ops.nn import (  # noqa: F401
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    linear,
    log_softmax,
    mse_loss,
    nll_loss,
    relu,
    softmax,
)

from .._namespace import fill as _fill
from .._namespace import unsupported as _unsupported

_fill(globals(), "torch.nn.functional.")
__getattr__ = _unsupported("torch.nn.functional")
