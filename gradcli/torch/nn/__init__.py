"""torch.nn: only its functional part is provided by gradcli."""

from __future__ import annotations

from . import functional, init  # noqa: F401


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"torch.nn.{name} is not supported by gradcli")
