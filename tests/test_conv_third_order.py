"""Third-order derivatives through convolutions against PyTorch 2.13: under create_graph
the second-order gradients of input and weight are convolutions in PyTorch's
_convolution_double_backward (ConvolutionBackward0, TransposeBackward0 around the
weight's), so the third order's graph shows them; compared three nodes deep with the
values, for conv1d/2d/3d and the transposed ones over strides, padding, dilation, groups,
output padding and an unbatched input."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _chain(fn, depth):
    if fn is None:
        return None
    if depth == 0:
        return type(fn).__name__
    return type(fn).__name__, tuple(_chain(f, depth - 1) for f, _ in fn.next_functions)


CASES = {
    "conv1d": ("conv1d", (1, 2, 5), (3, 2, 2), {}),
    "conv1d_unbatched": ("conv1d", (2, 6), (3, 2, 3), {"padding": 1}),
    "conv2d": ("conv2d", (2, 2, 4, 4), (3, 2, 2, 2), {}),
    "conv2d_stride_pad": ("conv2d", (1, 2, 5, 5), (3, 2, 3, 3), {"stride": 2, "padding": 1}),
    "conv2d_stride_even": ("conv2d", (1, 2, 6, 6), (3, 2, 3, 3), {"stride": 2}),
    "conv2d_dilation": ("conv2d", (1, 2, 6, 6), (2, 2, 2, 2), {"dilation": 2}),
    "conv2d_groups": ("conv2d", (2, 4, 4, 4), (4, 2, 2, 2), {"groups": 2}),
    "conv3d": ("conv3d", (1, 2, 3, 3, 3), (3, 2, 2, 2, 2), {}),
    "conv3d_stride": ("conv3d", (1, 1, 5, 4, 4), (2, 1, 2, 2, 2), {"stride": 2}),
    "conv_transpose1d": ("conv_transpose1d", (1, 2, 5), (2, 3, 2), {}),
    "conv_transpose2d": ("conv_transpose2d", (1, 2, 4, 4), (2, 3, 2, 2), {}),
    "conv_transpose2d_stride": ("conv_transpose2d", (1, 2, 3, 3), (2, 3, 3, 3),
                                {"stride": 2, "padding": 1}),
    "conv_transpose2d_groups": ("conv_transpose2d", (1, 4, 3, 3), (4, 1, 2, 2), {"groups": 2}),
    "conv_transpose3d": ("conv_transpose3d", (1, 2, 2, 2, 2), (2, 1, 2, 2, 2), {}),
}


def _run(m, name):
    fname, xs, ws, kwargs = CASES[name]
    m.manual_seed(0)
    x = m.randn(*xs, dtype=m.float64, requires_grad=True)
    w = m.randn(*ws, dtype=m.float64, requires_grad=True)
    y = getattr(m.nn.functional, fname)(x, w, **kwargs)
    gx, gw = m.autograd.grad((y * y).sum(), (x, w), create_graph=True)
    hx, hw = m.autograd.grad((gx * gx).sum() + (gw * gw).sum(), (x, w), create_graph=True)
    third = m.autograd.grad((hx * hx).sum() + (hw * hw).sum(), (x, w))
    values = [t.detach().numpy() if m is torch else np.array(t._data) for t in (hx, hw, *third)]
    return [_chain(hx.grad_fn, 3), _chain(hw.grad_fn, 3)], values


@pytest.mark.parametrize("name", list(CASES))
def test_third_order_through_convolution_matches_pytorch(name):
    graphs, values = _run(gt, name)
    e_graphs, e_values = _run(torch, name)
    for got, expected in zip(values, e_values, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-7)
    assert graphs == e_graphs


def test_third_derivative_through_an_output_padded_transposed_convolution_raises():
    """PyTorch's second-order input term of a transposed convolution with output_padding is a plain
    convolution keeping that padding, whose own backward raises: so does gradcli's."""

    def run(m):
        m.manual_seed(0)
        x = m.randn(1, 2, 3, 3, dtype=m.float64, requires_grad=True)
        w = m.randn(2, 3, 3, 3, dtype=m.float64, requires_grad=True)
        y = m.nn.functional.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)
        gx, gw = m.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        hx, hw = m.autograd.grad((gx * gx).sum() + (gw * gw).sum(), (x, w), create_graph=True)
        try:
            m.autograd.grad((hx * hx).sum() + (hw * hw).sum(), (x, w))
        except RuntimeError as err:
            return str(err), _chain(hx.grad_fn, 2)
        return None, _chain(hx.grad_fn, 2)

    got, expected = run(gt), run(torch)
    assert expected[0] is not None and "output_padding" in expected[0]
    assert got == expected
