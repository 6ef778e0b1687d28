"""torch.nn.functional over gradcli's op table.

The core functions below live in the engine's op modules without a PUBLIC name of
their own (the nn layers call them there directly, so the layers pay for no wrapper);
here they get the public boundary's argument check (out_variants.checked: the call goes
straight through, and only a failed call is re-read against PyTorch's signatures) and
`linear` its out= variant, as every other torch.nn.functional name has.
"""

from __future__ import annotations

from gradcli.engine.ops import elementwise as _elementwise
from gradcli.engine.ops import nn as _nn
from gradcli.engine.ops.out_variants import checked as _checked
from gradcli.engine.ops.out_variants import with_out as _with_out

from .._namespace import fill as _fill
from .._namespace import unsupported as _unsupported

_PREFIX = "torch.nn.functional."
_CORE = {name: getattr(_nn, name) for name in (
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "log_softmax",
    "mse_loss", "nll_loss", "relu", "softmax")}
_CORE.update(sigmoid=_elementwise.sigmoid, tanh=_elementwise.tanh)
globals().update({name: _checked(fn, _PREFIX + name) for name, fn in _CORE.items()})
linear = _with_out(_nn.linear, "linear", _PREFIX + "linear")

_fill(globals(), _PREFIX)
__getattr__ = _unsupported("torch.nn.functional")
