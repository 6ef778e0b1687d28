"""F.dropout & co in training mode against PyTorch 2.13: the same kept elements, values
and grad_fn names after manual_seed."""

from __future__ import annotations

import warnings

import pytest
from rng_oracle import torch_with_vector_kernels

import gradcli.torch as gt

torch = torch_with_vector_kernels()

CALLS = [
    ("dropout", (4, 5), {"p": 0.5}), ("dropout", (40,), {"p": 0.2}), ("dropout", (3, 3), {"p": 0.0}),
    ("dropout", (3, 3), {"p": 1.0}), ("dropout", (3, 3), {"p": 0.3, "training": False}),
    ("alpha_dropout", (6, 4), {"p": 0.4, "training": True}), ("feature_alpha_dropout", (2, 3, 4), {"p": 0.5, "training": True}),
    ("dropout1d", (2, 3, 4), {"p": 0.5}), ("dropout1d", (3, 4), {"p": 0.5}), ("dropout2d", (2, 3, 4, 2), {"p": 0.5}),
    ("dropout2d", (2, 3, 4), {"p": 0.5}), ("dropout3d", (2, 3, 2, 2, 2), {"p": 0.5}), ("dropout3d", (3, 2, 2, 2), {"p": 0.5}),
]


@pytest.mark.parametrize("call", range(len(CALLS)))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout(call, dtype):
    name, shape, kwargs = CALLS[call]
    results = []
    for m in (torch, gt):
        m.manual_seed(call)
        x = (m.arange(float(m.zeros(shape).numel()), dtype=getattr(m, dtype)).reshape(shape) + 1).requires_grad_(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = getattr(m.nn.functional, name)(x, **kwargs)
        y.sum().backward()
        fn = y.grad_fn.name() if y.grad_fn is not None else None
        results.append((y.detach().numpy().tobytes() if m is torch else y._data.tobytes(),
                        fn, x.grad.numpy().tobytes() if m is torch else x.grad._data.tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout"])
def test_aten_forms(name):
    out = []
    for m in (torch, gt):
        m.manual_seed(5)
        x = m.arange(1.0, 13.0).reshape(4, 3).requires_grad_(True)
        y = getattr(m, name)(x, 0.4, True)
        z = m.ones(4, 3)
        w = getattr(m, name + "_")(z, 0.4, True)
        out.append((y.tolist(), y.grad_fn.name(), w is z, z.tolist()))
    assert out[0] == out[1]
    for m in (torch, gt):
        with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but got 1.5"):
            getattr(m, name)(m.ones(3), 1.5, True)


def test_bad_p():
    for m in (torch, gt):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
            m.nn.functional.dropout(m.ones(3), 1.5)
        with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 1D input"):
            m.nn.functional.dropout1d(m.ones(3), 0.5)


def test_transposed_input_draws_in_its_memory_order():
    out = []
    for m in (torch, gt):
        m.manual_seed(2)
        x = m.arange(12.0).reshape(3, 4).t()
        out.append((m.nn.functional.dropout(x, 0.5).tolist(), m.nn.functional.alpha_dropout(x, 0.5, True).tolist()))
    assert out[0] == out[1]
