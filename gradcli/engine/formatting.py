"""Tensor printing that matches PyTorch 2.13 character for character.

`tensor_repr` produces what `repr(t)` / `str(t)` / `print(t)` show in PyTorch for a CPU
tensor holding the given numpy array, under the print options set by `set_printoptions`.
The rules follow PyTorch's own printer (one element width and one number style chosen for
the whole tensor, rows wrapped at `linewidth`, `...` summaries above `threshold` elements,
`dtype=`/`size=`/`requires_grad=`/`grad_fn=` suffixes); the code is gradcli's own.

Only numpy and the standard library are used, so the engine can print without torch.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import tensor as tensor_module
from .dtypes import get_default_dtype

__all__ = [
    "PRINT_OPTIONS",
    "PrintOptions",
    "dtype_name",
    "get_printoptions",
    "printoptions",
    "set_printoptions",
    "tensor_repr",
]


class PrintOptions:
    """The knobs PyTorch's printer reads; one shared instance, `PRINT_OPTIONS`."""

    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self, precision: int = 4, threshold: float = 1000, edgeitems: int = 3,
                 linewidth: int = 80, sci_mode: bool | None = None):
        self.precision = precision
        self.threshold = threshold
        self.edgeitems = edgeitems
        self.linewidth = linewidth
        self.sci_mode = sci_mode

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items())
        return f"PrintOptions({args})"


PRINT_OPTIONS = PrintOptions()

# What each `profile=` name of set_printoptions resets (sci_mode is not part of a profile).
_PROFILES: dict[str, dict[str, float]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
) -> None:
    """Change the print options the way `torch.set_printoptions` does.

    A known `profile` is applied first and explicit options override it; an unknown
    profile name is ignored. Options left as None stay unchanged, except `sci_mode`,
    which PyTorch always overwrites: any call without `sci_mode=` resets it to None (auto).
    """
    if profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTIONS, name, value)
    if precision is not None:
        PRINT_OPTIONS.precision = precision
    if threshold is not None:
        PRINT_OPTIONS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTIONS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTIONS.linewidth = linewidth
    PRINT_OPTIONS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current options as keyword arguments for `set_printoptions`."""
    return PRINT_OPTIONS.as_dict()


@contextlib.contextmanager
def printoptions(**kwargs) -> Iterator[None]:
    """Apply `set_printoptions(**kwargs)` for the duration of a `with` block."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# torch dtype names keyed by (numpy kind, itemsize), so byte order does not matter.
_DTYPE_NAMES: dict[tuple[str, int], str] = {
    ("b", 1): "torch.bool",
    ("u", 1): "torch.uint8",
    ("i", 1): "torch.int8",
    ("i", 2): "torch.int16",
    ("i", 4): "torch.int32",
    ("i", 8): "torch.int64",
    ("f", 2): "torch.float16",
    ("V", 2): "torch.bfloat16",  # (ml_dtypes' bfloat16)
    ("f", 4): "torch.float32",
    ("f", 8): "torch.float64",
    ("c", 8): "torch.complex64",
    ("c", 16): "torch.complex128",
}

# Dtypes PyTorch leaves out of a non-empty tensor's repr (the default float dtype, int64
# and bool can be told apart from the printed values alone).
_IMPLIED_DTYPES = frozenset({("i", 8), ("b", 1)})


def _default_float_key() -> tuple[str, int]:
    """The default float dtype (torch.set_default_dtype), which PyTorch leaves implied."""
    return _dtype_key(get_default_dtype().np)

# The prefix every tensor repr starts with; continuation lines are indented past it.
_PREFIX = "tensor("


def _dtype_key(np_dtype: np.dtype) -> tuple[str, int]:
    return np_dtype.kind, np_dtype.itemsize


def dtype_name(np_dtype) -> str:
    """The torch spelling of a numpy dtype, e.g. float64 -> 'torch.float64'."""
    np_dtype = np.dtype(np_dtype)
    try:
        return _DTYPE_NAMES[_dtype_key(np_dtype)]
    except KeyError:
        raise TypeError(f"gradcli cannot print tensors of numpy dtype {np_dtype}") from None


class _ElementFormatter:
    """Turns one element into text, padded to a width shared by the whole tensor.

    PyTorch picks the style once per tensor from the values that will be shown:
    integer-valued floats print as `1.`, scientific notation is used when the nonzero
    finite magnitudes span more than 1000x or leave [1e-4, 1e8] (unless sci_mode forces
    it), and every element is right-aligned to the widest nonzero finite element
    (zeros, nan and inf do not count towards the width).
    """

    __slots__ = ("is_float", "int_mode", "sci_mode", "width", "precision")

    def __init__(self, shown_values: list, is_float: bool, options: PrintOptions):
        self.is_float = is_float
        self.int_mode = True
        self.sci_mode = False
        self.precision = options.precision
        self.width = 1
        if not is_float:
            if shown_values:
                # str() length of ints and bools only grows away from the middle.
                self.width = max(1, len(str(max(shown_values))), len(str(min(shown_values))))
            return

        nonzero_finite = [v for v in shown_values if v != 0.0 and math.isfinite(v)]
        if not nonzero_finite:
            return
        self.int_mode = all(v.is_integer() for v in nonzero_finite)
        if options.sci_mode is None:
            magnitudes = [abs(v) for v in nonzero_finite]
            largest, smallest = max(magnitudes), min(magnitudes)
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci_mode = bool(options.sci_mode)

        if self.sci_mode:
            spec, extra = f".{self.precision}e", 0
        elif self.int_mode:
            spec, extra = ".0f", 1  # room for the trailing "."
        else:
            spec, extra = f".{self.precision}f", 0
        self.width = max(1, max(len(format(v, spec)) for v in nonzero_finite) + extra)

    def format(self, value) -> str:
        if not self.is_float:
            text = str(value)
        elif self.sci_mode:
            text = format(value, f"{self.width}.{self.precision}e")
        elif self.int_mode:
            text = format(value, ".0f")
            if math.isfinite(value):
                text += "."
        else:
            text = format(value, f".{self.precision}f")
        return text.rjust(self.width)


class _ComplexFormatter:
    """A complex element: the real parts and the imaginary parts each get their own
    style and width (chosen over the shown real parts, and over the imaginary parts), the
    imaginary text follows with its sign and a `j`, its padding dropped."""

    __slots__ = ("real", "imag", "width")

    def __init__(self, shown: np.ndarray, options: PrintOptions):
        self.real = _ElementFormatter(shown.real.ravel().tolist(), True, options)
        self.imag = _ElementFormatter(shown.imag.ravel().tolist(), True, options)
        # a row's line budget: both widths, the "j" and the ", " (PyTorch's count)
        self.width = self.real.width + self.imag.width + 1

    def format(self, value) -> str:
        value = complex(value)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        if imag[0] not in "+-":
            imag = "+" + imag
        return self.real.format(value.real) + imag


def _shown_elements(data: np.ndarray, edgeitems: int) -> np.ndarray:
    """The elements a summarised print shows (the first and last `edgeitems` per axis).

    Mirrors PyTorch's quirks: a 1-d tensor with edgeitems=0 keeps all its elements,
    while higher ranks keep none.
    """
    if data.ndim == 0:
        return data
    if data.ndim == 1:
        if data.shape[0] > 2 * edgeitems:
            return np.concatenate((data[:edgeitems], data[-edgeitems:]))
        return data
    if not edgeitems:
        return data[(slice(0, 0),) * data.ndim]
    indices = []
    for size in data.shape:
        if size > 2 * edgeitems:
            indices.append(np.r_[0:edgeitems, size - edgeitems : size])
        else:
            indices.append(np.arange(size))
    return data[np.ix_(*indices)]


def _format_row(
    row: np.ndarray,
    indent: int,
    summarize: bool,
    formatter: _ElementFormatter,
    options: PrintOptions,
) -> str:
    """A 1-d block: `[a, b, c]`, wrapped to fit `linewidth` after `indent` columns."""
    edgeitems = options.edgeitems
    if summarize and not edgeitems:
        items = ["..."]
    elif summarize and row.shape[0] > 2 * edgeitems:
        items = (
            [formatter.format(v) for v in row[:edgeitems].tolist()]
            + [" ..."]
            + [formatter.format(v) for v in row[-edgeitems:].tolist()]
        )
    else:
        items = [formatter.format(v) for v in row.tolist()]

    # Every element is assumed to take the shared width plus ", ".
    per_line = max(1, math.floor((options.linewidth - indent) / (formatter.width + 2)))
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _format_block(
    data: np.ndarray,
    indent: int,
    summarize: bool,
    formatter: _ElementFormatter,
    options: PrintOptions,
) -> str:
    """The bracketed text of an n-d block; sub-blocks are separated by ndim-1 newlines."""
    if data.ndim == 0:
        return formatter.format(data.item())
    if data.ndim == 1:
        return _format_row(data, indent, summarize, formatter, options)

    count, edgeitems = data.shape[0], options.edgeitems
    if summarize and count > 2 * edgeitems:
        rows = list(range(edgeitems)) + [None] + list(range(count - edgeitems, count))
    else:
        rows = list(range(count))
    parts = [
        "..." if i is None else _format_block(data[i], indent + 1, summarize, formatter, options)
        for i in rows
    ]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _append_suffixes(text: str, suffixes: list[str], indent: int, linewidth: int,
                     first_on_new: bool = False) -> str:
    """Add `, suffix` items and the closing parenthesis, wrapping a suffix that would overflow
    (and the first one on a line of its own with `first_on_new`: a sparse tensor's size).

    PyTorch over-counts the current line by two characters when deciding (its length
    arithmetic includes the newline and one more); that is kept so wrapping matches.
    """
    pieces = [text]
    line_length = len(text) - text.rfind("\n") + 1
    for n, suffix in enumerate(suffixes):
        if (n == 0 and first_on_new) or line_length + len(suffix) + 2 > linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            line_length = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            line_length += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


def tensor_repr(
    data: np.ndarray,
    *,
    requires_grad: bool = False,
    grad_fn_name: str | None = None,
    tangent=None,
) -> str:
    """What PyTorch prints for a CPU tensor with `data`'s values, dtype and shape.

    `grad_fn_name` (e.g. "MulBackward0") wins over `requires_grad`, as in PyTorch,
    where a non-leaf shows only its grad_fn.
    """
    data = np.asarray(data)
    options = PRINT_OPTIONS
    key = _dtype_key(data.dtype)
    name = dtype_name(data.dtype)
    indent = len(_PREFIX)
    suffixes = []

    if data.size == 0:
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if key != _default_float_key():  # nothing to infer the dtype from
            suffixes.append(f"dtype={name}")
        body = "[]"
    else:
        if not options.edgeitems:
            suffixes.append(f"size={tuple(data.shape)}")
        if key not in _IMPLIED_DTYPES and key != _default_float_key() and not (
                key[0] == "c" and key[1] == 2 * _default_float_key()[1]):
            suffixes.append(f"dtype={name}")  # (the default float's complex is implied too)
        summarize = data.size > options.threshold
        if key[0] == "V":  # bfloat16: PyTorch prints its values widened (exactly) to float
            data = data.astype(np.float32)
        shown = _shown_elements(data, options.edgeitems) if summarize else data
        if key[0] == "c":
            formatter = _ComplexFormatter(shown, options)
        else:
            formatter = _ElementFormatter(shown.ravel().tolist(), key[0] in "fV", options)
        body = _format_block(data, indent, summarize, formatter, options)

    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:  # a dual tensor's tangent (forward AD), formatted as it prints
        suffixes.append(f"tangent={tangent}")

    return _append_suffixes(_PREFIX + body, suffixes, indent, options.linewidth)


tensor_module.ABOVE.install(tensor_repr=tensor_repr)
