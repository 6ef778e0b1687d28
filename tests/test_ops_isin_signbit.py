"""torch.isin and torch.signbit (engine/ops/predicates.py) against PyTorch 2.13: op_db's
sample inputs for both, the overloads of isin (tensor or number on either side, keywords,
assume_unique, invert), type promotion, dtypes, shapes, requires_grad of the result, and
PyTorch's error texts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from process_helpers import assert_runs_as_python_does

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _to_gt(value):
    if isinstance(value, torch.Tensor):
        data = value.detach().numpy().copy()
        dtype = getattr(gt, str(value.dtype).replace("torch.", ""))
        out = gt.tensor(data, dtype=dtype)
        return out.requires_grad_() if value.requires_grad and value.is_floating_point() else out
    if isinstance(value, (list, tuple)):
        return type(value)(_to_gt(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_gt(v) for k, v in value.items()}
    return value


def _same(ours, theirs):
    assert isinstance(ours, gt.Tensor)
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.requires_grad == theirs.requires_grad
    assert np.array_equal(ours.numpy(), theirs.numpy())
    assert repr(ours) == repr(theirs)


def _op_db_samples(name, dtypes):
    pytest.importorskip("expecttest")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    ops = [op for op in op_db if op.name == name]
    assert ops, name
    out = []
    for dtype in dtypes:
        if dtype not in ops[0].supported_dtypes("cpu"):
            continue
        for sample in ops[0].sample_inputs("cpu", dtype, requires_grad=False):
            out.append(sample)
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "uint8"])
def test_isin_op_db_samples(dtype):
    samples = _op_db_samples("isin", [getattr(torch, dtype)])
    assert samples
    for s in samples:
        theirs = torch.isin(s.input, *s.args, **s.kwargs)
        ours = gt.isin(_to_gt(s.input), *_to_gt(s.args), **_to_gt(s.kwargs))
        _same(ours, theirs)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "uint8", "bool"])
def test_signbit_op_db_samples(dtype):
    samples = _op_db_samples("signbit", [getattr(torch, dtype)])
    assert samples
    for s in samples:
        theirs = torch.signbit(s.input, *s.args, **s.kwargs)
        ours = gt.signbit(_to_gt(s.input), *_to_gt(s.args), **_to_gt(s.kwargs))
        _same(ours, theirs)


CALLS = {
    "float vs int tensor": lambda T: T.isin(T.tensor([[1, 2], [3, 4.]], requires_grad=True),
                                            T.tensor([2, 3])),
    "tensor vs float": lambda T: T.isin(T.tensor([[1, 2], [3, 4.]]), 2.0),
    "number vs tensor": lambda T: T.isin(2, T.tensor([[1, 2], [3, 4.]])),
    "number not found": lambda T: T.isin(7.5, T.tensor([1, 2])),
    "int vs 1.5 promotes": lambda T: T.isin(T.tensor([1, 2]), 1.5),
    "int vs 1.9 promotes": lambda T: T.isin(T.tensor([1, 2]), 1.9),
    "float32 vs float64": lambda T: T.isin(T.tensor([1.0]), T.tensor([1.0000001],
                                                                     dtype=T.float64)),
    "uint8 vs 257": lambda T: T.isin(T.tensor([1, 2], dtype=T.uint8), T.tensor([257])),
    "nan never found": lambda T: T.isin(T.tensor([float("nan"), 2.0]),
                                        T.tensor([float("nan"), 2.0])),
    "minus zero": lambda T: T.isin(T.tensor([-0.0, 1.0]), T.tensor([0.0])),
    "invert": lambda T: T.isin(T.tensor([1, 2, 3]), T.tensor([1]), invert=True),
    "assume_unique": lambda T: T.isin(T.tensor([3, 1, 2]), T.tensor([2, 5]), assume_unique=True),
    "keywords": lambda T: T.isin(elements=T.tensor([1, 2]), test_elements=T.tensor([1])),
    "test_element keyword": lambda T: T.isin(T.tensor([1, 2]), test_element=1),
    "element keyword": lambda T: T.isin(element=1, test_elements=T.tensor([1])),
    "0-d in 2-d": lambda T: T.isin(T.tensor(3), T.tensor([[3]])),
    "empty elements": lambda T: T.isin(T.tensor([]), T.tensor([1.0])),
    "empty test": lambda T: T.isin(T.tensor([[1.0, 2.0]]), T.tensor([])),
    "int32 vs int64": lambda T: T.isin(T.tensor([1, 2], dtype=T.int32), T.tensor([1])),
    "signbit floats": lambda T: T.signbit(T.tensor([-0.0, 0.0, -1, 2, float("nan"),
                                                    -float("nan"), -float("inf")])),
    "signbit requires grad": lambda T: T.signbit(T.tensor([[-1.0, 2.0]], requires_grad=True)),
    "signbit ints": lambda T: T.signbit(T.tensor([-1, 0, 2])),
    "signbit bool": lambda T: T.signbit(T.tensor([True, False])),
    "signbit method": lambda T: T.tensor([-1.5, 3.0], dtype=T.float64).signbit(),
    "signbit 0-d": lambda T: T.signbit(T.tensor(-2.0)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_isin_signbit_calls(name):
    _same(CALLS[name](gt), CALLS[name](torch))


ERRORS = {
    "two numbers": lambda T: T.isin(2, 3),
    "list": lambda T: T.isin(T.tensor([1, 2]), [1]),
    "int invert": lambda T: T.isin(T.tensor([1.0]), T.tensor([]), invert=1),
    "unknown keyword": lambda T: T.isin(T.tensor([1.0]), T.tensor([2.0]), foo=1),
    "bool tensors": lambda T: T.isin(T.tensor([True]), T.tensor([True])),
    "bool test": lambda T: T.isin(T.tensor([1, 2]), T.tensor([True])),
    "bool scalar": lambda T: T.isin(T.tensor([1, 2]), True),
    "signbit of a float": lambda T: T.signbit(2.0),
    "no signbit_": lambda T: T.tensor([-1.0]).signbit_(),
    "no Tensor.isin": lambda T: T.tensor([1.0]).isin(T.tensor([1.0])),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_isin_signbit_errors(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(Exception) as ours:
        ERRORS[name](gt)
    assert type(ours.value) is type(theirs.value)
    if not isinstance(theirs.value, AttributeError):
        assert str(ours.value) == str(theirs.value)


def test_isin_and_signbit_through_the_cli(tmp_path):
    """A .grad program reaches both, and prints what the same program prints under Python
    with PyTorch (the results never require grad)."""
    program = ("import torch\n"
               "x = torch.tensor([1.0, -2.0, 3.0, -0.0], requires_grad=True)\n"
               "print(torch.isin(x, torch.tensor([3.0, 1.0])))\n"
               "print(torch.isin(x, 3.0, invert=True))\n"
               "print(torch.signbit(x), x.signbit().requires_grad)\n")
    assert_runs_as_python_does(tmp_path, program)
