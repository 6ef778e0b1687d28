"""A uint8 index tensor is a mask, as PyTorch reads it: a 0-d one as a Python bool (a new
dimension of size 1 or 0, no warning), a 1-d or wider one as a bool mask with PyTorch's
deprecation warning. Reading, writing and the gradient, compared live against torch."""

from __future__ import annotations

import warnings

import pytest

import gradcli.torch as G

torch = pytest.importorskip("torch")

_KEYS = {
    "zero_d_one": lambda T: T.tensor(1, dtype=T.uint8),
    "zero_d_zero": lambda T: T.tensor(0, dtype=T.uint8),
    "zero_d_two": lambda T: T.tensor(2, dtype=T.uint8),
    "zero_d_with_int": lambda T: (T.tensor(1, dtype=T.uint8), 0),
    "int_with_zero_d": lambda T: (1, T.tensor(1, dtype=T.uint8)),
    "one_d": lambda T: T.tensor([1, 0], dtype=T.uint8),
    "zero_d_bool": lambda T: T.tensor(True),
}


def _outcome(T, name, write):
    x = T.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            if write:
                z = x.detach().clone()
                z[_KEYS[name](T)] = 9.
                got = z.tolist()
            else:
                y = x[_KEYS[name](T)]
        except Exception as e:
            return (type(e).__name__, str(e)), [str(w.message) for w in seen]
    told = [(w.category.__name__, str(w.message)) for w in seen]
    if write:
        return got, told
    # (PyTorch's backward warns once more for a wider byte mask; gradcli's does not)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (y * T.arange(1., y.numel() + 1).reshape(y.shape)).sum().backward()
    return (y.tolist(), tuple(y.shape), type(y.grad_fn).__name__, x.grad.tolist()), told


@pytest.mark.parametrize("name", sorted(_KEYS))
@pytest.mark.parametrize("write", [False, True])
def test_uint8_index_is_a_mask_as_pytorch(name, write):
    assert _outcome(G, name, write) == _outcome(torch, name, write)


def test_zero_d_uint8_index_of_a_zero_d_tensor():
    def run(T):
        x = T.tensor(5.)
        return x[T.tensor(1, dtype=T.uint8)].tolist(), x[T.tensor(0, dtype=T.uint8)].shape

    assert run(G) == run(torch)
