"""Tensor dtypes (torch.float32, torch.int64, ...) and PyTorch's type-promotion rules."""

from __future__ import annotations

import numpy as np

from .late import Slots

#: the tensor class, which result_type tells from Python scalars (tensor.py fills it)
ABOVE = Slots("gradcli.engine.dtypes", "Tensor")


class dtype:  # noqa: N801 - named as torch names it
    """A tensor element type; prints as `torch.float32`, wraps a numpy dtype."""

    __module__ = "torch"  # PyTorch's class name: <class 'torch.dtype'>
    __slots__ = ("name", "np", "is_floating_point", "is_signed", "itemsize", "_category", "_legacy")

    def __init__(self, name: str, np_dtype, category: int, legacy: str):
        self.name = name
        self.np = np.dtype(np_dtype)
        self._category = category  # 0 bool, 1 integer, 2 floating, 3 complex
        self.is_floating_point = category == 2
        self.is_signed = category != 0
        self.itemsize = self.np.itemsize
        self._legacy = legacy

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return (_by_name, (self.name,))

    def __getattr__(self, name: str):
        # reached only for an unset slot: torch.bfloat16's numpy type, which needs ml_dtypes,
        # imported on the first use so that start-up does not pay for it
        if name == "np" and self.name == "bfloat16":
            return _load_bfloat16()
        raise AttributeError(f"'torch.dtype' object has no attribute '{name}'")

    def to_real(self):
        return _REAL_OF.get(self.name, self)

    def to_complex(self):
        """The complex dtype of this one's precision (float32 -> complex64), as PyTorch's."""
        if self._category == 3:
            return self
        if self is float16:
            raise RuntimeError(COMPLEX32_UNSUPPORTED)
        return complex128 if self is float64 else complex64

    @property
    def is_complex(self) -> bool:
        return self._category == 3


def _by_name(name: str) -> dtype:
    return BY_NAME[name]


bool_ = dtype("bool", np.bool_, 0, "BoolTensor")
int32 = dtype("int32", np.int32, 1, "IntTensor")
int64 = dtype("int64", np.int64, 1, "LongTensor")
float32 = dtype("float32", np.float32, 2, "FloatTensor")
float64 = dtype("float64", np.float64, 2, "DoubleTensor")
# torch.uint8: what get_rng_state returns (PyTorch's generator state is a byte tensor)
uint8 = dtype("uint8", np.uint8, 1, "ByteTensor")
uint8.is_signed = False

# the narrow types tutorials cast to (torch.float16, .type(torch.int8)): numpy computes
# float16 elementwise ops in float32 and rounds each result, as PyTorch's CPU kernels do
int8 = dtype("int8", np.int8, 1, "CharTensor")
int16 = dtype("int16", np.int16, 1, "ShortTensor")
float16 = dtype("float16", np.float16, 2, "HalfTensor")

# torch.bfloat16 (mixed-precision training, autocast): numpy has no such type; ml_dtypes'
# bfloat16 (numpy kind "V", 2 bytes) holds it. Its numpy type is filled in on first use
# (dtype.__getattr__ above), so the slot stays unset until then.
bfloat16 = dtype.__new__(dtype)
bfloat16.name, bfloat16._category, bfloat16._legacy = "bfloat16", 2, "BFloat16Tensor"
bfloat16.is_floating_point, bfloat16.is_signed, bfloat16.itemsize = True, True, 2

# torch.complex64/complex128 (cfloat/cdouble): numpy's complex64/complex128 hold them;
# torch.complex32 (chalf) has no numpy type and is refused (COMPLEX32_UNSUPPORTED)
complex64 = dtype("complex64", np.complex64, 3, "ComplexFloatTensor")
complex128 = dtype("complex128", np.complex128, 3, "ComplexDoubleTensor")
_REAL_OF = {"complex64": float32, "complex128": float64}
COMPLEX32_UNSUPPORTED = "torch.complex32 (torch.chalf) is not supported by gradcli"

_EAGER = (bool_, int32, int64, float32, float64, uint8, int8, int16, float16, complex64,
          complex128)
ALL = (*_EAGER, bfloat16)
BY_NAME = {d.name: d for d in ALL}
FROM_NP = {d.np: d for d in _EAGER}

#: the numpy kinds of floating tensors: "f", and "V" for ml_dtypes' bfloat16 (no other
#: numpy void type ever holds a tensor's data)
FLOATING_KINDS = "fV"


def is_floating(np_dtype) -> bool:
    """Whether a numpy dtype holds a floating tensor (float16/32/64 or bfloat16): where the
    engine asked `kind == "f"`, bfloat16's kind "V" answers too."""
    return np_dtype.kind in "fV"


def _load_bfloat16() -> np.dtype:
    """Import ml_dtypes (once) and make its bfloat16 torch.bfloat16's numpy type."""
    import ml_dtypes

    npdt = np.dtype(ml_dtypes.bfloat16)
    bfloat16.np = npdt
    FROM_NP[npdt] = bfloat16
    return npdt


#: PyTorch's copy kernel warns once per process (TORCH_WARN_ONCE) on a complex to real cast
COMPLEX_TO_REAL = ("Casting complex values to real discards the imaginary part (Triggered "
                   "internally at /__w/pytorch/pytorch/aten/src/ATen/native/Copy.cpp:307.)")


def cast(a: np.ndarray, np_dtype) -> np.ndarray:
    """a.astype(np_dtype) as PyTorch's copy: a complex array cast to a real dtype keeps its
    real part, with PyTorch's UserWarning once per process (numpy's ComplexWarning, a
    different category and text, never reaches the program)."""
    if a.dtype.kind == "c" and np.dtype(np_dtype).kind not in "cb":  # (bool: z != 0)
        from .warn_site import warn_once

        warn_once("complex_to_real", COMPLEX_TO_REAL)
        a = a.real
    return a.astype(np_dtype)


def finfo(np_dtype):
    """The limits of a floating numpy dtype: numpy's finfo, and ml_dtypes' for bfloat16.

    The engine asks here, not np.finfo: numpy's finfo refuses a type it does not know as
    inexact (bfloat16), and teaching it (its private cache) would change numpy for the
    whole host process."""
    npdt = np.dtype(np_dtype)
    if npdt.kind == "V":
        import ml_dtypes

        return ml_dtypes.finfo(npdt)
    return np.finfo(npdt)


ALIASES = {
    "float32": float32, "float": float32, "float64": float64, "double": float64,
    "int64": int64, "long": int64, "int32": int32, "int": int32, "bool": bool_, "uint8": uint8,
    "int8": int8, "int16": int16, "short": int16, "float16": float16, "half": float16,
    "bfloat16": bfloat16, "complex64": complex64, "cfloat": complex64,
    "complex128": complex128, "cdouble": complex128,
}

_default_float = [float32]


def get_default_dtype() -> dtype:
    return _default_float[0]


def default_complex() -> dtype:
    """The complex dtype a Python complex number takes: complex128 with a float64
    default dtype, complex64 otherwise (PyTorch's pairing)."""
    return complex128 if _default_float[0] is float64 else complex64


def set_default_dtype(d: dtype) -> None:
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float[0] = d


def of_array(arr: np.ndarray) -> dtype:
    return FROM_NP[arr.dtype]


def promote(a: dtype, b: dtype) -> dtype:
    """Promote two tensor dtypes as torch.promote_types does."""
    if a is b:
        return a
    if a._category == 3 or b._category == 3:
        return _promote_complex(a, b)
    if a._category == 2 or b._category == 2:
        if a._category == 2 and b._category == 2:
            if a is bfloat16 or b is bfloat16:  # (numpy knows no common type with float16)
                other = b if a is bfloat16 else a
                return float32 if other is float16 else other
            return FROM_NP[np.promote_types(a.np, b.np)]
        return a if a._category == 2 else b
    if a._category == 0:
        return b
    if b._category == 0:
        return a
    # integers widen as numpy's do (int8 with uint8 gives int16, as torch.promote_types)
    return FROM_NP[np.promote_types(a.np, b.np)]


def _promote_complex(a: dtype, b: dtype) -> dtype:
    """Promotion where either side is complex: the wider precision of the two, as complex
    (float64 with complex64 gives complex128; float16/bfloat16 stay below complex64)."""
    if a._category == 3 and b._category == 3:
        return complex128 if complex128 in (a, b) else complex64
    other = b if a._category == 3 else a
    cplx = a if a._category == 3 else b
    return complex128 if other is float64 else cplx


def _lift_to_complex(result: dtype, weaker: dtype) -> dtype:
    """A weaker complex operand (0-d tensor or Python complex) over a dimensioned real
    result: a float result keeps its precision as complex, an integer one takes the
    weaker's dtype (PyTorch's combine_categories)."""
    if result._category == 2:
        return result.to_complex() if result is not bfloat16 else complex64
    return weaker


def scalar_dtype(value) -> dtype:
    """The dtype a wrapped Python scalar takes part in promotion with (a numpy scalar is
    read as the Python number it holds, as PyTorch reads it)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, complex):
        return default_complex()
    return _default_float[0]


def result_type(*operands) -> dtype:
    """torch.result_type over tensors and Python scalars.

    Dimensioned tensors win over 0-d tensors, which win over Python scalars,
    unless the weaker class holds a higher category (bool < int < float).
    """
    Tensor = ABOVE.Tensor
    dim = zero = wrapped = None
    for op in operands:
        if isinstance(op, Tensor):
            d = FROM_NP[op._data.dtype]
            if op._data.ndim:
                dim = d if dim is None else promote(dim, d)
            else:
                zero = d if zero is None else promote(zero, d)
        elif op is not None:
            d = scalar_dtype(op)
            wrapped = d if wrapped is None else promote(wrapped, d)
    result = dim
    for weaker in (zero, wrapped):
        if weaker is None:
            continue
        if result is None:
            result = weaker
        elif weaker._category > result._category:
            # a weaker class only lifts the category; a Python float lifts to the default dtype
            if weaker._category == 3:
                result = _lift_to_complex(result, weaker)
            else:
                result = promote(result, weaker) if weaker is zero else weaker
    return result


def to_dtype(value) -> dtype:
    """Accept torch dtypes and the Python types float/int/bool as torch does."""
    if isinstance(value, dtype):
        return value
    if value is float:
        return float64
    if value is int:
        return int64
    if value is bool:
        return bool_
    raise TypeError(f"to() received an invalid combination of arguments - got ({type(value).__name__})")
