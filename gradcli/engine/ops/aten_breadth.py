"""ATen ops PyTorch's OpInfo list tests that have no torch.* function of their own or only
a private one (issue #23): aten.slice, _unsafe_masked_index and its put-accumulate dual,
max_pool2d_with_indices_backward, native_dropout_backward and F.max_pool2d_with_indices.

Each is one node named as PyTorch's, computed in numpy; where PyTorch's backward formula
is another op of this list (the masked index pair are each other's gradients, the pool
and dropout backwards' own gradients), the backward calls that op on Tensors, so second
derivatives record PyTorch's nodes too. `aten.<name>` entries of the registry are found
by torch.ops.aten only (aten_ops._function_for), not installed as torch.* names."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, _type_word, _wrap_dim, make
from .registry import PUBLIC, broadcast_error, defop, public, run_op
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


def _pool_bwd_fwd(g, x, indices):
    planes = int(np.prod(x.shape[:-2], dtype=np.int64))
    plane = x.shape[-2] * x.shape[-1]
    out = np.zeros((planes, plane), g.dtype)
    per_plane = indices.reshape(planes, -1)
    rows = np.repeat(np.arange(planes), per_plane.shape[1])
    np.add.at(out, (rows, per_plane.reshape(-1)), g.reshape(-1))
    return out.reshape(x.shape)


def _pool_bwd_backward(c, gg):
    (indices,) = c.meta
    ggrad = None
    if c.needs(0):
        idx = make(indices)
        flat = gg.flatten(-2)
        ggrad = flat.gather(-1, idx.flatten(-2)).view(tuple(indices.shape))
    gx = PUBLIC["torch.zeros_like"](gg) if c.needs(1) else None
    return (ggrad, gx)


MAX_POOL2D_BACKWARD = defop("max_pool2d_with_indices_backward",
                            "MaxPool2DWithIndicesBackwardBackward0", _pool_bwd_fwd,
                            _pool_bwd_backward,
                            "grad scattered (added) to the argmax of each window: its own "
                            "gradient gathers at the same indices", save="meta",
                            torch_call="torch.ops.aten.max_pool2d_with_indices_backward("
                                       "a.reshape(1, 1, 1, -1)[..., ::2] * 1, a.reshape(1, 1, 1, "
                                       "-1) * 1, [1, 2], [1, 2], [0, 0], [1, 1], False, "
                                       "torch.nn.functional.max_pool2d(a.reshape(1, 1, 1, -1), "
                                       "(1, 2), return_indices=True)[1])")


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
    factor_dtype = g.dtype if g.dtype.kind == "f" else np.dtype(np.float32)
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
