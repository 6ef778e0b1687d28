"""F.fractional_max_pool2d / 3d (and their _with_indices forms): max pooling over windows
placed pseudo-randomly (Graham's fractional max pooling).

One uniform sample per plane and dimension is drawn as PyTorch draws it (torch.rand(N, C,
2 or 3) of the input's dtype, unless _random_samples is given); each dimension's window
starts are PyTorch's interval sequence, computed in the input's float type as its kernel
does: int((i + u) * alpha) - int(u * alpha), alpha = (in - k) / (out - 1), the last window
ending at the input's end. The window maximum is the first largest value (a NaN wins, the
last one found) and its flat index within the plane is returned; the gradient is added
back at those indices, its own gradient gathers there."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, make
from .registry import PUBLIC, defop, public, run_op


def _intervals(u, size, out, k, dtype):
    seq = np.zeros(out, np.int64)
    if out > 1:
        t = dtype.type
        alpha = t(size - k) / t(out - 1)
        base = int(t(u) * alpha)
        for i in range(out - 1):
            seq[i] = int((t(i) + t(u)) * alpha) - base
    if out > 0:
        seq[out - 1] = size - k
    return seq


def _fractional_fwd(x, samples, kernel, out_size):
    """x (N, C, *sp); samples (N, C, nd) with the last dim's order W, H (2-d) or T, H, W
    (3-d), as PyTorch's kernels read them."""
    nd = len(kernel)
    n, c = x.shape[:2]
    sp = x.shape[2:]
    out = np.empty((n, c) + tuple(out_size), x.dtype)
    idx = np.empty((n, c) + tuple(out_size), np.int64)
    order = (1, 0) if nd == 2 else (0, 1, 2)  # sample slot of each spatial dim
    for b in range(n):
        for ch in range(c):
            starts = [_intervals(samples[b, ch, order[d]], sp[d], out_size[d], kernel[d],
                                 x.dtype) for d in range(nd)]
            grids = []
            for d in range(nd):
                pos = starts[d][:, None] + np.arange(kernel[d])[None, :]  # (out_d, k_d)
                shape = [1] * (2 * nd)
                shape[d], shape[nd + d] = out_size[d], kernel[d]
                grids.append(pos.reshape(shape))
            flat = np.zeros(tuple(out_size) + tuple(kernel), np.int64)
            for d in range(nd):
                flat = flat * sp[d] + grids[d]
            flat = flat.reshape(tuple(out_size) + (-1,))  # window cells in row-major order
            plane = x[b, ch].reshape(-1)
            vals = plane[flat]
            nan = np.isnan(vals)
            with np.errstate(invalid="ignore"):
                pick = np.argmax(vals, -1)
            if nan.any():
                last_nan = vals.shape[-1] - 1 - np.argmax(nan[..., ::-1], -1)
                pick = np.where(nan.any(-1), last_nan, pick)
            chosen = np.take_along_axis(flat, pick[..., None], -1)[..., 0]
            idx[b, ch] = chosen
            out[b, ch] = plane[chosen]
    return out, idx


def _pool_fwd(x, samples, kernel, out_size, holder):
    if x.ndim == len(kernel) + 1:  # (an unbatched input: the kernel takes it as it is)
        out, idx = _fractional_fwd(x[None], samples, kernel, out_size)
        out, idx = out[0], idx[0]
    else:
        out, idx = _fractional_fwd(x, samples, kernel, out_size)
    holder.append(idx)
    return out


def _pool_backward(c, g):
    (x,) = c.saved
    idx = c.meta[3][0]
    return (fractional_pool_backward(g, x, idx, len(c.meta[1])),)


def _scatter_fwd(g, x, idx, in_shape, nd):
    planes = int(np.prod(in_shape[:-nd], dtype=np.int64))
    plane = int(np.prod(in_shape[-nd:], dtype=np.int64))
    out = np.zeros((planes, plane), g.dtype)
    rows = np.repeat(np.arange(planes), idx.size // planes if planes else 0)
    np.add.at(out, (rows, idx.reshape(-1)), g.reshape(-1))
    return out.reshape(in_shape)


def _scatter_backward(c, gg):
    idx, in_shape, nd = c.meta
    flat = gg.flatten(gg.dim() - nd)
    picked = flat.gather(-1, make(idx.reshape(idx.shape[:-nd] + (-1,))))
    # (PyTorch's node also has an edge to the pooled input, whose gradient is zeros)
    zeros = PUBLIC["torch.zeros"](in_shape, dtype=gg.dtype) if c.needs(1) else None
    return (picked.view(tuple(idx.shape)) if c.needs(0) else None, zeros)


POOLS = {nd: defop(f"fractional_max_pool{nd}d", f"FractionalMaxPool{nd}DBackward0",
                   _pool_fwd, _pool_backward,
                   "the window maxima: the gradient added back at their indices",
                   save="inputs,meta") for nd in (2, 3)}
SCATTERS = {nd: defop(f"fractional_max_pool{nd}d_backward",
                      f"FractionalMaxPool{nd}DBackwardBackward0", _scatter_fwd,
                      _scatter_backward, "the gradient at the maxima: its own gathers there",
                      save="meta") for nd in (2, 3)}


def fractional_pool_backward(g: Tensor, x: Tensor, idx: np.ndarray, nd: int) -> Tensor:
    return run_op(SCATTERS[nd], (g, x), (idx, tuple(x.shape), nd), arrays=(g._data, x._data))


def _tuple(v, nd):
    return tuple(int(e) for e in v) if isinstance(v, (list, tuple)) else (int(v),) * nd


def _fractional(nd, input, kernel_size, output_size, output_ratio, return_indices,
                _random_samples):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         f"output_ratio")
    x = input._data
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:  # (len() of a number: Python's TypeError)
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a "
                             "single Int or tuple of Ints.")
        ratio = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else (
            output_ratio,) * nd
        output_size = [int(x.shape[-nd + d] * ratio[d]) for d in range(nd)]
    batched = x.ndim == nd + 2
    if _random_samples is None:
        n = x.shape[0] if batched else 1
        _random_samples = PUBLIC["torch.rand"](n, x.shape[-nd - 1], nd, dtype=input.dtype)
    kernel = _tuple(kernel_size, nd)
    out_size = _tuple(output_size, nd)
    if _random_samples._data.dtype != x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    # (PyTorch's 3-d check of the height words its message with the width's numbers)
    words = ("height", "width") if nd == 2 else ("time", "width", "width")
    shown = (0, 1) if nd == 2 else (0, 2, 2)
    where = "fractional_max_pool2d()" if nd == 2 else "fractional_max_pool3d_out()"
    for d in range(nd):
        if out_size[d] + kernel[d] - 1 > x.shape[-nd + d]:
            k = shown[d]
            raise RuntimeError(f"{where}: pool {words[d]} {kernel[k]} too large relative to "
                               f"input {words[d]} {x.shape[-nd + k]}")
    holder: list = []
    out = run_op(POOLS[nd], (input,), (_random_samples._data, kernel, out_size, holder),
                 arrays=(x,))
    return (out, make(holder[0])) if return_indices else out


@public("torch.nn.functional.fractional_max_pool2d",
        "torch.nn.functional.fractional_max_pool2d_with_indices")
def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    return _fractional(2, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)


@public("torch.nn.functional.fractional_max_pool3d",
        "torch.nn.functional.fractional_max_pool3d_with_indices")
def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    return _fractional(3, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)
