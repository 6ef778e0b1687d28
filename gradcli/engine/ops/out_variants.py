"""`out=` for the torch.* functions: the result is written into the given tensor(s).

PyTorch's out= variants compute the result, resize the out tensor to it (warning when
a non-empty one had another shape), cast into its dtype where the cast is allowed and
write it, bumping its version; they refuse to run when autograd would have to record
them (grad mode on and an input or the out tensor requiring grad). One wrapper does
that for every public function that declares an `out` parameter (many used to accept
and ignore it) and for the elementwise, reduction and product functions listed in
`ADDED`. A call without out= costs one extra Python call; Tensor methods and
operators are not wrapped at all.

Imported after the other op modules (engine/ops/__init__.py), so it sees their names.
"""

from __future__ import annotations

import warnings

from .. import tensor as _tensor_mod
from ..grad_mode import GRAD_MODE
from ..tensor import Tensor, _write_into
from .registry import PUBLIC

# torch.* functions PyTorch gives an out= variant that gradcli's signatures lack
ADDED = frozenset("""
abs acos acosh add addmm asin asinh atan atan2 atanh bmm cat ceil clamp clamp_max clamp_min
clip cos cosh cumprod cumsum div divide dot exp exp2 expm1 floor floor_divide fmod frac ge gt
hypot le log log10 log1p log2 logical_and logical_not logical_or logical_xor lt matmul maximum
mean minimum mm mul multiply mv ne neg negative outer pow prod reciprocal remainder round
rsqrt sigmoid sign sin sinh sqrt square stack sub subtract sum tan tanh true_divide trunc eq
""".split())

_PREFIXES = ("torch.", "torch.linalg.", "torch.special.")
# where PyTorch's function is a composite, its error names the op that got the out=
_ERROR_NAMES = {"linalg_inv": "linalg_inv_ex", "inverse": "linalg_inv_ex"}


def _requires_grad(args, kwargs) -> bool:
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Tensor):
            if a.requires_grad:
                return True
        elif isinstance(a, (list, tuple)):
            if any(isinstance(x, Tensor) and x.requires_grad for x in a):
                return True
    return False


def _has_tangent(args, kwargs, outs) -> bool:
    """Whether a tensor argument or out tensor is dual (forward AD has no out= variants)."""
    tangent_of = _tensor_mod.FORWARD_AD_TANGENT
    for a in list(args) + list(kwargs.values()) + list(outs):
        for x in a if isinstance(a, (list, tuple)) else (a,):
            if isinstance(x, Tensor) and tangent_of(x) is not None:
                return True
    return False


def _shape_text(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def write_out(out: Tensor, result: Tensor) -> Tensor:
    """Write `result` into `out` as an out= variant does (resize, cast check, version)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"out must be Tensor, not {type(out).__name__}")
    values = result._data if isinstance(result, Tensor) else result
    if out._data.shape != values.shape:
        if out._data.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{_shape_text(out._data.shape)}, which does not match the required output shape "
                f"{_shape_text(values.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0). (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                "Resize.cpp:30.)", UserWarning, stacklevel=3)
        from .. import dtypes
        from ..tensor import _type_word

        src, dst = dtypes.FROM_NP[values.dtype], dtypes.FROM_NP[out._data.dtype]
        if src._category > dst._category:
            raise RuntimeError(f"result type {_type_word(src)} can't be cast to the desired "
                               f"output type {_type_word(dst)}")
        out._data = values.astype(out._data.dtype, copy=True)
    else:
        _write_into(out, values)
    out._vc[0] += 1
    return out


def with_out(fn, name: str):
    """`fn` taking out=: without it the call goes straight through."""

    def function(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if GRAD_MODE.enabled and (_requires_grad(args, kwargs) or any(
                isinstance(o, Tensor) and o.requires_grad for o in outs)):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires grad.")
        dual = _tensor_mod.FORWARD_AD_TANGENT is not None and _has_tangent(args, kwargs, outs)
        result = fn(*args, **kwargs)
        if isinstance(out, (tuple, list)):
            results = tuple(result)
            if len(results) != len(outs):
                raise RuntimeError(f"{name}(): expected {len(results)} out tensors, got "
                                   f"{len(outs)}")
            written = tuple(write_out(o, r) for o, r in zip(outs, results))
            written = type(result)(written) if hasattr(result, "_fields") else written
        else:
            written = write_out(out, result)
        if dual:  # (PyTorch refuses after the write, as here)
            raise NotImplementedError(f"Trying to use forward AD with {name}_out that does not "
                                      "support it because it is an out= function")
        return written

    function.__name__ = getattr(fn, "__name__", name)
    function.__qualname__ = getattr(fn, "__qualname__", name)
    function.__doc__ = getattr(fn, "__doc__", None)
    function.__module__ = getattr(fn, "__module__", __name__)
    function._without_out = fn
    return function


def _declares_out(fn) -> bool:
    """Whether `fn` has a parameter named out (read from its code object: inspect's
    signature would cost ~30 ms of start-up over all the public functions)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    return "out" in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


def install() -> None:
    wrapped: dict = {}
    for pname, fn in list(PUBLIC.items()):
        if not pname.startswith(_PREFIXES) or not callable(fn) or isinstance(fn, type):
            continue
        short = pname.rpartition(".")[2]
        if short.startswith("_") or short.endswith("_") or getattr(fn, "_without_out", None):
            continue
        if not ((pname.count(".") == 1 and short in ADDED) or _declares_out(fn)):
            continue
        key = (id(fn), short)
        if key not in wrapped:  # (PyTorch's name in the error: mul, linalg_inv, special_expit)
            name = pname[len("torch."):].replace(".", "_")
            wrapped[key] = with_out(fn, _ERROR_NAMES.get(name, name))
        PUBLIC[pname] = wrapped[key]


install()
