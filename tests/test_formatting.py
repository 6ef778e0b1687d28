"""gradcli.engine.formatting must print tensors exactly as PyTorch 2.13 does.

Most tests compare `tensor_repr(arr)` with `repr(torch.tensor(arr))` using the installed
PyTorch as the oracle (skipped when torch is absent): a hand-picked list of tricky arrays,
the same arrays with `requires_grad` / a real `grad_fn`, the print options, and
hypothesis-generated arrays and options. A few golden strings and the option bookkeeping
are checked without torch.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gradcli.engine import formatting
from gradcli.engine.formatting import (
    PRINT_OPTIONS,
    dtype_name,
    get_printoptions,
    printoptions,
    set_printoptions,
    tensor_repr,
)

f32, f64 = np.float32, np.float64
nan, inf = math.nan, math.inf


def _arange(n, dtype=f32, shape=None):
    values = np.arange(n, dtype=dtype)
    return values.reshape(shape) if shape is not None else values


def _random(shape, dtype=f32, scale=1.0, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


# (id, array) pairs, grouped by the printing rule they exercise.
TRICKY_ARRAYS = [
    # rank 0
    ("scalar-float", np.array(1.5, f32)),
    ("scalar-int-valued", np.array(3.0, f32)),
    ("scalar-zero", np.array(0.0, f32)),
    ("scalar-neg-zero", np.array(-0.0, f32)),
    ("scalar-nan", np.array(nan, f32)),
    ("scalar-inf", np.array(-inf, f32)),
    ("scalar-huge", np.array(1.5e10, f32)),
    ("scalar-tiny", np.array(1.5e-10, f32)),
    ("scalar-float64", np.array(0.1, f64)),
    ("scalar-int64", np.array(-42, np.int64)),
    ("scalar-int32", np.array(7, np.int32)),
    ("scalar-bool", np.array(True)),
    # rank 1 basics and the integer-valued float mode
    ("floats", np.array([1.5, -2.25, 3.125], f32)),
    ("int-valued-floats", np.array([1.0, 2.0, -3.0], f32)),
    ("int-valued-with-zero", np.array([0.0, 10.0, 200.0], f32)),
    ("all-zero", np.zeros(4, f32)),
    ("float32-rounding", np.array([0.1, 0.2, 0.3, 1 / 3], f32)),
    ("half-way-rounding", np.array([0.00005, 1.00005, 2.00015, 0.12345], f64)),
    ("float64", np.array([1.0 / 3, 2.0 / 3, 1e-3], f64)),
    ("ints", np.array([1, -20, 300], np.int64)),
    ("int32", np.array([1, -20, 300], np.int32)),
    ("int64-extremes", np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max])),
    ("bools", np.array([True, False, True])),
    ("all-true", np.array([True, True])),
    # fixed vs scientific
    ("ratio-exactly-1000", np.array([1.0, 1000.0], f32)),
    ("ratio-above-1000", np.array([1.0, 1000.5], f32)),
    ("ratio-above-1000-fractional", np.array([0.5, 600.25], f32)),
    ("max-exactly-1e8", np.array([1e8], f64)),
    ("max-above-1e8", np.array([1.5e8], f64)),
    ("min-1e-4-float64", np.array([1e-4], f64)),
    ("min-1e-4-float32", np.array([1e-4], f32)),
    ("min-below-1e-4", np.array([5e-5, 1e-4], f64)),
    ("sci-int-valued", np.array([1e10, 1.0, -3.0], f32)),
    ("sci-mixed-signs", np.array([-1.2345e-7, 5.0, 123456.0], f32)),
    ("sci-3-digit-exponent", np.array([1e-300, 1.0, 1e300], f64)),
    ("sci-exponent-rounds-up", np.array([9.99996e99, 1.0], f64)),
    ("float32-extremes", np.array([np.finfo(f32).max, np.finfo(f32).tiny, 1e-45], f32)),
    ("float64-extremes", np.array([np.finfo(f64).max, 5e-324], f64)),
    # nan / inf
    ("nan-and-float", np.array([nan, 1.5], f32)),
    ("nan-and-int-valued", np.array([nan, 1.0, 2.0], f32)),
    ("infs-and-int-valued", np.array([inf, -inf, 1.0], f32)),
    ("infs-and-float", np.array([inf, -inf, 1.25], f32)),
    ("nan-inf-sci", np.array([nan, inf, 1e10, 1.5], f32)),
    ("all-nan", np.array([nan, nan], f32)),
    ("all-inf", np.array([inf, -inf, inf], f32)),
    ("nan-and-zero", np.array([nan, 0.0, -0.0], f32)),
    ("wide-neg-inf", np.array([-inf, 1.0, 2.0], f64)),
    # negative zero
    ("neg-zero", np.array([-0.0], f32)),
    ("neg-zero-fixed", np.array([-0.0, 1.5], f32)),
    ("neg-zero-int-valued", np.array([-0.0, 1.0], f32)),
    ("neg-zero-sci", np.array([-0.0, 1e10, 1.5], f32)),
    # column alignment across rows
    ("align-2d", np.array([[1.0, -100.5], [1000.0, 2.0]], f32)),
    ("align-2d-int", np.array([[1, -100], [1000, 2]], np.int64)),
    ("align-2d-bool", np.array([[True, False], [False, True]])),
    ("align-3d", np.array([[[1.5, -2.0]], [[300.0, 4.0]]], f32)),
    # blank lines and indentation for every rank
    ("2d", _arange(6, shape=(2, 3))),
    ("3d", _arange(24, shape=(2, 3, 4))),
    ("4d", _arange(24, shape=(2, 2, 2, 3))),
    ("5d", _arange(16, shape=(2, 1, 2, 2, 2))),
    ("6d-ones", np.ones((1, 2, 1, 2, 1, 2), f32)),
    ("column", _arange(3, shape=(3, 1))),
    ("row", _arange(3, shape=(1, 3))),
    # line wrapping at linewidth
    ("wrap-1d", _arange(40)),
    ("wrap-1d-float", _random(30)),
    ("wrap-1d-sci", _random(20, scale=1e6)),
    ("wrap-2d", _random((3, 25))),
    ("wrap-3d", _random((2, 2, 20), f64)),
    ("wrap-int64", np.arange(0, 10**12, 10**10, dtype=np.int64)),
    ("wrap-bools", np.arange(50) % 3 == 0),
    ("wrap-exact-width", _arange(12) + np.float32(0.5)),
    # summarisation above the threshold
    ("summary-1d", _arange(1001)),
    ("summary-1d-int", np.arange(5000, dtype=np.int64)),
    ("summary-1d-float64", _random(2000, f64)),
    ("summary-2d", _arange(2000, shape=(40, 50))),
    ("summary-2d-short-rows", _arange(1002, shape=(501, 2))),
    ("summary-2d-short-cols", _arange(1002, shape=(2, 501))),
    ("summary-3d", _random((10, 10, 11))),
    ("summary-4d", _random((5, 5, 5, 9), scale=1e5)),
    ("summary-wraps", _random((2, 600), scale=1e-6)),
    ("summary-hides-large", np.concatenate([np.ones(500), [1e12], np.ones(500)]).astype(f32)),
    ("summary-bool", np.arange(1200).reshape(3, 400) % 2 == 0),
    ("not-summarised-at-1000", _arange(1000)),
    # empty tensors (size= and dtype= suffixes)
    ("empty-1d", np.zeros(0, f32)),
    ("empty-2d", np.zeros((0, 3), f32)),
    ("empty-2d-trailing", np.zeros((3, 0), f32)),
    ("empty-3d", np.zeros((2, 0, 4), f32)),
    ("empty-int64", np.zeros(0, np.int64)),
    ("empty-int64-2d", np.zeros((0, 3), np.int64)),
    ("empty-bool", np.zeros(0, bool)),
    ("empty-float64", np.zeros((1, 0), f64)),
    ("empty-int32", np.zeros(0, np.int32)),
    # suffix wrapping
    ("suffix-fits", _arange(5, f64)),
    ("suffix-wraps-1d", _random(8, f64)),
    ("suffix-wraps-2d", _random((2, 8), f64)),
    ("suffix-int32-long", np.arange(22, dtype=np.int32)),
    # other dtypes torch shares with numpy
    ("float16", np.array([1.5, -2.0, 65504.0], np.float16)),
    ("int8", np.array([-128, 0, 127], np.int8)),
    ("int16", np.array([-300, 7], np.int16)),
    ("uint8", np.array([0, 255], np.uint8)),
    # non-contiguous and byte-swapped input
    ("transposed", _arange(6, shape=(2, 3)).T),
    ("reversed", _arange(5)[::-1]),
    ("big-endian", np.array([1.5, 2.5], ">f4")),
]
FLOAT_ARRAYS = [(name, arr) for name, arr in TRICKY_ARRAYS if arr.dtype.kind == "f"]


@pytest.fixture(autouse=True)
def default_printoptions():
    """Every test starts and ends with default options, on both gradcli's and torch's side."""
    set_printoptions(profile="default")
    torch = _torch_or_none()
    if torch is not None:
        torch.set_printoptions(profile="default")
    yield
    set_printoptions(profile="default")
    if torch is not None:
        torch.set_printoptions(profile="default")


def _torch_or_none():
    try:
        import torch
    except ImportError:
        return None
    return torch


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _assert_same(ours: str, theirs: str) -> None:
    assert ours == theirs, f"\ngradcli:\n{ours}\ntorch:\n{theirs}"


def _native(arr: np.ndarray) -> np.ndarray:
    """A copy torch.tensor accepts (it refuses negative strides and non-native byte order)."""
    return np.array(arr, dtype=arr.dtype.newbyteorder("="), order="C", copy=True)


def _torch_repr(torch, arr, **kwargs):
    return repr(torch.tensor(_native(arr), **kwargs))


def _set_both(torch, **options):
    set_printoptions(**options)
    torch.set_printoptions(**options)


# --- the hand-written cases -------------------------------------------------------------


@pytest.mark.parametrize("arr", [a for _, a in TRICKY_ARRAYS], ids=[n for n, _ in TRICKY_ARRAYS])
def test_matches_torch(torch, arr):
    _assert_same(tensor_repr(arr), _torch_repr(torch, arr))


@pytest.mark.parametrize("arr", [a for _, a in FLOAT_ARRAYS], ids=[n for n, _ in FLOAT_ARRAYS])
def test_requires_grad_suffix_matches_torch(torch, arr):
    ours = tensor_repr(arr, requires_grad=True)
    _assert_same(ours, _torch_repr(torch, arr, requires_grad=True))


@pytest.mark.parametrize("arr", [a for _, a in FLOAT_ARRAYS], ids=[n for n, _ in FLOAT_ARRAYS])
def test_grad_fn_suffix_matches_torch(torch, arr):
    result = torch.tensor(_native(arr), requires_grad=True) * 2
    grad_fn_name = type(result.grad_fn).__name__
    assert grad_fn_name == "MulBackward0"
    ours = tensor_repr(result.detach().numpy(), grad_fn_name=grad_fn_name, requires_grad=True)
    _assert_same(ours, repr(result))


@pytest.mark.parametrize("op", ["sum", "exp", "neg", "t", "unsqueeze"])
def test_other_grad_fn_names(torch, op):
    leaf = torch.tensor(_random((2, 3), f64), requires_grad=True)
    result = leaf.unsqueeze(0) if op == "unsqueeze" else getattr(leaf, op)()
    ours = tensor_repr(result.detach().numpy(), grad_fn_name=type(result.grad_fn).__name__)
    _assert_same(ours, repr(result))


def test_suffixes_wrap_onto_new_lines(torch):
    # The row ends at column 72: "dtype=" no longer fits and moves to its own line, and
    # grad_fn follows it there.
    arr = np.array([123456.5] * 5, f64)
    result = torch.tensor(arr, requires_grad=True) + 0
    ours = tensor_repr(result.detach().numpy(), grad_fn_name=type(result.grad_fn).__name__)
    assert ours.endswith("],\n       dtype=torch.float64, grad_fn=<AddBackward0>)")
    _assert_same(ours, repr(result))


# --- print options ------------------------------------------------------------------------

OPTION_SETS = [
    {"precision": 0},
    {"precision": 2},
    {"precision": 8},
    {"sci_mode": True},
    {"sci_mode": False},
    {"sci_mode": True, "precision": 1},
    {"linewidth": 10},
    {"linewidth": 40},
    {"linewidth": 120},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0},
    {"threshold": 0},
    {"edgeitems": 0},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "default"},
    {"profile": "short", "precision": 6},
    {"profile": "no-such-profile", "precision": 3},
]
OPTION_ARRAYS = [
    np.array(2.5, f32),
    np.array([1.0, 2.0, 3.0], f32),
    np.array([0.123456789, -1.5, 2.0], f64),
    np.array([1e-6, 1.0, nan, -inf], f32),
    np.array([1e9, 2.0], f32),
    np.array([[1.5, 2.25], [-3.125, 4.0]], f32),
    _arange(12, shape=(2, 2, 3)),
    np.arange(30, dtype=np.int64),
    np.array([True, False, True, True, False, True]),
    _random(25),
    _random(1200, f64),
    _random((4, 10, 30)),
    np.zeros((0, 2), f32),
]


@pytest.mark.parametrize(
    "options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items())
)
def test_printoptions_match_torch(torch, options):
    _set_both(torch, **options)
    assert get_printoptions() == dataclasses.asdict(torch._tensor_str.PRINT_OPTS)
    for arr in OPTION_ARRAYS:
        _assert_same(tensor_repr(arr, requires_grad=False), _torch_repr(torch, arr))
        if arr.dtype.kind == "f":
            ours = tensor_repr(arr, requires_grad=True)
            _assert_same(ours, _torch_repr(torch, arr, requires_grad=True))


def test_later_call_resets_sci_mode_like_torch(torch):
    _set_both(torch, sci_mode=True, precision=3)
    _set_both(torch, linewidth=60)
    assert PRINT_OPTIONS.sci_mode is None
    assert get_printoptions() == dataclasses.asdict(torch._tensor_str.PRINT_OPTS)
    arr = np.array([1.5, 2.5], f32)
    _assert_same(tensor_repr(arr), _torch_repr(torch, arr))


def test_profile_full_prints_everything(torch):
    _set_both(torch, profile="full")
    arr = _arange(1500)
    ours = tensor_repr(arr)
    assert "..." not in ours
    _assert_same(ours, _torch_repr(torch, arr))


# --- hypothesis: generated arrays and options ---------------------------------------------

_HYPOTHESIS_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

_ELEMENTS = {
    np.dtype(f32): st.floats(width=32),
    np.dtype(f64): st.floats(),
    np.dtype(np.int64): st.integers(-(2**63), 2**63 - 1),
    np.dtype(np.int32): st.integers(-(2**31), 2**31 - 1),
    np.dtype(bool): st.booleans(),
}


@st.composite
def drawn_arrays(draw, max_side=6):
    """Arrays whose elements hypothesis picks itself: adversarial single values."""
    dtype = draw(st.sampled_from(list(_ELEMENTS)))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=max_side))
    return draw(hnp.arrays(dtype, shape, elements=_ELEMENTS[dtype]))


@st.composite
def mixed_arrays(draw):
    """Arrays built from a seed: magnitude ranges, specials and sizes past the threshold."""
    dtype = draw(st.sampled_from([f32, f32, f64, np.int64, np.int32, bool]))
    ndim = draw(st.integers(0, 4))
    if draw(st.booleans()):  # sides that put the element count around the threshold
        min_side, max_side = {0: (0, 0), 1: (900, 3000), 2: (25, 60), 3: (9, 16), 4: (5, 9)}[ndim]
    else:
        min_side, max_side = 0, 5
    side = st.integers(min_side, max_side)
    shape = tuple(draw(st.lists(side, min_size=ndim, max_size=ndim)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    size = int(np.prod(shape))
    if dtype is bool:
        return rng.random(size).reshape(shape) < draw(st.floats(0, 1))
    if dtype in (np.int64, np.int32):
        bound = 10 ** draw(st.integers(0, 9 if dtype is np.int32 else 18))
        return rng.integers(-bound, bound, size=size, endpoint=True).astype(dtype).reshape(shape)
    low = draw(st.integers(-40, 40))
    high = draw(st.integers(low, min(low + 20, 40)))
    magnitudes = 10.0 ** rng.uniform(low, high, size)
    values = magnitudes * rng.choice([-1.0, 1.0], size) if draw(st.booleans()) else magnitudes
    if draw(st.booleans()):
        values = np.round(values)
    special_share = draw(st.sampled_from([0.0, 0.0, 0.05, 0.5, 1.0]))
    specials = np.array([0.0, -0.0, nan, inf, -inf])
    is_special = rng.random(size) < special_share
    values[is_special] = rng.choice(specials, int(is_special.sum()))
    with np.errstate(over="ignore"):
        return values.astype(dtype).reshape(shape)


@_HYPOTHESIS_SETTINGS
@given(arr=drawn_arrays())
def test_hypothesis_drawn_arrays_match_torch(torch, arr):
    _assert_same(tensor_repr(arr), _torch_repr(torch, arr))


@_HYPOTHESIS_SETTINGS
@given(arr=mixed_arrays(), requires_grad=st.booleans())
def test_hypothesis_mixed_arrays_match_torch(torch, arr, requires_grad):
    requires_grad = requires_grad and arr.dtype.kind == "f"
    ours = tensor_repr(arr, requires_grad=requires_grad)
    _assert_same(ours, _torch_repr(torch, arr, requires_grad=requires_grad))


@_HYPOTHESIS_SETTINGS
@given(
    arr=st.one_of(drawn_arrays(max_side=4), mixed_arrays()),
    options=st.fixed_dictionaries(
        {},
        optional={
            "precision": st.integers(0, 10),
            "threshold": st.integers(0, 200),
            "edgeitems": st.integers(0, 5),
            "linewidth": st.integers(1, 200),
            "sci_mode": st.sampled_from([True, False]),
            "profile": st.sampled_from(["default", "short", "full"]),
        },
    ),
)
def test_hypothesis_printoptions_match_torch(torch, arr, options):
    try:
        _set_both(torch, **options)
        _assert_same(tensor_repr(arr), _torch_repr(torch, arr))
    finally:
        _set_both(torch, profile="default")


@pytest.mark.parametrize("linewidth", range(40, 60))
@pytest.mark.parametrize("dtype", [f32, f64])
def test_suffix_wrapping_at_every_linewidth(torch, linewidth, dtype):
    # Sweeps the boundary where "grad_fn=" does or does not join "dtype=" on its line.
    _set_both(torch, linewidth=linewidth)
    for arr in (np.array([1.5, -2.0], dtype), _random((2, 3), dtype), _random(11, dtype)):
        result = torch.tensor(arr, requires_grad=True).clone()
        ours = tensor_repr(arr, grad_fn_name=type(result.grad_fn).__name__)
        _assert_same(ours, repr(result))
        _assert_same(
            tensor_repr(arr, requires_grad=True), _torch_repr(torch, arr, requires_grad=True)
        )


# --- without torch: golden strings, bookkeeping, speed ------------------------------------

GOLDEN = [
    (np.array([1.0, 2.0, 3.0], f32), {}, "tensor([1., 2., 3.])"),
    (np.array([-0.0, 1.5], f32), {}, "tensor([-0.0000, 1.5000])"),
    (np.array([nan, 1e10, 1.0], f32), {}, "tensor([       nan, 1.0000e+10, 1.0000e+00])"),
    (np.array([True, False]), {}, "tensor([ True, False])"),
    (np.array(nan, f64), {}, "tensor(nan, dtype=torch.float64)"),
    (np.zeros((0, 3), np.int64), {}, "tensor([], size=(0, 3), dtype=torch.int64)"),
    (np.array([1.5], f32), {"requires_grad": True}, "tensor([1.5000], requires_grad=True)"),
    (
        np.array([[1.0, 2.0], [3.0, 4.0]], f32),
        {"requires_grad": True, "grad_fn_name": "MulBackward0"},
        "tensor([[1., 2.],\n        [3., 4.]], grad_fn=<MulBackward0>)",
    ),
    (
        _arange(8, shape=(2, 2, 2)),
        {},
        "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]])",
    ),
    (_arange(1001), {}, "tensor([   0.,    1.,    2.,  ...,  998.,  999., 1000.])"),
]


@pytest.mark.parametrize("arr,kwargs,expected", GOLDEN)
def test_golden_strings(arr, kwargs, expected):
    assert tensor_repr(arr, **kwargs) == expected


def test_set_printoptions_bookkeeping():
    set_printoptions(profile="short")
    assert get_printoptions() == {
        "precision": 2,
        "threshold": 1000,
        "edgeitems": 2,
        "linewidth": 80,
        "sci_mode": None,
    }
    set_printoptions(profile="full", sci_mode=True)
    assert PRINT_OPTIONS.threshold == math.inf and PRINT_OPTIONS.sci_mode is True
    set_printoptions(linewidth=50)  # sci_mode is reset, the rest is kept
    assert PRINT_OPTIONS.sci_mode is None and PRINT_OPTIONS.threshold == math.inf
    assert PRINT_OPTIONS.linewidth == 50
    with printoptions(precision=1):
        assert tensor_repr(np.array([1.25], f32)) == "tensor([1.2])"
    assert PRINT_OPTIONS.precision == 4 and PRINT_OPTIONS.linewidth == 50
    assert formatting.PRINT_OPTIONS is PRINT_OPTIONS


def test_dtype_name():
    assert dtype_name(np.float32) == "torch.float32"
    assert dtype_name(np.dtype(">f8")) == "torch.float64"
    assert dtype_name(bool) == "torch.bool"
    assert dtype_name("int32") == "torch.int32"
    assert dtype_name(np.complex64) == "torch.complex64"  # (complex tensors print too)
    with pytest.raises(TypeError):
        dtype_name(np.uint16)


def test_small_tensor_prints_in_microseconds():
    arr = np.array([1.5, 2.0, 3.25], f32)
    tensor_repr(arr)
    start = time.perf_counter()
    for _ in range(1000):
        tensor_repr(arr)
    per_call = (time.perf_counter() - start) / 1000
    assert per_call < 200e-6, f"{per_call * 1e6:.0f} us per small tensor"
