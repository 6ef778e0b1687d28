"""torch.bfloat16: the name and the Tensor.bfloat16() cast.

The ops whose numpy route would round at every step where PyTorch's CPU kernels widen
bfloat16 to float32 get their bfloat16 kernels where they are declared (each Op's `bf16`
slot, from engine/kernels/bfloat16.py's table); nothing here changes an op. The numpy
type comes from ml_dtypes, imported on the first use of torch.bfloat16's numpy type
(dtypes.dtype.__getattr__), never at start-up."""

from __future__ import annotations

from .. import dtypes
from ..kernels.bfloat16 import SCALAR_LOOP_BELOW, add_scaled  # noqa: F401 - (optimizers)
from . import shape as S
from .registry import PUBLIC, public

PUBLIC["torch.bfloat16"] = dtypes.bfloat16


@public("Tensor.bfloat16")
def bfloat16(self, memory_format=None):
    """self.to(torch.bfloat16)."""
    return S.to(self, dtypes.bfloat16)
