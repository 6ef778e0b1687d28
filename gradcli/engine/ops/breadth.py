"""More of PyTorch's OpInfo list (issue #24): index_reduce, cov/corrcoef, nextafter,
channel_shuffle, constant_pad_nd, linalg.diagonal/vander, rms_norm, the native_*_norm
forms. Each is PyTorch's own composition where PyTorch composes (so the grad_fn chain is
PyTorch's), or one node computed in numpy at full accuracy, with PyTorch's errors."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes
from ..fpstate import run_quietly
from ..grad_mode import GRAD_MODE
from ..limits import check_elements
from ..node import keep_index_inputs, packs_index_first
from ..tensor import Tensor, _type_word, _wrap_dim, make
from ..warn_site import warn_at_caller, warn_once
from .declare import binary
from .registry import defop, public, run_op

# ----------------------------------------------------------------- nextafter


def _nextafter_backward(c, g):
    # PyTorch: the input's gradient passes through where the step is taken (x != y; zero
    # where x == y and the result is y), the direction's is zero
    x, other = c.saved
    gx = None
    if c.needs(0):
        moved = make((x._data != other._data).astype(g._data.dtype))
        gx = g * moved
    return (gx, make(np.zeros(other._data.shape, g._data.dtype)) if c.needs(1) else None)


binary("nextafter", "NextafterBackward0", np.nextafter, _nextafter_backward,
       "d nextafter(a, b)/da = 1, d/db = 0", ints="error")


# ----------------------------------------------------------------- index_reduce

_REDUCES = ("prod", "mean", "amax", "amin")


def _extreme(dtype, end: str):
    """The lowest or highest value of an integer or bool dtype."""
    if dtype == np.bool_:
        return end == "max"
    return getattr(np.iinfo(dtype), end)


def _index_reduce_fwd(x, src, index, dim, reduce, include_self):
    if x.ndim == 0:
        return _index_reduce_fwd(x.reshape(1), src.reshape(-1), index, 0, reduce,
                                 include_self).reshape(())
    out = np.moveaxis(x.copy(), dim, 0)
    s = np.moveaxis(src, dim, 0)
    touched = np.unique(index)
    if reduce == "prod":
        if not include_self:
            out[touched] = 1
        np.multiply.at(out, index, s)
    elif reduce == "amax":
        if not include_self:  # (the lowest value of the dtype: -inf for floats)
            out[touched] = -np.inf if out.dtype.kind in "fV" else _extreme(out.dtype, "min")
        np.maximum.at(out, index, s)
    elif reduce == "amin":
        if not include_self:
            out[touched] = np.inf if out.dtype.kind in "fV" else _extreme(out.dtype, "max")
        np.minimum.at(out, index, s)
    else:  # mean: the sum over self (if included) and the sources, over their count
        count = np.zeros(out.shape[:1], np.int64)
        np.add.at(count, index, 1)
        if include_self:
            count += 1
        else:
            out[touched] = 0
        np.add.at(out, index, s)
        count = np.maximum(count, 1).reshape((-1,) + (1,) * (out.ndim - 1))
        if out.dtype.kind in "fV":
            out = out / count
        else:
            out = out // count
    return np.moveaxis(out.astype(x.dtype, copy=False), 0, dim)


def _index_reduce_backward(c, g):
    """PyTorch's index_reduce_backward (FunctionsManual.cpp), in Tensor ops."""
    x, src = c.saved[:2]  # (the index keep_index_inputs kept follows)
    index_arr, dim, reduce, include_self = c.meta
    index = make(index_arr)
    result = c.result
    if x._data.ndim == 0:  # (a 0-d self: the same rule on one-element vectors)
        x, src, result, g = x.reshape(1), src.reshape(-1), result.reshape(1), g.reshape(1)
        gs, gsrc = _index_reduce_rule(x, src, result, g, index, index_arr, 0, reduce,
                                      include_self, c)
        shape = c.saved[1]._data.shape
        return (gs.reshape(()) if gs is not None else None,
                gsrc.reshape(shape) if gsrc is not None else None)
    return _index_reduce_rule(x, src, result, g, index, index_arr, dim, reduce, include_self, c)


def _index_reduce_rule(x, src, result, g, index, index_arr, dim, reduce, include_self, c):
    from .elementwise import where

    dt = x._data.dtype
    if reduce == "prod":
        masked_self = x.masked_fill(x == 0, 1)
        masked_self_result = masked_self.index_reduce(dim, index, src, reduce,
                                                      include_self=include_self)
        grad_self = g * masked_self_result / masked_self
        src_zero = src == 0
        src_num_zeros = make(np.zeros(x._data.shape, dt)).index_add(
            dim, index, src_zero.to(x.dtype)).index_select(dim, index)
        src_single_zero = src_zero & (src_num_zeros == 1)
        masked_src = src.masked_fill(src_single_zero, 1)
        masked_src_result = x.index_reduce(dim, index, masked_src, reduce,
                                           include_self=include_self)
        grad_src = where(src_single_zero, (g * masked_src_result).index_select(dim, index),
                         (g * result).index_select(dim, index) / src.masked_fill(src_zero, 1))
        if bool((src_num_zeros._data > 1).any()):
            from .delayed_error import delayed_error

            grad_src = delayed_error(grad_src, "index_reduce(): Double backward is unsupported "
                                     "for source when >1 zeros in source are scattered to the "
                                     "same position in self")
    elif reduce == "mean":
        n = make((np.ones if include_self else np.zeros)(g._data.shape, g._data.dtype))
        n = n.index_add(dim, index, make(np.ones(src._data.shape, g._data.dtype)))
        n = n.masked_fill(n == 0, 1)
        grad_self = g / n
        grad_src = g.index_select(dim, index) / n.index_select(dim, index)
    else:
        value = result.index_select(dim, index)
        self_is_result = (x == result).to(x.dtype)
        src_is_result = (src == value).to(x.dtype)
        n_to_distribute = self_is_result.index_add(dim, index, src_is_result)
        grad_distributed = g / n_to_distribute
        grad_self = self_is_result * grad_distributed
        grad_src = src_is_result * grad_distributed.index_select(dim, index)
    if not include_self:
        reduced = np.zeros(x._data.shape[dim], bool)
        reduced[index_arr] = True
        shape = [1] * x._data.ndim
        shape[dim] = -1
        grad_self = grad_self.masked_fill(make(reduced.reshape(shape)), 0)
    return (grad_self if c.needs(0) else None, grad_src if c.needs(1) else None)


INDEX_REDUCE = defop("index_reduce", "IndexReduceBackward0", _index_reduce_fwd,
                     _index_reduce_backward,
                     "prod: g * result / x (single zeros apart); mean: g / count; amax/amin: "
                     "g split among the elements equal to the result",
                     save="inputs result",
                     torch_call="torch.index_reduce(a.reshape(-1), 0, torch.tensor([0, 0]), "
                                "a.reshape(-1)[:2].cos() + 3, 'mean')")
packs_index_first(INDEX_REDUCE)  # (IndexReduceBackward0 saves index first)


def _index_reduce_checks(name: str, x: Tensor, dim: int, index, source, reduce: str):
    if reduce not in _REDUCES:
        raise RuntimeError(f"{name.rstrip('_')}(): Expected reduce to be one of prod, mean, amax "
                           f"or amin but got {reduce}.")
    d = _wrap_dim(dim, max(x._data.ndim, 1))
    if not isinstance(index, Tensor):
        raise TypeError(f"index_reduce(): argument 'index' (position 2) must be Tensor, not "
                        f"{type(index).__name__}")
    idx = index._data
    if idx.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{idx.ndim} with type: {_type_word(index.dtype)} and size: "
                         f"{list(idx.shape)}")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{_type_word(index.dtype)}")
    src_size = source._data.shape[d] if source._data.ndim else 1
    if idx.size != src_size:
        raise RuntimeError(f"index_reduce_(): Number of indices ({idx.size}) should be equal "
                           f"to source.size(dim): ({src_size}), for dim: {d}")
    self_sizes, source_sizes = list(x._data.shape), list(source._data.shape)
    if self_sizes and source_sizes:
        del self_sizes[d]
        if d < len(source_sizes):
            del source_sizes[d]
    if self_sizes != source_sizes:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x._data.shape)} "
                           f"source.shape = {list(source._data.shape)}")
    if x._data.dtype != source._data.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_type_word(x.dtype)}) and source "
                           f"({_type_word(source.dtype)}) must have the same scalar type")
    size = x._data.shape[d] if x._data.ndim else 1
    flat = idx.reshape(-1).astype(np.int64)
    if flat.size and (flat.min() < -size or flat.max() >= size):
        raise IndexError("index out of range in self")
    return d, np.where(flat < 0, flat + size, flat)


def _warn_beta() -> None:
    warn_once("index_reduce_beta", "index_reduce() is in beta and the API may change at any time. "
              "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
              "TensorAdvancedIndexing.cpp:1523.)")


@public("torch.index_reduce", "Tensor.index_reduce")
def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    d, idx = _index_reduce_checks("index_reduce", input, dim, index, source, reduce)
    _warn_beta()
    return keep_index_inputs(
        run_op(INDEX_REDUCE, (input, source), (idx, d, reduce, bool(include_self))), index)


@public("Tensor.index_reduce_")
def index_reduce_(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    return input._apply_inplace(lambda old: index_reduce(old, dim, index, source, reduce,
                                                         include_self=include_self))


# ----------------------------------------------------------------- cov / corrcoef


@public("torch.cov", "Tensor.cov")
def cov(input: Tensor, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """ATen's composition (Correlation.cpp): the centred observations' product over the
    normalisation factor, squeezed."""
    x = input._data
    if x.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {x.ndim} dimensions")
    if x.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    obs = input.view(1, -1) if x.ndim < 2 else input
    n_obs = obs.shape[1]
    w = None
    if fweights is not None:
        f = fweights._data
        if f.ndim > 1:
            raise RuntimeError(f"cov(): expected fweights to have one or fewer dimensions but "
                               f"got fweights with {f.ndim} dimensions")
        if f.dtype.kind not in "iu":
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got "
                               f"fweights with {_type_word(fweights.dtype)} dtype")
        if f.size != n_obs:
            raise RuntimeError(f"cov(): expected fweights to have the same numel as there are "
                               f"observations in the input but got {f.size} != {n_obs}")
        if f.size and f.min() < 0:
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        a = aweights._data
        if a.ndim > 1:
            raise RuntimeError(f"cov(): expected aweights to have one or fewer dimensions but "
                               f"got aweights with {a.ndim} dimensions")
        if a.dtype.kind not in "fV":
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {_type_word(aweights.dtype)} dtype")
        if a.size != n_obs:
            raise RuntimeError(f"cov(): expected aweights to have the same numel as there are "
                               f"observations in the input but got {a.size} != {n_obs}")
        if a.size and a.min() < 0:
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else w * aweights
    if w is not None:
        w_sum = w.sum()
        if not np.any(w_sum._data != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    else:
        w_sum = make(np.array(n_obs, np.int64))
    avg = (obs * w if w is not None else obs).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if bool(np.all(norm_factor._data <= 0)):
        warn_at_caller("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                       "than the number of observations. (Triggered internally at /__w/pytorch/"
                       "pytorch/aten/src/ATen/native/Correlation.cpp:129.)")
        norm_factor = make(np.zeros((), norm_factor._data.dtype))
    centred = obs - avg.unsqueeze(1)
    c = centred.mm((centred * w if w is not None else centred).t())
    return c.true_divide(norm_factor).squeeze()


@public("torch.corrcoef", "Tensor.corrcoef")
def corrcoef(input: Tensor) -> Tensor:
    x = input._data
    if x.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {x.ndim} dimensions")
    c = cov(input)
    if c._data.ndim == 0:
        return c / c  # nan for nan, inf or 0, else 1
    stddev = c.diagonal().sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return c.clip(-1, 1)


# ----------------------------------------------------------------- shapes


def _channel_shuffle_fwd(x, groups):
    n, ch = x.shape[:2]
    rest = x.shape[2:]
    return np.ascontiguousarray(
        x.reshape((n, groups, ch // groups) + rest).swapaxes(1, 2)).reshape(x.shape)


CHANNEL_SHUFFLE = defop(
    "channel_shuffle", "ChannelShuffleBackward0", _channel_shuffle_fwd,
    # (through the public checks: no channels means 0 groups, PyTorch's error)
    lambda c, g: (channel_shuffle(g, g._data.shape[1] // c.meta[0]),),
    "d channel_shuffle(x, g)/dx = channel_shuffle(grad, C / g) (the inverse permutation)",
    torch_call="torch.nn.functional.channel_shuffle(a.reshape(1, -1, 1).repeat(1, 2, 1), 2)")


@public("torch.nn.functional.channel_shuffle", "torch.channel_shuffle")
def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    x = input._data
    if x.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(x.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if x.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {x.shape[1]} "
                           f"channels and {groups} groups.")
    return run_op(CHANNEL_SHUFFLE, (input,), (int(groups),))


@public("torch.constant_pad_nd")
def constant_pad_nd(input: Tensor, pad, value=0) -> Tensor:
    from .functional_ext import pad as f_pad

    return f_pad(input, tuple(pad), "constant", value)


@public("torch.linalg.diagonal")
def linalg_diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    nd = A._data.ndim
    _wrap_dim(dim1, nd)  # (PyTorch's IndexError, dim1 first)
    _wrap_dim(dim2, nd)
    return A.diagonal(offset, dim1, dim2)


@public("torch.linalg.vander")
def linalg_vander(x: Tensor, *, N=None) -> Tensor:
    """ATen's composition: ones, then the cumulative product of x repeated N - 1 times."""
    d = x._data
    n = (d.shape[-1] if d.ndim else 1) if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if d.dtype == np.bool_:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           "tensors, but got Bool")
    if d.ndim == 0:
        x = x.unsqueeze(0)
        d = x._data
    ones = make(np.ones(d.shape + (1,), x._data.dtype))
    powers = x.unsqueeze(-1).expand(*d.shape, n - 1).cumprod(-1)
    from .shape import cat

    return cat([ones, powers], -1)


# ----------------------------------------------------------------- rms_norm


@public("torch.nn.functional.rms_norm", "torch.rms_norm")
def rms_norm(input: Tensor, normalized_shape, weight=None, eps=None) -> Tensor:
    """ATen's composition: x * rsqrt(mean(x^2 over the normalized dims) + eps) (* weight)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    x = input._data
    k = len(shape)
    if k == 0 or x.ndim < k or tuple(x.shape[x.ndim - k:]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*{', '.join(map(str, shape))}], but got input of size{list(x.shape)}")
    if weight is not None and tuple(weight._data.shape) != shape:
        raise RuntimeError(
            f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{list(weight._data.shape)} and normalized_shape = {list(shape)}")
    if eps is None:
        eps = float(dtypes.finfo(x.dtype).eps) if x.dtype.kind in "fV" else float(
            np.finfo(np.float32).eps)
    dims = tuple(range(x.ndim - k, x.ndim))
    rstd = (input.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    out = input.mul(rstd)
    return out.mul(weight) if weight is not None else out


# ----------------------------------------------------------------- native norms


@public("torch.native_layer_norm")
def native_layer_norm(input: Tensor, normalized_shape, weight, bias, eps: float):
    """(output, mean, rstd): layer_norm's node, and its statistics (no graph, as PyTorch's:
    they have no gradient formula of their own)."""
    from .nn_layers import layer_norm

    out = layer_norm(input, normalized_shape, weight, bias, eps)
    k = len(normalized_shape) if not isinstance(normalized_shape, int) else 1
    x = input._data
    axes = tuple(range(x.ndim - k, x.ndim))
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=axes, keepdims=True) if x.size else np.zeros(
        x.shape[:x.ndim - k] + (1,) * k)
    var = ((x64 - mean) ** 2).mean(axis=axes, keepdims=True) if x.size else mean
    dt = x.dtype if x.dtype.kind in "fV" else np.dtype(np.float64)
    with np.errstate(all="ignore"):  # (in the input's dtype, eps too, as PyTorch's kernel)
        rstd = (1 / np.sqrt(var.astype(dt) + dt.type(eps))).astype(dt)
    return out, make(mean.astype(x.dtype)), make(rstd.astype(x.dtype))


def _bn_stats(x: np.ndarray, eps: float):
    """native_batch_norm's save_mean and save_invstd, as its forward computes them."""
    from ..kernels import batch_norm as order

    mean, var_sum = order.batch_stats(x)
    return mean, order.train_invstd(var_sum, x.size // x.shape[1], eps)


def _batch_norm_alias(name: str, node: str, call: str):
    from .nn_layers import BATCH_NORM

    return defop(name, node, BATCH_NORM.forward, BATCH_NORM.backward, BATCH_NORM.rule,
                 save="inputs", torch_call=call)


# the generic tests' input: two distinct rows per element of `a` (a batch of one row
# normalises to rounding noise times 1/sqrt(eps), which PyTorch's fused float32 kernel and
# a float64 computation round differently)
_TWO_ROWS_EACH = "torch.cat([a.reshape(-1, 1), a.reshape(-1, 1) * 2 + 1]).repeat(1, 2)"

BATCH_NORM_LEGIT = _batch_norm_alias(
    "native_batch_norm_legit", "NativeBatchNormLegitBackward0",
    "torch._native_batch_norm_legit(" + _TWO_ROWS_EACH + ", None, None, "
    "torch.zeros(2, dtype=a.dtype), torch.ones(2, dtype=a.dtype), True, 0.1, 1e-5)[0]")
BATCH_NORM_LEGIT_NO_STATS = _batch_norm_alias(
    "native_batch_norm_legit_no_stats", "NativeBatchNormLegitBackward1",
    "torch._native_batch_norm_legit(" + _TWO_ROWS_EACH + ", None, None, True, 0.1, 1e-5)[0]")


@public("torch.native_batch_norm")
def native_batch_norm(input: Tensor, weight, bias, running_mean, running_var, training: bool,
                      momentum: float, eps: float):
    """(output, save_mean, save_invstd): batch_norm's node and the batch statistics it
    saved (empty in evaluation mode)."""
    from .nn_layers import BATCH_NORM

    return _native_batch_norm(BATCH_NORM, input, weight, bias, running_mean, running_var,
                              training, momentum, eps)


def _native_batch_norm(op, input: Tensor, weight, bias, running_mean, running_var,
                       training: bool, momentum: float, eps: float):
    from .nn_layers import batch_norm_as

    out = batch_norm_as(op, input, running_mean, running_var, weight, bias, training,
                        momentum, eps)
    x = input._data
    if training:
        mean, invstd = _bn_stats(x, eps)
    else:
        mean = invstd = np.zeros(0, x.dtype)
    return out, make(mean), make(invstd)


@public("torch._native_batch_norm_legit")
def native_batch_norm_legit(input: Tensor, weight, bias, running_mean, running_var=None,
                            training=None, momentum=None, eps=None):
    """Both overloads: (input, weight, bias, running_mean, running_var, training, momentum,
    eps) and the one without running statistics (input, weight, bias, training, momentum,
    eps)."""
    op = BATCH_NORM_LEGIT
    if isinstance(running_mean, bool):  # the no_stats overload
        training, momentum, eps = running_mean, running_var, training
        running_mean = running_var = None
        op = BATCH_NORM_LEGIT_NO_STATS
    return _native_batch_norm(op, input, weight, bias, running_mean, running_var,
                              training, momentum, eps)


def _group_norm_fwd(x, weight, bias, n, c, hw, group, eps):
    xs = x.astype(np.float64).reshape(n, group, -1)
    mean = xs.mean(-1, keepdims=True)
    var = ((xs - mean) ** 2).mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    y = ((xs - mean) * rstd).reshape(n, c, -1)
    if weight is not None:
        y = y * weight.reshape(1, c, 1)
    if bias is not None:
        y = y + bias.reshape(1, c, 1)
    dt = x.dtype
    return (y.reshape(x.shape).astype(dt), mean.reshape(n, group).astype(dt),
            rstd.reshape(n, group).astype(dt))


def _group_norm_backward(c, grads):
    """The output's gradient through group_norm (in Tensor ops); the statistics' gradients
    (rarely asked) through their own definitions."""
    x, w, b = c.saved
    n, ch, hw, group, eps = c.meta[:5]
    g_out, g_mean, g_rstd = (list(grads) + [None, None])[:3]
    xs = x.reshape(n, group, -1)
    mean = xs.mean(-1, keepdim=True)
    xc = xs - mean
    var = (xc * xc).mean(-1, keepdim=True)
    rstd = (var + eps).rsqrt()
    total = None
    if g_out is not None:
        gy = g_out.reshape(n, ch, -1)
        if w is not None:
            gy = gy * w.reshape(1, ch, 1)
        gxh = gy.reshape(n, group, -1)
        xhat = xc * rstd
        if GRAD_MODE.enabled:
            # under create_graph PyTorch's composite formula ends on a sum of two terms (its
            # gradient's grad_fn is AddBackward0 under the view); the first order keeps the
            # one product, as before
            total = rstd * gxh + rstd * (-gxh.mean(-1, keepdim=True)
                                         - xhat * (gxh * xhat).mean(-1, keepdim=True))
        else:
            total = rstd * (gxh - gxh.mean(-1, keepdim=True)
                            - xhat * (gxh * xhat).mean(-1, keepdim=True))
    if g_mean is not None:
        m = xs.shape[-1]
        part = g_mean.reshape(n, group, 1).expand(n, group, m) / m
        total = part if total is None else total + part
    if g_rstd is not None:
        m = xs.shape[-1]
        part = g_rstd.reshape(n, group, 1) * (-(rstd ** 3)) * xc / m
        total = part if total is None else total + part
    gx = total.reshape(x.shape) if total is not None and c.needs(0) else None
    gw = gb = None
    if g_out is not None and (c.needs(1) or c.needs(2)):
        gy = g_out.reshape(n, ch, -1)
        if c.needs(1) and w is not None:
            xhat = (xc * rstd).reshape(n, ch, -1)
            gw = (gy * xhat).sum((0, 2)).view(ch)  # (PyTorch's ends on a view)
        if c.needs(2) and b is not None:
            gb = gy.sum((0, 2))
    return gx, gw, gb


NATIVE_GROUP_NORM = defop(
    "native_group_norm_stats", "NativeGroupNormBackward0", None, _group_norm_backward,
    "group_norm over (N, group, C/group * HxW): layer_norm's rule per group",
    save="inputs", multi=True,
    torch_call="torch.native_group_norm(torch.cat([a.reshape(-1), a.reshape(-1) * -0.5 + 1])"
               ".reshape(1, 2, -1).repeat(2, 2, 1), None, None, 2, 4, a.numel(), 2, 1e-5)[0]")


@public("torch.native_group_norm")
def native_group_norm(input: Tensor, weight, bias, N: int, C: int, HxW: int, group: int,
                      eps: float):
    from .linalg_ext import _run_multi

    x = input._data
    if x.size != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements, but got "
                           f"{x.size} elements")
    if C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {input.shape} and "
                           f"num_groups={group}")
    meta = (N, C, HxW, group, float(eps))
    arrays = run_quietly(_group_norm_fwd, x, weight._data if weight is not None else None,
                         bias._data if bias is not None else None, *meta)  # (nan silently)
    return tuple(_run_multi(NATIVE_GROUP_NORM, (input, weight, bias), meta, list(arrays),
                            (True, True, True)))



# ----------------------------------------------------------------- quantile / nanquantile

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")

# ATen ends quantile on an in-place squeeze_ (a scalar q) or unsqueeze_/transpose_/squeeze_
# (a vector q: the quantiles' dim moved first); gradcli has no in-place view ops, so one
# node of PyTorch's last name does that move.
QUANTILE_OUT = defop(
    "quantile_out", "SqueezeBackward4",
    lambda v, scalar_q: v[..., 0] if scalar_q else np.ascontiguousarray(np.moveaxis(v, -1, 0)),
    lambda c, g: (g.unsqueeze(-1) if c.meta[0] else g.movedim(0, -1),),
    "the quantiles' dim moved first (or squeezed): its gradient moved back",
    torch_call="torch.quantile(a, 0.5)")


def _quantile(input: Tensor, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool):
    from .sorting import sort

    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    x = input._data
    if not isinstance(q, Tensor):
        q = float(q)
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        q = make(np.array(q, x.dtype if x.dtype.kind in "fV" else np.float32))
        scalar_given = True
    else:
        scalar_given = False
    if x.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q._data.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if x.dtype not in (np.float32, np.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q._data.dtype != x.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if not scalar_given and not bool(np.all((q._data >= 0) & (q._data <= 1))):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if dim is not None:
        d = _wrap_dim(dim, max(x.ndim, 1))
        if x.ndim:
            rest = list(x.shape)
            if keepdim:
                rest[d] = 1
            else:
                del rest[d]
        else:
            rest = []
        ordered = sort(input.unsqueeze(-1).transpose(d, -1))[0]
    else:
        rest = [1] * x.ndim if keepdim else []
        ordered = sort(input.flatten())[0]
    n = ordered.shape[-1]
    ordered = ordered.view(*rest, n)
    qd = q._data.astype(np.float64)
    nan_rows = np.isnan(ordered._data)
    if ignore_nan:
        ranks = qd * (np.count_nonzero(~nan_rows, axis=-1, keepdims=True) - 1)
        ranks = np.maximum(ranks, 0)
    else:
        ranks = qd * (n - 1)
        ranks, any_nan = np.broadcast_arrays(ranks, nan_rows.any(-1, keepdims=True))
        ranks = np.where(any_nan, n - 1, ranks)
    ranks = ranks.astype(x.dtype)  # (q's dtype, as ATen's ranks)
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)  # (half to even, as ATen's round_)
    below = ranks.astype(np.int64)
    values = ordered.gather(-1, make(below))
    if interpolation in ("linear", "midpoint"):
        weights = (np.full_like(ranks, 0.5) if interpolation == "midpoint"
                   else (ranks - below).astype(x.dtype))
        above = np.ceil(ranks).astype(np.int64)
        values = values.lerp(ordered.gather(-1, make(above)), make(weights))
    return run_op(QUANTILE_OUT, (values,), (q._data.ndim == 0,))


@public("torch.quantile", "Tensor.quantile")
def quantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    return _quantile(input, q, dim, keepdim, interpolation, False)


@public("torch.nanquantile", "Tensor.nanquantile")
def nanquantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    return _quantile(input, q, dim, keepdim, interpolation, True)


# ----------------------------------------------------------------- linear_cross_entropy


@public("torch.nn.functional.linear_cross_entropy")
def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias=None, weight=None, reduction: str = "mean",
                         ignore_index=None, label_smoothing: float = 0.0,
                         options=None) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target), as PyTorch's
    reference path composes it (a K-dimensional linear_weight (C, d1.., in) gives
    K-dimensional logits). PyTorch's chunked path (`options=`) is one node named as its
    custom op's (functional_breadth.py)."""
    from .nn import cross_entropy, linear

    x, w = input._data, linear_weight._data
    if x.ndim < 1 or x.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {x.ndim}")
    if w.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {w.ndim}")
    batches = tuple(x.shape[:-1])
    in_features = x.shape[-1]
    if in_features != w.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {in_features} and {w.shape[-1]}, respectively")
    classes = w.shape[0]
    out_features = tuple(w.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias._data.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got "
                           f"{tuple(linear_bias._data.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(w.shape)} "
                           f"requires batched input, (N, {in_features}), got unbatched input "
                           f"with shape {tuple(x.shape)}")
    logits_shape = (*batches, classes, *out_features)
    if tuple(target._data.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None:
        if (not out_features and reduction in ("mean", "sum", "none")
                and label_smoothing == 0.0 and target._data.dtype == np.int64):
            from .registry import PUBLIC  # (functional_breadth, above: its chunked node)

            return PUBLIC["internal.linear_cross_entropy_chunked"](
                input, linear_weight, target, linear_bias, weight, reduction, ignore_index)
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, "
            f"out_features == (). Got reduction={reduction!r}, "
            f"label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
            f"out_features={out_features}, tracing=False, linear_bias.shape="
            f"{tuple(linear_bias._data.shape) if linear_bias is not None else None}.",
            UserWarning, stacklevel=2)
    if out_features:
        flat = math.prod(out_features) * classes
        linear_weight = linear_weight.reshape(flat, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(flat)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


# ----------------------------------------------------------------- lu_unpack


def _lu_unpack_backward(c, grads):
    """ATen's lu_unpack_backward: L's strictly lower and U's upper triangle of the
    gradients, laid over the (m, n) factor (the wide or tall part added in)."""
    from .shape import cat

    lu_data, _ = c.saved
    m, n = lu_data._data.shape[-2:]
    k = min(m, n)
    _, g_low, g_up = (list(grads) + [None] * 3)[:3]
    a1 = g_low.tril(-1) if g_low is not None else None
    a2 = g_up.triu() if g_up is not None else None
    if a1 is None and a2 is None:
        return (None, None)
    if m == n:
        out = a2 if a1 is None else a1 if a2 is None else a1 + a2
    elif m < n:  # wide: L is m x m, U is m x n
        if a2 is None:
            zeros = make(np.zeros(a1._data.shape[:-1] + (n - k,), a1._data.dtype))
            out = cat([a1, zeros], -1)
        else:
            left = a2[..., :, :k] if a1 is None else a2[..., :, :k] + a1
            out = cat([left, a2[..., :, k:]], -1)
    else:  # tall: L is m x n, U is n x n
        if a1 is None:
            zeros = make(np.zeros(a2._data.shape[:-2] + (m - k, n), a2._data.dtype))
            out = cat([a2, zeros], -2)
        else:
            top = a1[..., :k, :] if a2 is None else a1[..., :k, :] + a2
            out = cat([top, a1[..., k:, :]], -2)
    return (out, None)


LU_UNPACK = defop("lu_unpack", "LuUnpackBackward0", None, _lu_unpack_backward,
                  "d lu_unpack/dLU: tril(gL, -1) + triu(gU) over the factor's shape",
                  save="inputs", multi=True,
                  torch_call="torch.lu_unpack(*torch.linalg.lu_factor(a.reshape(-1, 1) * "
                             "(a.reshape(1, -1) * 0.5 - 0.3) + torch.eye(a.numel(), "
                             "dtype=a.dtype) * 3))[1]")


@public("torch.lu_unpack")
def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True):
    """(P, L, U) from linalg.lu_factor's (LU, pivots): A = P L U."""
    from .linalg_ext import _perm_matrix, _run_multi, _unpack

    piv = LU_pivots._data
    if piv.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                           "of torch.int32 dtype.\nNote: this function is intended to be used "
                           "with the output produced by torch.linalg.lu_factor")
    lu = LU_data._data
    m, n = lu.shape[-2:]
    k = min(m, n)
    dt = lu.dtype
    empty = np.zeros(0, dt)
    if unpack_pivots:
        perms = np.tile(np.arange(m), lu.shape[:-2] + (1,))
        batches = int(np.prod(lu.shape[:-2]))  # (-1 cannot size an empty matrix's batch)
        flat_perm = perms.reshape(batches, m)
        flat_piv = piv.reshape(batches, piv.shape[-1]) - 1
        for b in range(flat_perm.shape[0]):
            for j, p in enumerate(flat_piv[b][:k]):
                flat_perm[b, [j, p]] = flat_perm[b, [p, j]]
        P = _perm_matrix(flat_perm.reshape(perms.shape), dt)
    else:
        P = empty
    if unpack_data:
        low, up = _unpack(lu, k)
        low, up = low.astype(dt), up.astype(dt)
    else:
        low = up = empty
    outs = _run_multi(LU_UNPACK, (LU_data, LU_pivots), (), [P, low, up],
                      (False, bool(unpack_data), bool(unpack_data)))
    return _LU_UNPACK_RESULT(*outs)


def _lu_unpack_result():
    from .linalg_ext import _rtype

    return _rtype("lu_unpack", ("P", "L", "U"))


_LU_UNPACK_RESULT = _lu_unpack_result()


# ----------------------------------------------------------------- _softmax_backward_data


def _softmax_bwd_fwd(g, y, dim):
    axis = dim if y.ndim else None
    return (y * (g - (g * y).sum(axis, keepdims=True))).astype(g.dtype)


def _softmax_bwd_backward(c, u):
    """y = o (g - sum(g o)): dy/dg is the same map on u; dy/do = u (g - sum(g o)) -
    g sum(u o)."""
    g, o = c.saved
    dim, = c.meta
    gg = run_op(SOFTMAX_BACKWARD_DATA, (u, o), (dim,)) if c.needs(0) else None
    go = None
    if c.needs(1):
        go = u * (g - (g * o).sum(dim, keepdim=True)) - g * (u * o).sum(dim, keepdim=True)
    return gg, go


SOFTMAX_BACKWARD_DATA = defop(
    "softmax_backward_data_public", "SoftmaxBackwardDataBackward0", _softmax_bwd_fwd,
    _softmax_bwd_backward, "y = o (g - sum(g o)): self-adjoint in g; in o: u (g - sum g o) - "
    "g sum(u o)", save="inputs",
    torch_call="torch._softmax_backward_data(a.reshape(1, -1), a.reshape(1, -1).softmax(1), 1, "
               "a.dtype)")


@public("torch._softmax_backward_data")
def softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int, input_dtype) -> Tensor:
    """softmax's gradient as a function of its incoming gradient and its result (what
    softmax's backward computes), itself differentiable."""
    g, y = grad_output._data, output._data
    if g.dtype != y.dtype:
        raise RuntimeError(f"expected scalar type {_type_word(output.dtype)} but found "
                           f"{_type_word(grad_output.dtype)}")
    d = _wrap_dim(dim, max(y.ndim, 1))
    return run_op(SOFTMAX_BACKWARD_DATA, (grad_output, output), (d,))


# ----------------------------------------------------------------- gradient


def _gradient_checks(x: np.ndarray, spacing_size, dims, edge_order: int, dim_given: bool):
    if x.dtype == np.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if spacing_size is not None and not dim_given and spacing_size != x.ndim:
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {x.ndim}', since dim argument was not given, but got a "
            f"list of length {spacing_size}")
    if spacing_size is not None and dim_given and spacing_size != len(dims):
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
            f"dim arguments to have the same length, but got a spacing argument of length "
            f"{spacing_size} and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    seen = set()
    for d in dims:
        w = _wrap_dim(d, max(x.ndim, 1))
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    for d in dims:
        if x.shape[_wrap_dim(d, x.ndim)] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")


def _gradient_uniform(x: Tensor, h, d: int, edge_order: int) -> Tensor:
    from .shape import cat

    def sl(start, stop=None):
        return _slice(x, d, start, stop)

    center = (sl(2) - sl(0, -2)) / h
    if edge_order == 1:
        before = (sl(1, 2) - sl(0, 1)) / h
        after = (sl(-1) - sl(-2, -1)) / h
    else:
        before = (sl(0, 1) * -1.5 + sl(1, 2) * 2 - sl(2, 3) * 0.5) / h
        after = (sl(-3, -2) * 0.5 + sl(-2, -1) * -2 + sl(-1) * 1.5) / h
    return cat([before, center / 2, after], d)


def _slice(x: Tensor, d: int, start, stop=None) -> Tensor:
    key = [slice(None)] * x._data.ndim
    key[d] = slice(start, stop)
    return x[tuple(key)]


def _gradient_coords(x: Tensor, coords: Tensor, d: int, edge_order: int) -> Tensor:
    from .shape import cat

    if coords._data.ndim != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one "
                           f"dimension, but got an element with {coords._data.ndim} dimensions!")
    shape = [1] * x._data.ndim
    shape[d] = -1
    dx = coords.diff(1, 0)
    dx1, dx2 = dx[0:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _slice(x, d, 0, -2) + b * _slice(x, d, 1, -1) + c * _slice(x, d, 2)
    if edge_order == 1:
        before = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / dx[0]
        after = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / dx[-1]
    else:
        a = -(2.0 * dx[0] + dx[1]) / (dx[0] * (dx[0] + dx[1]))
        b = (dx[0] + dx[1]) / (dx[0] * dx[1])
        c = (-dx[0]) / (dx[1] * (dx[0] + dx[1]))
        before = a * _slice(x, d, 0, 1) + b * _slice(x, d, 1, 2) + c * _slice(x, d, 2, 3)
        a = dx[-1] / (dx[-2] * (dx[-1] + dx[-2]))
        b = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
        c = (2 * dx[-1] + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
        after = a * _slice(x, d, -3, -2) + b * _slice(x, d, -2, -1) + c * _slice(x, d, -1)
    return cat([before, center, after], d)


@public("torch.gradient")
def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:
    """ATen's torch.gradient: central differences inside, one-sided (edge_order 1 or 2) at
    the ends, over each dim; spacing a number, one number per dim, or coordinates."""
    x = input._data
    if spacing is None:
        spacing = 1
    dim_given = dim is not None
    dims = ([dim] if isinstance(dim, int) else list(dim)) if dim_given else list(range(x.ndim))
    if isinstance(spacing, (list, tuple)):
        spacing_size = len(spacing)
        values = list(spacing)
    else:
        spacing_size = None
        values = [spacing] * len(dims)
    _gradient_checks(x, spacing_size, dims, int(edge_order), dim_given)
    out = []
    for d, h in zip(dims, values, strict=True):
        w = _wrap_dim(d, x.ndim)
        if isinstance(h, Tensor):
            out.append(_gradient_coords(input, h, w, int(edge_order)))
        else:
            out.append(_gradient_uniform(input, h, w, int(edge_order)))
    return tuple(out)


# ----------------------------------------------------------------- as_strided


def _storage_positions(x: Tensor):
    """(the flat storage array x lives in, x's storage offset, each element's storage
    position in x's C order), or None when gradcli cannot name x's storage (a root whose
    buffer is not C-contiguous)."""
    root = x if x._base is None else x._base
    rd = root._data
    if not rd.flags.c_contiguous:
        return None
    flat = rd.reshape(-1)
    d = x._data
    item = d.itemsize
    if d.size == 0:
        return flat, 0, np.zeros(d.shape, np.int64)
    start = (d.__array_interface__["data"][0] - flat.__array_interface__["data"][0]) // item
    pos = np.full(d.shape, start, np.int64)
    for k, (n, st) in enumerate(zip(d.shape, d.strides, strict=True)):
        shape = [1] * d.ndim
        shape[k] = n
        pos = pos + (np.arange(n, dtype=np.int64) * (st // item)).reshape(shape)
    return flat, int(start), pos


def _strided_positions(size, stride, offset: int) -> np.ndarray:
    pos = np.full(tuple(size), offset, np.int64)
    for k, (n, st) in enumerate(zip(size, stride, strict=True)):
        shape = [1] * len(size)
        shape[k] = n
        pos = pos + (np.arange(n, dtype=np.int64) * st).reshape(shape)
    return pos


def _as_strided_args(name: str, x: Tensor, size, stride, storage_offset, storage_len):
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    check_elements(tuple(max(n, 0) for n in size))  # (stride 0 makes any size cheap to ask)
    if any(s < 0 for s in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    item = x._data.itemsize
    need = 0 if 0 in size else storage_offset + sum((n - 1) * s for n, s in zip(
        size, stride, strict=True)) + 1
    if need > storage_len:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {storage_offset}, and itemsize {item} requiring a storage "
                           f"size of {need * item} are out of bounds for storage of size "
                           f"{storage_len * item}")
    return size, stride


def _index_in_input(name: str, x: Tensor, size, stride, storage_offset):
    """For each element of the strided result, its C-order position in x (the graph's
    input); the storage array and offset used."""
    found = _storage_positions(x)
    if found is None:
        raise NotImplementedError(f"torch.{name} of a tensor whose storage is not contiguous "
                                  f"is not supported by gradcli")
    flat, own_offset, x_pos = found
    offset = own_offset if storage_offset is None else int(storage_offset)
    size, stride = _as_strided_args(name, x, size, stride, offset, flat.size)
    where = np.full(flat.size, -1, np.int64)
    where[x_pos.reshape(-1)] = np.arange(x_pos.size, dtype=np.int64)
    # (-1 marks an element read from the storage outside x: its value is the storage's,
    # its gradient goes nowhere, as in PyTorch's as_strided_backward)
    index = where[_strided_positions(size, stride, offset)]
    return flat, offset, size, stride, index


@public("torch.as_strided", "Tensor.as_strided")
def as_strided(input: Tensor, size, stride, storage_offset=None) -> Tensor:
    """A view of input's storage with the given geometry (PyTorch's AsStridedBackward0: the
    gradient added back at each element's place in the input)."""
    from .views import AS_STRIDED, _as_view

    res, meta = strided_result("as_strided", AS_STRIDED, input, size, stride, storage_offset)
    return _as_view(res, input, AS_STRIDED, meta)


def strided_result(name: str, op, input: Tensor, size, stride, storage_offset) -> tuple:
    """(the result of `op` on input whose data is the given geometry over input's storage,
    the op's meta): what as_strided and as_strided_ share before each makes it a view."""
    from numpy.lib.stride_tricks import as_strided as np_strided

    flat, offset, size, stride, index = _index_in_input(name, input, size, stride,
                                                        storage_offset)
    meta = (index, tuple(input._data.shape))
    res = run_op(op, (input,), meta)
    item = flat.itemsize
    res._data = np_strided(flat[offset:] if flat.size else flat, size,
                           tuple(s * item for s in stride))
    return res, meta


def _as_strided_copy_backward(c, g):
    from .views import REGION_PUT

    return (run_op(REGION_PUT, (g,), c.meta),)


AS_STRIDED_COPY = defop(
    "as_strided_copy", "AsStridedBackward0_copy", lambda a, index, shape: a.reshape(-1)[index],
    _as_strided_copy_backward, "d as_strided_copy/dx: the gradient added back at each place",
    torch_call="torch.as_strided_copy(a.reshape(-1), (2,), (0,))")


@public("torch.as_strided_copy")
def as_strided_copy(input: Tensor, size, stride, storage_offset=None) -> Tensor:
    flat, offset, size, stride, index = _index_in_input("as_strided_copy", input, size, stride,
                                                        storage_offset)
    res = run_op(AS_STRIDED_COPY, (input,), (index, tuple(input._data.shape)))
    if index.size and index.min() < 0:  # (it reads the storage beyond input: those values)
        res._data = flat[_strided_positions(size, stride, offset)]
    return res


def _scatter_fwd(x, src, index, shape):
    out = np.array(x, order="C", copy=True)
    out.reshape(-1)[index.reshape(-1)] = np.broadcast_to(src, index.shape).reshape(-1)
    return out


def _scatter_backward(c, g):
    from .elementwise import where
    from .views import AS_STRIDED

    index, shape = c.meta
    gx = gs = None
    if c.needs(0):
        # PyTorch's as_strided_scatter_backward gives the input the gradient *inside* the
        # region (zeros elsewhere), not outside it: reproduced as PyTorch computes it
        region = np.zeros(int(np.prod(shape)), bool)
        region[index.reshape(-1)] = True
        gx = where(make(region.reshape(shape)), g, 0.0)
    if c.needs(1):
        gs = run_op(AS_STRIDED, (g,), (index, shape))
    return gx, gs


AS_STRIDED_SCATTER = defop(
    "as_strided_scatter", "AsStridedScatterBackward0", _scatter_fwd, _scatter_backward,
    "d as_strided_scatter: src's gradient is the region's; x's too (PyTorch's formula)",
    # (the generic gradchecks see src's gradient only: the input's, PyTorch's formula, is
    # not the finite-difference one; tests/test_ops_breadth.py compares it with PyTorch)
    torch_call="torch.as_strided_scatter(torch.zeros(4, dtype=a.dtype), a.reshape(-1)[:2] * 2, "
               "(2,), (2,), 1)")


@public("torch.as_strided_scatter", "Tensor.as_strided_scatter")
def as_strided_scatter(input: Tensor, src: Tensor, size, stride, storage_offset=None) -> Tensor:
    """input with the strided region (over a contiguous copy's storage) replaced by src."""
    x = input._data
    offset = 0 if storage_offset is None else int(storage_offset)
    size, stride = _as_strided_args("as_strided_scatter", input, size, stride, offset, x.size)
    if tuple(src._data.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src._data.shape)}, slice size = {list(size)}")
    index = _strided_positions(size, stride, offset)
    return run_op(AS_STRIDED_SCATTER, (input, src), (index, tuple(x.shape)))


# ----------------------------------------------------------------- max_unpool


def _unpool_fwd(x, idx, out_spatial):
    k = len(out_spatial)
    lead = x.shape[:x.ndim - k]
    size = math.prod(out_spatial)
    flat_x = x.reshape(-1, math.prod(x.shape[x.ndim - k:]) if x.size else 0)
    flat_i = idx.reshape(flat_x.shape)
    out = np.zeros((flat_x.shape[0], size), x.dtype)
    rows = np.arange(flat_x.shape[0])[:, None]
    out[rows, flat_i] = flat_x
    return out.reshape(lead + tuple(out_spatial))


def _unpool_backward(c, g):
    x, = c.saved
    idx, out_spatial = c.meta
    k = len(out_spatial)
    d = x._data
    planes = int(np.prod(d.shape[:d.ndim - k]))
    flat_g = g.reshape(planes, -1)
    taken = flat_g.gather(1, make(idx.reshape(planes, -1)))
    return (taken.reshape(d.shape),)


def _unpool_op(name: str, node: str, dims: int):
    spatial = ", ".join(["2"] * dims)
    return defop(name, node, _unpool_fwd, _unpool_backward,
                 "d max_unpool/dx: the gradient taken back from each index", save="inputs",
                 out_size=lambda arrays, meta: math.prod(
                     arrays[0].shape[:arrays[0].ndim - len(meta[1])]) * math.prod(meta[1]),
                 torch_call=f"torch.nn.functional.max_unpool{dims}d(*torch.nn.functional."
                            f"max_pool{dims}d(a.reshape(1, 1, {', '.join(['1'] * (dims - 1))}"
                            f"{', ' if dims > 1 else ''}-1).repeat(1, 1, {spatial}), 2, "
                            f"return_indices=True), 2)")


MAX_UNPOOL2D = _unpool_op("max_unpool2d", "MaxUnpool2DBackward0", 2)
MAX_UNPOOL3D = _unpool_op("max_unpool3d", "MaxUnpool3DBackward0", 3)


def _unpool_output_size(x_shape, kernel, stride, padding, output_size):
    k = len(kernel)
    default = [(x_shape[len(x_shape) - k + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(k)]
    if output_size is None:
        ret = default
    else:
        if len(output_size) == k + 2:
            output_size = output_size[2:]
        if len(output_size) != k:
            raise ValueError(f"output_size should be a sequence containing {k} or {k + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for d in range(k):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be '
                                 f"between {lo} and {hi})")
        ret = output_size
    for d in range(k):
        if ret[d] < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={ret[d]}")
    return [int(r) for r in ret]


def _max_unpool(op, dims: int, input: Tensor, indices: Tensor, kernel_size, stride, padding,
                output_size):
    def as_tuple(v):
        return tuple(v) if isinstance(v, (list, tuple)) else (int(v),) * dims

    kernel = as_tuple(kernel_size)
    strides = kernel if stride is None else as_tuple(stride)
    pads = as_tuple(padding)
    out = _unpool_output_size(input._data.shape, kernel, strides, pads, output_size)
    x, idx = input._data, indices._data
    if idx.dtype != np.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{_type_word(indices.dtype)}")
    if x.shape != idx.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(x.shape)}) but got indices tensor with shape: "
                           f"{list(idx.shape)}")
    if x.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"Input to max_unpooling{dims}d should be a {dims + 1}d or "
                           f"{dims + 2}d Tensor, but got a tensor with {x.ndim} dimensions.")
    size = math.prod(out)
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = int(idx.reshape(-1)[(idx.reshape(-1) < 0) | (idx.reshape(-1) >= size)][0])
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, out))})")
    return run_op(op, (input,), (idx, tuple(out)))


@public("torch.nn.functional.max_unpool2d")
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    return _max_unpool(MAX_UNPOOL2D, 2, input, indices, kernel_size, stride, padding,
                       output_size)


@public("torch.nn.functional.max_unpool3d")
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    return _max_unpool(MAX_UNPOOL3D, 3, input, indices, kernel_size, stride, padding,
                       output_size)


@public("torch.nn.functional.max_unpool1d")
def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """PyTorch's: max_unpool2d over a trailing unit dim, squeezed (SqueezeBackward1)."""
    def single(v):
        return (v[0] if isinstance(v, (list, tuple)) else int(v),)

    kernel = single(kernel_size)
    strides = kernel if stride is None else single(stride)
    pads = single(padding)
    out = _unpool_output_size(input._data.shape, kernel, strides, pads, output_size)
    return _max_unpool(MAX_UNPOOL2D, 2, input.unsqueeze(-1), indices.unsqueeze(-1),
                       (kernel[0], 1), (strides[0], 1), (pads[0], 0),
                       out + [1]).squeeze(-1)
