"""torch.nn.init against PyTorch 2.13: the same bits after manual_seed (trunc_normal_ and
orthogonal_ within tolerance: their post-processing is scipy's/numpy's)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rng_oracle import torch_with_vector_kernels

import gradcli.torch as gt

torch = torch_with_vector_kernels()

CALLS = [
    ("uniform_", (), {}), ("uniform_", (-0.5, 2.0), {}), ("normal_", (), {}), ("normal_", (0.5, 0.1), {}),
    ("xavier_uniform_", (), {}), ("xavier_uniform_", (), {"gain": 2.0}), ("xavier_normal_", (), {}),
    ("kaiming_uniform_", (), {"a": math.sqrt(5)}), ("kaiming_uniform_", (), {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", (), {}), ("kaiming_normal_", (), {"nonlinearity": "tanh"}),
    ("zeros_", (), {}), ("ones_", (), {}), ("constant_", (0.3,), {}),
]
SHAPES = [(5, 3), (16, 8), (7, 3, 2), (4, 2, 3, 3)]


@pytest.mark.parametrize("call", range(len(CALLS)))
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bits(call, shape, dtype):
    name, args, kwargs = CALLS[call]
    torch.manual_seed(call)
    gt.manual_seed(call)
    a = getattr(torch.nn.init, name)(torch.empty(shape, dtype=getattr(torch, dtype)), *args, **kwargs)
    b = getattr(gt.nn.init, name)(gt.zeros(shape, dtype=getattr(gt, dtype)), *args, **kwargs)
    assert a.numpy().tobytes() == b._data.tobytes()


def test_linear_default_init():
    """nn.Linear's reset_parameters: kaiming_uniform_(w, a=sqrt(5)), then the bias uniform in +-1/sqrt(fan_in)."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 3)
    gt.manual_seed(0)
    w = gt.zeros(3, 4, requires_grad=True)
    b = gt.zeros(3, requires_grad=True)
    gt.nn.init.kaiming_uniform_(w, a=math.sqrt(5))
    fan_in, _ = gt.nn.init._calculate_fan_in_and_fan_out(w)
    gt.nn.init.uniform_(b, -1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in))
    assert lin.weight.detach().numpy().tobytes() == w._data.tobytes()
    assert lin.bias.detach().numpy().tobytes() == b._data.tobytes()
    assert w.requires_grad and w.grad_fn is None


@pytest.mark.parametrize("shape", [(3, 5), (6, 2), (4, 2, 3)])
def test_orthogonal_and_trunc_normal(shape):
    torch.manual_seed(1)
    gt.manual_seed(1)
    a = torch.nn.init.orthogonal_(torch.empty(shape), gain=1.5)
    b = gt.nn.init.orthogonal_(gt.zeros(shape), gain=1.5)
    np.testing.assert_allclose(b._data, a.numpy(), rtol=1.3e-6, atol=1e-5)
    for kwargs in ({"std": 0.5}, {"a": -0.3, "b": 0.2}, {"mean": 1.0, "a": 0.0, "b": 0.5, "std": 2.0}):
        a = torch.nn.init.trunc_normal_(torch.empty(shape), **kwargs)
        b = gt.nn.init.trunc_normal_(gt.zeros(shape), **kwargs)
        assert a.numpy().tobytes() == b._data.tobytes()
        torch.manual_seed(2)
        gt.manual_seed(2)


def test_eye_and_gain_and_errors():
    assert gt.nn.init.eye_(gt.zeros(2, 3))._data.tolist() == torch.nn.init.eye_(torch.empty(2, 3)).tolist()
    for args in [("linear",), ("tanh",), ("relu",), ("leaky_relu",), ("leaky_relu", 0.2), ("selu",), ("sigmoid",)]:
        assert gt.nn.init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)
    for m in (torch, gt):
        with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
            m.nn.init.calculate_gain("foo")
        with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"):
            m.nn.init.xavier_uniform_(m.zeros(3))
        with pytest.raises(ValueError, match=r"Mode fan_x not supported, please use one of \['fan_in', 'fan_out'\]"):
            m.nn.init.kaiming_uniform_(m.zeros(3, 3), mode="fan_x")
        with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
            m.nn.init.eye_(m.zeros(3))
