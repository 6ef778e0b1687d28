"""`torch.testing`: assert_close, assert_allclose and make_tensor over gradcli's tensors.

Scripts that paste their own checks (`torch.testing.assert_close(out, expected)`) must
fail with the message PyTorch prints, so the comparison follows PyTorch's rules: the
inputs are paired up through nested sequences and mappings, numbers compare as numbers
(int as int64, float as float64), tensors by shape, device and dtype first and then by
`isclose` with the loosest default tolerance of the two dtypes. Loaded on first use
(`torch.testing` is a lazy submodule of the facade).
"""

from __future__ import annotations

import collections.abc
import math
import warnings

import numpy as np

from gradcli.engine import dtypes as _dtypes
from gradcli.engine.tensor import Tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

#: (rtol, atol) per floating dtype; every other dtype (integers, bool) compares exactly
_PRECISIONS = {"float16": (0.001, 1e-5), "bfloat16": (0.016, 1e-5),
               "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
               "complex32": (0.001, 1e-5), "complex64": (1.3e-6, 1e-5),
               "complex128": (1e-7, 1e-7)}
#: assert_allclose's own, looser table (its defaults predate assert_close)
_ALLCLOSE_PRECISIONS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5),
                        "float64": (1e-5, 1e-8)}
#: the dtype a Python number compares as
_NUMBER_DTYPE = {int: "int64", float: "float64", complex: "complex128"}


class _Failure(Exception):
    """A comparison's verdict before the user's `msg` and the item path are applied."""

    def __init__(self, kind: type, text: str, path: tuple = ()):
        super().__init__(text)
        self.kind = kind
        self.text = text
        self.path = path

    def error(self, msg=None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.text
        if self.path:
            text += "\n\nThe failure occurred for item " + "".join(str([k]) for k in self.path)
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """This pair kind does not handle these inputs: the next one is tried."""


def _dtype_name(dtype) -> str:
    return str(dtype).rpartition(".")[2]


def _tolerances(dtype_names, rtol, atol, path, table=_PRECISIONS):
    if (rtol is None) != (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                   f"but got no {missing}.", path)
    if rtol is not None:
        return rtol, atol
    pairs = [table.get(name, (0.0, 0.0)) for name in dtype_names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _mismatch_text(kind: str, extra: str, abs_diff, abs_at, atol, rel_diff, rel_at, rtol) -> str:
    exact = rtol == 0 and atol == 0
    text = f"{kind} are not {'equal' if exact else 'close'}!\n\n"
    if extra:
        text += extra.strip() + "\n"
    for word, diff, at, tol in (("absolute", abs_diff, abs_at, atol),
                                ("relative", rel_diff, rel_at, rtol)):
        line = (f"{word.title()} difference: {diff}" if at is None
                else f"Greatest {word} difference: {diff} at index {at}")
        if not exact:
            line += f" (up to {tol} allowed)"
        text += line + "\n"
    return text.strip()


def _scalar_text(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_text("Scalars", f"Expected {expected} but got {actual}.",
                          abs_diff, None, atol, rel_diff, None, rtol)


def _compare_none(actual, expected, path, options):
    if actual is not None and expected is not None:
        raise _Unsupported
    if not (actual is None and expected is None):
        raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", path)


def _compare_bool(actual, expected, path, options):
    kinds = (bool, np.bool_)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _Unsupported
    actual, expected = bool(actual), bool(expected)
    if actual is not expected:
        raise _Failure(AssertionError, f"Booleans mismatch: {actual} is not {expected}", path)


def _as_number(value):
    return value.item() if isinstance(value, np.number) else value


def _compare_number(actual, expected, path, options):
    kinds = (int, float, complex, np.number)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)) or \
            isinstance(actual, Tensor) or isinstance(expected, Tensor):
        raise _Unsupported
    actual, expected = _as_number(actual), _as_number(expected)
    rtol, atol = _tolerances([_NUMBER_DTYPE[type(v)] for v in (actual, expected)],
                             options["rtol"], options["atol"], path)
    # (check_dtype is off for numbers unless asked: assert_close passes its own value)
    if options["check_dtype"] and type(actual) is not type(expected):
        raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != "
                                       f"{type(expected)}.", path)
    if actual == expected:
        return
    both_nan = _isnan(actual) and _isnan(expected)
    if options["equal_nan"] and both_nan:
        return
    abs_diff = abs(actual - expected)
    if math.isfinite(abs(abs_diff)) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Failure(AssertionError, _scalar_text(actual, expected, rtol, atol), path)


def _isnan(value) -> bool:
    if isinstance(value, complex):
        return math.isnan(value.real) or math.isnan(value.imag)
    return math.isnan(value)


def _to_tensor(value):
    if isinstance(value, Tensor):
        return value
    from gradcli import torch

    try:
        return torch.as_tensor(value)
    except Exception:  # noqa: BLE001 - a value as_tensor refuses is not tensor-like
        raise _Unsupported from None


def _compare_tensor(actual, expected, path, options):
    # both must be of one type family, as PyTorch's directly-related check: a tensor
    # against a list or a float is not a pair
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported
    if not options["allow_subclasses"] and type(actual) is not type(expected):
        raise _Unsupported
    actual, expected = _to_tensor(actual), _to_tensor(expected)
    rtol, atol = _tolerances([_dtype_name(actual.dtype), _dtype_name(expected.dtype)],
                             options["rtol"], options["atol"], path)

    def attribute(name, left, right):
        raise _Failure(AssertionError, f"The values for attribute '{name}' do not match: "
                                       f"{left} != {right}.", path)

    if actual.shape != expected.shape:
        attribute("shape", actual.shape, expected.shape)
    if options["check_stride"] and actual.stride() != expected.stride():
        attribute("stride()", actual.stride(), expected.stride())
    if options["check_device"] and actual.device != expected.device:
        attribute("device", actual.device, expected.device)
    if options["check_dtype"] and actual.dtype != expected.dtype:
        attribute("dtype", actual.dtype, expected.dtype)
    _compare_values(actual.detach(), expected.detach(), rtol, atol, options["equal_nan"], path)


def _compare_values(actual, expected, rtol, atol, equal_nan, path):
    from gradcli import torch

    if actual.dtype != expected.dtype:
        common = torch.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    matches = torch.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if actual.shape == ():
        raise _Failure(AssertionError, _scalar_text(actual.item(), expected.item(), rtol, atol),
                       path)
    raise _Failure(AssertionError, _tensor_text(actual, expected, matches, rtol, atol), path)


def _tensor_text(actual, expected, matches, rtol, atol) -> str:
    """Mismatch statistics computed as PyTorch does: in the tensors' dtype (integers
    widened to int64), only over the mismatched elements, first greatest one wins."""
    from gradcli import torch

    total = matches.numel()
    wrong = total - int(matches.sum())
    extra = f"Mismatched elements: {wrong} / {total} ({wrong / total:.1%})"
    a, e, ok = actual.flatten(), expected.flatten(), matches.flatten()
    if not actual.dtype.is_floating_point:
        a, e = a.to(torch.int64), e.to(torch.int64)
    abs_diff = torch.abs(a - e)
    abs_diff[ok] = 0
    abs_max, abs_at = torch.max(abs_diff, 0)
    rel_diff = abs_diff / torch.abs(e)
    rel_diff[ok] = 0
    rel_max, rel_at = torch.max(rel_diff, 0)
    shape = tuple(matches.shape)
    return _mismatch_text("Tensor-likes", extra, abs_max.item(),
                          _unravel(int(abs_at), shape), atol, rel_max.item(),
                          _unravel(int(rel_at), shape), rtol)


def _unravel(flat: int, shape: tuple) -> tuple:
    index = []
    for size in reversed(shape):
        flat, rest = divmod(flat, size)
        index.append(rest)
    return tuple(reversed(index))


_PAIR_KINDS = (_compare_none, _compare_bool, _compare_number, _compare_tensor)


def _pairs(actual, expected, path, out):
    """(actual, expected, path) leaves, walking sequences and mappings in step."""
    seq = collections.abc.Sequence
    if isinstance(actual, seq) and not isinstance(actual, str) and \
            isinstance(expected, seq) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, "The length of the sequences mismatch: "
                                           f"{len(actual)} != {len(expected)}", path)
        for i in range(len(actual)):
            _pairs(actual[i], expected[i], (*path, i), out)
        return out
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        keys_a, keys_e = set(actual.keys()), set(expected.keys())
        if keys_a != keys_e:
            raise _Failure(AssertionError,
                           "The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: {sorted(keys_e - keys_a)}\n"
                           f"Additional keys in the actual mapping: {sorted(keys_a - keys_e)}",
                           path)
        try:
            keys = sorted(keys_a)
        except Exception:  # noqa: BLE001 - unorderable keys keep the set's order
            keys = list(keys_a)
        for key in keys:
            _pairs(actual[key], expected[key], (*path, key), out)
        return out
    out.append((actual, expected, path))
    return out


def _check(actual, expected, options) -> None:
    msg = options.pop("msg")
    try:
        leaves = _pairs(actual, expected, (), [])
        for left, right, path in leaves:
            for kind in _PAIR_KINDS:
                try:
                    kind(left, right, path, options)
                except _Unsupported:
                    continue
                break
            else:
                raise _Failure(TypeError, "No comparison pair was able to handle inputs of type "
                                          f"{type(left)} and {type(right)}.", path)
    except _Failure as failure:
        raise failure.error(msg) from None


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise AssertionError with PyTorch's text unless `actual` and `expected` are close:
    |actual - expected| <= atol + rtol * |expected| elementwise, same shape, device and
    (unless check_dtype=False) dtype. Defaults per dtype: float32 (1.3e-6, 1e-5), float64
    (1e-7, 1e-7), integers and bool exact."""
    __tracebackhide__ = True
    _check(actual, expected, dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol,
                                  equal_nan=equal_nan, check_device=check_device,
                                  check_dtype=check_dtype, check_stride=check_stride, msg=msg))


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The deprecated form: its own looser defaults, nan equal to nan, dtypes promoted."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `torch.testing.assert_close()` instead. You can find "
        "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning, stacklevel=2)
    from gradcli import torch

    if not isinstance(actual, Tensor):
        actual = torch.tensor(actual)
    if not isinstance(expected, Tensor):
        expected = torch.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances([_dtype_name(actual.dtype), _dtype_name(expected.dtype)],
                                 None, None, (), _ALLCLOSE_PRECISIONS)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of `shape` drawn uniformly from [low, high) with PyTorch's defaults per
    dtype; the draws go through randint / uniform_, whose streams are PyTorch's, so a seeded
    call gives PyTorch's values."""
    from gradcli import torch

    floating = dtype.is_floating_point
    integral = not floating and not getattr(dtype, "is_complex", False)

    def limits(lowest, highest, default_low, default_high):
        lo = default_low if low is None else low
        hi = default_high if high is None else high
        if any(isinstance(v, float) and math.isnan(v) for v in (lo, hi)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={lo} and high={hi}")
        if lo == hi and floating:
            warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                          "complex types is deprecated since 2.1 and will be removed in 2.3. "
                          "Use `torch.full(...)` instead.", FutureWarning, stacklevel=3)
        elif lo >= hi:
            raise ValueError(f"`low` must be less than `high`, but got {lo} >= {hi}")
        elif hi < lowest or lo >= highest:
            raise ValueError(f"The value interval specified by `low` and `high` is [{lo}, {hi}), "
                             f"but {dtype} only supports [{lowest}, {highest})")
        lo, hi = min(max(lo, lowest), highest), min(max(hi, lowest), highest)
        if integral:
            return math.ceil(lo), math.ceil(hi)
        return lo, hi

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    if requires_grad and integral:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype == _dtypes.bool_:
        lo, hi = limits(0, 2, 0, 2)
        result = torch.randint(lo, hi, shape, device=device, dtype=dtype)
    elif integral:
        info = torch.iinfo(dtype)
        lo, hi = limits(info.min, info.max + (1 if dtype != _dtypes.int64 else 0), -9, 10)
        result = torch.randint(lo, hi, shape, device=device, dtype=dtype)
    elif floating:
        info = torch.finfo(dtype)
        lo, hi = limits(info.min, info.max, -9, 9)
        result = torch.empty(shape, device=device, dtype=dtype)
        if hi - lo >= info.max:
            result.uniform_(lo / 2, hi / 2).mul_(2)
        else:
            result.uniform_(lo, hi)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "torch.testing.make_tensor(). To request support, file an issue at: "
                        "https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if integral else torch.finfo(dtype).tiny
    if floating:
        result.requires_grad = requires_grad
    return result
