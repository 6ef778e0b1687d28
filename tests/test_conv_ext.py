"""conv3d, conv_transpose1d/2d/3d, unfold / fold, pools and interpolate
(engine/ops/conv_ext.py) against PyTorch 2.13 in float64: values, grad_fn names and
vector-Jacobian products; gradcheck / gradgradcheck; PyTorch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from expr_compare import run_expr as _run

import gradcli.torch as gt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)


def _r(*shape):
    return RNG.standard_normal(shape)


F = "torch.nn.functional"
CASES = {
    "conv3d": (f"{F}.conv3d(x0, x1, x2)", [_r(2, 2, 4, 3, 3), _r(3, 2, 2, 2, 2), _r(3)]),
    "conv3d_stride_pad": (f"{F}.conv3d(x0, x1, stride=2, padding=1, dilation=(1, 2, 1))",
                          [_r(1, 2, 4, 5, 3), _r(2, 2, 2, 2, 2)]),
    "conv3d_groups": (f"{F}.conv3d(x0, x1, groups=2)", [_r(1, 4, 3, 3, 3), _r(2, 2, 2, 1, 2)]),
    "conv3d_unbatched_same": (f"{F}.conv3d(x0, x1, padding='same')",
                              [_r(2, 3, 3, 3), _r(1, 2, 3, 2, 3)]),
    "conv_transpose1d": (f"{F}.conv_transpose1d(x0, x1, x2)", [_r(2, 3, 5), _r(3, 2, 3), _r(2)]),
    "conv_transpose1d_stride": (f"{F}.conv_transpose1d(x0, x1, stride=2, padding=1, "
                                "output_padding=1, dilation=2)", [_r(1, 2, 4), _r(2, 3, 3)]),
    "conv_transpose2d": (f"{F}.conv_transpose2d(x0, x1, x2, stride=(2, 1), padding=(0, 1))",
                         [_r(2, 2, 3, 3), _r(2, 3, 2, 3), _r(3)]),
    "conv_transpose2d_groups": (f"{F}.conv_transpose2d(x0, x1, groups=2)",
                                [_r(1, 4, 3, 3), _r(4, 1, 2, 2)]),
    "conv_transpose3d": (f"{F}.conv_transpose3d(x0, x1)", [_r(1, 2, 2, 3, 2), _r(2, 2, 2, 2, 2)]),
    "unfold": (f"{F}.unfold(x0, 2)", [_r(2, 3, 4, 5)]),
    "unfold_args": (f"{F}.unfold(x0, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))",
                    [_r(1, 2, 5, 6)]),
    "fold": (f"{F}.fold(x0, (4, 5), 2)", [_r(2, 12, 12)]),
    "fold_args": (f"{F}.fold(x0, (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))",
                  [_r(1, 12, 12)]),
    "max_pool3d": (f"{F}.max_pool3d(x0, 2)", [_r(2, 2, 4, 4, 4)]),
    "max_pool3d_args": (f"{F}.max_pool3d(x0, (2, 3, 2), stride=1, padding=1, ceil_mode=True)",
                        [_r(1, 2, 3, 4, 3)]),
    "max_pool3d_indices": (f"{F}.max_pool3d(x0, 2, return_indices=True)", [_r(1, 1, 4, 2, 4)]),
    "avg_pool1d": (f"{F}.avg_pool1d(x0, 3)", [_r(2, 3, 8)]),
    "avg_pool1d_args": (f"{F}.avg_pool1d(x0, 3, stride=2, padding=1, ceil_mode=True, "
                        "count_include_pad=False)", [_r(2, 3, 8)]),
    "avg_pool3d": (f"{F}.avg_pool3d(x0, 2)", [_r(1, 2, 4, 4, 4)]),
    "avg_pool3d_args": (f"{F}.avg_pool3d(x0, (3, 2, 2), stride=(2, 1, 2), padding=1, "
                        "count_include_pad=False)", [_r(1, 2, 5, 4, 4)]),
    "avg_pool3d_divisor": (f"{F}.avg_pool3d(x0, 2, divisor_override=3)", [_r(1, 1, 4, 4, 2)]),
    "adaptive_avg_pool1d": (f"{F}.adaptive_avg_pool1d(x0, 3)", [_r(2, 3, 8)]),
    "adaptive_avg_pool3d": (f"{F}.adaptive_avg_pool3d(x0, (2, 3, 1))", [_r(1, 2, 5, 4, 3)]),
    "adaptive_max_pool1d": (f"{F}.adaptive_max_pool1d(x0, 3)", [_r(2, 3, 8)]),
    "adaptive_max_pool2d": (f"{F}.adaptive_max_pool2d(x0, (3, 2))", [_r(2, 3, 7, 5)]),
    "adaptive_max_pool2d_idx": (f"{F}.adaptive_max_pool2d(x0, 2, return_indices=True)",
                                [_r(1, 2, 5, 5)]),
    "adaptive_max_pool3d": (f"{F}.adaptive_max_pool3d(x0, 2)", [_r(1, 2, 4, 3, 5)]),
    "lp_pool1d": (f"{F}.lp_pool1d(x0, 2, 3)", [_r(2, 3, 9)]),
    "lp_pool2d": (f"{F}.lp_pool2d(x0, 3, (2, 2), stride=1)", [np.abs(_r(1, 2, 4, 4)) + 0.1]),
    "nearest1d": (f"{F}.interpolate(x0, size=7)", [_r(2, 3, 4)]),
    "nearest2d": (f"{F}.interpolate(x0, scale_factor=2)", [_r(1, 2, 3, 3)]),
    "nearest2d_frac": (f"{F}.interpolate(x0, scale_factor=1.7)", [_r(1, 2, 3, 4)]),
    "nearest3d": (f"{F}.interpolate(x0, size=(3, 5, 2))", [_r(1, 1, 2, 3, 4)]),
    "nearest_exact": (f"{F}.interpolate(x0, size=(5, 3), mode='nearest-exact')",
                      [_r(1, 2, 3, 4)]),
    "linear": (f"{F}.interpolate(x0, size=7, mode='linear')", [_r(2, 3, 4)]),
    "linear_ac": (f"{F}.interpolate(x0, size=7, mode='linear', align_corners=True)",
                  [_r(2, 3, 4)]),
    "linear_down": (f"{F}.interpolate(x0, scale_factor=0.6, mode='linear')", [_r(2, 3, 9)]),
    "bilinear": (f"{F}.interpolate(x0, size=(4, 7), mode='bilinear')", [_r(1, 2, 3, 5)]),
    "bilinear_ac": (f"{F}.interpolate(x0, scale_factor=2, mode='bilinear', align_corners=True)",
                    [_r(1, 2, 3, 3)]),
    "bicubic": (f"{F}.interpolate(x0, size=(5, 6), mode='bicubic')", [_r(1, 2, 3, 4)]),
    "bicubic_ac": (f"{F}.interpolate(x0, scale_factor=1.5, mode='bicubic', align_corners=True)",
                   [_r(1, 1, 4, 4)]),
    "trilinear": (f"{F}.interpolate(x0, size=(3, 4, 5), mode='trilinear')", [_r(1, 2, 2, 3, 4)]),
    "area": (f"{F}.interpolate(x0, size=(2, 3), mode='area')", [_r(1, 2, 5, 7)]),
    "grid_sample": (f"{F}.grid_sample(x0, x1, align_corners=False)",
                    [_r(2, 2, 3, 4), np.random.default_rng(1).uniform(-1.1, 1.1, (2, 3, 2, 2))]),
    "grid_sample_corners_border": (f"{F}.grid_sample(x0, x1, padding_mode='border', "
                                   "align_corners=True)",
                                   [_r(1, 2, 3, 4), np.random.default_rng(2).uniform(-1.3, 1.3,
                                                                                     (1, 3, 2, 2))]),
    "grid_sample_reflection": (f"{F}.grid_sample(x0, x1, padding_mode='reflection', "
                               "align_corners=False)",
                               [_r(1, 2, 3, 4), np.random.default_rng(3).uniform(-2.5, 2.5,
                                                                                 (1, 3, 2, 2))]),
    "grid_sample_reflection_ac": (f"{F}.grid_sample(x0, x1, padding_mode='reflection', "
                                  "align_corners=True)",
                                  [_r(1, 1, 3, 4), np.random.default_rng(4).uniform(-2.5, 2.5,
                                                                                    (1, 3, 2, 2))]),
    "grid_sample_nearest": (f"{F}.grid_sample(x0, x1, mode='nearest', align_corners=False)",
                            [_r(1, 2, 3, 4), np.random.default_rng(5).uniform(-1.1, 1.1,
                                                                              (1, 3, 2, 2))]),
    "grid_sample_bicubic": (f"{F}.grid_sample(x0, x1, mode='bicubic', align_corners=False)",
                            [_r(1, 2, 4, 4), np.random.default_rng(6).uniform(-1.1, 1.1,
                                                                              (1, 2, 3, 2))]),
    "grid_sample_bicubic_border": (f"{F}.grid_sample(x0, x1, mode='bicubic', "
                                   "padding_mode='border', align_corners=True)",
                                   [_r(1, 1, 4, 4), np.random.default_rng(7).uniform(-1.2, 1.2,
                                                                                     (1, 2, 3, 2))]),
    "grid_sample_bicubic_reflect": (f"{F}.grid_sample(x0, x1, mode='bicubic', "
                                    "padding_mode='reflection', align_corners=False)",
                                    [_r(1, 1, 4, 4), np.random.default_rng(8).uniform(-1.5, 1.5,
                                                                                      (1, 2, 3, 2))]),
    "grid_sample_3d": (f"{F}.grid_sample(x0, x1, align_corners=False)",
                       [_r(1, 2, 3, 3, 4), np.random.default_rng(9).uniform(-1.1, 1.1,
                                                                             (1, 2, 2, 2, 3))]),
    "grid_sample_3d_nearest": (f"{F}.grid_sample(x0, x1, mode='nearest', "
                               "padding_mode='border', align_corners=True)",
                               [_r(1, 2, 3, 3, 4), np.random.default_rng(10).uniform(
                                   -1.1, 1.1, (1, 2, 2, 2, 3))]),
    "upsample": (f"{F}.upsample(x0, scale_factor=2, mode='bilinear')", [_r(1, 1, 2, 3)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_pytorch(name):
    expr, arrays = CASES[name]
    t_in, t_out = _run(torch, expr, arrays)
    g_in, g_out = _run(gt, expr, arrays)
    for t, g in zip(t_out, g_out, strict=True):
        assert str(g.dtype) == str(t.dtype), name
        assert tuple(g.shape) == tuple(t.shape), name
        np.testing.assert_allclose(g._data, t.detach().numpy(), rtol=1e-7, atol=1e-7)
        tn = type(t.grad_fn).__name__ if t.grad_fn is not None else None
        gn = type(g.grad_fn).__name__ if g.grad_fn is not None else None
        assert gn == tn, (name, gn, tn)
    diff = [(t, g) for t, g in zip(t_out, g_out, strict=True) if t.requires_grad]
    seeds = [np.random.default_rng(3).standard_normal(tuple(t.shape)) for t, _ in diff]
    sum((t * torch.tensor(s)).sum() for (t, _), s in zip(diff, seeds, strict=True)).backward()
    sum((g * gt.tensor(s)).sum() for (_, g), s in zip(diff, seeds, strict=True)).backward()
    for t, g in zip(t_in, g_in, strict=True):
        assert g.grad is not None, name
        np.testing.assert_allclose(g.grad._data, t.grad.numpy(), rtol=1e-6, atol=1e-7,
                                   err_msg=name)


SECOND = {"conv3d", "conv3d_groups", "conv_transpose1d", "conv_transpose2d_groups", "unfold",
          "fold", "max_pool3d", "avg_pool1d_args", "adaptive_max_pool2d", "bicubic",
          "trilinear", "lp_pool1d", "grid_sample", "grid_sample_reflection",
          "grid_sample_bicubic", "grid_sample_3d"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    expr, arrays = CASES[name]
    inputs = tuple(gt.tensor(a, dtype=gt.float64, requires_grad=True) for a in arrays)

    def fn(*xs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = eval(expr, {"torch": gt}, {f"x{i}": x for i, x in enumerate(xs)})  # noqa: S307
        return out[0] if isinstance(out, tuple) else out

    assert gt.autograd.gradcheck(fn, inputs)
    if name in SECOND:
        assert gt.autograd.gradgradcheck(fn, inputs)


ERRORS = {
    "conv3d_dims": f"{F}.conv3d(torch.ones(2, 3, 3), torch.ones(1, 2, 1, 1, 1))",
    "conv3d_channels": f"{F}.conv3d(torch.ones(1, 3, 3, 3, 3), torch.ones(1, 2, 1, 1, 1))",
    "conv3d_kernel": f"{F}.conv3d(torch.ones(1, 1, 2, 2, 2), torch.ones(1, 1, 3, 3, 3))",
    "conv3d_dtype": f"{F}.conv3d(torch.ones(1, 1, 2, 2, 2), torch.ones(1, 1, 1, 1, 1).double())",
    "conv_t_channels": f"{F}.conv_transpose2d(torch.ones(1, 3, 3, 3), torch.ones(2, 1, 1, 1))",
    "unfold_dims": f"{F}.unfold(torch.ones(2, 3), 2)",
    "unfold_big": f"{F}.unfold(torch.ones(1, 1, 2, 2), 3)",
    "fold_blocks": f"{F}.fold(torch.ones(1, 4, 5), (3, 3), 2)",
    "fold_kernel": f"{F}.fold(torch.ones(1, 5, 4), (3, 3), 2)",
    "max_pool3d_pad": f"{F}.max_pool3d(torch.ones(1, 1, 4, 4, 4), 2, padding=2)",
    "avg_pool3d_small": f"{F}.avg_pool3d(torch.ones(1, 1, 1, 2, 2), 2, padding=1)",
    "max_pool3d_small": f"{F}.max_pool3d(torch.ones(1, 1, 1, 2, 2), 2)",
    "avg_pool1d_small": f"{F}.avg_pool1d(torch.ones(1, 1, 1), 2)",
    "avg_pool1d_dims": f"{F}.avg_pool1d(torch.ones(3), 2)",
    "interp_bilinear_long": f"{F}.interpolate(torch.ones(1, 1, 2, 2, dtype=torch.long), size=3, "
                            "mode='bilinear')",
    "interp_nearest_long": f"{F}.interpolate(torch.ones(1, 1, 2, dtype=torch.long), size=3)",
    "conv_t_output_padding": f"{F}.conv_transpose2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2), "
                             "stride=2, output_padding=2)",
    "interp_both": f"{F}.interpolate(torch.ones(1, 1, 3), size=2, scale_factor=2)",
    "interp_none": f"{F}.interpolate(torch.ones(1, 1, 3))",
    "interp_align": f"{F}.interpolate(torch.ones(1, 1, 3), size=2, align_corners=True)",
    "interp_mode_dims": f"{F}.interpolate(torch.ones(1, 1, 3), size=2, mode='bilinear')",
    "interp_size_len": f"{F}.interpolate(torch.ones(1, 1, 3, 3), size=(2, 2, 2))",
}


def test_integer_conv_and_max_pool_as_pytorch():
    for expr in (f"{F}.conv3d(x.reshape(1, 1, 1, 2, 2), x.reshape(1, 1, 1, 2, 2))",
                 f"{F}.max_pool3d(x.reshape(1, 1, 1, 2, 2), 1)",
                 f"{F}.conv_transpose1d(x.reshape(1, 1, 4), x.reshape(1, 1, 4))",
                 f"{F}.avg_pool1d(x.reshape(1, 1, 4) * 7, 3, stride=1, padding=1)",
                 f"{F}.avg_pool1d(x.reshape(1, 4) * 5, 3, padding=1, ceil_mode=True, "
                 "count_include_pad=False)",
                 f"{F}.avg_pool3d(x.reshape(1, 1, 1, 2, 2) * 3, (1, 2, 1), padding=(0, 1, 0))",
                 f"{F}.avg_pool3d(x.reshape(1, 1, 2, 2) * 9, (1, 2, 2), divisor_override=3)"):
        t = eval(expr, {"torch": torch}, {"x": torch.tensor([1, -2, 3, 4])})  # noqa: S307
        g = eval(expr, {"torch": gt}, {"x": gt.tensor([1, -2, 3, 4])})  # noqa: S307
        assert repr(g) == repr(t)


def _raised(module, expr):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eval(expr, {"torch": module})  # noqa: S307 - the table above
    except Exception as err:  # noqa: BLE001 - compared with PyTorch's
        return err
    return None


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(name):
    theirs = _raised(torch, ERRORS[name])
    ours = _raised(gt, ERRORS[name])
    assert theirs is not None
    assert ours is not None, f"PyTorch raised {theirs!r}; gradcli did not"
    assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
    assert str(ours) == str(theirs)
