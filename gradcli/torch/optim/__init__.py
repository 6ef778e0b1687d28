"""torch.optim: SGD, Adam, AdamW, RMSprop, Adagrad and lr_scheduler (loaded on first use)."""

from __future__ import annotations

import importlib as _importlib

__all__ = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "Rprop", "ASGD", "LBFGS", "Optimizer", "lr_scheduler", "swa_utils", "Adafactor",
           "Muon", "SparseAdam"]


def __getattr__(name: str):
    if name in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad"):
        value = getattr(_importlib.import_module(__name__ + ".algorithms"), name)
    elif name in ("Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD", "LBFGS"):
        value = getattr(_importlib.import_module(__name__ + ".more_algorithms"), name)
    elif name in ("Adafactor", "Muon", "SparseAdam"):  # (issue #23's names: one file each)
        value = getattr(_importlib.import_module(f"{__name__}.{name.lower()}"), name)
    elif name == "Optimizer":
        value = _importlib.import_module(__name__ + ".optimizer").Optimizer
    elif name in ("lr_scheduler", "swa_utils"):
        value = _importlib.import_module(f"{__name__}.{name}")
    else:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"torch.optim.{name} is not supported by gradcli")
    globals()[name] = value
    return value
