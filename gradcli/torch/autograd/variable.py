"""torch.autograd.variable: the legacy Variable under its module's own name."""

from __future__ import annotations

from . import Variable  # noqa: F401

__all__ = ["Variable"]
