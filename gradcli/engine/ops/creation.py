"""Tensor creation: tensor, ones, zeros, full, eye, arange, linspace, empty,
rand/randn/randint and the *_like forms, legacy FloatTensor & co."""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..grad_mode import GRAD_MODE
from ..limits import check_elements
from ..tensor import SCALAR_OF_GRAD_TENSOR, Tensor, _plain, make
from ..warn_site import warn_at_caller, warn_once


def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s)
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(
                f"ones(): argument 'size' (position 1) must be tuple of ints, but found element of type {type(s).__name__} at pos {len(out)}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: [{', '.join(map(str, size))}]")
        out.append(int(s))
    check_elements(out)
    return tuple(out)


def _float_dtype(dtype) -> np.dtype:
    return (dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()).np


def _finish(arr: np.ndarray, requires_grad: bool) -> Tensor:
    t = make(arr)
    if requires_grad:
        if arr.dtype.kind not in "fcV":
            from ..tensor import ONLY_FLOAT_GRAD_FACTORY

            raise RuntimeError(ONLY_FLOAT_GRAD_FACTORY)
        t._requires_grad = True
    return t


_NUMBER_KINDS = {bool: lambda: dtypes.bool_, int: lambda: dtypes.int64,
                 float: dtypes.get_default_dtype, complex: dtypes.default_complex}


def _first_items_str(data) -> None:
    """PyTorch sizes a nested list from its first items before reading any value: a str
    met there is a sequence without end ("too many dimensions 'str'")."""
    v = data
    while isinstance(v, (list, tuple)) and len(v):
        v = v[0]
    if isinstance(v, str) and v is not data:
        raise ValueError(f"too many dimensions '{type(v).__name__}'")


def _infer_dtype(data) -> dtypes.dtype:
    """torch.tensor's inference: bool, int64 or the default float, from the values."""
    _first_items_str(data)
    kinds = set()
    stack = [data]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            types = set(map(type, v))
            if not v:  # (an empty row counts as the default dtype, as numpy's float64)
                kinds.add(dtypes.get_default_dtype())
            elif types <= _NUMBER_KINDS.keys():  # a row of plain numbers: no loop per element
                kinds.update(_NUMBER_KINDS[t]() for t in types)
            else:
                stack.extend(v)
        elif isinstance(v, Tensor):
            kinds.add(v.dtype)
        elif isinstance(v, (np.ndarray, np.generic)):  # numpy scalars keep their dtype
            kinds.add(dtypes.FROM_NP[v.dtype])
        elif isinstance(v, bool):
            kinds.add(dtypes.bool_)
        elif isinstance(v, int):
            kinds.add(dtypes.int64)
        elif isinstance(v, float):
            kinds.add(dtypes.get_default_dtype())
        elif isinstance(v, complex):
            kinds.add(dtypes.default_complex())
        elif v is None:
            raise RuntimeError("Could not infer dtype of NoneType")
        elif isinstance(v, str):
            raise TypeError(f"new(): invalid data type '{type(v).__name__}'")
        else:
            raise TypeError(f"Could not infer dtype of {type(v).__name__}")
    result = None
    for k in kinds:
        result = k if result is None else dtypes.promote(result, k)
    return result or dtypes.get_default_dtype()


def _check_ragged(data, target: dtypes.dtype, depth=0):
    """PyTorch's errors for nested sequences of unequal lengths, or of sequences and numbers
    mixed at one depth (depth first, in the order PyTorch reads them)."""
    if isinstance(data, (list, tuple)):
        lens = None
        first_is_seq = isinstance(data[0], (list, tuple)) if data else None
        mixed_ok = not data or isinstance(data[0], Tensor)
        for item in data:
            is_seq = isinstance(item, (list, tuple))
            if is_seq != first_is_seq and not mixed_ok and not isinstance(item, Tensor):
                if first_is_seq:
                    raise TypeError("not a sequence")
                what = type(item).__name__
                if target._category in (2, 3):
                    raise TypeError(f"must be real number, not {what}")
                raise TypeError(f"'{what}' object cannot be interpreted as an integer")
            if is_seq:
                n = len(item)
                if lens is None:
                    lens = n
                elif n != lens:
                    raise ValueError(
                        f"expected sequence of length {lens} at dim {depth + 1} (got {n})")
                _check_ragged(item, target, depth + 1)  # (numbers need no call of their own)


def _first_sizes(data) -> list:
    """The shape PyTorch reads off a nested list: the lengths of its first items, down to
    the first that is not a list or tuple (a tensor or a number)."""
    sizes = []
    v = data
    while isinstance(v, (list, tuple)):
        sizes.append(len(v))
        if not v:
            break
        v = v[0]
    return sizes


def _irregular(data, target: dtypes.dtype) -> bool:
    """Whether a nested list needs PyTorch's own reading (_stored) rather than numpy's:
    it holds tensors or arrays (read as numbers or rows), or values the target dtype
    refuses (None, str, complex into a real dtype), whose error PyTorch raises at the
    first one in reading order."""
    complex_ok = target._category in (0, 3)  # (bool: z != 0)
    stack = [data]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            types = set(map(type, v))
            if types <= _NUMBER_KINDS.keys():
                if complex in types and not complex_ok:
                    return True
            else:
                stack.extend(v)
        elif isinstance(v, (Tensor, str)) or v is None or (
                isinstance(v, np.ndarray) and v.ndim) or (
                isinstance(v, complex) and not complex_ok):
            return True
    return False


_NOT_SEQUENCE = "not a sequence"
_ONE_ELEMENT = "only one element tensors can be converted to Python scalars"
_INDEX = "only integer tensors of a single element can be converted to an index"


def _stored(v, sizes: list, dim: int, target: dtypes.dtype):
    """A nested list holding tensors as PyTorch stores it into the shape `sizes`: a tensor
    where a number goes is that number (it must have one element: float() of it for a
    floating or complex result, index() for an integer or bool one), a tensor where a row
    goes is iterated as a row; the errors are PyTorch's, in its reading order."""
    if dim == len(sizes):
        if isinstance(v, Tensor):
            d = v._data
            if target._category in (2, 3):
                if d.size != 1:
                    raise ValueError(_ONE_ELEMENT)
            elif d.size != 1 or d.dtype.kind not in "biu":
                raise TypeError(_INDEX)
            if v._requires_grad and GRAD_MODE.enabled:
                warn_once("scalar_of_grad_tensor", SCALAR_OF_GRAD_TENSOR)
            value = d.reshape(-1)[0].item()
            if type(value) is complex and target._category == 2:
                raise RuntimeError("value cannot be converted to type double without overflow")
            return value
        if isinstance(v, (list, tuple, str)) or v is None or (
                isinstance(v, complex) and target._category not in (0, 3)):
            what = type(v).__name__
            if target._category in (2, 3):
                raise TypeError(f"must be real number, not {what}")
            raise TypeError(f"'{what}' object cannot be interpreted as an integer")
        return v
    n = sizes[dim]
    if isinstance(v, Tensor):
        if v._data.ndim == 0:
            raise TypeError(_NOT_SEQUENCE)
        items = [make(a) for a in v._data]
    elif isinstance(v, (list, tuple)):
        items = v
    elif isinstance(v, np.ndarray) and v.ndim:
        items = list(v)
    else:
        raise TypeError(_NOT_SEQUENCE)
    if len(items) != n:
        raise ValueError(f"expected sequence of length {n} at dim {dim} (got {len(items)})")
    return [_stored(item, sizes, dim + 1, target) for item in items]


def _conversion_error(data, target: dtypes.dtype, err: Exception) -> Exception:
    """PyTorch's error for the first number that its dtype cannot hold (numpy only says
    that one could not be converted): beyond int64 at all, or beyond an integer dtype."""
    info = np.iinfo(target.np) if target.np.kind in "iu" else None
    stack = [data]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(reversed(v))
        elif type(v) is int and not -(2 ** 63) <= v < 2 ** 63:
            return ValueError("Overflow when unpacking long long")
        elif type(v) is complex and target._category != 3:  # (a complex into a real dtype)
            return TypeError("must be real number, not complex" if target._category == 2
                             else "'complex' object cannot be interpreted as an integer")
        elif info is not None and type(v) in (int, float) and not (
                info.min <= v <= info.max if v == v else False):
            return RuntimeError(
                f"value cannot be converted to type {target.np.name} without overflow")
    return err


#: PyTorch's warning (from its argument parser, always, at the caller's line) on
#: torch.tensor(t) / t.new_tensor(s) of a tensor; {} is how the call was spelt
COPY_CONSTRUCT = ("To copy construct from a tensor, it is recommended to use "
                  "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                  "requires_grad_(True), rather than {}(sourceTensor).")


def _copy_of(data: Tensor, dtype, requires_grad) -> Tensor:
    arr = np.array(data._data, copy=True)
    if dtype is not None:
        arr = arr.astype(dtypes.to_dtype(dtype).np)
    return _finish(arr, requires_grad)


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    _placed(device)
    if isinstance(data, Tensor):
        warn_at_caller(COPY_CONSTRUCT.format("torch.tensor"))
        return _copy_of(data, dtype, requires_grad)
    if data is None:
        if dtype is not None:  # (the value is converted to that dtype's Python type)
            if dtypes.to_dtype(dtype).is_floating_point:
                raise TypeError("must be real number, not NoneType")
            raise TypeError("'NoneType' object cannot be interpreted as an integer")
        raise RuntimeError("Could not infer dtype of NoneType")
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, range):  # a sequence like any other (torch.tensor(range(100)))
        data = list(data)
    _first_items_str(data)
    target = dtypes.to_dtype(dtype) if dtype is not None else _infer_dtype(data)
    sizes = _first_sizes(data)
    if 0 in sizes:  # (PyTorch stores nothing in an empty tensor: the rest is never read)
        return _finish(np.zeros(sizes, target.np), requires_grad)
    if _irregular(data, target):
        plain = _stored(data, sizes, 0, target)
    else:
        _check_ragged(data, target)
        plain = _plain(data)
    try:
        with np.errstate(over="ignore"):  # 1e300 as float32: inf, as in PyTorch
            arr = np.array(plain, dtype=target.np)
    except (OverflowError, ValueError, TypeError) as err:
        raise _conversion_error(data, target, err) from None
    check_elements(arr.shape)
    return _finish(arr, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if isinstance(data, Tensor):
        if dtype is None or dtypes.to_dtype(dtype).np == data._data.dtype:
            return data
        return _copy_of(data, dtype, False)
    return tensor(data, dtype=dtype)


def _legacy(npdt):
    def construct(*args):
        if len(args) == 1 and isinstance(args[0], (list, tuple, Tensor)):
            return make(np.array(_plain(args[0]), dtype=npdt))
        if len(args) == 1 and isinstance(args[0], np.ndarray) and args[0].ndim:  # (its values)
            return make(np.array(args[0], dtype=npdt))
        return make(np.zeros(_size(args), dtype=npdt))

    return construct


FloatTensor = _legacy(np.float32)
DoubleTensor = _legacy(np.float64)
LongTensor = _legacy(np.int64)
IntTensor = _legacy(np.int32)
BoolTensor = _legacy(np.bool_)


def _placed(device) -> None:
    """Only the CPU holds tensors: another device raises PyTorch's error."""
    if device is not None:
        from ..devices import check

        check(device)


def _sizes(args: tuple, size, name: str) -> tuple:
    """The size of `ones(2, 3)`, `ones((2, 3))` or `ones(size=(2, 3))`."""
    if size is None:
        return args
    if args:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


def ones(*args, size=None, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    size = _sizes(args, size, "ones")
    _placed(device)
    return _finish(np.ones(_size(size), dtype=_float_dtype(dtype)), requires_grad)


def zeros(*args, size=None, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    size = _sizes(args, size, "zeros")
    _placed(device)
    flat = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    if any(isinstance(s, int) and s < 0 for s in flat):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _finish(np.zeros(_size(size), dtype=_float_dtype(dtype)), requires_grad)


def empty(*args, size=None, dtype=None, device=None, requires_grad=False, out=None,
          memory_format=None, pin_memory=False) -> Tensor:
    size = _sizes(args, size, "empty")
    _placed(device)
    return _finish(np.zeros(_size(size), dtype=_float_dtype(dtype)), requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False, out=None) -> Tensor:
    _placed(device)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    return _finish(np.full(_size((size,)), fill_value, dtype=dtypes.to_dtype(dtype).np), requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    _placed(device)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    m = n if m is None else m
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    _size((n, m))
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad)


def _num(v):
    return v.item() if isinstance(v, Tensor) else v


def _cnum(v) -> str:
    """A number as PyTorch's C++ prints it in messages (%g for floats)."""
    return f"{v:g}" if isinstance(v, float) else str(v)


# the C++ type names in PyTorch's "value cannot be converted to type ... without overflow"
_CPP_TYPES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "int64": "int64_t", "int32": "int", "int16": "short", "int8": "signed char",
              "uint8": "unsigned char"}


def _check_convertible(v, target: np.dtype) -> None:
    if target.kind in "fV":
        bad = math.isfinite(v) and abs(v) > float(dtypes.finfo(target).max)
    elif target.kind in "iu":
        info = np.iinfo(target)
        bad = not math.isfinite(v) or not info.min <= v <= info.max
    else:
        bad = False
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_CPP_TYPES.get(target.name, target.name)} "
                           "without overflow")


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    _placed(device)
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if not (step > 0 or step < 0):  # 0 or nan
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_cnum(start)} -> {_cnum(end)}")
    if (end - start) * step < 0 and end != start:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        target = dtypes.get_default_dtype() if is_float else dtypes.int64
    else:
        target = dtypes.to_dtype(dtype)
    n = max(int(math.ceil((end - start) / step)), 0)
    if target.np.kind in "iu" and any(isinstance(v, float) for v in (start, end, step)):
        # PyTorch's integer kernel: start and step truncated to int64 first; int64 also
        # sizes the range from the truncated ends, the narrower ints from the real ones
        istart, iend, istep = math.trunc(start), math.trunc(end), math.trunc(step)
        if target.np == np.int64:
            if istep == 0:  # (checked in the int64 kernel: a ValueError there)
                raise ValueError("step must be nonzero")
            n = max(-((istart - iend) // istep), 0)
        check_elements((n,))
        return _finish((istart + np.arange(n, dtype=np.int64) * istep).astype(target.np),
                       requires_grad)
    check_elements((n,))
    if target._category == 2:
        from ..kernels import ranges

        arr = ranges.arange(start, step, n, target.np)
        if arr is None:
            arr = (start + np.arange(n, dtype=np.float64) * step).astype(target.np)
    else:
        arr = np.arange(start, end, step).astype(target.np)[:n]
    return _finish(arr, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    _placed(device)
    start, end = _num(start), _num(end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    check_elements((steps,))
    target = _float_dtype(dtype)
    if steps >= 1:
        _check_convertible(start, np.dtype(target))
    if steps >= 2:
        _check_convertible(end, np.dtype(target))
    if steps == 1:
        arr = np.array([start], dtype=target)
    else:
        # PyTorch fills from both ends toward the middle
        idx = np.arange(steps, dtype=np.float64)
        step = (end - start) / (steps - 1)
        if np.dtype(target) == np.float32:
            # its float kernel takes the step in float from the float ends, then each
            # element is one fused multiply-add (exact product in float64, one rounding)
            start, end = float(np.float32(start)), float(np.float32(end))
            step = float(np.float32(np.float32(end) - np.float32(start)) / np.float32(steps - 1))
        if np.dtype(target).kind == "V":  # bfloat16: every step of its kernel rounds
            from ..kernels.bfloat16 import linspace as linspace_bf16

            return _finish(linspace_bf16(start, end, steps, np.dtype(target)), requires_grad)
        half = steps // 2
        if np.dtype(target) == np.float64:  # its double kernel fuses the multiply-add too
            from ..rng_sample import fma64

            arr = np.where(idx < half, fma64(idx, step, start),
                           fma64(steps - 1 - idx, -step, end))
        else:
            arr = np.where(idx < half, start + step * idx,
                           end - step * (steps - 1 - idx)).astype(target)
    return _finish(arr, requires_grad)


_SAMPLING: list = []


def _sampling():
    """(engine.rng_sample, random.generator_of), imported on the first draw (not at start-up)."""
    if not _SAMPLING:
        from .. import rng_sample
        from ..random import generator_of

        _SAMPLING.append((rng_sample, generator_of))
    return _SAMPLING[0]


def _random_size(size: tuple, kwargs: dict, name: str) -> tuple:
    """rand(n)'s size without the general parsing (a draw of a few numbers is mostly
    overhead); anything else through _size."""
    if len(size) == 1 and not kwargs and type(size[0]) is int and size[0] >= 0:
        check_elements(size)
        return size
    return _size(_sizes(size, kwargs.pop("size", None), name))


def _random_float(dtype, kernel: str) -> np.dtype:
    if dtype is None:
        return dtypes.get_default_dtype().np
    target = _float_dtype(dtype)
    if target.kind not in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_KERNEL_TYPE[target.name]}'")
    return target


_KERNEL_TYPE = {"int64": "Long", "int32": "Int", "bool": "Bool", "uint8": "Byte"}


def _random_out(name: str, out, dtype):
    """The dtype a random factory called with out= draws in: out's own (torch.rand(3,
    out=double_tensor) draws doubles, not floats cast); PyTorch's refusals first."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if GRAD_MODE.enabled and out.requires_grad:
        if name == "randn":  # (its out= form resizes out before anything else)
            raise RuntimeError("cannot resize variables that require grad")
        raise RuntimeError(f"aten::{name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    if dtype is not None and dtypes.to_dtype(dtype) != out.dtype:
        from .out_variants import _SCALAR_NAMES

        want, got = dtypes.to_dtype(dtype).np.name, out._data.dtype.name
        raise RuntimeError(f"dtype {_SCALAR_NAMES.get(want, want)} does not match dtype of out "
                           f"parameter ({_SCALAR_NAMES.get(got, got)})")
    return out.dtype


def _fill_out(out: Tensor, result: Tensor) -> Tensor:
    """Write a random factory's draw into out: PyTorch's factories resize out to the size
    first (no resize warning, unlike the out= of the other functions), then fill it."""
    from ..tensor import _write_into

    values = result._data.astype(out._data.dtype, copy=False)
    if values.shape == out._data.shape:
        _write_into(out, values)
    else:
        out._data = values.copy()
    out._vc[0] += 1
    return out


def _random_into(name: str, fn, args: tuple, kwargs: dict) -> Tensor:
    """fn(*args, **kwargs) (a random factory) called with out=: drawn in out's dtype and
    written into out, which is returned."""
    out = kwargs.pop("out")
    kwargs["dtype"] = _random_out(name, out, kwargs.get("dtype"))
    return _fill_out(out, fn(*args, **kwargs))


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None, **kwargs) -> Tensor:
    """torch.rand: uniform_(0, 1) of a new tensor (PyTorch's draws: see engine/rng_sample)."""
    if kwargs and kwargs.get("out") is not None:
        return _random_into("rand", rand, size, dict(kwargs, dtype=dtype, device=device,
                                                      requires_grad=requires_grad,
                                                      generator=generator))
    kwargs.pop("out", None)
    _placed(device)
    rng_sample, generator_of = _SAMPLING[0] if _SAMPLING else _sampling()
    shape = _random_size(size, kwargs, "rand")
    if dtype is not None and getattr(dtype, "_category", 0) == 3:  # complex: rng_sample's
        values = rng_sample.complex_draw(generator_of(generator), math.prod(shape), dtype.np, False)
        return _finish(values.reshape(shape), requires_grad)
    target = _random_float(dtype, "check_uniform_bounds")
    values = rng_sample.uniform(generator_of(generator), math.prod(shape), target)
    return _finish(values if len(shape) == 1 else values.reshape(shape), requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None, **kwargs) -> Tensor:
    """torch.randn: normal_(0, 1) of a new tensor."""
    if kwargs and kwargs.get("out") is not None:
        return _random_into("randn", randn, size, dict(kwargs, dtype=dtype, device=device,
                                                        requires_grad=requires_grad,
                                                        generator=generator))
    kwargs.pop("out", None)
    _placed(device)
    rng_sample, generator_of = _SAMPLING[0] if _SAMPLING else _sampling()
    shape = _random_size(size, kwargs, "randn")
    if dtype is not None and getattr(dtype, "_category", 0) == 3:  # complex: rng_sample's
        values = rng_sample.complex_draw(generator_of(generator), math.prod(shape), dtype.np, True)
        return _finish(values.reshape(shape), requires_grad)
    target = _random_float(dtype, "normal_kernel_cpu")
    values = rng_sample.normal(generator_of(generator), math.prod(shape), target, True, 0.0, 1.0)
    return _finish(values if len(shape) == 1 else values.reshape(shape), requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False,
            **kwargs) -> Tensor:
    from .. import rng_sample
    from ..random import generator_of

    if kwargs.get("out") is not None:
        return _random_into("randint", randint, (low, high, size), dict(
            kwargs, generator=generator, dtype=dtype, device=device,
            requires_grad=requires_grad))
    kwargs.pop("out", None)
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    shape = _size((size,))
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    target = dtypes.to_dtype(dtype).np if dtype is not None else np.int64
    n = int(np.prod(shape, dtype=np.int64))
    values = rng_sample.random_from_to(generator_of(generator), n, high - low, low)
    return _finish(values.astype(target).reshape(shape), requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, **kwargs) -> Tensor:
    from .. import rng_sample
    from ..random import generator_of

    if kwargs.get("out") is not None:
        return _random_into("randperm", randperm, (n,), dict(
            kwargs, generator=generator, dtype=dtype, device=device,
            requires_grad=requires_grad))
    kwargs.pop("out", None)
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    check_elements((n,))
    target = dtypes.to_dtype(dtype).np if dtype is not None else np.int64
    return _finish(rng_sample.randperm(generator_of(generator), n).astype(target), requires_grad)


def _keeps_layout(proto: np.ndarray):
    """True when PyTorch's *_like (preserve_format) would lay the result out as `proto`
    (same order of strides): `proto` is not in C order and no element overlaps another
    (an expanded tensor gets C order)."""
    if proto.flags.c_contiguous or proto.ndim < 2:
        return False
    return all(st for st, size in zip(proto.strides, proto.shape) if size != 1)


def _laid_out_like(proto: np.ndarray, npdt) -> np.ndarray:
    """A new dense array with proto's order of strides (size-1 dims included, as PyTorch
    computes them: innermost is the smallest stride; on ties the lower dim)."""
    order = sorted(range(proto.ndim), key=lambda i: (proto.strides[i], i))
    strides, step = [0] * proto.ndim, np.dtype(npdt).itemsize
    for i in order:
        strides[i] = step
        step *= proto.shape[i]
    buf = np.empty(proto.size, dtype=npdt)
    return np.lib.stride_tricks.as_strided(buf, proto.shape, strides)


def _like(fn):
    def like(input, dtype=None, device=None, requires_grad=False, memory_format=None, **kwargs):
        d = dtypes.to_dtype(dtype) if dtype is not None else input.dtype
        out = fn(input._data.shape, d, requires_grad)
        if memory_format is not None:
            from . import memory_formats as formats

            out._data = formats.like(out._data, input._data, memory_format)
        elif _keeps_layout(input._data):  # e.g. ones_like(x.t()) has x.t()'s strides
            arr = _laid_out_like(input._data, d.np)
            arr[...] = out._data
            out._data = arr
        return out

    return like


ones_like = _like(lambda shape, d, rg: _finish(np.ones(shape, d.np), rg))
zeros_like = _like(lambda shape, d, rg: _finish(np.zeros(shape, d.np), rg))
empty_like = _like(lambda shape, d, rg: _finish(np.zeros(shape, d.np), rg))


def _random_like(kernel: str, draw):
    def fn(shape, d, rg, generator=None, contiguous=True):
        from .. import rng_sample
        from ..random import generator_of

        if d.np.kind not in "fV":
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_KERNEL_TYPE[d.name]}'")
        out = np.empty(shape, d.np)
        out[...] = draw(rng_sample, generator_of(generator), out, contiguous).reshape(shape)
        return _finish(out, rg)

    return fn


def _like_random(fn):
    """A random *_like: PyTorch draws into the result laid out like input (memory order)."""

    def like(input, dtype=None, device=None, requires_grad=False, memory_format=None, generator=None,
             **kwargs):
        d = dtypes.to_dtype(dtype) if dtype is not None else input.dtype
        proto = input._data
        if _keeps_layout(proto):
            arr = _laid_out_like(proto, d.np)
            dims = sorted(range(arr.ndim), key=lambda i: -arr.strides[i])
            drawn = fn(tuple(arr.shape[i] for i in dims), d, requires_grad, generator, False)
            arr[...] = np.transpose(drawn._data, np.argsort(dims))
            drawn._data = arr
            return drawn
        return fn(proto.shape, d, requires_grad, generator)

    return like


rand_like = _like_random(_random_like(
    "check_uniform_bounds", lambda S, g, out, contiguous: S.uniform(g, out.size, out.dtype)))
randn_like = _like_random(_random_like(
    "normal_kernel_cpu", lambda S, g, out, contiguous: S.normal(g, out.size, out.dtype, contiguous, 0.0, 1.0)))


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False, memory_format=None) -> Tensor:
    return _like(lambda shape, d, rg: _finish(np.full(shape, fill_value, d.np), rg))(
        input, dtype=dtype, requires_grad=requires_grad, memory_format=memory_format)


def randint_like(input, low=None, high=None, *, dtype=None, requires_grad=False, generator=None,
                 **kwargs) -> Tensor:
    from .. import rng_sample
    from ..random import generator_of

    if high is None:
        low, high = 0, low
    elif low is None:
        low = 0
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    d = dtypes.to_dtype(dtype) if dtype is not None else input.dtype
    values = rng_sample.random_from_to(generator_of(generator), input._data.size, high - low, low)
    out = np.empty(input._data.shape, d.np)
    rng_sample.fill_in_order(out, values.astype(d.np))
    return _finish(out, requires_grad)


def zero_(t: Tensor) -> Tensor:
    return t._apply_inplace(lambda old: old * 0)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    _close_checks(input, other, rtol, atol)
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    _close_checks(input, other, rtol, atol)
    return make(np.asarray(np.isclose(input._data, other._data, rtol=rtol, atol=atol,
                                      equal_nan=equal_nan)))


def _close_checks(input, other, rtol, atol) -> None:
    """isclose's (and allclose's) checks in PyTorch's order: a tensor `other` (the argument
    parser's TypeError, from the signature table), the same dtype, non-negative tolerances
    (printed as C++ streams a double)."""
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise TypeError("isclose: a tensor expected")  # (re-read against the signatures)
    if input._data.dtype != other._data.dtype:
        from ..tensor import _type_word

        raise RuntimeError(f"{_type_word(input.dtype)} did not match {_type_word(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")


def equal(input, other) -> bool:
    return input._data.shape == other._data.shape and bool(np.array_equal(input._data, other._data))


def _arr(x):
    return x._data if isinstance(x, Tensor) else x


def numel(input) -> int:
    return int(input._data.size)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:
    return input._data.dtype.kind in "fV"
