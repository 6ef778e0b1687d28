"""Tensor.view(dtype) reinterprets the bytes as PyTorch's view_dtype: shapes, PyTorch's
conditions and error texts, shared memory and version counter, no autograd, printing."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402

CASES = [
    "torch.arange(6.).reshape(2, 3).view(torch.int32)",
    "torch.arange(6.).reshape(2, 3).view(torch.int16).shape",
    "torch.arange(6.).reshape(2, 3).view(torch.float64)",
    "torch.arange(6.).reshape(2, 3).t().view(torch.int16)",
    "torch.arange(6.).reshape(2, 3)[:, 1:].view(torch.int16)",
    "torch.arange(8.)[1:7].view(torch.float64)",
    "torch.arange(8.).reshape(2, 4)[:, ::2].view(torch.float64)",
    "torch.arange(16.).reshape(4, 4)[::2, :2].view(torch.float64)",
    "torch.arange(12.).reshape(4, 3)[:, :2].view(torch.float64)",
    "torch.ones(3, requires_grad=True).view(torch.int32)",
    "torch.ones(3, requires_grad=True).view(torch.float32)",
    "(torch.ones(3, requires_grad=True) * 2).view(torch.int32)",
    "torch.ones(3, requires_grad=True).double().view(torch.int64)",
    "torch.ones(4, dtype=torch.bfloat16).view(torch.float16)",
    "torch.ones(4, dtype=torch.float16).view(torch.bfloat16)",
    "torch.ones(4).view(torch.int8)",
    "torch.ones(2).view(torch.uint8)",
    "torch.tensor([0, 1, 2], dtype=torch.uint8).view(torch.bool)",
    "torch.tensor([True, False]).view(torch.int8)",
    "torch.tensor(1.0).view(torch.int16)",
    "torch.tensor(1.0).view(torch.int32)",
    "torch.ones(3, dtype=torch.int8).view(torch.int16)",
    "torch.ones(2, 4, dtype=torch.int8).view(torch.int32)",
    "torch.zeros(2, 0).view(torch.float64)",
    "torch.zeros(0, 4).view(torch.float64)",
    "torch.ones(2, 1).view(torch.int16)",
    "torch.tensor([1.5, -2.0], dtype=torch.float64).view(torch.int32)",
    "torch.tensor([1.5, -2.0], dtype=torch.float16).view(torch.int16)",
    "torch.tensor([1, -2], dtype=torch.int64).view(torch.float64)",
    "torch.tensor([1, -2], dtype=torch.int32).view(torch.float32)",
    "torch.tensor([1, -2], dtype=torch.int16).view(torch.int8)",
    "torch.ones(2, 2).view(torch.int16).stride()",
    "torch.ones(2, 3).view(torch.float32).requires_grad",
    "torch.ones(2).view(float)",
    "torch.ones(2).view(int)",
    "torch.tensor([1, 0], dtype=torch.uint8).view(bool)",
    "torch.ones(2).view(dtype=torch.int32)",
    "torch.ones(2).view(torch.int32, 2)",
    "torch.ones(2).view('int32')",
]


def _outcome(lib, src):
    try:
        return repr(eval(src, {"torch": lib}))  # noqa: S307 - our own test strings
    except Exception as err:  # noqa: BLE001 - the error is what is compared
        return f"{type(err).__name__}: {err}"


@pytest.mark.parametrize("src", CASES)
def test_view_dtype_as_pytorch(src):
    assert _outcome(G, src) == _outcome(torch, src)


def test_the_view_shares_memory_and_version_counter():
    out = []
    for lib in (torch, G):
        z = lib.zeros(4)
        v = z.view(lib.int32)
        v[1] = 1065353216
        z.add_(1)
        out.append((repr(z), repr(v), z._version, v._version))
    assert out[0] == out[1]
