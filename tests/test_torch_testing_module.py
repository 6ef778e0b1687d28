"""torch.testing (assert_close, assert_allclose, make_tensor) against PyTorch: the same
verdict, the same exception type and the same message text, case by case."""

import warnings

import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402


def _outcome(fn, mod):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(mod)
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            result = (type(error).__name__, str(error))
    return result, [(w.category.__name__, str(w.message)) for w in caught]


CASES = {
    "float_close_text": lambda T: T.testing.assert_close(T.tensor([1., 2, 3]), T.tensor([1., 2.5, 3])),
    "msg_replaces": lambda T: T.testing.assert_close(T.tensor([1., 2]), T.tensor([1., 2.5]), msg="hi"),
    "msg_callable": lambda T: T.testing.assert_close(T.tensor([1., 2]), T.tensor([1., 2.5]),
                                                     msg=lambda m: "X" + m),
    "2d_index": lambda T: T.testing.assert_close(T.tensor([[1., 2], [3, 4]]), T.tensor([[1., 2.5], [3, 5]])),
    "int_equal_text": lambda T: T.testing.assert_close(T.tensor([1, 2, 3]), T.tensor([1, 4, 3])),
    "uint8": lambda T: T.testing.assert_close(T.tensor([1, 2], dtype=T.uint8), T.tensor([3, 1], dtype=T.uint8)),
    "bool_tensor": lambda T: T.testing.assert_close(T.tensor([True]), T.tensor([False])),
    "0d_scalars": lambda T: T.testing.assert_close(T.tensor(1.), T.tensor(2.)),
    "py_floats": lambda T: T.testing.assert_close(1.0, 1.1),
    "py_ints": lambda T: T.testing.assert_close(1, 2),
    "int_vs_float_type": lambda T: T.testing.assert_close(1, 1.0),
    "dtype_mismatch": lambda T: T.testing.assert_close(T.tensor([1.]), T.tensor([1.], dtype=T.float64)),
    "dtype_unchecked": lambda T: T.testing.assert_close(T.tensor([1.]), T.tensor([1.], dtype=T.float64),
                                                        check_dtype=False),
    "dtype_unchecked_differs": lambda T: T.testing.assert_close(
        T.tensor([1.]), T.tensor([1.1], dtype=T.float64), check_dtype=False),
    "shape_mismatch": lambda T: T.testing.assert_close(T.tensor([1.]), T.tensor([1., 2])),
    "shape_0d": lambda T: T.testing.assert_close(T.tensor([1.]), T.tensor(1.)),
    "nan_not_equal": lambda T: T.testing.assert_close(T.tensor([float("nan")]), T.tensor([float("nan")])),
    "nan_equal": lambda T: T.testing.assert_close(T.tensor([float("nan")]), T.tensor([float("nan")]),
                                                  equal_nan=True),
    "tensor_vs_list": lambda T: T.testing.assert_close(T.tensor([1.]), [1.]),
    "tensor_vs_float": lambda T: T.testing.assert_close(T.tensor([1.]), 1.),
    "strings": lambda T: T.testing.assert_close("a", "a"),
    "nones": lambda T: T.testing.assert_close(None, None),
    "none_vs_int": lambda T: T.testing.assert_close(None, 1),
    "bools": lambda T: T.testing.assert_close(True, False),
    "list_item": lambda T: T.testing.assert_close([T.tensor([1.])], [T.tensor([2.])]),
    "dict_item": lambda T: T.testing.assert_close({"a": T.tensor([1.])}, {"a": T.tensor([2.])}),
    "tuple_mixed": lambda T: T.testing.assert_close((T.tensor([1.]), 2), (T.tensor([1.]), 3)),
    "length": lambda T: T.testing.assert_close([1, 2], [1]),
    "keys": lambda T: T.testing.assert_close({"a": 1}, {"b": 1}),
    "rtol_only": lambda T: T.testing.assert_close(T.tensor([1.]), T.tensor([1.1]), rtol=0.2),
    "atol_only": lambda T: T.testing.assert_close(T.tensor([1.]), T.tensor([1.1]), atol=0.1),
    "both_tols_pass": lambda T: T.testing.assert_close(T.tensor([1.]), T.tensor([1.05]), rtol=0.1, atol=0),
    "zero_tols": lambda T: T.testing.assert_close(T.tensor([1., 2.]), T.tensor([1., 2.1]), rtol=0, atol=0),
    "stride": lambda T: T.testing.assert_close(T.ones(2, 3).t(), T.ones(3, 2), check_stride=True),
    "rel_inf": lambda T: T.testing.assert_close(T.tensor([0., 2]), T.tensor([1., 0])),
    "float64_default_passes": lambda T: T.testing.assert_close(T.tensor([1.5, 2.]).double(),
                                                               T.tensor([1.5, 2.0000001]).double()),
    "requires_grad_ok": lambda T: T.testing.assert_close(T.arange(6.).reshape(2, 3).requires_grad_(),
                                                         T.arange(6.).reshape(2, 3) + 1),
    "allclose_warns": lambda T: T.testing.assert_allclose(T.tensor([1.]), T.tensor([1.1])),
    "allclose_loose": lambda T: T.testing.assert_allclose(T.tensor([1.]), 1.00001),
    "allclose_lists": lambda T: T.testing.assert_allclose([1., 2.], [1., 2.5]),
    "allclose_nan": lambda T: T.testing.assert_allclose(T.tensor([float("nan")]), T.tensor([float("nan")])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_assert_close_as_pytorch(name):
    assert _outcome(CASES[name], gt) == _outcome(CASES[name], torch)


def test_passing_cases_really_pass():
    for name in ("nan_equal", "dtype_unchecked", "nones", "both_tols_pass", "float64_default_passes"):
        assert _outcome(CASES[name], gt)[0] is None


def _seeded(T, fn):
    T.manual_seed(0)
    return fn(T)


MAKE = {
    "float32": lambda T: T.testing.make_tensor(3, 4, dtype=T.float32, device="cpu"),
    "int64_tuple_shape": lambda T: T.testing.make_tensor((2, 3), dtype=T.int64, device="cpu"),
    "bool": lambda T: T.testing.make_tensor(5, dtype=T.bool, device="cpu"),
    "float64_range_grad": lambda T: T.testing.make_tensor(2, 3, dtype=T.float64, device="cpu", low=-1,
                                                          high=1, requires_grad=True),
    "uint8_exclude_zero": lambda T: T.testing.make_tensor(4, dtype=T.uint8, device="cpu", exclude_zero=True),
    "huge_range": lambda T: T.testing.make_tensor(4, dtype=T.float32, device="cpu", low=-1e39, high=1e39),
}


@pytest.mark.parametrize("name", sorted(MAKE))
def test_make_tensor_seeded_as_pytorch(name):
    ours, theirs = _seeded(gt, MAKE[name]), _seeded(torch, MAKE[name])
    assert str(ours) == str(theirs)
    assert ours.requires_grad == theirs.requires_grad
    assert str(ours.dtype) == str(theirs.dtype)


def test_make_tensor_noncontiguous():
    ours = gt.testing.make_tensor(2, 3, dtype=gt.float32, device="cpu", noncontiguous=True)
    theirs = torch.testing.make_tensor(2, 3, dtype=torch.float32, device="cpu", noncontiguous=True)
    assert ours.stride() == theirs.stride() and tuple(ours.shape) == tuple(theirs.shape)


MAKE_ERRORS = {
    "int_grad": lambda T: T.testing.make_tensor(2, dtype=T.int64, device="cpu", requires_grad=True),
    "low_high": lambda T: T.testing.make_tensor(2, dtype=T.float32, device="cpu", low=3, high=1),
    "range": lambda T: T.testing.make_tensor(2, dtype=T.uint8, device="cpu", low=300, high=400),
    "nan": lambda T: T.testing.make_tensor(2, dtype=T.float32, device="cpu", low=float("nan")),
}


@pytest.mark.parametrize("name", sorted(MAKE_ERRORS))
def test_make_tensor_errors_as_pytorch(name):
    ours, theirs = _outcome(MAKE_ERRORS[name], gt), _outcome(MAKE_ERRORS[name], torch)
    assert isinstance(ours[0], tuple) and ours == theirs
