"""Which attention kernels scaled_dot_product_attention may choose: PyTorch's global
switches (torch.backends.cuda.enable_flash_sdp & co., which the CPU honours too, and
torch.nn.attention.sdpa_kernel, which sets them for a region).

On CPU PyTorch has two: its flash kernel (one ScaledDotProductFlashAttentionForCpuBackward0
node) and the math composition (matmuls and a softmax). With flash switched off the math
path runs; with both off nothing can. The memory-efficient and cuDNN switches exist and
keep their values, but no CPU kernel reads them.
"""

from __future__ import annotations

#: backend -> enabled, as a fresh PyTorch process starts them
ENABLED = {"flash": True, "math": True, "mem_efficient": True, "cudnn": True}
_DEFAULTS = dict(ENABLED)


def reset() -> None:
    """The switches as a fresh program finds them (gradcli's session resets them per run)."""
    ENABLED.update(_DEFAULTS)
