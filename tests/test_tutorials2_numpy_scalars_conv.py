"""Two things CS231n's PyTorch notebook meets: a float32 tensor scaled by a numpy scalar
(`torch.randn(shape) * np.sqrt(2. / fan_in)`) stays float32, as PyTorch reads a numpy
scalar as the Python number it holds; and a convolution's output is contiguous, so its
`flatten`, `x.view(N, -1)`, works (the gradients are laid out as PyTorch's too)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402

SCALARS = [np.float64(2.5), np.float32(1.5), np.int64(3), np.float16(2.0), np.int32(-2)]
TENSORS = [lambda lib: lib.ones(2), lambda lib: lib.arange(3),
           lambda lib: lib.ones(2, dtype=lib.float64), lambda lib: lib.tensor(1.5)]
OPS = [lambda t, s: t * s, lambda t, s: s * t, lambda t, s: t + s, lambda t, s: s + t,
       lambda t, s: t - s, lambda t, s: s - t, lambda t, s: t / s, lambda t, s: t.mul(s),
       lambda t, s: t.add(s)]


@pytest.mark.parametrize("scalar", SCALARS, ids=lambda s: type(s).__name__)
@pytest.mark.parametrize("make", range(len(TENSORS)))
@pytest.mark.parametrize("op", range(len(OPS)))
def test_numpy_scalar_operands_promote_as_python_numbers(scalar, make, op):
    ref = OPS[op](TENSORS[make](torch), scalar)
    got = OPS[op](TENSORS[make](gt), scalar)
    assert isinstance(got, gt.Tensor)
    assert str(got.dtype) == str(ref.dtype)
    assert str(got) == str(ref)


def test_cs231n_random_weight_keeps_float32():
    for lib in (torch, gt):
        lib.manual_seed(0)
        w = lib.randn((6, 3, 5, 5), dtype=lib.float32) * np.sqrt(2. / np.prod((3, 5, 5)))
        w.requires_grad = True
        if lib is torch:
            ref = str(w[0, 0])
        else:
            got = str(w[0, 0])
    assert got == ref


def _conv_layouts(lib):
    lib.manual_seed(0)
    F = lib.nn.functional
    x = lib.randn(2, 3, 6, 6, requires_grad=True)
    w = lib.randn(4, 3, 3, 3, requires_grad=True)
    b = lib.zeros(4, requires_grad=True)
    out = F.relu(F.conv2d(x, w, b, padding=2, stride=2))
    flat = out.view(out.shape[0], -1)
    flat.sum().backward()
    o1 = F.conv1d(lib.randn(2, 3, 7), lib.randn(4, 3, 3), padding=1)
    grouped = F.conv2d(lib.randn(1, 2, 5, 5), lib.randn(4, 1, 3, 3), groups=2)
    return [out.stride(), out.is_contiguous(), flat.shape, x.grad.stride(), w.grad.stride(),
            o1.stride(), grouped.stride(), lib.nn.Conv2d(3, 4, 3)(lib.randn(2, 3, 5, 5)).stride(),
            str(flat[:, :3])]


def test_convolution_results_and_gradients_are_contiguous():
    assert [str(v) for v in _conv_layouts(gt)] == [str(v) for v in _conv_layouts(torch)]
