"""torch.masked: reductions and normalizations of a strided tensor over the elements a
boolean mask keeps (PyTorch's masked-reduction semantics, RFC 27).

Each function replaces the masked-out elements by its reduction's identity (0 for sum,
1 for prod, -inf for amax/softmax, +inf for amin/softmin...) with torch.where and then
runs the ordinary op, as PyTorch's torch/masked/_ops.py does; so the values, dtypes and
grad_fn names are the ordinary ops' (SumBackward1, DivBackward0, SoftmaxBackward0...).
mean, var and std divide by the count of kept elements (nan where none is kept).
Sparse layouts and the MaskedTensor class are not supported by gradcli.
"""

from __future__ import annotations

import builtins as _builtins
import math as _math

import gradcli.torch as _torch

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "is_masked_tensor",
           "log_softmax", "logaddexp", "logsumexp", "mean", "median", "norm", "normalize",
           "prod", "softmax", "softmin", "std", "sum", "var"]

_SMALL_INTS = ("torch.uint8", "torch.bool", "torch.int8", "torch.int16", "torch.int32")


def is_masked_tensor(obj) -> bool:
    """gradcli has no MaskedTensor: nothing is one."""
    return False


def _canonical_dim(dim, ndim: int) -> tuple:
    """dim as the sorted tuple of the dims it names (None or () is every dim)."""
    if dim is None or dim == ():
        return tuple(_builtins.range(ndim))
    ndim = max(ndim, 1)
    dims = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _identity(op: str, input, *args):
    """The value a masked-out element takes so that it does not change the reduction."""
    dtype = input.dtype
    floating = dtype.is_floating_point
    if op in ("sum", "cumsum"):
        return _torch.tensor(0, dtype=dtype)
    if op in ("prod", "cumprod"):
        return _torch.tensor(1, dtype=dtype)
    if op in ("amax", "argmax", "logaddexp", "logsumexp"):
        return _torch.tensor(-_math.inf if floating else _torch.iinfo(dtype).min, dtype=dtype)
    if op in ("amin", "argmin"):
        return _torch.tensor(_math.inf if floating else _torch.iinfo(dtype).max, dtype=dtype)
    if op == "norm":
        order = args[0] if args else 2
        if order == float("-inf"):
            if not floating:
                raise AssertionError(f"input must be floating point, got {dtype}")
            return _torch.tensor(_math.inf, dtype=dtype)
        return _torch.tensor(0, dtype=dtype)
    if op == "median":
        return _torch.tensor(_math.nan, dtype=dtype if floating else _torch.float32)
    raise NotImplementedError(f"identity of {op} on {dtype} input")


def _input_mask(input, mask):
    """mask broadcast to input's shape, as bool."""
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = _torch.broadcast_to(mask.clone(), input.shape)
    return mask.to(dtype=_torch.bool)


def _masked(op: str, input, mask, *args):
    """input with its masked-out elements replaced by op's identity."""
    if mask is None:
        return input
    return _torch.where(_input_mask(input, mask), input, _identity(op, input, *args))


def _widened(input, dtype):
    if dtype is None:
        dtype = input.dtype
        if str(dtype) in _SMALL_INTS:
            dtype = _torch.int64
    return dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Sum of the kept elements (0 where none is kept); small integer types add in int64."""
    dtype = _widened(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    return _torch.sum(_masked("sum", input, mask), dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Product of the kept elements (1 where none is kept), one dim at a time from the last."""
    dtype = _widened(input, dtype)
    result = _masked("prod", input, mask).to(dtype=dtype)
    for d in reversed(_canonical_dim(dim, input.ndim)):
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _torch.cumsum(_masked("sum", input, mask), d, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _torch.cumprod(_masked("prod", input, mask), d, dtype=dtype).to(dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    masked = _masked("amax", input, mask)
    return _torch.amax(masked, _canonical_dim(dim, masked.ndim), bool(keepdim)).to(dtype=dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    masked = _masked("amin", input, mask)
    return _torch.amin(masked, _canonical_dim(dim, masked.ndim), bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return _torch.argmax(_masked("argmax", input, mask), dim, bool(keepdim)).to(dtype=dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return _torch.argmin(_masked("argmin", input, mask), dim, bool(keepdim)).to(dtype=dtype)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Sum of the kept elements over their count (nan where none is kept)."""
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not dtype.is_floating_point:
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    if mask is None:
        count = sum(_torch.ones(input.shape, dtype=_torch.int64), dim, keepdim=keepdim)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype)
    else:
        kept = _input_mask(input, mask)
        count = kept.sum(dim=dim, keepdim=bool(keepdim))
        total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=kept)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """nanmedian of the kept elements (nan where none is kept; an integer input must keep one
    in every row)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    floating = input.dtype.is_floating_point
    if not floating:
        input = input.to(dtype=_torch.float32)
    output = _torch.nanmedian(_masked("median", input, mask), d, keepdim).values
    if floating:
        return output
    if not _torch.isnan(output).any():
        return output.to(dtype=dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating "
                     "point")


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    return _torch.logsumexp(_masked("logsumexp", input, mask), dims, keepdim=keepdim).to(
        dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    dtype = input.dtype if dtype is None else dtype
    return _torch.logaddexp(_masked("logaddexp", input, input_mask),
                            _masked("logaddexp", other, other_mask)).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The vector norm of the kept elements."""
    dtype = input.dtype if dtype is None else dtype
    masked = _masked("norm", input, mask, ord)
    return _torch.linalg.vector_norm(masked, ord, _canonical_dim(dim, input.ndim),
                                     bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    corr = 1.0
    if unbiased is not None:
        corr = 1.0 if unbiased else 0.0
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point else _torch.float32
    compute = dtype if dtype.is_floating_point else _torch.float32
    if mask is None:
        count = sum(_torch.ones(input.shape, dtype=_torch.int64), dim, keepdim=True)
        sample_total = sum(input, dim, keepdim=True, dtype=dtype)
        kept = None
    else:
        kept = _input_mask(input, mask)
        count = kept.sum(dim=dim, keepdim=True)
        sample_total = sum(input, dim, keepdim=True, dtype=dtype, mask=kept)
    x = _torch.subtract(input, _torch.divide(sample_total, count))
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute, mask=kept)
    if not keepdim:
        count = count.reshape(total.shape)
    if corr != 0:
        count = count.to(compute)
        count = _torch.subtract(count, corr)
        count = _torch.maximum(count, count.new_zeros([]))
    output = _torch.divide(total, count).to(dtype=dtype)
    return _torch.sqrt(output) if take_sqrt else output


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """Variance of the kept elements (Bessel's correction by default)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """Standard deviation of the kept elements (Bessel's correction by default)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def softmax(input, dim, *, dtype=None, mask=None):
    """softmax over the kept elements: masked-out ones get 0 (nan where none is kept)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _torch.nn.functional.softmax(_masked("amax", input, mask), d, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _torch.nn.functional.log_softmax(_masked("amax", input, mask), d, dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _torch.nn.functional.softmin(_masked("amin", input, mask), d, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """input (masked-out elements 0) over the kept elements' norm, at least eps."""
    dtype = input.dtype if dtype is None else dtype
    masked = _masked("sum", input, mask)
    size = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return _torch.divide(masked, _torch.maximum(size, size.new_full([], eps)))
