"""torch.backends.cuda: a CPU-only build. The scaled-dot-product-attention switches are
PyTorch's global ones (the CPU kernels honour flash and math: engine/sdp_backends.py), and
`matmul.allow_tf32`, which boilerplate sets, is the float32 matmul precision seen another
way ("high" when allowed), as in PyTorch."""

from __future__ import annotations

from gradcli.engine import sdp_backends
from gradcli.engine.ops.registry import PUBLIC

__all__ = ["is_built", "matmul", "flash_sdp_enabled", "enable_flash_sdp", "math_sdp_enabled",
           "enable_math_sdp", "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp",
           "cudnn_sdp_enabled", "enable_cudnn_sdp", "is_flash_attention_available"]


def is_built() -> bool:
    return False


def is_flash_attention_available() -> bool:
    return False


def _switch(backend: str, setter_name: str):
    def enabled() -> bool:
        return sdp_backends.ENABLED[backend]

    def enable(flag) -> None:
        if type(flag) is not bool:
            # (PyTorch's own texts, its setter names included)
            suffix = "%s" if backend == "cudnn" else ""
            raise RuntimeError(f"{setter_name} expects a bool, but got {suffix}"
                               f"{type(flag).__name__}")
        sdp_backends.ENABLED[backend] = flag

    return enabled, enable


flash_sdp_enabled, enable_flash_sdp = _switch("flash", "set_sdp_use_math")
math_sdp_enabled, enable_math_sdp = _switch("math", "set_sdp_use_math")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _switch("mem_efficient", "set_sdp_use_math")
cudnn_sdp_enabled, enable_cudnn_sdp = _switch("cudnn", "set_sdp_use_cudnn")


class cuBLASModule:  # noqa: N801 - torch's name
    """torch.backends.cuda.matmul: allow_tf32 reads and sets the float32 matmul precision;
    the reduced-precision-reduction flags keep what is set."""

    __module__ = "torch.backends.cuda"
    _NAMES = ("allow_tf32", "allow_fp16_reduced_precision_reduction",
              "allow_bf16_reduced_precision_reduction", "allow_fp16_accumulation")

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {})
        self._reset()

    def _reset(self) -> None:
        self._flags.update(allow_fp16_reduced_precision_reduction=True,
                           allow_bf16_reduced_precision_reduction=True,
                           allow_fp16_accumulation=False)

    def __getattr__(self, name: str):
        if name == "allow_tf32":
            return PUBLIC["torch.get_float32_matmul_precision"]() != "highest"
        if name in self._flags:
            return self._flags[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value) -> None:
        if name == "allow_tf32":
            PUBLIC["torch.set_float32_matmul_precision"]("high" if value else "highest")
        elif name in self._NAMES:
            self._flags[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = cuBLASModule()


def _reset_flags() -> None:
    """The switches as a fresh program finds them (gradcli's session resets them per run)."""
    matmul._reset()
    sdp_backends.reset()
