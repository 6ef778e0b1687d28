"""torch.autograd.anomaly_mode: detect_anomaly and set_detect_anomaly under their module's
own name."""

from __future__ import annotations

from gradcli.engine.grad_mode import detect_anomaly, set_detect_anomaly  # noqa: F401

__all__ = ["detect_anomaly", "set_detect_anomaly"]
