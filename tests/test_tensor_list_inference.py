"""torch.tensor of mixed nested lists against PyTorch: the dtype inferred from numbers,
tensors and empty rows, the shape read off the first items, tensors standing for numbers
or rows, and PyTorch's error texts (which depend on the target dtype)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import numpy as np  # noqa: E402

import gradcli.torch as gt  # noqa: E402

DATA = [
    "[1, 2j]", "[True, 1.5]", "[True, 2]", "[torch.tensor(1.), 2]", "[torch.tensor(1), 2.5]",
    "[torch.tensor(1, dtype=torch.int32), 2]", "[1, torch.tensor(2.)]",
    "[torch.tensor(1., dtype=torch.float64), 2]", "[torch.tensor(1j), 2]",
    "[1.5, torch.tensor(True)]", "[[1], 2]", "[1, [2]]", "[torch.tensor([1., 2.]), 3]",
    "[torch.tensor([1., 2.]), [3, 4]]", "[[1, 2], torch.tensor([3, 4])]",
    "[torch.tensor([1., 2.]), torch.tensor([3, 4])]", "[1.5, 2j, True]", "[[1, 2j], [3, 4]]",
    "[2j, [1]]", "[[2j], 1]", "[torch.tensor(1.), [2]]", "[[1], torch.tensor(2.)]", "[]",
    "[[], []]", "[[], [1]]", "[[1], []]", "[[], 5]", "[[[]], [1]]", "[[], [None]]",
    "[None, 1]", "[1, None]", "[1, 'a']", "['a', 1]",
    "[torch.tensor(1., dtype=torch.float16), 2.5]", "[torch.tensor(1, dtype=torch.uint8), -1]",
    "[torch.tensor([1.]), 2]", "[[torch.tensor(1.), 2], [3, 4j]]", "[(1, 2), [3, 4.]]",
    "[[1, 2], [3]]", "[[1, 2], (3, 4j)]", "[True, False, 2j]", "[torch.tensor([[1.]]), 2]",
    "[torch.tensor([1, 2]), torch.tensor([3., 4.])]", "[[torch.tensor(1.)], [2]]",
    "[1, 2**63]", "[1.5, 2**63]", "[True, [1]]", "[torch.tensor(True), [1]]",
    "[torch.tensor([1, 2]), 3]", "[[torch.tensor([1, 2])], [3]]", "[[1], torch.tensor([2, 3])]",
    "[[1, 2], torch.tensor([[2, 3]])]", "[torch.tensor(1.), 1j]", "[torch.tensor([]), 1]",
    "[[1, 2], np.array([3, 4])]",
]
DTYPES = [None, "float64", "int64", "bool", "complex64"]


def _make(mod, data: str, dtype):
    try:
        value = eval(data, {"torch": mod, "np": np})  # noqa: S307 - test data written here
        kwargs = {} if dtype is None else {"dtype": getattr(mod, dtype)}
        return repr(mod.tensor(value, **kwargs))
    except Exception as err:  # noqa: BLE001 - the error text is compared
        return f"{type(err).__name__}: {err}"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("data", DATA)
def test_tensor_of_mixed_list(data, dtype):
    assert _make(gt, data, dtype) == _make(torch, data, dtype)


def test_tensor_holding_a_grad_tensor_warns_as_pytorch():
    """A one-element tensor that requires grad, read as a number: PyTorch's warning."""
    import warnings

    def caught(mod):
        # (PyTorch gives this warning once per process: under set_warn_always both sides
        # give it whatever ran before in this process)
        mod.set_warn_always(True)
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                out = mod.tensor([[mod.tensor(1., requires_grad=True)], [2.]])
        finally:
            mod.set_warn_always(False)
        return repr(out), [(w.category, str(w.message)) for w in seen]

    assert caught(gt) == caught(torch)
