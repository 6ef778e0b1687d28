"""Names the public tutorials reach for that no other module declares.

The narrow dtypes (torch.float16/half, torch.int8, torch.int16/short) with their cast
methods: the Zero-to-Mastery fundamentals tour casts a tensor to each and prints it."""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..tensor import make
from . import shape as S
from .registry import PUBLIC, defop, public, run_op

for _name, _value in (("torch.float16", dtypes.float16), ("torch.half", dtypes.float16),
                      ("torch.int8", dtypes.int8), ("torch.int16", dtypes.int16),
                      ("torch.short", dtypes.int16)):
    PUBLIC[_name] = _value


def _cast_method(target: dtypes.dtype, name: str):
    def method(self, memory_format=None):
        return S.to(self, target)

    method.__name__ = name
    return method


for _method, _target in (("half", dtypes.float16), ("short", dtypes.int16),
                         ("char", dtypes.int8), ("byte", dtypes.uint8)):
    if f"Tensor.{_method}" not in PUBLIC:
        public(f"Tensor.{_method}")(_cast_method(_target, _method))


class finfo:  # noqa: N801 - torch's name
    """torch.finfo(dtype): the limits of a floating dtype (eps is what RL tutorials add to
    a standard deviation), as Python floats, printed as PyTorch prints them."""

    __module__ = "torch"
    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):  # noqa: A002 - torch's parameter name
        d = dtypes.get_default_dtype() if type is None else type
        if not isinstance(d, dtypes.dtype) or not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo "
                            "to handle 'torch.finfo'")
        info = dtypes.finfo(d.np)  # (bfloat16: ml_dtypes' answer)
        self.bits = int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # (numpy rounds it to the dtype)
        self.dtype = d.name

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")

    __str__ = __repr__


class iinfo:  # noqa: N801 - torch's name
    """torch.iinfo(dtype): the range of an integer dtype, printed as PyTorch prints it."""

    __module__ = "torch"
    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):  # noqa: A002 - torch's parameter name
        if not isinstance(type, dtypes.dtype) or type.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        if type is dtypes.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        info = np.iinfo(type.np)
        self.bits, self.min, self.max = int(info.bits), int(info.min), int(info.max)
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

    __str__ = __repr__


PUBLIC["torch.finfo"] = finfo
PUBLIC["torch.iinfo"] = iinfo


_KERNEL_WORDS = {"bool": "Bool", "int64": "Long", "int32": "Int", "int16": "Short",
                 "int8": "Char", "uint8": "Byte", "float32": "Float", "float64": "Double",
                 "float16": "Half", "bfloat16": "BFloat16"}


def _kernel_word(t) -> str:
    return _KERNEL_WORDS[t._data.dtype.name]


@public("torch.bincount", "Tensor.bincount")
def bincount(input, weights=None, minlength=0):
    """Counts of each value of a 1-d non-negative integer tensor (the makemore and label-
    balance idiom); weighted sums with `weights` (float32 stays float32, others give
    float64, as PyTorch's kernel accumulates)."""
    data = input._data
    if data.dtype.kind in "fV":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_kernel_word(input)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if data.ndim != 1 or data.dtype.kind not in "iub" or (data.size and data.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights._data.ndim != 1 or weights._data.shape[0] != data.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    size = max(int(data.max()) + 1 if data.size else 0, int(minlength))
    if weights is None:
        return make(np.bincount(data.astype(np.int64), minlength=size).astype(np.int64))
    out_dtype = np.float32 if weights._data.dtype == np.float32 else np.float64
    counts = np.bincount(data.astype(np.int64), weights=weights._data.astype(np.float64),
                         minlength=size)
    return make(counts.astype(out_dtype))


def _edge_text(v: float) -> str:
    """A bound as PyTorch's message prints it (C++ stream formatting of a double; a NaN its
    min/max reduction made is x86's default NaN, sign bit set)."""
    if math.isnan(v):
        return "-nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:g}"


@public("torch.histc", "Tensor.histc")
def histc(input, bins=100, min=0, max=0):  # noqa: A002 - torch's parameter names
    """A histogram of equal-width bins over [min, max] (the data's range when both are 0),
    counted as PyTorch's linear-interpolation kernel places each value: the bin index is
    (x - min) * bins / (max - min) in the input's dtype, truncated; the right edge falls in
    the last bin; values outside are dropped. No gradient flows (PyTorch defines none)."""
    data = input._data
    if data.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"histogram_cpu\" not implemented for '{_kernel_word(input)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and data.size:
        lo, hi = float(data.min()), float(data.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_edge_text(lo)}, {_edge_text(hi)}] is not "
                           "finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    kind = data.dtype.type
    flat = data.reshape(-1)
    flat = flat[(flat >= kind(lo)) & (flat <= kind(hi))]
    pos = ((flat - kind(lo)) * kind(bins) / (kind(hi) - kind(lo))).astype(np.int64)
    pos[pos == bins] = bins - 1
    return make(np.bincount(pos, minlength=bins)[:bins].astype(data.dtype))


_HISTOGRAM = None


@public("torch.histogram", "Tensor.histogram")
def histogram(input, bins=100, *, range=None, weight=None, density=False):  # noqa: A002
    """(hist, bin_edges): bins equal-width bins over `range` (the data's, widened by 0.5 each
    side when it is a single value) or the given edges; a value goes in the bin whose edges
    hold it (left-closed, the last bin closed), outside values and NaN are dropped, `weight`
    adds its own amount, `density` divides by the total and the bin widths (Karpathy's
    makemore draws its activation histograms from it)."""
    global _HISTOGRAM
    from .creation import linspace
    from .linalg_ext import _rtype

    data = input._data
    if data.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{_kernel_word(input)}'")
    kind = data.dtype.type
    if isinstance(bins, int):
        if bins <= 0:
            raise RuntimeError(
                f"torch.histogramdd(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif data.size:
            lo, hi = float(data.min()), float(data.max())
        else:
            lo = hi = 0.0
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = linspace(lo, hi, bins + 1, dtype=input.dtype)._data
    else:
        edges = bins._data.astype(data.dtype)
    flat = data.reshape(-1)
    keep = (flat >= edges[0]) & (flat <= edges[-1])
    values = flat[keep]
    pos = np.searchsorted(edges, values, side="right") - 1
    pos[pos == len(edges) - 1] = len(edges) - 2  # the rightmost edge closes the last bin
    amounts = None if weight is None else weight._data.reshape(-1)[keep].astype(np.float64)
    hist = np.bincount(pos, weights=amounts, minlength=len(edges) - 1).astype(data.dtype)
    if density:
        hist = hist / kind(hist.sum(dtype=np.float64))
        hist = (hist / np.diff(edges)).astype(data.dtype)
    if _HISTOGRAM is None:
        _HISTOGRAM = _rtype("histogram", ("hist", "bin_edges"))
    return _HISTOGRAM(make(hist), make(np.array(edges)))


def _poisson_one(gen, rate: float, uniform) -> float:
    """One Poisson draw as PyTorch's CPU sampler makes it: below rate 10 a product of
    uniforms; from 10 Hoermann's transformed rejection (PTRS), two uniforms a try."""
    if rate >= 10:
        slam, loglam = math.sqrt(rate), math.log(rate)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = float(uniform(gen, 1)[0]) - 0.5
            v = float(uniform(gen, 1)[0])
            us = 0.5 - abs(u)
            x = (2 * a / us + b) * u + rate + 0.43
            # (the C++ floors into an int64: beyond its range, inf or nan, x86 gives its minimum)
            k = math.floor(x) if -2.0**63 <= x < 2.0**63 else -2**63
            if us >= 0.07 and v <= vr:
                return float(k)
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -rate + k * loglam - math.lgamma(k + 1.0)):
                return float(k)
    if rate == 0:
        return 0.0
    count, product, limit = 0, 1.0, math.exp(-rate)
    while True:
        product *= uniform(gen, 1)[0]
        if product > limit:
            count += 1
        else:
            return float(count)


_POISSON = defop("poisson", "PoissonBackward0", lambda a, values: values,
                 lambda c, g: (g * 0,), "d poisson(rate)/drate = 0 (a draw)",
                 torch_call="torch.poisson(a * 0)")


@public("torch.poisson")
def poisson(input, generator=None):
    """Counts drawn with the given rates, element by element in C order from the generator
    (the seeded values are PyTorch's); the gradient is zero, as PyTorch defines it."""
    from .. import rng_sample
    from ..random import generator_of

    data = input._data
    if data.dtype.kind not in "fV":
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_kernel_word(input)}'")
    rates = np.ascontiguousarray(data, dtype=np.float64).reshape(-1)
    if rates.size and not (rates >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    gen = generator_of(generator)
    values = [_poisson_one(gen, float(r), rng_sample.uniform01_f64) for r in rates]
    drawn = np.array(values, dtype=np.float64).astype(data.dtype).reshape(data.shape)
    return run_op(_POISSON, (input,), (drawn,))


@public("torch.broadcast_shapes")
def broadcast_shapes(*shapes):
    """The shape tensors of these shapes broadcast to (an int is a 1-d shape), checked as
    PyTorch checks it: each shape in turn against the result so far, from the right."""
    size_class = type(make(np.zeros((0,))).shape)  # torch.Size
    listed = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    for shape in listed:
        for i, n in enumerate(shape):
            if not isinstance(n, int):
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(n).__name__}')")
    ndim = max((len(s) for s in listed), default=0)
    result = [1] * ndim
    for index, shape in enumerate(listed):
        for back in range(1, len(shape) + 1):
            n = shape[-back]
            if n < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if result[-back] == 1:
                result[-back] = n
            elif n != 1 and n != result[-back]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {n} at {-back}! Mismatching "
                    f"argument at index {index} had {shape}; but expected shape should be "
                    f"broadcastable to {result}")
    return size_class(result)
