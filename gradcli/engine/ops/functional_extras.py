"""torch.* / nn.functional names tutorials reach that gradcli lacked (issue #23's breadth):
gumbel_softmax, the deprecated inclusive torch.range, torch.asarray's copy/alias rules,
the *_with_indices pooling spellings, relu_, native_channel_shuffle, detach/adjoint forms.

Most are compositions of ops already in the table, written as PyTorch composes them so
that the grad_fn names, the random draws and the errors come out as PyTorch's.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..grad_mode import no_grad
from ..tensor import Tensor, make
from ..warn_site import warn_at_caller, warn_once
from .aliases_and_config import _scalar_name
from .breadth import channel_shuffle as _channel_shuffle
from .registry import PUBLIC, defop, no_derivative, public, run_op

# ------------------------------------------------------------------ gumbel_softmax


@public("torch.nn.functional.gumbel_softmax")
def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """Samples of the Gumbel-softmax distribution. The noise is drawn as PyTorch draws it
    (a contiguous buffer of logits' shape filled by exponential_, then -log), so seeded
    samples are PyTorch's bit for bit; hard=True is the straight-through estimator
    (one-hot forward, the soft sample's gradient)."""
    if eps != 1e-10:
        warn_at_caller("`eps` parameter is deprecated and has no effect.")
    noise = PUBLIC["torch.empty"](tuple(logits.shape), dtype=logits.dtype).exponential_()
    gumbels = -noise.log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = PUBLIC["torch.zeros"](tuple(logits.shape), dtype=logits.dtype).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# ------------------------------------------------------------------ torch.range

_RANGE_WARNING = ("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).")
_MISSING = object()


def _number(value, name):
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise RuntimeError("a Tensor with {} elements cannot be converted to Scalar"
                               .format(value.numel()))
        return value.item()
    if isinstance(value, (bool, int, float, np.integer, np.floating)):
        return value
    raise TypeError(f"range(): argument '{name}' must be Number, not {type(value).__name__}")


@public("torch.range")
def range(start=0, end=_MISSING, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """The deprecated inclusive range [start, end]: as many points as (end - start) / step
    + 1 truncates to, each start + i * step in double precision (int64 for integer
    dtypes), with PyTorch's deprecation warning. Always the default float dtype unless
    asked otherwise (torch.range(1, 4) is float)."""
    if end is _MISSING:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    start, end, step = _number(start, "start"), _number(end, "end"), _number(step, "step")
    warn_at_caller(_RANGE_WARNING)
    if dtype is None:
        dtype = out.dtype if out is not None else dtypes.get_default_dtype()
    integral = dtype.np.kind in "iub"
    if integral:
        start, end, step = int(start), int(end), int(step)
    else:
        start, end, step = float(start), float(end), float(step)
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_scalar_text(start)} -> {_scalar_text(end)}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if integral:
        count = (end - start) // step + 1 if step > 0 else (start - end) // (-step) + 1
        values = start + step * np.arange(count, dtype=np.int64)
    else:
        count = int((end - start) / step + 1)
        values = start + step * np.arange(count, dtype=np.float64)
    if requires_grad and not dtype.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    result = make(values.astype(dtype.np))
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    if requires_grad:
        result._requires_grad_(True)
    return result


def _scalar_text(value) -> str:
    return str(value) if not isinstance(value, float) else repr(value)


# ------------------------------------------------------------------ torch.asarray


@public("torch.asarray")
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """obj as a tensor, aliasing it when it can (a tensor, a numpy array) and copying when
    it must or is told to. A tensor of the wrong dtype is converted (copy=None) or refused
    (copy=False); a sequence is always a new tensor (copy=False refuses it). An unspecified
    requires_grad follows the tensor obj (PyTorch 2.13's new default, warned once); a
    non-leaf that must not require grad comes back detached. Buffer-protocol objects
    other than numpy arrays (bytes & co, PyTorch's frombuffer path: raw memory read as
    another type) are not supported."""
    if device is not None and str(device) != "cpu":
        PUBLIC["torch.empty"](0, device=device)  # (PyTorch's error for a device it lacks)
    force_copy = bool(copy) if copy is not None else False
    force_alias = copy is not None and not copy
    tensor = obj if isinstance(obj, Tensor) else None
    wants_grad = requires_grad if requires_grad is not None else (
        tensor is not None and tensor.requires_grad)
    if wants_grad and requires_grad is None:
        warn_once("asarray_requires_grad",
                  "torch.asarray: unspecified requires_grad now defaults to obj.requires_grad "
                  "instead of False. Pass requires_grad=False explicitly to get the old behavior "
                  "and silence this warning. (Triggered internally at /__w/pytorch/pytorch/torch/"
                  "csrc/utils/tensor_new.cpp:1737.)")
    if tensor is None and isinstance(obj, (np.ndarray, np.generic)):
        if isinstance(obj, np.generic):
            if force_alias:
                raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or "
                                 "transform it in a ndarray. ")
            obj = np.array(obj)
            force_copy = False
        tensor = PUBLIC["torch.from_numpy"](obj)
    elif tensor is None and isinstance(obj, (bytes, bytearray, memoryview)):
        raise TypeError("torch.asarray of a buffer object (PyTorch reads its raw memory as "
                        "the dtype asked) is not supported by gradcli")
    if tensor is not None:
        wrong_dtype = dtype is not None and dtype != tensor.dtype
        if force_copy or (copy is None and wrong_dtype):
            tensor = tensor.to(dtype, copy=force_copy) if wrong_dtype else tensor.clone()
        elif wrong_dtype:
            raise ValueError(f"can't alias tensor with dtype '{_scalar_name(tensor.dtype)}' "
                             f"into dtype '{_scalar_name(dtype)}'.")
        if not tensor.is_leaf and not wants_grad:
            return tensor.detach()
        return _set_requires_grad(tensor, wants_grad)
    if force_alias:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    result = PUBLIC["torch.tensor"](obj, dtype=dtype)
    return _set_requires_grad(result, wants_grad)


def _set_requires_grad(tensor: Tensor, flag: bool) -> Tensor:
    if flag and not tensor.dtype.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    if tensor.is_leaf:
        tensor._requires_grad_(bool(flag))
    return tensor


# ------------------------------------------------------------------ pooling spellings


def _with_indices(name: str, public_name: str):
    def pool(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
             return_indices=False):
        return PUBLIC[f"torch.nn.functional.{name}"](
            input, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode,
            return_indices=True)

    pool.__name__ = public_name
    pool.__doc__ = f"{name} with its argmax indices, whatever return_indices says."
    return pool


def _adaptive_with_indices(name: str, public_name: str):
    def pool(input, output_size, return_indices=False):
        return PUBLIC[f"torch.nn.functional.{name}"](input, output_size, return_indices=True)

    pool.__name__ = public_name
    pool.__doc__ = f"{name} with its argmax indices, whatever return_indices says."
    return pool


for _n in (1, 2, 3):
    if _n != 2:  # (F.max_pool2d_with_indices is declared beside max_pool2d)
        public(f"torch.nn.functional.max_pool{_n}d_with_indices")(
            _with_indices(f"max_pool{_n}d", f"max_pool{_n}d_with_indices"))
    public(f"torch.nn.functional.adaptive_max_pool{_n}d_with_indices")(
        _adaptive_with_indices(f"adaptive_max_pool{_n}d", f"adaptive_max_pool{_n}d_with_indices"))


@public("torch.max_pool1d_with_indices")
def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """ATen's form: stride=() means the kernel size."""
    return PUBLIC["torch.nn.functional.max_pool1d"](
        input, kernel_size, stride if stride not in ((), []) else None, padding, dilation,
        ceil_mode=ceil_mode, return_indices=True)


@public("torch.nn.functional.relu_")
def relu_(input: Tensor) -> Tensor:
    """F.relu_ is torch.relu_: in place."""
    return input.relu_()


# ------------------------------------------------------------------ native_channel_shuffle




def _native_channel_shuffle_fwd(x, groups):
    n, c = x.shape[:2]
    rest = x.shape[2:]
    return np.ascontiguousarray(
        x.reshape(n, groups, c // groups, *rest).swapaxes(1, 2)).reshape(x.shape)


NATIVE_CHANNEL_SHUFFLE = defop(
    "native_channel_shuffle", "NotImplemented", _native_channel_shuffle_fwd,
    no_derivative("native_channel_shuffle"),
    "PyTorch's native kernel has no derivative (backward raises)")


@public("torch.nn.functional.native_channel_shuffle", "torch.native_channel_shuffle")
def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """channel_shuffle's native kernel: the same values and checks, but PyTorch declares no
    derivative for it, so its node refuses backward."""
    with no_grad():
        _channel_shuffle(input, groups)  # (the checks, in PyTorch's order)
    return run_op(NATIVE_CHANNEL_SHUFFLE, (input,), (int(groups),))
