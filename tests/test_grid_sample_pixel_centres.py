"""grid_sample at grid points that fall exactly on pixel centres (an identity or
axis-scaled affine_grid, as a spatial transformer starts from): the floor there picks the
interpolation cell, so affine_grid's coordinates must round as PyTorch's do (linspace in
theta's dtype), the 2-d kernel must unnormalize as its vectorized form does, and a
coordinate clipped onto a border (border / reflection padding) has gradient 0."""

import numpy as np
import pytest

import gradcli.torch as g

torch = pytest.importorskip("torch")


def _run(T, x, theta, nd, mode, padding, align_corners):
    inp = T.tensor(x, requires_grad=True)
    th = T.tensor(theta, requires_grad=True)
    grid = T.nn.functional.affine_grid(th, x.shape, align_corners=align_corners)
    out = T.nn.functional.grid_sample(inp, grid, mode=mode, padding_mode=padding,
                                      align_corners=align_corners)
    weights = T.tensor((np.arange(out.numel()) % 5 - 2.0).reshape(tuple(out.shape)),
                       dtype=out.dtype)
    (out * weights).sum().backward()
    return [grid.detach().numpy(), out.detach().numpy(), inp.grad.numpy(), th.grad.numpy()]


def _theta(nd, x_scale):
    rows = np.eye(nd, nd + 1)
    rows[0, 0] = x_scale
    return np.stack([rows, rows])


@pytest.mark.parametrize("nd,size", [(2, 4), (2, 7), (3, 3)])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("x_scale", [1.0, 1.5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bilinear_on_pixel_centres_matches_pytorch(nd, size, align_corners, padding, x_scale,
                                                   dtype):
    rng = np.random.default_rng(size + nd)
    x = rng.random((2, 2) + (size,) * nd).astype(dtype)
    theta = _theta(nd, x_scale).astype(dtype)
    ours = _run(g, x, theta, nd, "bilinear", padding, align_corners)
    ref = _run(torch, x, theta, nd, "bilinear", padding, align_corners)
    # the grid exactly (its floor decides everything else)
    np.testing.assert_array_equal(ours[0], ref[0])
    for a, b in zip(ours[1:], ref[1:], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [2, 3, 5, 28, 33, 100])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_identity_is_pytorchs_float32_grid(n, align_corners):
    theta = np.eye(2, 3, dtype=np.float32)[None]
    ours = g.nn.functional.affine_grid(g.tensor(theta), (1, 1, n, n + 1),
                                       align_corners=align_corners).numpy()
    ref = torch.nn.functional.affine_grid(torch.tensor(theta), (1, 1, n, n + 1),
                                          align_corners=align_corners).numpy()
    np.testing.assert_array_equal(ours, ref)


def test_border_coordinate_has_zero_gradient():
    """A grid point exactly on the first pixel centre under border padding: PyTorch counts
    it as clipped (gradient 0 along that axis), where a plain clamp would pass it through."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    # x = -0.75 unnormalizes to 0.0 exactly (align_corners=False, width 4)
    pts = np.array([[[[-0.75, 0.1], [0.3, 0.2]]]], dtype=np.float32)
    grads = []
    for T in (g, torch):
        grid = T.tensor(pts, requires_grad=True)
        T.nn.functional.grid_sample(T.tensor(x), grid, padding_mode="border",
                                    align_corners=False).sum().backward()
        grads.append(grid.grad.numpy())
    assert grads[1][0, 0, 0, 0] == 0.0
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-6)
