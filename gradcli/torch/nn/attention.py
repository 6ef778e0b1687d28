"""torch.nn.attention: SDPBackend and sdpa_kernel, the region in which
scaled_dot_product_attention may use only the listed kernels (on CPU: MATH, the
composition of matmuls and a softmax, and FLASH_ATTENTION, PyTorch's one-node CPU kernel;
the others are accepted and change nothing a CPU kernel reads)."""

from __future__ import annotations

import enum

from gradcli.engine import sdp_backends

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The attention kernels PyTorch knows, by its numbers (int() gives the number; like
    PyTorch's enum, a member never equals an int)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self) -> str:
        return f"SDPBackend.{self.name}"

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value


SDPBackend.__module__ = "torch.nn.attention"
SDPBackend.__qualname__ = "_SDPBackend"

#: the switch each backend turns on (ERROR and OVERRIDEABLE have none)
_SWITCH = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
           SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
           SDPBackend.CUDNN_ATTENTION: "cudnn"}


class sdpa_kernel:  # noqa: N801 - torch's name
    """Only `backends` (one SDPBackend or a list) enabled inside the region; the switches
    as they were after it."""

    __module__ = "torch.nn.attention"

    def __init__(self, backends, set_priority: bool = False) -> None:
        if not isinstance(backends, (list, SDPBackend)):
            raise AssertionError("Backend must be an instance of SDPBackend or a list of "
                                 f"SDPBackend instances, got {type(backends).__name__}")
        chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
        for backend in chosen:
            if not isinstance(backend, SDPBackend):
                raise AssertionError("Backend must be an instance of SDPBackend or a list of "
                                     f"SDPBackend instances, got {type(backend).__name__}")
        self._enabled = {switch: False for switch in sdp_backends.ENABLED}
        for backend in chosen:
            if backend in _SWITCH:
                self._enabled[_SWITCH[backend]] = True
        self._saved: list = []

    def __enter__(self):
        self._saved.append(dict(sdp_backends.ENABLED))
        sdp_backends.ENABLED.update(self._enabled)
        return None

    def __exit__(self, *exc) -> bool:
        sdp_backends.ENABLED.update(self._saved.pop())
        return False
