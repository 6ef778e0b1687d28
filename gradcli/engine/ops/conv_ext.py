"""Convolutions (conv3d, conv_transpose1d/2d/3d), unfold / fold, pooling (max_pool3d,
avg_pool1d/3d, adaptive avg / max pools 1d-3d, lp_pool) and interpolate / upsample
(nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area).

Everything linear in the input is a `LinearMap`: im2col / col2im windows, or one matrix per
spatial dim (interpolation weights, pooling windows: separable, as PyTorch's kernels' index
arithmetic is); its gradient is the adjoint map, whose gradient is the map again, so every
order of derivative is exact. A convolution is a matrix product over im2col columns
(weight gradient = g times columns^T, input gradient = col2im of weight^T times g), and a
max pool gathers the arg-max of each window (its gradient scatters back to them).
"""

from __future__ import annotations

import math

import numpy as np

from .. import autocast_state as _autocast
from ..tensor import Tensor, _type_word, make
from ..warn_site import warn_at_caller
from . import shape_checks
from .conv_backward import ConvFamily, convolution_backward
from .registry import PUBLIC, defop, public, run_op

_F64 = np.float64


# ------------------------------------------------------------------ linear maps

class Separable:
    """x -> x with matrix M_d applied along each listed dim d (M_d: out_d x in_d).

    Each output is the sum of its taps (the input elements it reads with their weights),
    not a whole row of M_d times the input: an inf or nan outside an output's window must
    not reach it through a 0 weight, and a -0. read with weight 1 stays -0. A dim's entry
    is (d, M) or (d, M, taps) when the kernel reads elements with weight 0 too, as
    PyTorch's interpolations do (its two linear taps at a fraction 0 still add 0 * inf);
    (d, M, taps, True) is such an entry's adjoint, which PyTorch's backward kernels
    accumulate into zeros (from +0., the zero-weight taps included)."""

    __slots__ = ("mats",)

    def __init__(self, mats):
        self.mats = tuple(mats)

    def apply(self, x):
        out = x.astype(_F64)
        for entry in self.mats:
            d, m = entry[0], entry[1]
            if len(entry) > 3:
                out = _apply_taps(out, d, *entry[2]) + 0.0
            elif len(entry) > 2:
                out = _apply_taps(out, d, *entry[2])
            else:  # a pooling's window sum starts at +0 (a window of one -0. averages to 0.)
                out = _apply_taps(out, d, *_taps_of(m)) + 0.0
        return out.astype(x.dtype)

    def adjoint(self):
        return Separable((e[0], e[1].T) if len(e) == 2 else
                         (e[0], e[1].T, _adjoint_taps(e[2], e[1].shape[1]), True)
                         for e in reversed(self.mats))


def _adjoint_taps(taps, in_size):
    """The transposed taps: input element i gets (o, w) from every output o that reads it,
    weight-0 taps included (so an inf gradient there gives nan, as PyTorch's kernels)."""
    idx, w, used = taps
    rows = [[] for _ in range(in_size)]
    for o in range(idx.shape[0]):
        for j in range(idx.shape[1]):
            if used[o, j]:
                rows[idx[o, j]].append((o, w[o, j]))
    return _taps(rows, idx.shape[0])


def _taps_of(m):
    """The non-zero entries of each row of m as (index, weight, used) arrays (out x K)."""
    nz = m != 0
    k = int(nz.sum(1).max()) if m.size else 0
    idx = np.zeros((m.shape[0], k), np.intp)
    used = np.zeros((m.shape[0], k), bool)
    for r in range(m.shape[0]):
        cols = np.flatnonzero(nz[r])
        idx[r, :len(cols)] = cols
        used[r, :len(cols)] = True
    return idx, np.take_along_axis(m, idx, 1) if m.size else idx * 0.0, used


def _taps(rows, in_size):
    """(index, weight) lists per output row -> the (index, weight, used) arrays."""
    k = max((len(r) for r in rows), default=0)
    idx = np.zeros((len(rows), k), np.intp)
    w = np.zeros((len(rows), k))
    used = np.zeros((len(rows), k), bool)
    for o, row in enumerate(rows):
        for j, (i, wt) in enumerate(row):
            idx[o, j], w[o, j], used[o, j] = min(max(i, 0), in_size - 1), wt, True
    return idx, w, used


def _apply_taps(x, d, idx, w, used):
    shape = [1] * x.ndim
    shape[d] = idx.shape[0]
    if idx.shape[1] == 0 or x.shape[d] == 0:
        out_shape = list(x.shape)
        out_shape[d] = idx.shape[0]
        return np.zeros(out_shape)
    acc = None
    for j in range(idx.shape[1]):
        term = np.take(x, idx[:, j], axis=d) * w[:, j].reshape(shape)
        if acc is None:  # (a row of an adjoint may read nothing: 0 there)
            acc = np.where(used[:, j].reshape(shape), term, 0.0)
        else:
            acc = np.where(used[:, j].reshape(shape), acc + term, acc)
    return acc


class Im2Col:
    """(N, C, *spatial) -> (N, C * prod(kernel), L): each window's elements (channel major,
    then kernel offsets in order), zero padding, strides and dilation as PyTorch's im2col."""

    __slots__ = ("kernel", "stride", "padding", "dilation", "in_shape", "out_spatial")

    def __init__(self, kernel, stride, padding, dilation, in_shape):
        self.kernel, self.stride, self.padding, self.dilation = kernel, stride, padding, dilation
        self.in_shape = tuple(in_shape)
        sp = self.in_shape[2:]
        self.out_spatial = tuple(
            (s + 2 * p - d * (k - 1) - 1) // st + 1
            for s, k, st, p, d in zip(sp, kernel, stride, padding, dilation, strict=True))

    def _index(self):
        """For each spatial dim: (kernel offsets, output positions) -> padded input index."""
        return [np.arange(k)[:, None] * d + np.arange(o)[None, :] * st
                for k, d, o, st in zip(self.kernel, self.dilation, self.out_spatial, self.stride,
                                       strict=True)]

    def apply(self, x):
        n, c = x.shape[:2]
        pad = [(0, 0), (0, 0)] + [(p, p) for p in self.padding]
        xp = np.pad(x, pad)
        idx = self._index()
        nd = len(idx)
        grids = np.ix_(*[i.reshape(-1) for i in idx])  # (k*o) per dim
        block = xp[(slice(None), slice(None)) + grids]  # (N, C, k1*o1, k2*o2, ...)
        shape = [n, c]
        for k, o in zip(self.kernel, self.out_spatial, strict=True):
            shape += [k, o]
        block = block.reshape(shape)
        # -> (N, C, k1, k2, ..., o1, o2, ...)
        order = [0, 1] + [2 + 2 * i for i in range(nd)] + [3 + 2 * i for i in range(nd)]
        block = block.transpose(order)
        return np.ascontiguousarray(block).reshape(n, c * math.prod(self.kernel),
                                                   math.prod(self.out_spatial))

    def adjoint(self):
        return Col2Im(self)


class Col2Im:
    """The adjoint of an Im2Col: columns added back into their windows, padding dropped."""

    __slots__ = ("im",)

    def __init__(self, im: Im2Col):
        self.im = im

    def apply(self, cols):
        im = self.im
        n, c = im.in_shape[:2]
        nd = len(im.kernel)
        shape = [n, c] + list(im.kernel) + list(im.out_spatial)
        block = cols.astype(_F64).reshape(shape)
        order = [0, 1]
        for i in range(nd):
            order += [2 + i, 2 + nd + i]
        block = block.transpose(order)
        flat_shape = [n, c] + [k * o for k, o in zip(im.kernel, im.out_spatial, strict=True)]
        block = block.reshape(flat_shape)
        padded = [s + 2 * p for s, p in zip(im.in_shape[2:], im.padding, strict=True)]
        out = np.zeros([n, c] + padded)
        idx = im._index()
        # scatter-add one dim at a time: each padded position sums the window entries that
        # read it (only those: an inf elsewhere must not reach it through a 0 weight), from +0
        res = block
        for i, (ix, size) in enumerate(zip(idx, padded, strict=True)):
            hot = np.zeros((size, ix.size))
            hot[ix.reshape(-1), np.arange(ix.size)] = 1
            res = _apply_taps(res, 2 + i, *_taps_of(hot)) + 0.0
        out = res
        crop = (slice(None), slice(None)) + tuple(
            slice(p, p + s) for p, s in zip(im.padding, im.in_shape[2:], strict=True))
        return out[crop].astype(cols.dtype)

    def adjoint(self):
        return self.im


class Gather:
    """x -> x.flat[index] reshaped (a max pool's arg-max elements); adjoint: Scatter."""

    __slots__ = ("index", "out_shape", "in_shape")

    def __init__(self, index, out_shape, in_shape):
        self.index, self.out_shape, self.in_shape = index, tuple(out_shape), tuple(in_shape)

    def apply(self, x):
        """(an index of -1 reads 0: an empty embedding bag's max)"""
        vals = x.reshape(-1)[np.maximum(self.index, 0)]
        if self.index.size and self.index.min() < 0:
            vals = np.where(self.index < 0, 0, vals).astype(x.dtype)
        return vals.reshape(self.out_shape)

    def adjoint(self):
        return Scatter(self)


class Scatter:
    __slots__ = ("gather",)

    def __init__(self, gather: Gather):
        self.gather = gather

    def apply(self, g):
        out = np.zeros(math.prod(self.gather.in_shape), g.dtype)
        index = self.gather.index
        keep = index >= 0
        np.add.at(out, index[keep], g.reshape(-1)[keep])
        return out.reshape(self.gather.in_shape)

    def adjoint(self):
        return self.gather


def _map_backward(c, g):
    spec, = c.meta
    return (run_op(LINEAR_MAP_ADJOINT, (g,), (spec.adjoint(),)),)


def _linear_map(name: str, node: str, torch_call: str, rule: str):
    return defop(name, node, lambda x, spec: spec.apply(x), _map_backward, rule,
                 torch_call=torch_call)


def _second_order_call(forward: str) -> str:
    """A torch_call reaching a backward op: a create_graph gradient with a grad_output that
    depends on `a`, used again (so the adjoint's own backward runs)."""
    w = "(torch.ones_like(x).cumsum(-1) * 0.5)"
    return (f"torch.enable_grad()(lambda a: (lambda x: torch.autograd.grad({forward}, x, "
            f"{w} ** 2 + x * 0.5, create_graph=True)[0])(a.reshape(1, 1, -1).expand(1, 2, -1)"
            f" * 1).sum() * a)(a)")


LINEAR_MAP_ADJOINT = defop(
    "linear_map_adjoint", "LinearMapBackward0", lambda x, spec: spec.apply(x), _map_backward,
    "the adjoint of a linear map (a pooling's or an interpolation's backward)",
    torch_call=_second_order_call("torch.nn.functional.interpolate(x, size=6, mode='linear')"))


# ------------------------------------------------------------------ helpers

def _tuple(v, n: int, name: str = "") -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return tuple(v) * n
        return tuple(int(i) for i in v)
    return (int(v),) * n


def _check_dims(x: Tensor, nd: int, fname: str) -> bool:
    """Whether x is batched ((N, C, *nd) vs (C, *nd)); PyTorch's error otherwise, each
    kernel wording its own."""
    d = x._data.ndim
    if d == nd + 2:
        return True
    if d == nd + 1:
        return False
    shape = _sizes(x._data.shape)
    if fname in ("avg_pool3d", "max_pool3d"):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if fname.startswith("adaptive_max"):
        raise RuntimeError(f"{fname}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {shape}")
    if fname.startswith("adaptive_avg"):
        raise RuntimeError(f"{fname}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {shape}")
    raise RuntimeError(f"{fname}: Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input "
                       f"to {fname}, but got input of size: {list(x._data.shape)}")


def _pool3d_args(fname: str, kernel_size, stride, padding, dilation=1) -> None:
    """The 3-d pools' argument lengths, checked before the input (each kernel's wording)."""
    def bad(v, empty_ok=False):
        if not isinstance(v, (tuple, list)):
            return False
        return len(v) not in ((0, 1, 3) if empty_ok else (1, 3))

    mx = fname == "max_pool3d"
    either = "either " if mx else ""
    if bad(kernel_size):
        raise RuntimeError(f"{fname}: kernel_size must {either}be a single int, or a tuple of "
                           "three ints")
    if stride is not None and bad(stride, empty_ok=True):
        raise RuntimeError(f"{fname}: stride must {either}be omitted, a single int, or a tuple "
                           "of three ints")
    if bad(padding):
        raise RuntimeError(f"{fname}: padding must {either}be a single int, or a tuple of three "
                           "ints")
    if bad(dilation):
        raise RuntimeError(f"{fname}: dilation must be either a single int, or a tuple of three "
                           "ints")


def _pool3d_steps(x: Tensor, input: Tensor, fname: str, kernel, stride, padding,
                  dilation=(1, 1, 1), check_dilation: bool = False) -> None:
    """The 3-d pools' pooling_output_shape checks per dim (stride, pad's sign, pad against
    half the kernel), max_pool3d's dilation, then the input's empty dimensions (of the
    batched x, named with the input's shape), in PyTorch's order."""
    for kk, st, pad, dil in zip(kernel, stride, padding, dilation, strict=True):
        if st == 0:
            raise RuntimeError("stride should not be zero")
        if pad < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
        if pad > (dil * (kk - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pad}, kernel_size={kk} and dilation={dil}")
    if check_dilation and any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: "
                           f"{dilation[0]} dilationH: {dilation[1]} dilationW: {dilation[2]}")
    if any(n == 0 for n in x._data.shape[1:]):  # (PyTorch always names dimension 0)
        raise RuntimeError(f"{fname}(): Expected input's non-batch dimensions to have positive "
                           f"length, but input has a shape of {_sizes(input.shape)} and "
                           "non-batch dimension 0 has length zero!")


def _check_1d_rank(x: Tensor, fname: str) -> None:
    """The 1-d adaptive pools' checkDimRange(2, 4) (its message is the generic one)."""
    d = x._data.ndim
    if d not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {d}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for {fname})")


def _output_size_arg(output_size, nd: int, x: Tensor, fname: str) -> None:
    """The Python layer's checks of output_size before the kernel: the 1-d pools take one
    int, the others' tuples (with None for 'keep') need a longer input (_list_with_default)."""
    if not isinstance(output_size, (tuple, list)):
        return
    if nd == 1:
        if len(output_size) != 1:
            raise RuntimeError(f"{fname}() argument 'output_size' should contain one int "
                               f"(got {len(output_size)})")
    elif x._data.ndim <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    elif len(output_size) != nd and fname.startswith("adaptive_avg"):
        raise RuntimeError(f"{fname}: output_size must be {nd}")


def _output_size_length(output_size, nd: int, fname: str) -> None:
    """The adaptive max kernels check output_size's length after the input's rank."""
    if nd > 1 and isinstance(output_size, (tuple, list)) and len(output_size) != nd:
        raise RuntimeError(f"{fname}(): internal error: output_size.size() must be {nd}")


def _float_input(x: Tensor, kernel: str) -> None:
    if x._data.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_word(x.dtype)}'")


# ------------------------------------------------------------------ unfold / fold

IM2COL = _linear_map("im2col", "Im2ColBackward0",
                     "torch.nn.functional.unfold(a.reshape(1, 1, 1, -1).expand(1, 2, 3, -1) * 1, "
                     "(2, 1))", "im2col: its gradient is col2im")
COL2IM = _linear_map("col2im", "Col2ImBackward0",
                     "torch.nn.functional.fold(a.reshape(1, 1, -1).expand(1, 4, -1) * 1, "
                     "(2, a.numel() + 1), (2, 2))", "col2im: its gradient is im2col")


def _pair_args(**args) -> list:
    """F.fold/F.unfold's `_pair` (an iterable is kept as given, a number doubled) and the
    kernels' first checks: each argument must then hold exactly two numbers."""
    pairs = []
    for name, v in args.items():
        pair = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
        if len(pair) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(pair)}")
        pairs.append(tuple(int(i) for i in pair))
    return pairs


def _window_checks(kernel, dilation, padding, stride, stride_second: bool) -> None:
    """The positivity checks im2col and col2im share (col2im checks the stride second)."""
    checks = [("kernel size should be greater than zero", "kernel", kernel, 1),
              ("dilation should be greater than zero", "dilation", dilation, 1),
              ("padding should be non-negative", "pad", padding, 0),
              ("stride should be greater than zero", "stride", stride, 1)]
    if stride_second:
        checks.insert(1, checks.pop())
    for text, word, pair, least in checks:
        if pair[0] < least or pair[1] < least:
            raise RuntimeError(f"{text}, but got {word}_height: {pair[0]} {word}_width: "
                               f"{pair[1]}")


def _sizes(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


@public("torch.nn.functional.unfold")
def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """im2col with its kernel's checks in their order; the rank check reads sizes 1 and 2
    before the rank, so a 1-d or 2-d input fails with an IndexError as PyTorch's."""
    kernel, dil, pad, st = _pair_args(kernel_size=kernel_size, dilation=dilation,
                                      padding=padding, stride=stride)
    _window_checks(kernel, dil, pad, st, stride_second=False)
    x = input._data
    if x.ndim < 3:
        from ..tensor import _wrap_dim

        _wrap_dim(1, x.ndim)
        if x.shape[1]:  # (the C++ check stops at the first zero)
            _wrap_dim(2, x.ndim)
    if not ((x.ndim == 3 and x.shape[0] and x.shape[1] and x.shape[2])
            or (x.ndim == 4 and x.shape[1] and x.shape[2] and x.shape[3])):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {_sizes(x.shape)}")
    batched = x.ndim == 4
    if not batched:
        input = input.unsqueeze(0)  # noqa: A001
    spec = Im2Col(kernel, st, pad, dil, input._data.shape)
    if any(o <= 0 for o in spec.out_spatial):
        raise RuntimeError(
            f"Given input with spatial size ({x.shape[-2]}, {x.shape[-1]}), kernel_size="
            f"({kernel[0]}, {kernel[1]}), dilation=({dil[0]}, {dil[1]}), padding=({pad[0]}, "
            f"{pad[1]}), calculated shape of the array of sliding blocks as "
            f"({spec.out_spatial[0]}, {spec.out_spatial[1]}), but its components must be at "
            "least one.")
    out = run_op(IM2COL, (input,), (spec,))
    return out if batched else out.squeeze(0)


@public("torch.nn.functional.fold")
def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """col2im with its kernel's checks in their order."""
    size, kernel, dil, pad, st = _pair_args(output_size=output_size, kernel_size=kernel_size,
                                            dilation=dilation, padding=padding, stride=stride)
    _window_checks(kernel, dil, pad, st, stride_second=True)
    x = input._data
    if not ((x.ndim == 2 and x.shape[0] and x.shape[1])
            or (x.ndim == 3 and x.shape[1] and x.shape[2])):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{_sizes(x.shape)}")
    batched = x.ndim == 3
    ck, length = x.shape[-2:]
    kk = kernel[0] * kernel[1]
    if ck % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={ck} and "
                           f"kernel_size=({kernel[0]}, {kernel[1]}).")
    blocks = [(size[i] + 2 * pad[i] - dil[i] * (kernel[i] - 1) - 1) // st[i] + 1
              for i in range(2)]
    given = (f"Given output_size=({size[0]}, {size[1]}), kernel_size=({kernel[0]}, "
             f"{kernel[1]}), dilation=({dil[0]}, {dil[1]}), padding=({pad[0]}, {pad[1]}), "
             f"stride=({st[0]}, {st[1]}), ")
    if length != blocks[0] * blocks[1]:
        raise RuntimeError(
            f"{given}expected size of input's dimension 2 to match the calculated number of "
            f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={length}.")
    if blocks[0] < 1 or blocks[1] < 1:
        raise RuntimeError(f"{given}calculated shape of the array of sliding blocks as "
                           f"({blocks[0]}, {blocks[1]}), which is too small (non-positive)")
    if size[0] < 1 or size[1] < 1:
        raise RuntimeError("Expected output spatial size to be positive, but got: "
                           f"output_size=({size[0]}, {size[1]}).")
    if not batched:
        input = input.unsqueeze(0)  # noqa: A001
    spec = Im2Col(kernel, st, pad, dil, (input._data.shape[0], ck // kk) + size)
    out = run_op(COL2IM, (input,), (Col2Im(spec),))
    return out if batched else out.squeeze(0)


# ------------------------------------------------------------------ convolution

def _conv_fwd(x, w, b, spec, groups, transposed, out_shape):
    if transposed:
        return _conv_transpose_array(x, w, b, spec, groups)
    cols = spec.apply(x).astype(_F64)  # (N, C*K, L)
    n = x.shape[0]
    g = groups
    cout = w.shape[0]
    cols = cols.reshape(n, g, -1, cols.shape[-1])
    wm = w.astype(_F64).reshape(g, cout // g, -1)
    out = np.einsum("gok,ngkl->ngol", wm, cols).reshape((n, cout) + spec.out_spatial)
    if b is not None:
        out = out + b.astype(_F64).reshape((1, cout) + (1,) * len(spec.out_spatial))
    return out.astype(x.dtype)


def _conv_transpose_array(x, w, b, spec, groups):
    """The adjoint of a convolution in x: columns = W^T x, then col2im (spec is the Im2Col of
    the output's shape)."""
    n, cin = x.shape[:2]
    g = groups
    cout_g = w.shape[1]
    wm = w.astype(_F64).reshape(g, cin // g, -1)  # (G, Cin/G, Cout/G * K)
    xm = x.astype(_F64).reshape(n, g, cin // g, -1)
    cols = np.einsum("gik,ngil->ngkl", wm, xm).reshape(n, g * cout_g * math.prod(spec.kernel), -1)
    out = Col2Im(spec).apply(cols)
    if b is not None:
        out = out + b.astype(_F64).reshape((1, -1) + (1,) * len(spec.kernel))
    return out.astype(x.dtype)


class _Im2ColConv(ConvFamily):
    """conv3d's and the transposed convolutions' gradients (im2col products) for the one
    backward op (conv_backward.py); geo is CONV's meta (spec, groups, transposed, shape)."""

    def grad_input(self, g, w, x_shape, geo):
        spec, groups, transposed, _ = geo
        n = x_shape[0]
        if not transposed:
            cout = w.shape[0]
            gm = g.reshape(n, groups, cout // groups, -1)                # (N, G, O, L)
            cols = w.reshape(groups, cout // groups, -1).transpose(1, 2).unsqueeze(0) @ gm
            return run_op(LINEAR_MAP_ADJOINT, (cols.reshape(n, -1, gm.shape[-1]),),
                          (Col2Im(spec),))._data
        cols_g = self._cols_of_grad(g, spec, groups)                     # (N, G, OK, L)
        wm = w.reshape(groups, x_shape[1] // groups, -1)                 # (G, I, OK)
        return (wm.unsqueeze(0) @ cols_g).reshape(x_shape)._data

    def grad_weight(self, g, x, w_shape, geo):
        spec, groups, transposed, _ = geo
        n = x.shape[0]
        if not transposed:
            gm = g.reshape(n, groups, w_shape[0] // groups, -1)
            cols = run_op(IM2COL, (x,), (spec,)).reshape(n, groups, -1, gm.shape[-1])
            return (gm @ cols.transpose(2, 3)).sum(0).reshape(w_shape)._data
        cols_g = self._cols_of_grad(g, spec, groups)
        xm = x.reshape(n, groups, x.shape[1] // groups, -1)              # (N, G, I, L)
        return (xm @ cols_g.transpose(2, 3)).sum(0).reshape(w_shape)._data

    @staticmethod
    def _cols_of_grad(g, spec, groups):
        cols_g = run_op(IM2COL, (g,), (spec,))                           # (N, G*O*K, L)
        return cols_g.reshape(g.shape[0], groups, -1, cols_g.shape[-1])

    def forward(self, x, w, geo):
        return run_op(CONV, (x, w, None), geo)


_IM2COL_CONV = _Im2ColConv()


def _conv_backward(c, g):
    x, w, b = c.saved
    return convolution_backward(_IM2COL_CONV, c.meta, g, x, w,
                                (c.needs(0), c.needs(1), b is not None and c.needs(2)))


CONV = defop("convolution_ext", "ConvolutionBackward0", _conv_fwd, _conv_backward,
             "y = W im2col(x) + b: gx = col2im(W^T g), gW = g im2col(x)^T, gb = sum g",
             save="inputs",
             torch_call="torch.nn.functional.conv3d(a.reshape(1, 1, 1, 1, -1).expand(1, 2, 2, 2, -1)"
                        " * 1, b.reshape(1, 1, 1, 1, -1)[..., :1].expand(3, 2, 2, 1, 1) * 1)")


def _conv(input: Tensor, weight: Tensor, bias, stride, padding, dilation, groups, nd: int,
          fname: str, transposed: bool = False, output_padding=0) -> Tensor:
    x, w = input._data, weight._data
    batched = x.ndim == nd + 2
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{fname}, but got input of size: {list(x.shape)}")
    if w.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 2}-dimensional input for {nd + 2}-dimensional weight "
                           f"{list(w.shape)}, but got {x.ndim}-dimensional input of size "
                           f"{list(x.shape)} instead")
    if not batched:
        input = input.unsqueeze(0)  # noqa: A001
        x = input._data
    if x.dtype != w.dtype or (bias is not None and bias._data.dtype != x.dtype):
        raise RuntimeError(f"expected scalar type {_type_word(input.dtype)} but found "
                           f"{_type_word(weight.dtype)}")
    stride, dilation = _tuple(stride, nd), _tuple(dilation, nd)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            if transposed or any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, w.shape[2:], strict=True)]
            if any(t % 2 for t in total):
                left = tuple(t // 2 for t in total)
                pad = PUBLIC["torch.nn.functional.pad"]
                input = pad(input, [v for i in range(nd - 1, -1, -1)  # noqa: A001
                                    for v in (0, total[i] % 2)])
                x = input._data
                padding = left
            else:
                padding = tuple(t // 2 for t in total)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    padding = _tuple(padding, nd)
    if not transposed:
        cin_g = w.shape[1]
        if x.shape[1] != cin_g * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, "
                               f"expected input{list(x.shape)} to have {cin_g * groups} channels, "
                               f"but got {x.shape[1]} channels instead")
        if w.shape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                               f"{groups} at dimension 0, but got weight of size "
                               f"{list(w.shape)} instead")
        spec = Im2Col(tuple(w.shape[2:]), stride, padding, dilation, x.shape)
        if any(o <= 0 for o in spec.out_spatial):
            padded = [s + 2 * p for s, p in zip(x.shape[2:], padding, strict=True)]
            eff = [d * (k - 1) + 1 for d, k in zip(dilation, w.shape[2:], strict=True)]
            raise RuntimeError(f"Calculated padded input size per channel: "
                               f"({' x '.join(map(str, padded))}). Kernel size: "
                               f"({' x '.join(map(str, eff))}). Kernel size can't be greater "
                               "than actual input size")
        out_shape = None
    else:
        if x.shape[1] != w.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {list(w.shape)}, expected "
                               f"input{list(x.shape)} to have {w.shape[0]} channels, but got "
                               f"{x.shape[1]} channels instead")
        out_pad = _tuple(output_padding, nd)
        out_sp = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1
                       for i, s, p, d, k, op in zip(x.shape[2:], stride, padding, dilation,
                                                    w.shape[2:], out_pad, strict=True))
        cout = w.shape[1] * groups
        for op_, s_, d_ in zip(out_pad, stride, dilation, strict=True):
            if op_ >= s_ and op_ >= d_:
                raise RuntimeError("output padding must be smaller than either stride or "
                                   "dilation, but got output_padding_height: "
                                   f"{out_pad[0]} output_padding_width: {out_pad[-1]} "
                                   f"stride_height: {stride[0]} stride_width: {stride[-1]} "
                                   f"dilation_height: {dilation[0]} dilation_width: "
                                   f"{dilation[-1]}")
        spec = Im2Col(tuple(w.shape[2:]), stride, padding, dilation, (x.shape[0], cout) + out_sp)
        # (the windows are the input's positions; an output_padding past the stride adds none)
        spec.out_spatial = tuple(x.shape[2:])
        out_shape = (x.shape[0], cout) + out_sp
    b = None if bias is None else bias._data
    out = run_op(CONV, (input, weight, bias), (spec, groups, transposed, out_shape),
                 arrays=(x, w, b))
    return out if batched else out.squeeze(0)


@public("torch.nn.functional.conv3d", "torch.conv3d")
def conv3d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's lower-precision list)
        return _autocast.lower(conv3d, input, weight, bias, stride, padding, dilation, groups)
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_t(nd):
    def conv_transpose(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0,
                       output_padding=0, groups: int = 1, dilation=1) -> Tensor:
        if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's lower-precision list)
            return _autocast.lower(conv_transpose, input, weight, bias, stride,
                                   padding, output_padding, groups, dilation)
        return _conv(input, weight, bias, stride, padding, dilation, groups, nd,
                     f"conv_transpose{nd}d", transposed=True, output_padding=output_padding)

    conv_transpose.__name__ = f"conv_transpose{nd}d"
    return conv_transpose


conv_transpose1d = public("torch.nn.functional.conv_transpose1d", "torch.conv_transpose1d")(_conv_t(1))
conv_transpose2d = public("torch.nn.functional.conv_transpose2d", "torch.conv_transpose2d")(_conv_t(2))
conv_transpose3d = public("torch.nn.functional.conv_transpose3d", "torch.conv_transpose3d")(_conv_t(3))


# ------------------------------------------------------------------ pooling

def _pool_out(size, k, s, p, d, ceil_mode):
    eff = d * (k - 1) + 1
    num = size + 2 * p - eff
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _avg_matrix(size, k, s, p, ceil_mode, count_include_pad, divisor_override):
    """One dim of avg_pool as a matrix (out x in), PyTorch's windows and divisors; the
    divisor's per-dim factor (so the product over dims is the window's divisor)."""
    out = _pool_out(size, k, s, p, 1, ceil_mode)
    m = np.zeros((out, size))
    for o in range(out):
        start = o * s - p
        end = min(start + k, size + p)
        pool = end - start
        lo, hi = max(start, 0), min(end, size)
        m[o, lo:hi] = 1.0
        m[o] /= pool if count_include_pad else (hi - lo)
    if divisor_override:
        m = (m > 0).astype(_F64)
    return m


def _pool_map_backward(c, g):
    """An average pool's backward function takes the input too (PyTorch's
    avg_pool{2,3}d_backward(grad_output, self)): under create_graph a leaf's gradient
    requires grad and differentiates to zeros along it."""
    spec, = c.meta
    x = c.saved[0]
    return (run_op(_POOL_MAP_BACKWARD[c.op.name], (g, x),
                   (spec.adjoint(), spec, tuple(x._data.shape))),)


def _pool_map_double(c, gg):
    _, forward_spec, x_shape = c.meta
    return (run_op(LINEAR_MAP_ADJOINT, (gg,), (forward_spec,)) if c.needs(0) else None,
            make(np.zeros(x_shape, gg._data.dtype)) if c.needs(1) else None)


def _pool_map(name: str, node: str, torch_call: str, rule: str, pool: str, shape: str):
    """An average pool as a linear map whose backward is an op of its own over (grad, x);
    `pool` and `shape` build the backward op's torch_call (a create_graph gradient)."""
    op = defop(name, node, lambda x, spec: spec.apply(x), _pool_map_backward, rule,
               save="inputs", torch_call=torch_call)
    _POOL_MAP_BACKWARD[name] = defop(
        f"{name}_backward", node[:-1] + "Backward0",
        lambda g, x, spec, forward_spec, x_shape: spec.apply(g), _pool_map_double,
        "the pool's adjoint: along grad_output the pool again, along the input zeros",
        torch_call=f"torch.enable_grad()(lambda a: (lambda x: torch.autograd.grad(("
                   f"torch.nn.functional.{pool} ** 2).sum(), x, create_graph=True)[0])("
                   f"{shape}).sum() * a)(a)")
    return op


_POOL_MAP_BACKWARD: dict = {}
AVG_POOL3D = _pool_map("avg_pool3d", "AvgPool3DBackward0",
                       "torch.nn.functional.avg_pool3d(a.reshape(1, 1, 1, 1, -1).expand("
                       "1, 1, 2, 2, -1) * 1, (2, 2, 1))", "the mean of each window",
                       "avg_pool3d(x, (2, 2, 1))",
                       "a.reshape(1, 1, 1, 1, -1).expand(1, 1, 2, 2, -1) * 1")
AVG_POOL2D_1D = _pool_map("avg_pool1d_2d", "AvgPool2DBackward0",
                          "torch.nn.functional.avg_pool1d(a.reshape(1, 1, -1).expand(1, 2, -1)"
                          " * 1, 1)", "the mean of each window", "avg_pool1d(x, 1)",
                          "a.reshape(1, 1, -1).expand(1, 2, -1) * 1")


def _avg_pool(input: Tensor, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, nd: int, fname: str, op):
    if nd == 3:
        _pool3d_args(fname, kernel_size, stride, padding)
    batched = _check_dims(input, nd, fname) if nd != 1 else input._data.ndim == 3
    if nd == 1 and input._data.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input._data.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "avg_pool1d)")
    x = input if batched else input.unsqueeze(0)
    k = _tuple(kernel_size, nd)
    s = _tuple(stride if stride not in (None, [], ()) else kernel_size, nd)
    p = _tuple(padding, nd)
    if nd == 3:
        if divisor_override is not None and divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        _pool3d_steps(x, input, "avg_pool3d", k, s, p)
    else:  # (avg_pool1d runs the 2-d kernel on H = 1)
        shape_checks.pool2d_input(input.unsqueeze(-2).shape)
    for kk, pp in zip(k, p, strict=True):
        if pp * 2 > kk:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation=1")
    if x._data.dtype == np.bool_:
        _float_input(x, f"avg_pool{nd}d_out_frame")
    sp = x._data.shape[2:]
    if nd == 3 and any(sp[i] < k[i] for i in range(3)):
        raise RuntimeError(f"input image (T: {sp[0]} H: {sp[1]} W: {sp[2]}) smaller than kernel "
                           f"size (kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    sizes = [_pool_out(sp[i], k[i], s[i], p[i], 1, ceil_mode) for i in range(nd)]
    if any(o < 1 for o in sizes):
        lead = [1] if nd == 1 else []  # (avg_pool1d runs the 2-d kernel on H = 1)
        shape = "x".join(map(str, [x._data.shape[1]] + lead + list(sp)))
        calc = "x".join(map(str, [x._data.shape[1]] + lead + sizes))
        raise RuntimeError(f"Given input size: ({shape}). Calculated output size: ({calc}). "
                           "Output size is too small")
    mats = []
    for i in range(nd):
        m = _avg_matrix(sp[i], k[i], s[i], p[i], ceil_mode, count_include_pad, divisor_override)
        if m.shape[0] <= 0:
            raise RuntimeError("Output size is too small")
        mats.append((2 + i, m))
    if x._data.dtype.kind in "iu":
        out = _integer_avg(x._data, mats, divisor_override)
        return make(out if batched else out[0])
    if divisor_override:
        mats[0] = (mats[0][0], mats[0][1] / divisor_override)
    if nd == 1:
        out = run_op(op, (x.unsqueeze(-2),), (Separable([(3, mats[0][1])]),)).squeeze(-2)
        return out if batched else out.squeeze(0)
    if not batched:  # (PyTorch's 3-d kernel takes an unbatched input itself: one node)
        mats = [(d - 1, m) for d, m in mats]
    return run_op(op, (input,), (Separable(mats),))


def _integer_avg(x, mats, divisor_override):
    """avg_pool of an integer tensor as PyTorch's kernel: the window's sum (exact) divided
    by its divisor in integer arithmetic (truncating toward zero)."""
    ones = Separable([(d, (m > 0).astype(_F64)) for d, m in mats])
    total = np.rint(ones.apply(x.astype(_F64))).astype(np.int64)
    if divisor_override:
        div = np.full(total.shape, int(divisor_override), np.int64)
    else:
        div = np.ones(total.shape, np.int64)
        for d, m in mats:
            per = np.rint(1.0 / m.max(axis=1)).astype(np.int64)  # (each row's 1/divisor)
            shape = [1] * total.ndim
            shape[d] = len(per)
            div = div * per.reshape(shape)
    quotient = np.abs(total) // np.abs(div) * np.sign(total) * np.sign(div)  # (C's division)
    return quotient.astype(x.dtype)


@public("torch.nn.functional.avg_pool1d", "torch.avg_pool1d")
def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None,
                     1, "avg_pool1d", AVG_POOL2D_1D)


@public("torch.nn.functional.avg_pool3d")
def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 3, "avg_pool3d", AVG_POOL3D)


def _adaptive_matrix(size, out):
    m = np.zeros((out, size))
    for o in range(out):
        start = (o * size) // out
        end = -(-((o + 1) * size) // out)
        m[o, start:end] = 1.0 / (end - start)
    return m


ADAPTIVE_AVG = {
    2: _linear_map("adaptive_avg_pool2d_ext", "AdaptiveAvgPool2DBackward0",
                   "torch.nn.functional.adaptive_avg_pool1d(a.reshape(1, 1, -1) * 1, 2)",
                   "the mean of each adaptive window"),
    3: _linear_map("adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0",
                   "torch.nn.functional.adaptive_avg_pool3d(a.reshape(1, 1, 1, 1, -1) * 1, "
                   "(1, 2, 1))", "the mean of each adaptive window")}
ADAPTIVE_AVG[1] = ADAPTIVE_AVG[2]  # adaptive_avg_pool1d runs the 2-d kernel


def _sizes_arg(output_size, nd, in_sp):
    out = _tuple(output_size, nd) if not isinstance(output_size, (tuple, list)) else tuple(
        output_size)
    return tuple(in_sp[i] if o is None else int(o) for i, o in enumerate(out))


def _adaptive_avg(input: Tensor, output_size, nd: int, fname: str) -> Tensor:
    if nd == 1:
        _check_1d_rank(input, fname)
    _output_size_arg(output_size, nd, input, fname)
    # PyTorch's kernels average a global pool (every output size 1) before any check of
    # the input; adaptive_avg_pool1d is the 2-d kernel on unsqueeze(-2), which checks only
    # the two spatial sizes, and the 3-d one checks every non-batch size before the rank
    if nd in (1, 3) and input._data.ndim >= nd:
        wanted = _tuple(output_size, nd) if not isinstance(output_size, (tuple, list)) else \
            tuple(output_size)
        if len(wanted) == nd and all(o == 1 for o in wanted):
            if nd == 1:
                return input.unsqueeze(-2).mean((-2, -1), keepdim=True).squeeze(-2)
            return input.mean((-3, -2, -1), keepdim=True)
    if nd == 3:
        shape_checks.adaptive_input(input.shape, "adaptive_avg_pool3d")
    batched = _check_dims(input, nd, fname) if nd > 1 else input._data.ndim == 3
    x = input if batched else input.unsqueeze(0)
    if nd == 1:
        shape = tuple(input.unsqueeze(-2).shape)
        for d in (len(shape) - 2, len(shape) - 1):
            if shape[d] == 0:
                raise RuntimeError(
                    "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                    f"dimensions, but input has sizes [{', '.join(map(str, shape))}] with "
                    f"dimension {d} being empty")
    sp = x._data.shape[2:]
    out = _sizes_arg(output_size, nd, sp)
    _float_input(x, f"adaptive_avg_pool{max(nd, 2)}d_cpu")
    if nd == 1:
        res = run_op(ADAPTIVE_AVG[1], (x.unsqueeze(-2),),
                     (Separable([(3, _adaptive_matrix(sp[0], out[0]))]),)).squeeze(-2)
    else:
        if all(o == 1 for o in out):  # (PyTorch: a global pool is a mean, MeanBackward1)
            return input.mean(list(range(-nd, 0)), keepdim=True)
        lead = input._data.ndim - nd
        mats = [(lead + i, _adaptive_matrix(sp[i], out[i])) for i in range(nd)]
        return run_op(ADAPTIVE_AVG[nd], (input,), (Separable(mats),))
    return res if batched else res.squeeze(0)


@public("torch.nn.functional.adaptive_avg_pool1d", "torch.adaptive_avg_pool1d")
def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    return _adaptive_avg(input, output_size, 1, "adaptive_avg_pool1d")


@public("torch.nn.functional.adaptive_avg_pool3d")
def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    return _adaptive_avg(input, output_size, 3, "adaptive_avg_pool3d")


def _window_index(sp, windows):
    """Flat indices into the spatial block for the windows: windows[d] is a list, per output
    position, of input indices along dim d. Returns (out positions..., window elements) as
    flat indices, and a validity mask (ragged windows padded with -1)."""
    nd = len(sp)
    per_dim = []
    for d in range(nd):
        w = windows[d]
        width = max(len(v) for v in w)
        arr = np.full((len(w), width), -1)
        for o, v in enumerate(w):
            arr[o, :len(v)] = v
        per_dim.append(arr)
    outs = [a.shape[0] for a in per_dim]
    widths = [a.shape[1] for a in per_dim]
    grids = np.meshgrid(*[np.arange(o) for o in outs], *[np.arange(w) for w in widths],
                        indexing="ij")
    idx = np.zeros(grids[0].shape, np.int64)
    valid = np.ones(grids[0].shape, bool)
    for d in range(nd):
        v = per_dim[d][grids[d], grids[nd + d]]
        valid &= v >= 0
        idx = idx * sp[d] + np.where(v >= 0, v, 0)
    shape = tuple(outs) + (math.prod(widths),)
    return idx.reshape(shape), valid.reshape(shape), tuple(outs)


def _max_windows(x, windows):
    """Max and arg-max (a flat index into each (n, c) plane, as PyTorch's indices) over the
    windows; nan wins, and the first maximum is kept."""
    n, c = x.shape[:2]
    sp = x.shape[2:]
    if any(not w for w in windows) or not n * c:  # (an empty output: nothing to search)
        shape = (n, c) + tuple(len(w) for w in windows)
        return np.zeros(shape, x.dtype), np.zeros(shape, np.int64)
    idx, valid, outs = _window_index(sp, windows)
    flat = x.reshape(n, c, math.prod(sp))  # (not -1: an empty batch has no size to infer)
    vals = flat[:, :, idx]  # (n, c, *outs, W)
    vals = np.where(valid, vals, -np.inf)
    isnan = np.isnan(vals)
    key = np.where(isnan, np.inf, vals)
    pos = np.argmax(key, axis=-1)
    arg = np.take_along_axis(np.broadcast_to(idx, vals.shape), pos[..., None], -1)[..., 0]
    mx = np.take_along_axis(vals, pos[..., None], -1)[..., 0]
    return mx.astype(x.dtype), arg


def _max_backward(c, g):
    spec, = c.meta
    return (run_op(LINEAR_MAP_ADJOINT, (g,), (spec,)),)


def _gather_fwd(x, scatter):
    return scatter.gather.apply(x)


MAX_POOL3D = defop("max_pool3d_with_indices", "MaxPool3DWithIndicesBackward0", _gather_fwd,
                   _max_backward, "the gradient goes to each window's arg-max",
                   torch_call="torch.nn.functional.max_pool3d(a.reshape(1, 1, 1, 1, -1).expand("
                              "1, 1, 2, 2, -1) * torch.tensor([[[[1.], [2.]], [[3.], [-1.]]]], "
                              "dtype=a.dtype), (2, 2, 1))")
def _adaptive_max_backward(c, g):
    """adaptive_max_pool{2,3}d_backward(grad_output, input, indices): PyTorch's node of it
    takes the input too, so under create_graph a leaf's gradient requires grad (and
    differentiates to zeros along it)."""
    spec, = c.meta
    x = c.saved[0]
    return (run_op(ADAPTIVE_MAX_BACKWARD[c.op.name], (g, x), (spec, tuple(x._data.shape))),)


def _adaptive_max_double(c, gg):
    spec, x_shape = c.meta
    return (run_op(LINEAR_MAP_ADJOINT, (gg,), (spec.adjoint(),)) if c.needs(0) else None,
            make(np.zeros(x_shape, gg._data.dtype)) if c.needs(1) else None)


ADAPTIVE_MAX = {nd: defop(f"adaptive_max_pool{nd}d", f"AdaptiveMaxPool{nd}DBackward0",
                          _gather_fwd, _adaptive_max_backward,
                          "the gradient goes to each window's arg-max", save="inputs",
                          torch_call=f"torch.nn.functional.adaptive_max_pool{nd}d(a.reshape("
                                     f"{', '.join(['1'] * (nd + 1))}, -1) * 1, "
                                     f"({', '.join(['1'] * nd)}))")
                for nd in (2, 3)}
ADAPTIVE_MAX_BACKWARD = {
    f"adaptive_max_pool{nd}d": defop(
        f"adaptive_max_pool{nd}d_backward", f"AdaptiveMaxPool{nd}DBackwardBackward0",
        lambda g, x, spec, x_shape: spec.apply(g), _adaptive_max_double,
        "the arg-max scatter: its gradient along grad_output gathers at the arg-maxes, along "
        "the input zeros",
        torch_call=f"torch.enable_grad()(lambda a: (lambda x: torch.autograd.grad(("
                   f"torch.nn.functional.adaptive_max_pool{nd}d(x, ({', '.join(['1'] * nd)})) "
                   f"** 2).sum(), x, create_graph=True)[0])(a.reshape("
                   f"{', '.join(['1'] * (nd + 1))}, -1) * 1).sum() * a)(a)")
    for nd in (2, 3)}


def _gathered(x: Tensor, windows, op, return_indices: bool, unbatched=None):
    """The max pool of x (N, C, ...) over the windows; with `unbatched` (x is its
    unsqueeze(0)) the op is recorded on the unbatched tensor itself, as PyTorch's kernels
    take unbatched inputs (no Squeeze node)."""
    d = x._data
    mx, arg = _max_windows(d, windows)
    n, c = d.shape[:2]
    plane = math.prod(d.shape[2:])
    flat_index = (np.arange(n * c).reshape(n, c, *([1] * (mx.ndim - 2))) * plane + arg).reshape(-1)
    if unbatched is not None:
        spec = Scatter(Gather(flat_index, mx.shape[1:], unbatched._data.shape))
        out = run_op(op, (unbatched,), (spec,))
        arg = arg[0]
    else:
        spec = Scatter(Gather(flat_index, mx.shape, d.shape))
        out = run_op(op, (x,), (spec,))
    if return_indices:
        return out, make(arg.astype(np.int64))
    return out


def _pool_windows(size, k, s, p, dil, ceil_mode):
    out = _pool_out(size, k, s, p, dil, ceil_mode)
    res = []
    for o in range(out):
        start = o * s - p
        res.append([i for i in range(start, start + dil * (k - 1) + 1, dil) if 0 <= i < size])
    return res


@public("torch.nn.functional.max_pool3d", "torch.max_pool3d")
def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False) -> Tensor:
    _pool3d_args("max_pool3d", kernel_size, stride, padding, dilation)
    batched = _check_dims(input, 3, "max_pool3d")
    x = input if batched else input.unsqueeze(0)
    k = _tuple(kernel_size, 3)
    s = _tuple(stride if stride not in (None, [], ()) else kernel_size, 3)
    p, dil = _tuple(padding, 3), _tuple(dilation, 3)
    _pool3d_steps(x, input, "max_pool3d_with_indices_out_cpu_template", k, s, p, dil, True)
    for kk, pp in zip(k, p, strict=True):
        if pp * 2 > kk:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation=1")
    sp = x._data.shape[2:]
    sizes = [_pool_out(sp[i], k[i], s[i], p[i], dil[i], ceil_mode) for i in range(3)]
    if any(o < 1 for o in sizes):
        shape = "x".join(map(str, x._data.shape[1:]))
        calc = "x".join(map(str, [x._data.shape[1]] + sizes))
        raise RuntimeError(f"Given input size: ({shape}). Calculated output size: ({calc}). "
                           "Output size is too small")
    windows = [_pool_windows(sp[i], k[i], s[i], p[i], dil[i], ceil_mode) for i in range(3)]
    return _gathered(x, windows, MAX_POOL3D, return_indices, None if batched else input)


def _adaptive_windows(size, out):
    return [list(range((o * size) // out, -(-((o + 1) * size) // out))) for o in range(out)]


def _adaptive_max(input: Tensor, output_size, return_indices, nd: int, fname: str):
    if nd == 1:
        _check_1d_rank(input, fname)
    _output_size_arg(output_size, nd, input, fname)
    batched = _check_dims(input, nd, fname) if nd > 1 else input._data.ndim == 3
    _output_size_length(output_size, nd, fname)
    x = input if batched else input.unsqueeze(0)
    shape_checks.adaptive_input(input.shape, f"adaptive_max_pool{nd}d")
    sp = x._data.shape[2:]
    out = _sizes_arg(output_size, nd, sp)
    _float_input(x, f"adaptive_max_pool{max(nd, 2)}d")  # (PyTorch's kernel name)
    if nd == 1:
        windows = [[[0]], _adaptive_windows(sp[0], out[0])]
        res = _gathered(x.unsqueeze(-2), windows, ADAPTIVE_MAX[2], return_indices)
        res = (res[0].squeeze(-2), res[1].squeeze(-2)) if return_indices else res.squeeze(-2)
    else:
        windows = [_adaptive_windows(sp[i], out[i]) for i in range(nd)]
        return _gathered(x, windows, ADAPTIVE_MAX[nd], return_indices,
                         None if batched else input)
    if batched:
        return res
    return (res[0].squeeze(0), res[1].squeeze(0)) if return_indices else res.squeeze(0)


@public("torch.nn.functional.adaptive_max_pool1d", "torch.adaptive_max_pool1d")
def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    return _adaptive_max(input, output_size, return_indices, 1, "adaptive_max_pool1d")


@public("torch.nn.functional.adaptive_max_pool2d")
def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    return _adaptive_max(input, output_size, return_indices, 2, "adaptive_max_pool2d")


@public("torch.nn.functional.adaptive_max_pool3d")
def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    return _adaptive_max(input, output_size, return_indices, 3, "adaptive_max_pool3d")


def infinite_norm_pool(input: Tensor, norm_type, kernel_size, stride, ceil_mode, max_pool):
    """The lp pools' p = +inf (the max pool of |x|) and -inf (minus that of -|x|), as
    PyTorch's functional forms take them; None for a finite p."""
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    return None


@public("torch.nn.functional.lp_pool1d")
def lp_pool1d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    pooled = infinite_norm_pool(input, norm_type, kernel_size, stride, ceil_mode,
                                PUBLIC["torch.nn.functional.max_pool1d"])
    if pooled is not None:
        return pooled
    k = _tuple(kernel_size, 1)
    out = avg_pool1d(input.pow(norm_type), k[0], stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(k[0]).pow(1.0 / norm_type)


@public("torch.nn.functional.lp_pool2d")
def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    pooled = infinite_norm_pool(input, norm_type, kernel_size, stride, ceil_mode,
                                PUBLIC["torch.nn.functional.max_pool2d"])
    if pooled is not None:
        return pooled
    kw, kh = kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size,) * 2
    k = (int(kw), int(kh))
    if input._data.ndim not in (3, 4):  # (avg_pool2d's own errors for a wrong rank)
        PUBLIC["torch.nn.functional.avg_pool2d"](input.pow(norm_type), kernel_size, stride, 0,
                                                 ceil_mode)
    batched = input._data.ndim == 4
    x = input if batched else input.unsqueeze(0)
    shape_checks.pool2d_input(input.shape)
    s = _tuple(stride if stride not in (None, [], ()) else kernel_size, 2)
    sp = x._data.shape[2:]
    sizes = [_pool_out(sp[i], k[i], s[i], 0, 1, ceil_mode) for i in range(2)]
    if any(o < 1 for o in sizes):  # (avg_pool2d's shape check, which PyTorch's runs)
        c = x._data.shape[1]
        raise RuntimeError(f"Given input size: ({c}x{sp[0]}x{sp[1]}). Calculated output size: "
                           f"({c}x{sizes[0]}x{sizes[1]}). Output size is too small")
    mats = [(2 + i, _avg_matrix(sp[i], k[i], s[i], 0, ceil_mode, True, None)) for i in range(2)]
    out = run_op(AVG_POOL2D, (x.pow(norm_type),), (Separable(mats),))
    out = out if batched else out.squeeze(0)
    return (out.sign() * out.abs().relu()).mul(k[0] * k[1]).pow(1.0 / norm_type)


AVG_POOL2D = _linear_map("avg_pool2d_ext", "AvgPool2DBackward0",
                         "torch.nn.functional.lp_pool2d(a.reshape(1, 1, 1, -1).expand(1, 1, 2, -1)"
                         " * 1, 2, (2, 1))", "the mean of each window")


# ------------------------------------------------------------------ interpolate

def _nearest_matrix(in_size, out_size, scale, exact: bool):
    m = np.zeros((out_size, in_size))
    s = (in_size / out_size) if scale is None else 1.0 / scale
    rows = []
    for o in range(out_size):
        src = math.floor((o + 0.5) * s) if exact else math.floor(o * s)
        m[o, min(src, in_size - 1)] = 1.0
        rows.append([(min(src, in_size - 1), 1.0)])
    return m, _taps(rows, in_size)


def _linear_matrix(in_size, out_size, scale, align_corners: bool):
    m = np.zeros((out_size, in_size))
    if align_corners:
        ratio = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    else:
        ratio = (in_size / out_size) if scale is None else 1.0 / scale
    rows = []
    for o in range(out_size):
        if align_corners:
            src = ratio * o
        else:
            src = max(ratio * (o + 0.5) - 0.5, 0.0)
        i0 = min(int(math.floor(src)), in_size - 1)
        i1 = i0 + (1 if i0 < in_size - 1 else 0)
        lam = src - i0
        m[o, i0] += 1 - lam
        m[o, i1] += lam
        rows.append([(i0, 1 - lam), (i1, lam)])
    return m, _taps(rows, in_size)


def _cubic_weights(t, a=-0.75):
    def c1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def c2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)]


def _cubic_matrix(in_size, out_size, scale, align_corners: bool):
    m = np.zeros((out_size, in_size))
    if align_corners:
        ratio = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    else:
        ratio = (in_size / out_size) if scale is None else 1.0 / scale
    rows = []
    for o in range(out_size):
        src = ratio * o if align_corners else ratio * (o + 0.5) - 0.5
        i = math.floor(src)
        t = src - i
        row = []
        for j, w in enumerate(_cubic_weights(t)):
            idx = min(max(i - 1 + j, 0), in_size - 1)
            m[o, idx] += w
            row.append((idx, w))
        rows.append(row)
    return m, _taps(rows, in_size)


_INTERP_NODES = {("nearest", 1): "UpsampleNearest1DBackward0",
                 ("nearest", 2): "UpsampleNearest2DBackward0",
                 ("nearest", 3): "UpsampleNearest3DBackward0",
                 ("nearest-exact", 1): "UpsampleNearestExact1DBackward0",
                 ("nearest-exact", 2): "UpsampleNearestExact2DBackward0",
                 ("nearest-exact", 3): "UpsampleNearestExact3DBackward0",
                 ("linear", 1): "UpsampleLinear1DBackward0",
                 ("bilinear", 2): "UpsampleBilinear2DBackward0",
                 ("bicubic", 2): "UpsampleBicubic2DBackward0",
                 ("trilinear", 3): "UpsampleTrilinear3DBackward0"}
INTERP = {}
for (_mode, _nd), _node in _INTERP_NODES.items():
    _shape = ", ".join(["1"] * (_nd + 1))
    INTERP[_mode, _nd] = _linear_map(
        f"upsample_{_mode}{_nd}d", _node,
        f"torch.nn.functional.interpolate(a.reshape({_shape}, -1).expand("
        f"{', '.join(['1', '2'] + ['2'] * (_nd - 1))}, -1) * 1, scale_factor=2, mode='{_mode}')",
        f"{_mode} interpolation: a fixed weighted sum per output element")


# the kernel a non-float input reaches first (its "not implemented for 'Long'" error)
_INTERP_KERNELS = {("nearest", 1): "compute_indices_weights_nearest",
                   ("nearest", 2): "upsample_nearest2d_channels_last",
                   ("nearest", 3): "upsample_nearest3d_channels_last",
                   ("bilinear", 2): "upsample_bilinear2d_channels_last",
                   ("bicubic", 2): "compute_indices_weights_cubic"}


@public("torch.nn.functional.interpolate")
def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners=None, recompute_scale_factor=None, antialias: bool = False) -> Tensor:
    x = input._data
    nd = x.ndim - 2
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if align_corners is None:
        align_corners = False
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if size is not None:
        sizes = _tuple(size, nd) if not isinstance(size, (tuple, list)) else tuple(size)
        if len(sizes) != nd:
            raise ValueError(f"Input and output must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(x.shape[2:])} and output size of {tuple(size) if isinstance(size, (tuple, list)) else size}. Please "
                             "provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                             "size in (o1, o2, ...,oK) format.")
        scales = [None] * nd
    else:
        factors = (tuple(float(f) for f in scale_factor) if isinstance(scale_factor,
                                                                         (tuple, list))
                   else (float(scale_factor),) * nd)
        if len(factors) != nd:
            raise ValueError(f"Input and scale_factor must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(x.shape[2:])} and scale_factor of shape {list(factors)}. "
                             "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             "scale_factor in (s1, s2, ...,sK) format.")
        sizes = tuple(int(math.floor(s * f)) for s, f in zip(x.shape[2:], factors, strict=True))
        scales = [None if recompute_scale_factor else f for f in factors]
    if mode == "area":
        return _adaptive_avg(input, sizes, nd, f"adaptive_avg_pool{nd}d")
    wanted = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
    if mode in wanted and wanted[mode] != nd:
        raise NotImplementedError(
            f"Got {x.ndim}D input, but {mode} mode needs {wanted[mode] + 2}D input")
    if (mode, nd) not in INTERP:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {x.ndim}D) for the "
            f"modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
            f"(got {mode})")
    if antialias:
        if mode == "bilinear":  # (aten_breadth: PyTorch's separable antialiased kernel)
            return PUBLIC["aten._upsample_bilinear2d_aa"](
                input, list(sizes), align_corners,
                scales_h=scales[0], scales_w=scales[1])
        raise NotImplementedError("interpolate(antialias=True) is not supported by gradcli")
    _float_input(input, _INTERP_KERNELS.get((mode.replace("-exact", ""), nd),
                                            "compute_indices_weights_linear"))
    if any(n <= 0 for n in tuple(x.shape[2:]) + tuple(sizes)):
        dims = "DHW"[3 - nd:]
        given = ", ".join(f"{c}: {n}" for c, n in zip(dims, x.shape[2:], strict=True))
        wanted = ", ".join(f"{c}: {n}" for c, n in zip(dims, sizes, strict=True))
        raise RuntimeError("Input and output sizes should be greater than 0, but got input "
                           f"({given}){' and' if nd == 1 else ''} output ({wanted})")
    mats = []
    for i in range(nd):
        if mode in ("nearest", "nearest-exact"):
            m = _nearest_matrix(x.shape[2 + i], sizes[i], scales[i], mode == "nearest-exact")
        elif mode == "bicubic":
            m = _cubic_matrix(x.shape[2 + i], sizes[i], scales[i], align_corners)
        else:
            m = _linear_matrix(x.shape[2 + i], sizes[i], scales[i], align_corners)
        mats.append((2 + i, *m))
    return run_op(INTERP[mode, nd], (input,), (Separable(mats),))


@public("torch.nn.functional.upsample")
def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners=None) -> Tensor:
    warn_at_caller("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                   "instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


@public("torch.nn.functional.upsample_nearest")
def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    warn_at_caller("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` "
                   "instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


@public("torch.nn.functional.upsample_bilinear")
def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    warn_at_caller("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` "
                   "instead.")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ------------------------------------------------------------------ grid_sample

def _unnormalize(coord, size, align_corners, nd=3):
    """Grid coordinate to pixel coordinate, rounded as PyTorch's kernel rounds it: the
    vectorized 2-d kernel scales by size / 2 and subtracts 0.5, the scalar 3-d one takes
    ((c + 1) * size - 1) / 2 (a pixel centre lands on either side of an integer, and the
    floor picks the cell)."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    if nd == 2:
        shifted = coord + 1
        x = shifted * (size / 2) - 0.5
        # the compiled kernel fuses the scale and the -0.5 into one rounding (an FMA):
        # move x to the fused value (at most an ulp away; the difference is exact)
        fused = _fused_scale_sub(shifted._data, size / 2, 0.5)
        if fused is not None:
            x = x + make(fused - x._data)
        return x
    return ((coord + 1) * size - 1) / 2


def _fused_scale_sub(a, scale: float, sub: float):
    """a * scale - sub rounded once (as an FMA rounds), for float32 / float64 arrays; None
    for other dtypes. float32 goes through float64 (the product is exact there); float64
    through an error-free product (Veltkamp split) and sum (Knuth's TwoSum)."""
    if a.dtype == np.float32:
        return (a.astype(_F64) * scale - sub).astype(np.float32)
    if a.dtype != np.float64:
        return None
    with np.errstate(all="ignore"):
        prod = a * scale
        split = 134217729.0 * a
        a_hi = split - (split - a)
        a_lo = a - a_hi
        split_s = 134217729.0 * scale
        s_hi = split_s - (split_s - scale)
        s_lo = scale - s_hi
        prod_err = ((a_hi * s_hi - prod) + a_hi * s_lo + a_lo * s_hi) + a_lo * s_lo
        total = prod - sub
        back = total - prod
        sum_err = (prod - (total - back)) + (-sub - back)
        fused = total + (prod_err + sum_err)
    # (inf / nan coordinates keep the plain value)
    return np.where(np.isfinite(fused), fused, a * scale - sub)


def _reflect_plan(c, lo2, hi2):
    """reflect c (numpy) into [lo2/2, hi2/2] as PyTorch's reflect_coordinates: returns
    (sign, offset) with reflected = sign * c + offset (piecewise linear)."""
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    if span <= 0:
        return np.zeros_like(c), np.zeros_like(c)
    inner = c - lo
    sign0 = np.where(inner < 0, -1.0, 1.0)
    a = np.abs(inner)
    flips = np.floor(a / span)
    even = (flips % 2) == 0
    # reflected = lo + extra (even) or span - extra + lo (odd); extra = sign0*(c-lo) - flips*span
    sign = np.where(even, sign0, -sign0)
    offset = np.where(even, lo - sign0 * lo - flips * span, span + lo + sign0 * lo + flips * span)
    return sign, offset


def _clip_flat_at_borders(x: Tensor, size: int) -> Tensor:
    """x clipped to [0, size - 1] with PyTorch's clip_coordinates gradient: a coordinate
    on a border counts as outside (multiplier 0), where clamp would pass 1."""
    clipped = x.clamp(0, size - 1)
    d = clipped._data
    inside = make((d > 0) & (d < size - 1))
    return PUBLIC["torch.where"](inside, x, clipped.detach())


def _source_coords(coord: Tensor, size: int, padding: str, align_corners: bool,
                   apply_padding: bool = True, nd: int = 3) -> Tensor:
    """PyTorch's grid_sampler_compute_source_index as Tensor ops (differentiable in coord):
    unnormalize, then clip (border) or reflect (reflection) with its piecewise slopes."""
    x = _unnormalize(coord, size, align_corners, nd)
    if not apply_padding or padding == "zeros":
        return x
    if padding == "border":
        return _clip_flat_at_borders(x, size)
    d = x._data
    if align_corners:
        sign, offset = _reflect_plan(d, 0, 2 * (size - 1))
    else:
        sign, offset = _reflect_plan(d, -1, 2 * size - 1)
    x = x * make(sign.astype(d.dtype)) + make(offset.astype(d.dtype))
    if nd == 2 and d.dtype in (np.float32, np.float64):
        # the reflected value as the vectorized kernel rounds it (around low, within
        # twice the span), so that the floor at a pixel centre matches
        x = x + make(_reflect_2d(d, size, align_corners) - x._data)
    return _clip_flat_at_borders(x, size)


def _reflect_2d(d, size: int, align_corners: bool):
    """The 2-d kernel's reflect_coordinates on the numpy coordinates d (in d's dtype)."""
    low = d.dtype.type(0.0 if align_corners else -0.5)
    twice_span = d.dtype.type(2 * (size - 1) if align_corners else 2 * size)
    if twice_span <= 0:
        return np.zeros_like(d)
    with np.errstate(all="ignore"):
        abs_in = np.abs(d - low)
        extra = abs_in - np.trunc(abs_in / twice_span) * twice_span
        reflected = twice_span - extra
        return np.where(extra > reflected, reflected, extra) + low


def _gather_corner(inp: Tensor, idx_list, valid, out_sp, weight=None):
    """inp (N, C, *sp) sampled at integer positions idx_list (one array per spatial dim, of
    shape (N, *out_sp)), 0 where not valid, times the corner's weight (N, *out_sp): a
    Gather linear map and a where (PyTorch's 2-d kernel gathers 0 for a corner out of
    bounds, so an inf input there adds 0 * weight, nan for the nan weight of an inf
    coordinate; its 3-d kernel skips the corner)."""
    d = inp._data
    n, c = d.shape[:2]
    sp = d.shape[2:]
    flat = np.zeros(idx_list[0].shape, np.int64)
    for i, ix in enumerate(idx_list):
        flat = flat * sp[i] + np.clip(ix, 0, sp[i] - 1)
    plane = math.prod(sp)
    base = (np.arange(n)[:, None] * c + np.arange(c)[None, :]) * plane  # (N, C)
    index = base.reshape((n, c) + (1,) * len(out_sp)) + flat[:, None]
    spec = Gather(index.reshape(-1), (n, c) + tuple(out_sp), d.shape)
    vals = run_op(LINEAR_MAP_ADJOINT, (inp,), (spec,))
    mask = make(np.broadcast_to(valid[:, None], vals._data.shape).copy())
    where = PUBLIC["torch.where"]
    if weight is None:
        return where(mask, vals, 0.0)
    if len(sp) == 3:  # (the 3-d kernel skips the corner: not even a nan weight counts)
        return where(mask, vals * weight.unsqueeze(1), 0.0)
    return where(mask, vals, 0.0) * weight.unsqueeze(1)


def _cubic_coeffs(t: Tensor):
    a = -0.75

    def c1(x):
        return ((x * (a + 2)) - (a + 3)) * x * x + 1

    def c2(x):
        return ((x * a - 5 * a) * x + 8 * a) * x - 4 * a

    return [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)]


def _grid_sample_tensors(inp: Tensor, grid: Tensor, mode: str, padding: str,
                         align_corners: bool) -> Tensor:
    """grid_sample as Tensor ops: the gathers are linear maps, the weights functions of the
    grid, so gradients of every order follow."""
    d = inp._data
    nd = d.ndim - 2
    sp = d.shape[2:]
    out_sp = grid._data.shape[1:-1]
    # grid's last dim lists x (the last spatial dim) first
    coords = [grid[..., nd - 1 - i] for i in range(nd)]  # per spatial dim i
    if mode == "bicubic":
        src = [_unnormalize(coords[i], sp[i], align_corners, nd) for i in range(nd)]
        floors = [np.floor(s._data) for s in src]
        ts = [s - make(f.astype(d.dtype)) for s, f in zip(src, floors, strict=True)]
        wy, wx = _cubic_coeffs(ts[0]), _cubic_coeffs(ts[1])
        out = None
        for a in range(4):
            for b in range(4):
                iy = floors[0] - 1 + a
                ix = floors[1] - 1 + b
                idx, valid = [], np.ones(iy.shape, bool)
                for pos, size in ((iy, sp[0]), (ix, sp[1])):
                    if padding == "zeros":
                        valid &= (pos >= 0) & (pos < size)
                        idx.append(pos.astype(np.int64))
                    else:
                        src_pos = _bounded_tap(pos, size, padding, align_corners)
                        idx.append(src_pos)
                term = _gather_corner(inp, idx, valid, out_sp, wy[a] * wx[b])
                out = term if out is None else out + term
        return out
    src = [_source_coords(coords[i], sp[i], padding, align_corners, nd=nd) for i in range(nd)]
    if mode == "nearest":
        idx = [np.round(s._data).astype(np.int64) for s in src]  # (half to even, as nearbyint)
        valid = np.ones(idx[0].shape, bool)
        for i, size in enumerate(sp):
            valid &= (idx[i] >= 0) & (idx[i] < size)
        return _gather_corner(inp, idx, valid, out_sp) + (grid.sum() * 0)
    with np.errstate(invalid="ignore"):  # (an inf or huge coordinate: no valid corner)
        lows = [np.floor(s._data).astype(np.int64) for s in src]
    # the fraction from the float floor, as PyTorch's kernel (a coordinate past int64's
    # range gives 0, not the difference to a wrapped integer)
    fracs = [s - make(np.floor(s._data)) for s in src]
    out = None
    for corner in range(2 ** nd):
        idx, weight = [], None
        valid = np.ones(lows[0].shape, bool)
        for i in range(nd):
            up = (corner >> (nd - 1 - i)) & 1
            pos = lows[i] + up
            valid &= (pos >= 0) & (pos < sp[i])
            idx.append(pos)
            w = fracs[i] if up else 1 - fracs[i]
            weight = w if weight is None else weight * w
        term = _gather_corner(inp, idx, valid, out_sp, weight)
        out = term if out is None else out + term
    return out


def _bounded_tap(pos, size, padding, align_corners):
    """A bicubic tap's index under border / reflection padding (PyTorch's
    compute_coordinates on the integer tap)."""
    p = pos.astype(_F64)
    if padding == "reflection":
        if align_corners:
            sign, offset = _reflect_plan(p, 0, 2 * (size - 1))
        else:
            sign, offset = _reflect_plan(p, -1, 2 * size - 1)
        p = sign * p + offset
    return np.clip(p, 0, size - 1).astype(np.int64)


def _grid_sample_fwd(inp, grid, mode, padding, align_corners):
    from ..grad_mode import no_grad

    with no_grad():  # (+ 0.: PyTorch's sum over the corners starts from 0., -0. gives 0.)
        return _grid_sample_tensors(make(inp), make(grid), mode, padding, align_corners)._data + 0.0
