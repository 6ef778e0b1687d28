"""The ops of engine/ops/breadth.py (issue #24's breadth) against PyTorch 2.13: values,
dtypes, grad_fn names, gradients (float64), and PyTorch's errors for bad arguments; plus
the regressions of the OpInfo entries fixed with them (batch_norm of empty and 1-d
inputs, layer_norm over every dim, adaptive_avg_pool2d of a 3-d input)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from expr_compare import run_expr as _run

import gradcli.torch as gt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(2024)


def _r(*shape):
    return RNG.standard_normal(shape)


IDX = np.array([0, 2, 0, 1])

CASES = {
    "index_reduce_prod": ("x0.index_reduce(0, torch.tensor([0, 2, 0, 1]), x1, 'prod')",
                          [_r(3, 2), _r(4, 2)]),
    "index_reduce_mean_excl": ("torch.index_reduce(x0, 1, torch.tensor([1, 1]), x1, 'mean', "
                               "include_self=False)", [_r(2, 3), _r(2, 2)]),
    "index_reduce_amax": ("x0.index_reduce(0, torch.tensor([0, 0, 1]), x1, 'amax')",
                          [_r(2, 3), _r(3, 3)]),
    "index_reduce_amin_excl": ("x0.index_reduce(0, torch.tensor([1, 0, 1]), x1, 'amin', "
                               "include_self=False)", [_r(3, 2), _r(3, 2)]),
    "index_reduce_prod_zero": ("x0.index_reduce(0, torch.tensor([0, 1]), x1 * "
                               "torch.tensor([[0.0], [1.0]], dtype=torch.float64), 'prod')",
                               [_r(2, 2), _r(2, 2)]),
    "index_reduce_0d": ("torch.index_reduce(x0, 0, torch.tensor([0]), x1, 'prod')",
                        [np.array(1.5), np.array(-0.5)]),
    "cov": ("torch.cov(x0)", [_r(3, 5)]),
    "cov_1d": ("torch.cov(x0, correction=0)", [_r(6)]),
    "cov_weights": ("torch.cov(x0, fweights=torch.tensor([1, 2, 3, 1]), aweights=x1.abs() + "
                    "0.5)", [_r(2, 4), _r(4)]),
    "corrcoef": ("torch.corrcoef(x0)", [_r(3, 6)]),
    "corrcoef_1d": ("torch.corrcoef(x0)", [_r(5)]),
    "nextafter": ("torch.nextafter(x0, x1)", [_r(3, 2), _r(2)]),
    "channel_shuffle": ("torch.nn.functional.channel_shuffle(x0, 3)", [_r(2, 6, 2, 2)]),
    "constant_pad_nd": ("torch.constant_pad_nd(x0, (1, 2, -1, 0), 1.5)", [_r(3, 4)]),
    "linalg_diagonal": ("torch.linalg.diagonal(x0, offset=1, dim1=0, dim2=2)", [_r(3, 2, 4)]),
    "vander": ("torch.linalg.vander(x0)", [_r(2, 4)]),
    "vander_n": ("torch.linalg.vander(x0, N=5)", [_r(3)]),
    "vander_0d": ("torch.linalg.vander(x0, N=3)", [np.array(1.5)]),
    "rms_norm": ("torch.nn.functional.rms_norm(x0, (2, 3))", [_r(4, 2, 3)]),
    "rms_norm_weight": ("torch.nn.functional.rms_norm(x0, [3], x1, eps=1e-3)",
                        [_r(4, 3), _r(3)]),
    "native_layer_norm": ("torch.native_layer_norm(x0, [3], x1, None, 1e-5)",
                          [_r(2, 3), _r(3)]),
    "native_batch_norm": ("torch.native_batch_norm(x0, x1, None, None, None, True, 0.1, 1e-5)",
                          [_r(4, 3, 2), _r(3)]),
    "native_batch_norm_legit": ("torch._native_batch_norm_legit(x0, None, x1, True, 0.1, 1e-5)",
                                [_r(4, 3), _r(3)]),
    "native_group_norm": ("torch.native_group_norm(x0, x1, None, 2, 4, 3, 2, 1e-5)",
                          [_r(2, 4, 3), _r(4)]),
    "norm_nuc": ("torch.norm(x0, 'nuc')", [_r(3, 4)]),
    "norm_nuc_keepdim_dims": ("torch.norm(x0, 'nuc', dim=(0, 2), keepdim=True)", [_r(2, 3, 2)]),
    "quantile": ("torch.quantile(x0, 0.3)", [_r(3, 4)]),
    "quantile_dim_keepdim": ("torch.quantile(x0, torch.tensor([0.1, 0.5, 1.0], "
                             "dtype=torch.float64), dim=1, keepdim=True)", [_r(3, 4, 2)]),
    "quantile_lower": ("x0.quantile(0.4, dim=0, interpolation='lower')", [_r(5, 2)]),
    "quantile_higher": ("x0.quantile(0.4, interpolation='higher')", [_r(5, 2)]),
    "quantile_nearest": ("x0.quantile(0.375, dim=-1, interpolation='nearest')", [_r(2, 5)]),
    "quantile_midpoint": ("x0.quantile(torch.tensor([0.2, 0.7], dtype=torch.float64), "
                          "interpolation='midpoint')", [_r(7)]),
    "quantile_0d": ("torch.quantile(x0, 0.5, dim=0, keepdim=True)", [np.array(1.5)]),
    "quantile_nan": ("torch.quantile(x0 / torch.tensor([[1.0], [0.0]], dtype=torch.float64) "
                     "* 0, 0.5, dim=1)", [_r(2, 3)]),
    "nanquantile": ("torch.nanquantile(x0.log(), 0.6, dim=1)", [_r(3, 5)]),
    "nanquantile_all_nan": ("torch.nanquantile(x0 * float('nan'), torch.tensor([0.5], "
                            "dtype=torch.float64))", [_r(4)]),
    "linear_cross_entropy": ("torch.nn.functional.linear_cross_entropy(x0, x1, "
                             "torch.tensor([0, 3, 1]))", [_r(3, 5), _r(4, 5)]),
    "linear_cross_entropy_kdim": ("torch.nn.functional.linear_cross_entropy(x0, x1, "
                                  "torch.tensor([[0, 1], [2, 2]]), linear_bias=x2, "
                                  "reduction='sum', label_smoothing=0.1)",
                                  [_r(2, 4), _r(3, 2, 4), _r(3, 2)]),
    "linear_cross_entropy_unbatched": ("torch.nn.functional.linear_cross_entropy(x0, x1, "
                                       "torch.tensor(2), reduction='none')", [_r(5), _r(4, 5)]),
    "lu_unpack_square": ("torch.lu_unpack(*torch.linalg.lu_factor(x0))", [_r(3, 3)]),
    "lu_unpack_wide": ("torch.lu_unpack(*torch.linalg.lu_factor(x0))", [_r(2, 3, 5)]),
    "lu_unpack_tall": ("torch.lu_unpack(*torch.linalg.lu_factor(x0))[1:]", [_r(5, 3)]),
    "lu_unpack_data_only": ("torch.lu_unpack(*torch.linalg.lu_factor(x0), "
                            "unpack_pivots=False)[1:]", [_r(4, 3)]),
    "softmax_backward_data": ("torch._softmax_backward_data(x0, x1.softmax(1), 1, "
                              "torch.float64)", [_r(3, 4), _r(3, 4)]),
    "gradient": ("torch.gradient(x0)", [_r(4, 5)]),
    "gradient_spacing_dim": ("torch.gradient(x0, spacing=2.5, dim=1, edge_order=2)",
                             [_r(3, 4)]),
    "gradient_spacings": ("torch.gradient(x0, spacing=[0.5, 2], edge_order=2)", [_r(3, 4)]),
    "gradient_coords": ("torch.gradient(x0, spacing=(torch.tensor([0.0, 1.0, 1.5, 3.5], "
                        "dtype=torch.float64),), dim=0)", [_r(4, 2)]),
    "gradient_coords_order2": ("torch.gradient(x0, spacing=(x1.cumsum(0) * 0 + "
                               "torch.tensor([0.0, 0.5, 2.0], dtype=torch.float64),), dim=[-1], "
                               "edge_order=2)", [_r(2, 3), _r(3)]),
    "as_strided": ("torch.as_strided(x0, (2, 2), (1, 2), 1)", [_r(3, 3)]),
    "as_strided_overlap": ("x0.as_strided((2, 1, 1, 2), (1, 7, 7, 1))", [_r(16)]),
    "as_strided_of_view": ("(x0 * 1)[1:].as_strided((2, 2), (1, 2))", [_r(3, 3)]),
    "as_strided_copy": ("torch.as_strided_copy(x0, (2, 2), (1, 2), 1)", [_r(3, 3)]),
    "as_strided_scatter": ("torch.as_strided_scatter(x0, x1, (2, 2), (1, 2), 1)",
                           [_r(3, 3), _r(2, 2)]),
    "as_strided_scatter_0d": ("torch.as_strided_scatter(x0, x1, (), (), storage_offset=0)",
                              [_r(1), np.array(0.5)]),
    "max_unpool2d": ("torch.nn.functional.max_unpool2d(*torch.nn.functional.max_pool2d(x0, 2, "
                     "return_indices=True), 2, output_size=(5, 5))", [_r(1, 2, 4, 5)]),
    "max_unpool2d_unbatched": ("torch.nn.functional.max_unpool2d(*torch.nn.functional."
                               "max_pool2d(x0, 3, 2, 1, return_indices=True), 3, 2, 1, (5, 4))",
                               [_r(2, 5, 4)]),
    "max_unpool1d": ("torch.nn.functional.max_unpool1d(*torch.nn.functional.max_pool1d(x0, 2, "
                     "return_indices=True), 2)", [_r(2, 3, 6)]),
    "max_unpool3d": ("torch.nn.functional.max_unpool3d(*torch.nn.functional.max_pool3d(x0, 2, "
                     "return_indices=True), 2)", [_r(1, 1, 4, 2, 4)]),
    "batch_norm_empty": ("torch.nn.functional.batch_norm(x0, None, None, training=True)",
                         [np.zeros((0, 3))]),
    "layer_norm_all_dims": ("torch.nn.functional.layer_norm(x0, (2, 3), x1, x1 * 2)",
                            [_r(2, 3), _r(2, 3)]),
    "adaptive_avg_pool2d_3d": ("torch.nn.functional.adaptive_avg_pool2d(x0, (2, 3))",
                               [_r(2, 5, 4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_pytorch(name):
    expr, arrays = CASES[name]
    t_in, t_outs = _run(torch, expr, arrays)
    g_in, g_outs = _run(gt, expr, arrays)
    assert len(g_outs) == len(t_outs)
    for o, t in zip(g_outs, t_outs, strict=True):
        assert str(o.dtype) == str(t.dtype)
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(o._data, t.detach().numpy(), rtol=1e-7, atol=1e-7)
        t_fn = type(t.grad_fn).__name__ if t.grad_fn is not None else None
        o_fn = type(o.grad_fn).__name__ if o.grad_fn is not None else None
        assert o_fn == t_fn
    first_t, first_g = t_outs[0], g_outs[0]
    if not first_t.requires_grad or first_t.numel() == 0:
        return
    cot = RNG.uniform(-1, 1, size=tuple(first_t.shape))
    t_grads = torch.autograd.grad(first_t, t_in, torch.tensor(cot), allow_unused=True)
    g_grads = gt.autograd.grad(first_g, g_in, gt.tensor(cot), allow_unused=True)
    for og, tg in zip(g_grads, t_grads, strict=True):
        if tg is None:
            assert og is None or not np.any(og._data)
            continue
        np.testing.assert_allclose(og._data, tg.numpy(), rtol=1e-7, atol=1e-7)


def test_index_reduce_second_order():
    # the backward is made of differentiable ops: gradgradcheck holds
    x = gt.tensor(_r(3, 2), requires_grad=True)
    s = gt.tensor(_r(4, 2), requires_grad=True)
    idx = gt.tensor(IDX)
    for reduce in ("prod", "mean", "amax"):
        assert gt.autograd.gradgradcheck(
            lambda a, b, r=reduce: a.index_reduce(0, idx, b, r), (x, s))


EXAMPLE_X = _r(2, 3)
EXAMPLE_S = _r(2, 3)

ERRORS = [
    "x.index_reduce(0, torch.tensor([0, 1]), s, 'sum')",
    "x.index_reduce(0, torch.tensor([0, 1, 2]), s, 'mean')",
    "x.index_reduce(0, torch.tensor([0.0, 1.0]), s, 'mean')",
    "x.index_reduce(0, torch.tensor([0, 5]), s, 'mean')",
    "x.index_reduce(0, torch.tensor([[0, 1]]), s, 'mean')",
    "x.index_reduce(0, torch.tensor([0, 1]), s.float(), 'mean')",
    "x.index_reduce(2, torch.tensor([0, 1]), s, 'mean')",
    "x.index_reduce(0, torch.tensor([0, 1]), s[:, :2], 'mean')",
    "x[0, 0].index_reduce(0, torch.tensor([0, 0]), s[0, :2], 'mean')",
    "torch.nn.functional.channel_shuffle(x, 2)",
    "torch.nn.functional.channel_shuffle(x.reshape(2, 3, 1), 2)",
    "torch.nn.functional.channel_shuffle(x.reshape(1, 2, 3), 0)",
    "torch.linalg.diagonal(x[0])",
    "torch.linalg.vander(x[0, 0])",
    "torch.linalg.vander(x[0], N=1)",
    "torch.linalg.vander(x[0] > 0)",
    "torch.cov(x.reshape(1, 2, 3))",
    "torch.cov(x, fweights=torch.tensor([1.0, 2.0, 3.0]))",
    "torch.cov(x, aweights=torch.tensor([1, 2, 3]))",
    "torch.cov(x, fweights=torch.tensor([1, 2]))",
    "torch.cov(x, fweights=torch.tensor([1, -2, 1]))",
    "torch.corrcoef(x.reshape(1, 2, 3))",
    "torch.nextafter(torch.tensor([1, 2]), torch.tensor([1, 2]))",
    "torch.nextafter(x, 2.0)",
    "torch.nn.functional.rms_norm(x, (2,))",
    "torch.norm(x.reshape(1, 2, 3), 'nuc')",
    "torch.norm(x, 'bad')",
    "torch.quantile(x, 1.5)",
    "torch.nn.functional.max_unpool2d(x.reshape(1, 1, 2, 3), torch.tensor([[[[0, 1, 2], "
    "[3, 4, 99]]]]), 2)",
    "torch.nn.functional.max_unpool2d(x.reshape(1, 1, 2, 3), torch.ones(1, 1, 2, 3), 2)",
    "torch.nn.functional.max_unpool2d(x.reshape(1, 1, 2, 3), torch.zeros(1, 1, 3, 2, "
    "dtype=torch.int64), 2)",
    "torch.nn.functional.max_unpool2d(x, torch.zeros(2, 3, dtype=torch.int64), 2)",
    "torch.nn.functional.max_unpool2d(x.reshape(1, 1, 2, 3), torch.zeros(1, 1, 2, 3, "
    "dtype=torch.int64), 2, output_size=(9, 9))",
    "torch.nn.functional.max_unpool2d(x.reshape(1, 1, 2, 3), torch.zeros(1, 1, 2, 3, "
    "dtype=torch.int64), 2, output_size=[4])",
    "torch.as_strided(x, (2, 2), (1, 2), 10)",
    "torch.as_strided(x, (2, 2), (1,))",
    "torch.as_strided(x, (2, -2), (1, 2))",
    "torch.as_strided(x, (2, 2), (1, -2))",
    "torch.as_strided(x, (2, 2), (1, 2), -1)",
    "torch.as_strided_scatter(x, s, (2, 2), (1, 2))",
    "torch.gradient(x, spacing=[1.0])",
    "torch.gradient(x, spacing=[1.0, 2.0], dim=0)",
    "torch.gradient(x, edge_order=3)",
    "torch.gradient(x, edge_order=2)",
    "torch.gradient(x, dim=[0, 0])",
    "torch.gradient(x, spacing=(torch.ones(3, 1),), dim=1)",
    "torch.lu_unpack(*torch.linalg.lu_factor(x @ x.T)[:1], torch.tensor([1, 2]))",
    "torch.nn.functional.linear_cross_entropy(x, s[:, :2], torch.tensor([0, 1]))",
    "torch.nn.functional.linear_cross_entropy(x.reshape(1, 1, 6), s, torch.tensor([0, 1]))",
    "torch.nanquantile(x, -0.5)",
    "torch.quantile(x, torch.tensor([0.2, 1.5], dtype=torch.float64))",
    "torch.quantile(x, 0.5, interpolation='bad')",
    "torch.quantile(x[:0], 0.5)",
    "torch.quantile(x, torch.tensor([[0.5]], dtype=torch.float64))",
    "torch.quantile(x.long(), 0.5)",
    "torch.quantile(x, torch.tensor([0.5]))",
    "torch.quantile(x, 0.5, dim=3)",
    "torch.nn.functional.rms_norm(x, (3,), torch.ones(2))",
    "torch.nn.functional.batch_norm(x[0], None, None, training=True)",
    "torch.nn.functional.batch_norm(x[0], None, None, training=False)",
    "torch.nn.functional.batch_norm(x[0], torch.ones(3), torch.ones(3), training=False)",
    "torch.nn.functional.batch_norm(x[:1], None, None, training=True)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_pytorch(expr):
    def outcome(module):
        env = {"x": module.tensor(EXAMPLE_X), "s": module.tensor(EXAMPLE_S), "torch": module}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                eval(expr, env)  # noqa: S307 - the fixed texts above
        except Exception as err:  # noqa: BLE001 - compared below
            return type(err).__name__, str(err)
        return None

    theirs = outcome(torch)
    assert theirs is not None, "PyTorch accepts this: not an error case"
    assert outcome(gt) == theirs


def test_index_reduce_warns_beta_as_pytorch():
    # (once per process, as PyTorch's TORCH_WARN_ONCE: every time under set_warn_always)
    gt.set_warn_always(True)
    try:
        with pytest.warns(UserWarning, match="index_reduce\\(\\) is in beta"):
            gt.tensor([1.0, 2.0]).index_reduce(0, gt.tensor([0]), gt.tensor([3.0]), "amax")
    finally:
        gt.set_warn_always(False)


def test_as_strided_is_a_view_of_the_storage():
    # a write through the strided view shows in the input, and bumps the shared version
    for module in (torch, gt):
        base = module.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]])
        view = base.as_strided((2, 2), (1, 2), 1)
        view.mul_(10)
        assert base.tolist() == [[0.0, 10.0, 20.0], [30.0, 40.0, 5.0], [6.0, 7.0, 8.0]]
        assert base._version == view._version == 1
        assert view._base is base


def test_results_are_sized_before_allocating():
    # stride 0 or a large output_size ask for big results from small inputs: refused
    # by --max-elements before anything is allocated
    from gradcli.engine import limits

    limits.MAX_ELEMENTS[0] = 10 ** 6
    try:
        x = gt.ones(4)
        for call in (lambda: x.as_strided((10 ** 5, 10 ** 5), (0, 0)),
                     lambda: gt.as_strided_copy(x, (10 ** 7,), (0,)),
                     lambda: gt.nn.functional.max_unpool1d(
                         gt.ones(1, 1, 2), gt.zeros(1, 1, 2, dtype=gt.int64), 1, 10 ** 7)):
            with pytest.raises(limits.AllocationLimitError, match="exceeds the limit"):
                call()
    finally:
        limits.MAX_ELEMENTS[0] = None
