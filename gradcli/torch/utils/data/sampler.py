"""torch.utils.data.sampler: the orders a DataLoader reads a dataset in. Each __iter__
returns a list iterator (no Python generator reaches a program); a random order is drawn
when the iteration starts, from the generator given or PyTorch's way from the global one."""

from __future__ import annotations

from gradcli.engine import dtypes
from gradcli.engine.ops.registry import PUBLIC

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]


def _torch(name):
    return PUBLIC["torch." + name]


def _draw_seed(generator=None) -> int:
    """One int64 from `generator` (the global one if None), as PyTorch's
    ``torch.empty((), dtype=torch.int64).random_(generator=...)`` draws it."""
    box = _torch("empty")((), dtype=dtypes.int64)
    return int(box.random_(generator=generator).item())


class Sampler:
    """Base of the index samplers."""

    __module__ = "torch.utils.data.sampler"

    def __init__(self, data_source=None) -> None:
        pass


class SequentialSampler(Sampler):
    __module__ = "torch.utils.data.sampler"

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A permutation of the indices per pass (or draws with replacement)."""

    __module__ = "torch.utils.data.sampler"

    def __init__(self, data_source, replacement: bool = False, num_samples=None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        gen = self.generator
        if gen is None:
            gen = _torch("Generator")()
            gen.manual_seed(_draw_seed())
        order = []
        if self.replacement:
            for size in [32] * (self.num_samples // 32) + [self.num_samples % 32]:
                order += _torch("randint")(high=n, size=(size,), dtype=dtypes.int64,
                                           generator=gen).tolist()
        else:
            for _ in range(self.num_samples // n):
                order += _torch("randperm")(n, generator=gen).tolist()
            order += _torch("randperm")(n, generator=gen).tolist()[:self.num_samples % n]
        return iter(order)

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from `sampler` (the last one shorter unless dropped)."""

    __module__ = "torch.utils.data.sampler"

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(
                f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batches, batch = [], []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                batches.append(batch)
                batch = []
        if batch and not self.drop_last:
            batches.append(batch)
        return iter(batches)

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (one randperm per pass, on `generator` or the
    global generator itself: no seed is drawn first, unlike RandomSampler)."""

    __module__ = "torch.utils.data.sampler"

    def __init__(self, indices, generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        order = _torch("randperm")(len(self.indices), generator=self.generator).tolist()
        return iter([self.indices[i] for i in order])

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices drawn with probabilities proportional to `weights` (one
    torch.multinomial per pass, on `generator` or the global generator)."""

    __module__ = "torch.utils.data.sampler"

    def __init__(self, weights, num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}")
        weights = _torch("as_tensor")(weights, dtype=dtypes.float64)
        if weights.dim() != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = _torch("multinomial")(self.weights, self.num_samples, self.replacement,
                                      generator=self.generator)
        return iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples
