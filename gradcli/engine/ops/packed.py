"""The packing op of nn.utils.rnn: a padded (time, batch, ...) tensor to the time-major
rows of its real steps, one node PackPaddedSequenceBackward0 whose backward puts the
gradient rows back at their (time, batch) places, zeros in the padding."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .registry import PUBLIC, defop, public, run_op


def _forward(a, times, batches, shape):
    return np.array(a[times, batches], copy=True)


def _backward(c, g):
    times, batches, shape = c.meta
    zeros = PUBLIC["torch.zeros"](shape, dtype=g.dtype)
    index = (PUBLIC["torch.tensor"](times), PUBLIC["torch.tensor"](batches))
    return (zeros.index_put(index, g),)


PACK = defop("pack_padded_sequence", "PackPaddedSequenceBackward0", _forward, _backward,
             "d pack(a)/da: the rows back at their (time, batch) places",
             torch_call="torch._pack_padded_sequence(a.reshape(a.numel(), 1), "
                        "torch.tensor([a.numel()]), False)[0]")


@public("torch._pack_padded_sequence")
def pack_padded_sequence(input, lengths, batch_first):
    """(data, batch_sizes): the steps of each sequence, time-major, the longest first
    (lengths sorted decreasing, as the caller ensures)."""
    if batch_first:
        input = input.transpose(0, 1)
    counts = [int(n) for n in (lengths.tolist() if hasattr(lengths, "tolist") else lengths)]
    batch = input.shape[1]
    if len(counts) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(counts)} (batch_size={batch})")
    if counts and counts[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(counts[i] < counts[i + 1] for i in range(len(counts) - 1)):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    steps = counts[0] if counts else 0
    sizes = [sum(1 for n in counts if n > t) for t in range(steps)]
    times = [t for t in range(steps) for _ in range(sizes[t])]
    batches = [b for t in range(steps) for b in range(sizes[t])]
    data = run_op(PACK, (input,), (times, batches, tuple(input.shape)))
    return data, PUBLIC["torch.tensor"](sizes, dtype=dtypes.int64)
