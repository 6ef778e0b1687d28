"""torch.utils.data as the from-scratch tutorials use it (d2l's ``load_array``, training
loops over a ``DataLoader``): map-style and iterable datasets, the samplers, batching with
the default collate, ``random_split``. Single process only (``num_workers`` other than 0 is
refused; ``get_worker_info()`` is None, as in PyTorch's main process).

The random numbers are PyTorch's: iterating a loader draws its base seed (one int64 from
the loader's generator, or the global one) when the iterator is made, and a shuffling
sampler without a generator draws its own seed from the global generator when the first
batch is asked for, then permutes with ``randperm`` on a generator seeded with it; so a
program that mixes shuffled epochs with other random calls sees PyTorch's numbers.

Iterators here are plain list iterators and small classes, never Python generators: a
program under ``gradcli run`` may hold any object this module returns."""

from __future__ import annotations

import math
import numbers

from gradcli.engine import dtypes
from gradcli.engine.tensor import Tensor

from . import sampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
    _draw_seed,
    _torch,
)

#: what a program may import from here (the helpers and imports above stay out of reach)
__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
           "Subset",
           "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "dataloader",
           "dataset", "default_collate", "default_convert", "get_worker_info", "random_split",
           "sampler"]


class Dataset:
    """A map-style dataset: ``__getitem__`` (and usually ``__len__``) in a subclass."""

    __module__ = "torch.utils.data.dataset"

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read as a stream: ``__iter__`` in a subclass (a DataLoader batches what it
    returns, in order)."""

    __module__ = "torch.utils.data.dataset"

    def __add__(self, other):
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Iterable datasets one after another."""

    __module__ = "torch.utils.data.dataset"

    def __init__(self, datasets) -> None:
        self.datasets = datasets

    def __iter__(self):
        items = []
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            items.extend(d)
        return iter(items)

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


def get_worker_info():
    """None: every batch is loaded in the program's own process."""
    return None


class TensorDataset(Dataset):
    """Sample i is the tuple of every tensor's row i."""

    __module__ = "torch.utils.data.dataset"

    def __init__(self, *tensors) -> None:
        if any(t.size(0) != tensors[0].size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    __module__ = "torch.utils.data.dataset"

    def __init__(self, dataset, indices) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """The datasets one after the other."""

    __module__ = "torch.utils.data.dataset"

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes, total = [], 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        for i, end in enumerate(self.cumulative_sizes):
            if idx < end:
                start = self.cumulative_sizes[i - 1] if i else 0
                return self.datasets[i][idx - start]
        raise IndexError("list index out of range")


class StackDataset(Dataset):
    """Several datasets of one length read together: sample i is the tuple (datasets given by
    position) or the dict (given by keyword) of each dataset's sample i."""

    __module__ = "torch.utils.data.dataset"

    def __init__(self, *args, **kwargs) -> None:
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                                 "``kwargs``) like input/output, but both types are given.")
            datasets = args
        elif kwargs:
            datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")
        parts = list(datasets.values()) if kwargs else list(args)
        self._length = len(parts[0])
        if any(self._length != len(d) for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = datasets

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


def random_split(dataset, lengths, generator=None):
    """Disjoint random Subsets of the given lengths (or fractions summing to 1), from one
    ``randperm`` on `generator` (the global generator if None)."""
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(sizes)):  # the remainder, round-robin from the first
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    gen = generator if generator is not None else _torch("default_generator")
    order = _torch("randperm")(sum(lengths), generator=gen).tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[start:start + length]))
        start += length
    return out


def default_collate(batch):
    """One batch from a list of samples: tensors stacked on a new first dimension, Python
    numbers as a tensor, tuples and lists field by field (a tuple gives a list), dicts key
    by key, strings as they are."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _torch("stack")(batch, 0)
    if isinstance(elem, bool) or isinstance(elem, numbers.Integral):
        return _torch("tensor")(batch)
    if isinstance(elem, float):
        return _torch("tensor")(batch, dtype=dtypes.float64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, dict):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, (tuple, list)):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(s) for s in zip(*batch)]
    raise TypeError(
        "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        f"found {type(elem)}")


def default_convert(data):
    return data


class DataLoader:
    """Batches of a map-style dataset, in order or shuffled, in this process."""

    __module__ = "torch.utils.data.dataloader"

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers: int = 0, collate_fn=None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if num_workers:
            raise NotImplementedError("gradcli's DataLoader loads in this process only: "
                                      "use num_workers=0")
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (False, None):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle \
                else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.generator = generator
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_sampler is not None or (self._iterable and batch_size is not None)
            else default_convert)

    def __iter__(self):
        return _LoaderIter(self)

    def __len__(self) -> int:
        if self._iterable:
            length = len(self.dataset)
            if self.batch_size is None:
                return length
            return length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)


class _LoaderIter:
    """One pass over a DataLoader: the base seed is drawn now, the sampler's order at the
    first batch (PyTorch's single-process iterator draws in this order)."""

    __module__ = "torch.utils.data.dataloader"
    __slots__ = ("_loader", "_indices", "_base_seed", "_stream")

    def __init__(self, loader: DataLoader) -> None:
        if loader.pin_memory:  # (PyTorch's iterator says so; a CPU has nothing to pin to)
            from gradcli.engine.warn_site import warn_inside

            warn_inside("'pin_memory' argument is set as true but no accelerator is found, "
                        "then device pinned memory won't be used.")
        self._loader = loader
        self._indices = None
        self._base_seed = _draw_seed(loader.generator)
        # an iterable dataset's stream is opened with the iterator, as PyTorch's fetcher does
        self._stream = iter(loader.dataset) if loader._iterable else None

    def __iter__(self):
        return self

    def __next__(self):
        loader = self._loader
        if self._stream is not None:
            return self._next_from_stream(loader)
        if self._indices is None:
            self._indices = iter(loader.batch_sampler if loader.batch_sampler is not None
                                 else loader.sampler)
        index = next(self._indices)
        if loader.batch_sampler is None:
            return loader.collate_fn(loader.dataset[index])
        return loader.collate_fn([loader.dataset[i] for i in index])

    def _next_from_stream(self, loader: DataLoader):
        """The next item (batch_size None) or batch of an iterable dataset; a last short
        batch unless drop_last; then the end for good."""
        stream = self._stream
        if loader.batch_size is None:
            return loader.collate_fn(next(stream))
        batch = []
        for item in stream:
            batch.append(item)
            if len(batch) == loader.batch_size:
                break
        else:
            self._stream = iter(())
        if not batch or (loader.drop_last and len(batch) < loader.batch_size):
            raise StopIteration
        return loader.collate_fn(batch)

    def __len__(self) -> int:
        return len(self._loader)


_LoaderIter.__name__ = _LoaderIter.__qualname__ = "_SingleProcessDataLoaderIter"


from . import dataloader, dataset  # noqa: E402 (they re-export the classes above)
