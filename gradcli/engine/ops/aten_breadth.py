"""ATen ops PyTorch's OpInfo list tests that have no torch.* function of their own or only
a private one (issue #23): aten.slice, _unsafe_masked_index and its put-accumulate dual,
max_pool2d_with_indices_backward, native_dropout_backward and F.max_pool2d_with_indices.

Each is one node named as PyTorch's, computed in numpy; where PyTorch's backward formula
is another op of this list (the masked index pair are each other's gradients, the pool
and dropout backwards' own gradients), the backward calls that op on Tensors, so second
derivatives record PyTorch's nodes too. `aten.<name>` entries of the registry are found
by torch.ops.aten only (aten_ops._function_for), not installed as torch.* names."""

from __future__ import annotations

import math

import numpy as np

from ..grad_mode import GRAD_MODE
from ..tensor import Tensor, _type_word, _wrap_dim, make
from .nn_layers import MAX_POOL2D_BACKWARD
from .registry import OPS, PUBLIC, broadcast_error, defop, public, run_op
from .views import slice_dim

# ----------------------------------------------------------------- aten.slice


@public("aten.slice")
def aten_slice(input: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    """aten.slice.Tensor: one dimension sliced, as x[..., start:end:step] (SliceBackward0)."""
    if input.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.dim())
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return slice_dim(input, d, start, end, step)


# ----------------------------------------------------------------- _unsafe_masked_index


def _clamped(indices, shape):
    """The index arrays clamped into range (ATen's decomposition clamps: the mask says
    which positions are real); None (a whole dimension) stays a full slice."""
    out = []
    for i, idx in enumerate(indices):
        if idx is None:
            out.append(slice(None))
        else:
            out.append(np.clip(idx._data, 0, max(shape[i] - 1, 0)))
    return tuple(out)


def _check_masked_index_args(mask, indices):
    """The index list as PyTorch's parser takes it (Tensors only), and integer indices;
    the mask counts by truth whatever its dtype, as ATen's where does."""
    for i, idx in enumerate(indices):
        if not isinstance(idx, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 2, but got "
                            f"{type(idx).__name__}")
    for idx in indices:
        if idx._data.dtype not in (np.int64, np.int32):
            raise RuntimeError(f"_unsafe_masked_index found unexpected index type "
                               f"{_type_word(idx.dtype)}")
    return mask._data if mask._data.dtype == np.bool_ else mask._data != 0


def _broadcast_or_raise(a, b) -> tuple:
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        broadcast_error(a, b)


def _masked_index_fwd(x, mask, index, indices, fill, x_shape):
    if x.size == 0:
        shape = np.empty(x.shape, np.int8)[index].shape if x.ndim else ()
        return np.full(shape, fill, x.dtype)
    vals = x[index]
    return np.where(mask, vals, np.asarray(fill, x.dtype)).astype(x.dtype, copy=False)


def _masked_index_backward(c, g):
    mask, index, indices, fill, x_shape = c.meta
    zeros = PUBLIC["torch.zeros"](x_shape, dtype=g.dtype)
    return (_unsafe_masked_index_put_accumulate(zeros, make(mask), indices, g),)


MASKED_INDEX = defop("_unsafe_masked_index", "UnsafeMaskedIndexBackward0", _masked_index_fwd,
                     _masked_index_backward,
                     "x[clamp(indices)] where mask, else fill: the gradient accumulated back "
                     "at the masked positions", save="meta",
                     torch_call="torch._unsafe_masked_index(a * 1, torch.ones(a.shape[0], "
                                "dtype=torch.bool), [torch.arange(a.shape[0]).flip(0)], 0.5)")


@public("torch._unsafe_masked_index")
def _unsafe_masked_index(input: Tensor, mask: Tensor, indices, fill) -> Tensor:
    mask_data = _check_masked_index_args(mask, indices)
    indices = list(indices)
    index = _clamped(indices, input._data.shape)
    picked = np.empty(input._data.shape, np.int8)[index].shape if input._data.size else None
    if picked is not None:
        _broadcast_or_raise(mask_data.shape, picked)
    return run_op(MASKED_INDEX, (input,), (mask_data, index, indices, fill,
                                           tuple(input.shape)))


def _put_acc_fwd(x, values, mask, index, indices, values_shape):
    out = x.copy()
    np.add.at(out, index, np.where(mask, values, np.zeros((), values.dtype)).astype(
        x.dtype, copy=False))
    return out


def _put_acc_backward(c, g):
    mask, index, indices, values_shape = c.meta
    gv = None
    if c.needs(1):
        gv = _unsafe_masked_index(g, make(mask), indices, 0)
        if tuple(gv.shape) != values_shape:
            gv = gv.sum_to_size(values_shape)
    return (g if c.needs(0) else None, gv)


MASKED_INDEX_PUT = defop("_unsafe_masked_index_put_accumulate",
                         "UnsafeMaskedIndexPutAccumulateBackward0", _put_acc_fwd,
                         _put_acc_backward,
                         "x with values (0 where not mask) added at clamp(indices): g for x, "
                         "g[clamp(indices)] where mask for values", save="meta",
                         torch_call="torch._unsafe_masked_index_put_accumulate(a * 1, "
                                    "torch.ones(a.shape[0], dtype=torch.bool), "
                                    "[torch.arange(a.shape[0]).flip(0)], a.cos())")


@public("torch._unsafe_masked_index_put_accumulate")
def _unsafe_masked_index_put_accumulate(input: Tensor, mask: Tensor, indices,
                                        values: Tensor) -> Tensor:
    mask_data = _check_masked_index_args(mask, indices)
    indices = list(indices)
    index = _clamped(indices, input._data.shape)
    if values._data.dtype != input._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_type_word(input.dtype)} for the destination and "
                           f"{_type_word(values.dtype)} for the source.")
    masked = _broadcast_or_raise(mask_data.shape, values._data.shape)
    picked = np.empty(input._data.shape, np.int8)[index].shape
    try:
        fits = np.broadcast_shapes(masked, picked) == picked
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(masked)} cannot be "
                           f"broadcast to indexing result of shape {list(picked)}")
    return run_op(MASKED_INDEX_PUT, (input, values),
                  (mask_data, index, indices, tuple(values.shape)))


# ----------------------------------------------------------------- max_pool2d backward


def _pair(v):
    v = [int(e) for e in v] if isinstance(v, (list, tuple)) else [int(v)]
    return (v[0], v[-1])


def _pooled(size, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape: windows that fit, with ceil_mode's last partial one
    only if it starts inside the input or its left padding."""
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _c_type(t: Tensor) -> str:
    return {"float64": "double", "float32": "float", "int64": "long int", "int32": "int",
            "bool": "bool", "float16": "c10::Half"}.get(str(t._data.dtype), str(t._data.dtype))


@public("aten.max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward(grad_output: Tensor, input: Tensor, kernel_size, stride,
                                     padding, dilation, ceil_mode, indices: Tensor) -> Tensor:
    """The gradient of max_pool2d_with_indices: grad_output added into a zero input at the
    argmax indices (kernel_size, stride... only describe the windows: the indices say
    where each one's maximum was)."""
    if grad_output._data.dtype != input._data.dtype:
        raise RuntimeError(f"expected dtype {_c_type(input)} for `gradOutput` but got dtype "
                           f"{_c_type(grad_output)}")
    x = input._data
    kh, kw = _pair(kernel_size)
    sh, sw = _pair(stride) if stride not in (None, [], ()) else (kh, kw)
    ph, pw = _pair(padding)
    dh, dw = _pair(dilation)
    expected = (x.shape[-3], _pooled(x.shape[-2], kh, sh, ph, dh, ceil_mode),
                _pooled(x.shape[-1], kw, sw, pw, dw, ceil_mode))
    for t in (grad_output._data, indices._data):
        for k, size in enumerate(expected):
            dim = x.ndim - 3 + k
            if t.ndim != x.ndim or t.shape[dim] != size:
                got = t.shape[dim] if -t.ndim <= dim < t.ndim else "?"
                raise RuntimeError(f"Expected a tensor of dimension {x.ndim} and "
                                   f"tensor.size[{dim}] == {size} but got: dimension {t.ndim} "
                                   f"and tensor.size[{dim}] = {got}")
    return run_op(MAX_POOL2D_BACKWARD, (grad_output, input), (indices._data,),
                  arrays=(grad_output._data, input._data))


@public("torch.nn.functional.max_pool2d_with_indices")
def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """F.max_pool2d_with_indices: the (values, indices) pair whatever return_indices says."""
    return PUBLIC["torch.nn.functional.max_pool2d"](input, kernel_size, stride, padding,
                                                     dilation, ceil_mode, True)


# ----------------------------------------------------------------- native_dropout_backward


def _dropout_bwd_fwd(g, mask, scale):
    # ATen: grad * (mask.type_as(grad) * scale): an integer grad's factor is a float of the
    # default dtype (float32), and so is the product
    factor_dtype = g.dtype if g.dtype.kind in "fV" else np.dtype(np.float32)
    factor = mask.astype(g.dtype).astype(factor_dtype) * np.asarray(scale, factor_dtype)
    return (g * factor).astype(factor_dtype, copy=False)


def _dropout_bwd_backward(c, gg):
    # (PyTorch's formula: one multiplication by the constant mask * scale, MulBackward0)
    mask, scale = c.meta
    return (gg * make(_dropout_bwd_fwd(np.ones((), gg._data.dtype), mask, scale)),)


NATIVE_DROPOUT_BACKWARD = defop("native_dropout_backward", "NativeDropoutBackwardBackward0",
                                _dropout_bwd_fwd, _dropout_bwd_backward,
                                "g * mask * scale: linear in g, its gradient g times the same constant",
                                save="meta",
                                torch_call="torch.ops.aten.native_dropout_backward(a * 1, "
                                           "a > 0, 2.0)")


@public("aten.native_dropout_backward")
def native_dropout_backward(grad_output: Tensor, mask: Tensor, scale: float) -> Tensor:
    try:
        np.broadcast_shapes(grad_output._data.shape, mask._data.shape)
    except ValueError:
        broadcast_error(grad_output._data.shape, mask._data.shape)
    return run_op(NATIVE_DROPOUT_BACKWARD, (grad_output,), (mask._data, float(scale)),
                  arrays=(grad_output._data,))


# ----------------------------------------------------------------- segment_reduce

_SEGMENT_REDUCTIONS = {"sum": "sum", "prod": "prod", "mean": "mean", "max": "max",
                       "amax": "max", "min": "min", "amin": "min"}


def _segments(lengths: np.ndarray):
    """(outer index, segment number, start, stop) for every segment: lengths has the
    data's leading dims and the segments along its last."""
    starts = np.concatenate([np.zeros(lengths.shape[:-1] + (1,), np.int64),
                             np.cumsum(lengths, -1)], -1)
    for outer in np.ndindex(lengths.shape[:-1]):
        for j in range(lengths.shape[-1]):
            yield outer, j, int(starts[outer + (j,)]), int(starts[outer + (j + 1,)])


def _segment_fwd(data, lengths, reduce, initial):
    out_shape = lengths.shape + data.shape[lengths.ndim:]
    out = np.empty(out_shape, data.dtype)
    dt = data.dtype.type
    start_value = {"sum": 0, "mean": 0, "prod": 1, "max": -np.inf, "min": np.inf}[reduce]
    if initial is not None:
        start_value = initial
    with np.errstate(all="ignore"):
        for outer, j, a, b in _segments(lengths):
            seg = data[outer + (slice(a, b),)]
            acc = np.full(seg.shape[1:], dt(start_value), data.dtype)
            if b > a:
                if reduce in ("sum", "mean"):
                    acc = acc + seg.sum(0)
                elif reduce == "prod":
                    acc = acc * seg.prod(0)
                else:  # (a NaN anywhere wins, as std::max after a NaN keeps it)
                    pick = np.maximum if reduce == "max" else np.minimum
                    acc = pick(acc, pick.reduce(seg, 0))
            if reduce == "mean":
                if b == a and initial is None:
                    acc = np.full(acc.shape, np.nan, data.dtype)
                elif b > a:
                    acc = np.where(np.isnan(acc), acc, acc / dt(b - a))
            out[outer + (j,)] = acc
    return out


def _segment_backward(c, g):
    (data,) = c.saved
    out = c.result._data
    lengths, reduce, initial = c.meta
    x = data._data
    gd = g._data
    grad = np.zeros(x.shape, gd.dtype)
    dt = x.dtype.type
    with np.errstate(all="ignore"):
        for outer, j, a, b in _segments(lengths):
            if b == a:
                continue
            key = outer + (slice(a, b),)
            seg, gj, oj = x[key], gd[outer + (j,)], out[outer + (j,)]
            if reduce in ("max", "min"):
                hit = np.isnan(seg) | (seg == oj)
                piece = np.where(hit, gj, 0).astype(gd.dtype)
                count = hit.sum(0)
                # (PyTorch's kernel shares a tie's gradient only where it is positive)
                shared = (count >= 2) & (piece > 0)
                piece = np.where(shared, piece / np.maximum(count, 1), piece)
            elif reduce == "mean":
                piece = np.broadcast_to(gj / dt(b - a), seg.shape)
            elif reduce == "sum":
                piece = np.broadcast_to(gj, seg.shape)
            else:
                start = dt(1 if initial is None else initial)
                piece = (gj * oj) / seg
                special = np.isnan(seg) | (seg == 0)
                if special.any():
                    for k in range(b - a):
                        others = np.delete(seg, k, 0)
                        exclusive = start * others.prod(0)
                        piece[k] = np.where(special[k], gj * exclusive, piece[k])
            grad[key] = piece
    if GRAD_MODE.enabled:  # (create_graph: a node that refuses to be differentiated)
        return (run_op(SEGMENT_REDUCE_GRAD, (g, data), (grad,)),)
    return (make(grad),)


def _segment_double(c, gg):
    raise RuntimeError("derivative for aten::_segment_reduce_backward is not implemented")


SEGMENT_REDUCE = defop("segment_reduce", "SegmentReduceBackward0", _segment_fwd,
                       _segment_backward,
                       "per segment: sum/mean spread the gradient, prod divides the result by "
                       "each element (the product of the others at a zero), max/min give it "
                       "to the extremes (ties share a positive one)", save="inputs,result,meta")
# (no torch_call: the table's generic tests differentiate twice, PyTorch's
# _segment_reduce_backward has no derivative)
SEGMENT_REDUCE_GRAD = defop("_segment_reduce_backward", "NotImplemented",
                            lambda g, data, grad: grad, _segment_double,
                            "PyTorch has no derivative of segment_reduce's gradient")


@public("torch.segment_reduce", "torch._segment_reduce")
def segment_reduce(data: Tensor, reduce: str, *, lengths=None, indices=None, offsets=None,
                   axis: int = 0, unsafe: bool = False, initial=None) -> Tensor:
    """Reductions over consecutive segments of `axis`, given by lengths (or offsets: the
    segment boundaries) whose leading dims are the data's."""
    if reduce not in _SEGMENT_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    x = data._data
    axis = _wrap_dim(axis, x.ndim)
    by = offsets if offsets is not None else lengths  # (offsets win when both are given)
    b = by._data
    if x.ndim < b.ndim:
        raise RuntimeError("Expected data.dim() >= lengths_value.dim() to be true, but got "
                           "false.  (Could this error message be improved?  If so, please "
                           "report an enhancement request to PyTorch.)")
    if axis != b.ndim - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"lengths but got {axis}.")
    if b.dtype not in (np.int64, np.int32):
        kernel = "offsets" if offsets is not None else "lengths"
        raise NotImplementedError(f"\"_segment_reduce_{kernel}_cpu_kernel1\" not implemented "
                                  f"for '{_type_word(by.dtype)}'")
    lengths_data = (np.diff(b.astype(np.int64), axis=-1) if offsets is not None
                    else b.astype(np.int64))
    if not unsafe:
        if lengths_data.size and lengths_data.min() < 0:
            raise RuntimeError("lengths contains negative value!")
        if np.any(lengths_data.sum(-1) != x.shape[axis]):
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                               "to data.size(lengths.dim()-1) when !unsafe.")
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for "
                                  f"'{_type_word(data.dtype)}'")
    return run_op(SEGMENT_REDUCE, (data,), (lengths_data, _SEGMENT_REDUCTIONS[reduce], initial))


# ----------------------------------------------------------------- _batch_norm_with_update

def _with_update_backward(c, g):
    # (PyTorch's batch_norm_backward behind this node takes the weight as a plain Tensor:
    # without one its backward fails, whatever needs a gradient)
    if c.saved[1] is None:
        raise RuntimeError("Expected a proper Tensor but got None (or an undefined Tensor in "
                           "C++) for argument #2 'weight'")
    return OPS["batch_norm"].backward(c, g)


BATCH_NORM_WITH_UPDATE = defop(
    "batch_norm_with_update", "BatchNormWithUpdateBackward0", OPS["batch_norm"].forward,
    _with_update_backward, OPS["batch_norm"].rule, save="inputs",
    torch_call="torch.ops.aten._batch_norm_with_update(torch.cat([a.reshape(-1, 1), "
               "a.reshape(-1, 1) * 2 + 1]).repeat(1, 2), torch.ones(2, dtype=a.dtype), None, "
               "torch.zeros(2, "
               "dtype=a.dtype), torch.ones(2, dtype=a.dtype), 0.1, 1e-5)[0]")


@public("aten._batch_norm_with_update")
def _batch_norm_with_update(input: Tensor, weight, bias, running_mean: Tensor,
                            running_var: Tensor, momentum: float, eps: float):
    """Training-mode batch norm that updates the running statistics in place: (output,
    save_mean, save_invstd, reserve), the reserve an empty uint8 tensor on CPU; the
    output's node is batch_norm's rule under this entry point's name."""
    from .breadth import _native_batch_norm

    out, mean, invstd = _native_batch_norm(BATCH_NORM_WITH_UPDATE, input, weight, bias,
                                           running_mean, running_var, True, momentum, eps)
    return out, mean, invstd, make(np.zeros(0, np.uint8))


# ----------------------------------------------------------------- _upsample_bilinear2d_aa


def _aa_matrix(in_size: int, out_size: int, scale_factor, align_corners: bool) -> np.ndarray:
    """The (out, in) weights of antialiased linear interpolation along one dim, as
    PyTorch's separable AA kernel (PIL's): a triangle filter widened by the downscale
    factor, each output's taps [xmin, xmin + xsize) normalized to sum to one."""
    if align_corners:
        scale = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    else:
        scale = 1.0 / scale_factor if scale_factor else in_size / out_size
    support = scale if scale >= 1.0 else 1.0
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    m = np.zeros((out_size, in_size))
    for i in range(out_size):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), in_size)
        taps = np.arange(lo, hi)
        w = np.maximum(0.0, 1.0 - np.abs((taps - center + 0.5) * invscale))
        total = w.sum()
        if total != 0.0:
            w = w / total
        m[i, lo:hi] = w
    return m


def _aa_op():
    from .conv_ext import _linear_map

    return _linear_map("upsample_bilinear2d_aa", "UpsampleBilinear2DAaBackward0",
                       "torch.nn.functional.interpolate(a.reshape(1, 1, 1, -1).expand(1, 2, 3, "
                       "-1) * 1, scale_factor=0.5, mode='bilinear', antialias=True)",
                       "antialiased bilinear interpolation: a fixed weighted sum per output "
                       "element (its gradient the transposed weights)")


UPSAMPLE_BILINEAR2D_AA = _aa_op()


@public("aten._upsample_bilinear2d_aa")
def _upsample_bilinear2d_aa(input: Tensor, output_size=None, align_corners: bool = False,
                            scale_factors=None, scales_h=None, scales_w=None) -> Tensor:
    """aten._upsample_bilinear2d_aa (.vec: output_size or scale_factors; .default:
    output_size with optional scales_h, scales_w)."""
    from .conv_ext import Separable, _float_input

    x = input._data
    if x.ndim != 4:
        raise RuntimeError(f"Expected 4D tensor, but got {x.ndim}D")
    if scale_factors is not None:
        scales = [float(s) for s in scale_factors]
    else:
        scales = [scales_h, scales_w]
    if output_size is None:
        if scale_factors is None:
            raise RuntimeError("Must specify exactly one of output_size and scale_factors")
        output_size = [int(math.floor(n * s)) for n, s in zip(x.shape[2:], scales, strict=True)]
    elif scale_factors is not None:
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    sizes = [int(s) for s in output_size]
    _float_input(input, "upsample_bilinear2d_aa")
    if any(n <= 0 for n in tuple(x.shape[2:]) + tuple(sizes)):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"(H: {x.shape[2]}, W: {x.shape[3]}) output (H: {sizes[0]}, W: "
                           f"{sizes[1]})")
    mats = [(2 + d, _aa_matrix(x.shape[2 + d], sizes[d], scales[d], bool(align_corners)))
            for d in range(2)]
    return run_op(UPSAMPLE_BILINEAR2D_AA, (input,), (Separable(mats),))
