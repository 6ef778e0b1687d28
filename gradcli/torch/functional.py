# ruff: noqa: F822  (__all__ names are made when the module loads or on first use)
"""torch.functional: the module PyTorch keeps its Python-level tensor functions in.

Tutorials import it (`import torch.functional as F`, the introyt "Building Models" page) and
programs call what it holds (`torch.functional.einsum`, `.norm`, `.split`). Its names are
the same objects as under `torch.`, so each is looked up there on first use; a name
PyTorch's module has but gradcli lacks says so, and any other name fails as it does in
PyTorch (the module has no `relu`: that lives in torch.nn.functional).
"""

from __future__ import annotations

import importlib as _importlib

# PyTorch 2.13's torch.functional.__all__ (each found in gradcli.torch on first use)
__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "align_tensors", "broadcast_shapes",
    "broadcast_tensors", "cartesian_prod", "block_diag", "cdist", "chain_matmul",
    "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank", "split", "stft",
    "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index",
]
_PUBLIC_NAMES = frozenset(__all__)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    if name not in _PUBLIC_NAMES:
        raise AttributeError(f"module 'torch.functional' has no attribute '{name}'")
    facade = _importlib.import_module("gradcli.torch")
    try:
        value = getattr(facade, name)
    except AttributeError:
        raise AttributeError(f"torch.functional.{name} is not supported by gradcli") from None
    globals()[name] = value
    return value
