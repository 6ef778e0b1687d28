"""torch.utils.data.dataset: the dataset classes under the module name PyTorch files them
in (tutorials write `from torch.utils.data import dataset` and `dataset.Dataset`)."""

from __future__ import annotations

from . import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset",
           "Subset", "TensorDataset", "random_split"]
