"""torch.* names pasted scripts use that gradcli lacked: constants, comparison aliases,
index helpers, predicates, gcd/lcm/heaviside, window functions, the *_copy forms, the
deprecated norm spellings, and the process-wide configuration calls (determinism, matmul
precision, interop threads, warn-always, anomaly mode, set_default_tensor_type).

Configuration calls change nothing gradcli computes (it is single-device, always
deterministic, always full precision) but keep the state scripts read back, with
PyTorch's checks of their arguments and PyTorch's texts.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes
from ..grad_mode import ANOMALY, ANOMALY_CHECK_NAN, set_anomaly
from ..tensor import Tensor, _wrap_dim, make
from ..warn_site import WARN_ALWAYS, first_time
from . import composite as _composite
from .registry import PUBLIC, defop, no_derivative, public, run_op

PUBLIC["torch.pi"] = math.pi
PUBLIC["torch.e"] = math.e
PUBLIC["torch.newaxis"] = None

# ------------------------------------------------------------------ comparison aliases


def _alias(method: str, name: str):
    def function(input, other, *, out=None):
        result = getattr(input, method)(other)
        if out is not None:
            out.resize_(result.shape).copy_(result)
            return out
        return result

    function.__name__ = name
    function.__doc__ = f"torch.{name}: the same comparison as Tensor.{method}."
    return function


for _name, _method in (("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
                       ("less_equal", "le"), ("not_equal", "ne")):
    public(f"torch.{_name}")(_alias(_method, _name))

# ------------------------------------------------------------------ index helpers


def _triangle(which, row, col, offset, dtype):
    if dtype is None:
        dtype = dtypes.int64
    if not isinstance(row, int) or not isinstance(col, int):
        raise TypeError(f"{which}_indices(): argument 'row' must be int")
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"\"{which}_indices\" not implemented for '{_scalar_name(dtype)}'")
    pick = np.tril_indices if which == "tril" else np.triu_indices
    rows, cols = pick(row, offset, col) if row and col else (np.zeros(0, int),) * 2
    return make(np.stack([rows, cols]).astype(dtype.np).reshape(2, -1))


@public("torch.tril_indices")
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 pin_memory=False, requires_grad=False):
    """The (row, column) coordinates of the lower triangle, row by row, as a 2 x N tensor."""
    if requires_grad:  # (an integer result: PyTorch's refusal)
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return _triangle("tril", row, col, offset, dtype)


@public("torch.triu_indices")
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 pin_memory=False, requires_grad=False):
    """The (row, column) coordinates of the upper triangle, row by row, as a 2 x N tensor."""
    if requires_grad:  # (an integer result: PyTorch's refusal)
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return _triangle("triu", row, col, offset, dtype)


@public("torch.unravel_index")
def unravel_index(indices, shape):
    """Flat indices into a tensor of `shape` as one coordinate tensor per dimension (C order);
    indices out of range wrap as PyTorch's division does (no check)."""
    if not isinstance(indices, Tensor):
        indices = make(np.asarray(indices))
    if indices._data.dtype.kind not in "iu" or indices._data.dtype == np.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got "
                         f"{tuple(shape)}")
    flat = indices._data.astype(np.int64)
    coords = []
    for size in reversed(shape):
        coords.append(np.remainder(flat, size) if size else flat * 0)
        flat = np.floor_divide(flat, size) if size else flat
    return tuple(make(c) for c in reversed(coords))


def _vander_backward(c, g):
    """PyTorch's vander writes its cumprod into a slice of the result it then modifies, so
    the saved cumprod is stale and its backward always fails: the same failure here."""
    shape = ", ".join(str(n) for n in g.shape)
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [torch.{g.dtype._legacy} [{shape}]], which is output 0 of "
        "AsStrided, is at version 3; expected version 2 instead. Hint: enable anomaly "
        "detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False).")


_vander_backward.no_derivative = True  # (the generic gradchecks skip it, as NotImplemented)
# (no torch_call: PyTorch's own vander fails the generic tests' backward and forward-mode
# runs; tests/test_aliases_and_config.py compares it with PyTorch)
VANDER_CUMPROD = defop("vander_cumprod", "CumprodBackward0", lambda a: np.cumprod(a, axis=1),
                       _vander_backward, "vander's cumprod: its backward fails as PyTorch's")


@public("torch.vander")
def vander(x, N=None, increasing=False):  # noqa: N803 - PyTorch's keyword
    """Columns x^0, x^1, ... (highest power first unless increasing), computed as PyTorch
    composes it (a cumulative product, flipped) so the graph is its graph; integer and bool
    inputs widen to int64."""
    from .. import ops as _ops  # noqa: F401  (the Tensor methods used below)

    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if not x.dtype.is_floating_point:
        x = x.to(dtypes.int64)
    result = PUBLIC["torch.ones"](x.shape[0], n, dtype=x.dtype)
    if n > 1:
        result[:, 1:] = run_op(VANDER_CUMPROD, (x.unsqueeze(1).expand(x.shape[0], n - 1),))
    return result if increasing else result.flip(1)


@public("torch.argwhere", "Tensor.argwhere")
def argwhere(input):
    """The coordinates of the nonzero elements, one row each (as nonzero)."""
    return input.nonzero()


@public("torch.row_stack")
def row_stack(tensors, *, out=None):
    """vstack's old name."""
    return PUBLIC["torch.vstack"](tensors)


@public("torch.scalar_tensor")
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None,
                  requires_grad=False):
    """A 0-d tensor of the default float dtype (not the number's own), as PyTorch's."""
    if isinstance(s, Tensor) or not isinstance(s, (int, float, bool, complex)):
        raise TypeError("scalar_tensor(): argument 's' (position 1) must be Number, not "
                        f"{'Tensor' if isinstance(s, Tensor) else type(s).__name__}")
    target = dtypes.get_default_dtype() if dtype is None else dtype
    return PUBLIC["torch.tensor"](s, dtype=target, requires_grad=requires_grad)


# ------------------------------------------------------------------ predicates


def _need_tensor(name, value, arg="input"):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position 1) must be Tensor, not "
                        f"{type(value).__name__}")


@public("torch.is_complex", "Tensor.is_complex")
def is_complex(input) -> bool:
    """gradcli has no complex dtypes: always False."""
    _need_tensor("is_complex", input)
    return False


@public("torch.is_signed", "Tensor.is_signed")
def is_signed(input) -> bool:
    _need_tensor("is_signed", input)
    return input._data.dtype.kind in "fi"


@public("torch.is_nonzero", "Tensor.is_nonzero")
def is_nonzero(input) -> bool:
    """The truth of a one-element tensor; PyTorch's errors for none or several."""
    _need_tensor("is_nonzero", input)
    count = input._data.size
    if count == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if count > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(-1)[0])


@public("torch.is_same_size", "Tensor.is_same_size")
def is_same_size(input, other) -> bool:
    _need_tensor("is_same_size", input)
    _need_tensor("is_same_size", other, "other")
    return input._data.shape == other._data.shape


def _bool_map(name, fn):
    def predicate(input, *, out=None):
        _need_tensor(name, input)
        result = make(np.asarray(fn(input._data), dtype=np.bool_).reshape(input._data.shape))
        if out is not None:
            out.resize_(result.shape).copy_(result)
            return out
        return result

    predicate.__name__ = name
    return predicate


public("torch.isneginf", "Tensor.isneginf")(
    _bool_map("isneginf", lambda a: np.isneginf(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)))
public("torch.isposinf", "Tensor.isposinf")(
    _bool_map("isposinf", lambda a: np.isposinf(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)))
public("torch.isreal", "Tensor.isreal")(_bool_map("isreal", lambda a: np.ones(a.shape, bool)))


# ------------------------------------------------------------------ heaviside, gcd, lcm




def _heaviside_forward(a, values):
    return np.where(a == 0, values, (a > 0)).astype(np.result_type(a, values))


HEAVISIDE = defop("heaviside", "NotImplemented", _heaviside_forward, no_derivative("heaviside"),
                  "heaviside: no derivative", broadcast=True,
                  torch_call="torch.heaviside(a, b)")


def _scalar_name(dt) -> str:
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
            "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "float16": "Half", "bfloat16": "BFloat16"}.get(str(dt).replace("torch.", ""), str(dt))


def _as_operand(value, like):
    if isinstance(value, Tensor):
        return value
    return PUBLIC["torch.tensor"](value, dtype=like.dtype)


@public("torch.heaviside", "Tensor.heaviside")
def heaviside(input, values, *, out=None):
    """0 below zero, 1 above, `values` at zero; both operands must share a dtype."""
    _need_tensor("heaviside", input)
    _need_tensor("heaviside", values, "values")
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if input._data.dtype == np.bool_:
        raise RuntimeError("\"heaviside_cpu\" not implemented for 'Bool'")
    result = run_op(HEAVISIDE, (input, values))
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


@public("Tensor.heaviside_")
def heaviside_(self, values):
    return self._apply_inplace(lambda old: heaviside(old, values))


def _integer_pair(name, input, other):
    _need_tensor(name, input)
    other = _as_operand(other, input)
    common = dtypes.result_type(input, other)
    if common.np.kind not in "iu":
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_scalar_name(common)}'")
    a, b = np.broadcast_arrays(input._data.astype(common.np), other._data.astype(common.np))
    return a, b, common


@public("torch.gcd", "Tensor.gcd")
def gcd(input, other, *, out=None):
    """Greatest common divisor, elementwise, always non-negative (integers only)."""
    a, b, common = _integer_pair("gcd", input, other)
    result = make(np.gcd(a, b).astype(common.np))
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


@public("torch.lcm", "Tensor.lcm")
def lcm(input, other, *, out=None):
    """Least common multiple, elementwise, non-negative (integers only)."""
    a, b, common = _integer_pair("lcm", input, other)
    result = make(np.abs(np.lcm(a, b)).astype(common.np))
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


@public("torch.gcd_", "Tensor.gcd_")
def gcd_(self, other):
    return self._apply_inplace(lambda old: gcd(old, other))


@public("torch.lcm_", "Tensor.lcm_")
def lcm_(self, other):
    return self._apply_inplace(lambda old: lcm(old, other))


# ------------------------------------------------------------------ dtype helpers


@public("torch.can_cast")
def can_cast(from_, to) -> bool:
    """Whether PyTorch's type promotion allows the cast: never float -> integral,
    never a non-bool -> bool."""
    if not isinstance(from_, dtypes.dtype) or not isinstance(to, dtypes.dtype):
        bad, arg, pos = (from_, "from_", 1) if not isinstance(from_, dtypes.dtype) else (to, "to", 2)
        raise TypeError(f"can_cast(): argument '{arg}' (position {pos}) must be torch.dtype, not "
                        f"{type(bad).__name__}")
    if from_.is_floating_point and not to.is_floating_point:
        return False
    return not (from_ != dtypes.bool_ and to == dtypes.bool_)


@public("torch.typename")
def typename(obj) -> str:
    """A tensor's type string (torch.FloatTensor), else the object's dotted class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    prefix = module + "." if module not in ("", "builtins", "__builtin__") else ""
    if hasattr(obj, "__qualname__"):
        name = obj.__qualname__
    elif hasattr(obj, "__name__"):
        name = obj.__name__
    else:
        name = obj.__class__.__name__
    return prefix + name


# ------------------------------------------------------------------ functional spellings


@public("torch.embedding")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """ATen's argument order (weight first) over nn.functional.embedding."""
    return PUBLIC["torch.nn.functional.embedding"](
        indices, weight, padding_idx=None if padding_idx == -1 else padding_idx,
        scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


@public("torch.batch_norm")
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """ATen's argument order over nn.functional.batch_norm."""
    return PUBLIC["torch.nn.functional.batch_norm"](
        input, running_mean, running_var, weight, bias, training, momentum, eps)


@public("torch.kl_div")
def kl_div(input, target, reduction=0, *, log_target=False):
    """ATen's form: reduction as the enum number (0 none, the default here as in PyTorch's
    binding, 1 mean, 2 sum); a plain mean, without nn.functional's batchmean warning."""
    pointwise = (target.exp() * (target - input) if log_target
                 else PUBLIC["torch.xlogy"](target, target) - target * input)
    if reduction == 0:
        return pointwise
    if reduction == 1:
        return pointwise.mean()
    if reduction == 2:
        return pointwise.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _deprecated_norm(name, replacement):
    if not first_time(name):
        return
    warnings.warn(
        f"at::{name} is deprecated and it is just left for JIT compatibility. It will be "
        f"removed in a future PyTorch release. Please use `{replacement}` instead "
        "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
        f"LinearAlgebra.cpp:{3229 if name == 'nuclear_norm' else 3175}.)",
        UserWarning, stacklevel=3)


@public("torch.nuclear_norm")
def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """The deprecated spelling of linalg.matrix_norm(A, 'nuc')."""
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    _deprecated_norm("nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)")
    dims = (-2, -1) if dim is None else tuple(dim)
    if dim is None and input.dim() != 2:
        raise RuntimeError(f"Expected a tensor with 2 dimensions, but got a tensor with "
                           f"{input.dim()} dimension{'s' if input.dim() != 1 else ''} instead.")
    return PUBLIC["torch.linalg.matrix_norm"](input, "nuc", dims, keepdim)


@public("torch.frobenius_norm")
def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """The deprecated spelling of linalg.vector_norm(A, 2, dim)."""
    _deprecated_norm("frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)")
    dims = tuple(_wrap_dim(d, max(input.dim(), 1)) for d in ((dim,) if isinstance(dim, int) else dim))
    return run_op(FROBENIUS, (input,), (dims, bool(keepdim)))


def _frobenius_forward(x, dims, keepdim):
    """ATen's at::norm kernel squares and sums in the input's precision: a float32 square
    past float32's range is inf (and a tiny one 0), so the norm is, unlike
    linalg.vector_norm's scaled sum."""
    from .linalg_ext import _vector_norm_array

    if x.dtype.kind != "f" or x.dtype == np.float64:
        return _vector_norm_array(x, 2.0, dims, keepdim, x.dtype)
    axis = dims if dims and x.ndim else None
    with np.errstate(all="ignore"):
        squares = np.abs(x) * np.abs(x)  # (in x's precision)
        total = np.sum(squares.astype(np.float64), axis=axis, keepdims=keepdim).astype(x.dtype)
        return np.asarray(np.sqrt(total.astype(np.float64))).astype(x.dtype)


def _frobenius_backward(c, g):
    from types import SimpleNamespace

    from .linalg_ext import _vector_norm_backward

    # linalg.vector_norm's formula over the dims (ATen's at::norm node, NormBackward1)
    ctx = SimpleNamespace(saved=c.saved, result=c.result, meta=(2.0, c.meta[0], c.meta[1], None))
    return _vector_norm_backward(ctx, g)


FROBENIUS = defop("frobenius_norm", "NormBackward1", _frobenius_forward, _frobenius_backward,
                  "d ||x||_F/dx = x / ||x||_F", save="inputs result",
                  torch_call="torch.frobenius_norm(a, (0,))")


# ------------------------------------------------------------------ *_copy forms


def _select_backward(c, g):
    in_shape, dim, index = c.meta
    zeros = PUBLIC["torch.zeros"](in_shape, dtype=g.dtype)
    return (PUBLIC["torch.select_scatter"](zeros, g, dim, index),)


def _slice_backward(c, g):
    in_shape, dim, start, end, step = c.meta
    zeros = PUBLIC["torch.zeros"](in_shape, dtype=g.dtype)
    return (PUBLIC["torch.slice_scatter"](zeros, g, dim, start, end, step),)


SELECT_COPY = defop("select_copy", "SelectBackward0_copy",
                    lambda a, in_shape, dim, index: np.array(np.take(a, index, axis=dim)),
                    _select_backward, "d select_copy(a)/da: scattered back",
                    torch_call="torch.select_copy(a.reshape(-1), 0, 0)")
SLICE_COPY = defop("slice_copy", "SliceBackward0_copy",
                   lambda a, in_shape, dim, start, end, step: np.array(
                       a[(slice(None),) * dim + (slice(start, end, step),)]),
                   _slice_backward, "d slice_copy(a)/da: scattered back",
                   torch_call="torch.slice_copy(a.reshape(-1), 0, 0, 1)")
SPLIT_COPY = defop("split_copy", "SplitBackward0_copy", None,
                   _composite._pieces_backward, "d split_copy(a)/da: join the pieces' gradients",
                   multi=True, torch_call="torch.split_copy(a.reshape(-1), 1)[0]")


@public("torch.select_copy")
def select_copy(input, dim, index, *, out=None):
    """A copy of input.select(dim, index) whose node is PyTorch's SelectBackward0_copy."""
    if input.dim():  # (ATen's select wording; gradcli's select words it as indexing does)
        size = input.shape[_wrap_dim(dim, input.dim())]
        if not -size <= index < size:
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"[{', '.join(map(str, input.shape))}] at dimension "
                             f"{_wrap_dim(dim, input.dim())}")
    view = input.select(dim, index)  # PyTorch's checks and messages
    dim = _wrap_dim(dim, input.dim())
    index = index + input.shape[dim] if index < 0 else index
    return run_op(SELECT_COPY, (input,), (tuple(input.shape), dim, index)) if view is not None \
        else view


@public("torch.slice_copy")
def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    """A copy of input[..., start:end:step] along dim (node SliceBackward0_copy)."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    dim = _wrap_dim(dim, input.dim())
    begin, stop, stride = slice(start, end, step).indices(input.shape[dim])
    return run_op(SLICE_COPY, (input,), (tuple(input.shape), dim, begin, max(stop, begin), stride))


@public("torch.split_copy")
def split_copy(tensor, split_size, dim=0, *, out=None):
    """Copies of tensor.split(split_size, dim), the pieces of one SplitBackward0_copy node."""
    return _composite._as_copies(SPLIT_COPY, tensor.split(split_size, dim), tensor)


# ------------------------------------------------------------------ window functions


def _window(name, values, window_length, periodic, dtype, requires_grad):
    """The window computed in its own dtype, step by step as ATen orders the arithmetic
    (so float32 windows round as PyTorch's: hamming's ends are -2.98e-08, not 0)."""
    if dtype is None:
        dtype = dtypes.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: "
                           f"TensorOptions(dtype={_c_type(dtype)}, device=cpu, layout=Strided (default), "
                           "requires_grad=false (default), pinned_memory=false, "
                           "memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    npdt = dtype.np
    if window_length == 0:
        data = np.zeros(0, npdt)
    elif window_length == 1:
        data = np.ones(1, npdt)
    else:
        n = window_length + 1 if periodic else window_length
        with np.errstate(all="ignore"):
            data = values(np.arange(n, dtype=npdt), n, npdt.type)[:window_length]
    return PUBLIC["torch.tensor"](np.asarray(data, npdt), dtype=dtype, requires_grad=requires_grad)


def _c_type(dt) -> str:
    return {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}.get(str(dt).replace("torch.", ""), str(dt))


def _hamming_values(alpha, beta):
    def values(k, n, cast):
        return np.cos(k * cast(2 * math.pi / (n - 1))) * cast(-beta) + cast(alpha)

    return values


@public("torch.hann_window")
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    return _window("hann_window", _hamming_values(0.5, 0.5), window_length, periodic, dtype,
                   requires_grad)


@public("torch.hamming_window")
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    return _window("hamming_window", _hamming_values(alpha, beta), window_length, periodic,
                   dtype, requires_grad)


@public("torch.blackman_window")
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    def values(k, n, cast):
        k = k * cast(math.pi / (n - 1))
        return (np.cos(k * cast(4)) * cast(0.08) - np.cos(k * cast(2)) * cast(0.5)) + cast(0.42)

    return _window("blackman_window", values, window_length, periodic, dtype, requires_grad)


@public("torch.bartlett_window")
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    def values(k, n, cast):
        k = k * cast(2.0 / (n - 1))
        half = ((n - 1) >> 1) + 1
        k[half:] = k[half:] * cast(-1) + cast(2)
        return k

    return _window("bartlett_window", values, window_length, periodic, dtype, requires_grad)


@public("torch.kaiser_window")
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """I0(beta * sqrt(1 - ((k - m) / m)^2)) / I0(beta), m = (N - 1) / 2 (in float64, cast:
    within float32's tolerance of ATen's float kernel)."""
    def values(k, n, cast):
        middle = (n - 1) / 2
        ratio = (k.astype(np.float64) - middle) / middle
        return np.i0(beta * np.sqrt(np.clip(1 - ratio * ratio, 0, None))) / np.i0(beta)

    return _window("kaiser_window", values, window_length, periodic, dtype, requires_grad)


# ------------------------------------------------------------------ legacy constructors


def _legacy(npdt):
    def construct(*args):
        from .creation import _legacy as base

        return base(npdt)(*args)

    return construct


for _name, _npdt in (("ByteTensor", np.uint8), ("CharTensor", np.int8),
                     ("ShortTensor", np.int16), ("HalfTensor", np.float16)):
    public(f"torch.{_name}")(_legacy(_npdt))

# ------------------------------------------------------------------ configuration calls

#: the state the configuration calls keep: what scripts set is what they read back
_STATE = {"deterministic": False, "warn_only": False, "matmul_precision": "highest",
          "interop_threads": None}


@public("torch.use_deterministic_algorithms")
def use_deterministic_algorithms(mode, *, warn_only=False):
    """gradcli is always deterministic; the flags are kept for the getters."""
    if type(mode) is not bool:
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if type(warn_only) is not bool:
        raise TypeError("_set_deterministic_algorithms(): argument 'warn_only' must be bool, not "
                        f"{type(warn_only).__name__}")
    _STATE["deterministic"], _STATE["warn_only"] = mode, warn_only


@public("torch.are_deterministic_algorithms_enabled")
def are_deterministic_algorithms_enabled() -> bool:
    return _STATE["deterministic"]


@public("torch.is_deterministic_algorithms_warn_only_enabled")
def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _STATE["warn_only"]


@public("torch.set_deterministic_debug_mode")
def set_deterministic_debug_mode(debug_mode) -> None:
    """0/"default": off, 1/"warn": on and warn only, 2/"error": on."""
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


@public("torch.get_deterministic_debug_mode")
def get_deterministic_debug_mode() -> int:
    if not _STATE["deterministic"]:
        return 0
    return 1 if _STATE["warn_only"] else 2


@public("torch.set_float32_matmul_precision")
def set_float32_matmul_precision(precision) -> None:
    if not isinstance(precision, str):
        raise RuntimeError("set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the "
                      "currentsetFloat32MatmulPrecision call has no effect. (Triggered "
                      "internally at /__w/pytorch/pytorch/aten/src/ATen/Context.cpp:458.)",
                      UserWarning, stacklevel=2)
        return
    _STATE["matmul_precision"] = precision


@public("torch.get_float32_matmul_precision")
def get_float32_matmul_precision() -> str:
    return _STATE["matmul_precision"]


def _one_positional(name, args, kwargs):
    """The C functions' own argument rule: exactly one positional, no keywords."""
    if kwargs:
        raise TypeError(f"torch.{name}() takes no keyword arguments")
    if len(args) != 1:
        raise TypeError(f"torch.{name}() takes exactly one argument ({len(args)} given)")
    return args[0]


@public("torch.set_num_interop_threads")
def set_num_interop_threads(*args, **kwargs) -> None:
    num = _one_positional("set_num_interop_threads", args, kwargs)
    if type(num) is not int:
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {type(num).__name__}")
    if num <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _STATE["interop_threads"] = num


@public("torch.get_num_interop_threads")
def get_num_interop_threads() -> int:
    """PyTorch's default is the number of cores."""
    if _STATE["interop_threads"] is None:
        import os

        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
            (os.cpu_count() or 1)
    return _STATE["interop_threads"]


@public("torch.set_flush_denormal")
def set_flush_denormal(*args, **kwargs) -> bool:
    """Accepted and reported as supported (True); numpy keeps denormals either way."""
    mode = _one_positional("set_flush_denormal", args, kwargs)
    if type(mode) is not bool:
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return True


@public("torch.set_warn_always")
def set_warn_always(b) -> None:
    if type(b) is not bool:
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    WARN_ALWAYS[0] = b


@public("torch.is_warn_always_enabled")
def is_warn_always_enabled() -> bool:
    return WARN_ALWAYS[0]


@public("torch.set_anomaly_enabled")
def set_anomaly_enabled(enabled, check_nan=True) -> None:
    """The two switches detect_anomaly's context manager flips: anomaly mode and its NaN check."""
    for position, (arg, value) in enumerate((("enabled", enabled), ("check_nan", check_nan))):
        if type(value) is not bool:
            raise TypeError(f"set_anomaly_enabled(): argument '{arg}' (position {position + 1}) "
                            f"must be bool, not {type(value).__name__}")
    set_anomaly(enabled, check_nan)


@public("torch.is_anomaly_enabled")
def is_anomaly_enabled() -> bool:
    return ANOMALY[0]


@public("torch.is_anomaly_check_nan_enabled")
def is_anomaly_check_nan_enabled() -> bool:
    return ANOMALY_CHECK_NAN[0]


_TENSOR_TYPES = {"torch.FloatTensor": "float32", "torch.DoubleTensor": "float64",
                 "torch.HalfTensor": "float16", "torch.BFloat16Tensor": "bfloat16",
                 "torch.LongTensor": "int64", "torch.IntTensor": "int32",
                 "torch.ShortTensor": "int16", "torch.CharTensor": "int8",
                 "torch.ByteTensor": "uint8", "torch.BoolTensor": "bool"}


@public("torch.set_default_tensor_type")
def set_default_tensor_type(t) -> None:
    """Deprecated: sets the default dtype from a legacy tensor type (or its name)."""
    if not isinstance(t, str):
        t = _legacy_name(t)
    if first_time("set_default_tensor_type"):
            warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                      "use torch.set_default_dtype() and torch.set_default_device() as "
                      "alternatives. (Triggered internally at /__w/pytorch/pytorch/torch/csrc/"
                      "tensor/python_tensor.cpp:434.)", UserWarning, stacklevel=2)
    if t.startswith("torch.cuda."):
        raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
    if t not in _TENSOR_TYPES:
        raise ValueError(f"invalid type: '{t}'")
    target = getattr(dtypes, _TENSOR_TYPES[t], None) or dtypes.to_dtype(_TENSOR_TYPES[t])
    if not target.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    dtypes.set_default_dtype(target)


def _legacy_name(t) -> str:
    for name in _TENSOR_TYPES:
        if PUBLIC.get(name) is t:
            return name
    return getattr(t, "__name__", str(t))


@public("torch.compile")
def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor",  # noqa: A001
            mode=None, options=None, disable=False):
    """The model or function back, as PyTorch's wrapper (an OptimizedModule for a Module):
    gradcli runs the same code compiled or not. Loaded on first use (it needs nn)."""
    from gradcli.torch._compile import compile_model

    return compile_model(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                         mode=mode, options=options, disable=disable)


@public("torch.linalg.matmul")
def linalg_matmul(input, other, *, out=None):
    """torch.matmul under linalg's name."""
    result = PUBLIC["torch.matmul"](input, other)
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result
