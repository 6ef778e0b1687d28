"""Devices on a CPU-only build: which device names exist, and PyTorch's errors for
moving or creating a tensor anywhere but the CPU."""

from __future__ import annotations

NOT_COMPILED = "Torch not compiled with CUDA enabled"
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def parse(spec) -> tuple[str, int | None]:
    """'cuda:1' -> ('cuda', 1), with PyTorch's error for an unknown device type."""
    if isinstance(spec, int) and not isinstance(spec, bool):
        raise RuntimeError(NO_ACCELERATOR)
    if not isinstance(spec, str):
        spec = str(getattr(spec, "type", spec)) + (
            f":{spec.index}" if getattr(spec, "index", None) is not None else "")
    kind, _, index = spec.partition(":")
    if kind not in DEVICE_TYPES:
        raise RuntimeError("Expected one of " + ", ".join(DEVICE_TYPES)
                           + f" device type at start of device string: {kind}")
    if index:
        if not index.isdigit():
            raise RuntimeError(f"Invalid device string: '{spec}'")
        return kind, int(index)
    return kind, None


def check(device) -> None:
    """Raise as a CPU-only PyTorch does when a tensor would live on `device` (None and the
    CPU pass)."""
    if device is None:
        return
    kind, _ = parse(device)
    if kind == "cpu":
        return
    if kind == "cuda":
        raise AssertionError(NOT_COMPILED)
    raise RuntimeError(f"PyTorch is not linked with support for {kind} devices")
