"""torch.nn.utils.rnn: padding and packing variable-length sequences, as PyTorch's.

A PackedSequence is the time-major rows of the real steps of each sequence (longest
first) with the batch size at each step; the sorted/unsorted indices record how the batch
was reordered when the lengths were not sorted. The packing itself is one op of the table
(gradcli/engine/ops/packed.py); everything else is composed of tensor ops, so gradients
flow as in PyTorch.
"""

from __future__ import annotations

from collections import namedtuple

from gradcli.engine.tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]

_Fields = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices",
                                         "unsorted_indices"])


def _torch():
    from gradcli import torch

    return torch


class PackedSequence(_Fields):
    """(data, batch_sizes, sorted_indices, unsorted_indices), printed as PyTorch's."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        data, batch_sizes = data  # (a pair from torch._pack_padded_sequence)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def __repr__(self) -> str:
        return (f"PackedSequence(data={self.data!r}, batch_sizes={self.batch_sizes!r}, "
                f"sorted_indices={self.sorted_indices!r}, "
                f"unsorted_indices={self.unsorted_indices!r})")

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def float(self):
        return self.to(dtype=_torch().float32)

    def double(self):
        return self.to(dtype=_torch().float64)

    def cpu(self):
        return self

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


PackedSequence.__module__ = "torch.nn.utils.rnn"


def invert_permutation(permutation):
    """The permutation that undoes `permutation` (None stays None)."""
    if permutation is None:
        return None
    torch = _torch()
    output = torch.empty_like(permutation)
    output.scatter_(0, permutation, torch.arange(permutation.numel(), dtype=permutation.dtype))
    return output


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch: with enforce_sorted=False the batch is first sorted by length."""
    torch = _torch()
    if not isinstance(lengths, Tensor):
        lengths = torch.as_tensor(lengths, dtype=torch.int64)
    else:
        lengths = lengths.to(torch.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = torch.sort(lengths, descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = torch._pack_padded_sequence(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The padded batch and the lengths, in the batch's original order."""
    torch = _torch()
    sizes = [int(n) for n in sequence.batch_sizes.tolist()]
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    batch = sizes[0] if sizes else 0
    rest = tuple(sequence.data.shape[1:])
    padded = torch.full((steps, batch) + rest, padding_value, dtype=sequence.data.dtype)
    start = 0
    for t, size in enumerate(sizes):
        padded[t, :size] = sequence.data[start:start + size]
        start += size
    lengths = [sum(1 for s in sizes if s > b) for b in range(batch)]
    lengths = torch.tensor(lengths, dtype=torch.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of different lengths, padded to the longest."""
    torch = _torch()
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    longest = max(s.shape[0] for s in sequences)
    rest = tuple(sequences[0].shape[1:])
    count = len(sequences)
    shape = (count, longest) if batch_first else (longest, count)
    out = torch.full(shape + rest, padding_value, dtype=sequences[0].dtype)
    for i, seq in enumerate(sequences):
        n = seq.shape[0]
        steps = slice(0, n) if padding_side == "right" else slice(longest - n, longest)
        if batch_first:
            out[i, steps] = seq
        else:
            out[steps, i] = seq
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The sequences back out of a padded batch (a time-major batch is transposed in
    place, the caller's tensor too, as PyTorch's does)."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    torch = _torch()
    return [padded_sequences[i, torch.arange(int(n))]
            for i, n in enumerate(lengths.tolist() if isinstance(lengths, Tensor) else lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """pad_sequence then pack_padded_sequence."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
