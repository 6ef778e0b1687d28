"""The nn.functional long tail (engine/ops/functional_ext.py) against PyTorch 2.13 in
float64: values, grad_fn names and vector-Jacobian products; gradcheck / gradgradcheck on
gradcli alone; and PyTorch's errors for bad arguments."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from expr_compare import run_expr as _run

import gradcli.torch as gt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(99)


def _r(*shape, lo=None):
    x = RNG.standard_normal(shape)
    return np.abs(x) + lo if lo is not None else x


def _away(*shape, gap=0.1):
    """Values kept `gap` away from 0 and from +-0.5 / +-3 (the kinks tested below)."""
    x = RNG.uniform(-4, 4, size=shape)
    for k in (0.0, 0.5, -0.5, 3.0, -3.0, 0.4, -0.4):
        near = np.abs(x - k) < gap
        x[near] += 2 * gap
    return x


F = "torch.nn.functional"
CASES = {
    "mish": (f"{F}.mish(x0)", [_r(3, 4)]),
    "selu": (f"{F}.selu(x0)", [_away(3, 4)]),
    "selu_inplace": (f"{F}.selu(x0 * 1, inplace=True)", [_away(5)]),
    "torch_selu": ("torch.selu(x0)", [_away(5)]),
    "celu": (f"{F}.celu(x0, 1.5)", [_away(3, 4)]),
    "celu_inplace": (f"{F}.celu(x0 * 1, 0.7, inplace=True)", [_away(6)]),
    "rrelu_eval": (f"{F}.rrelu(x0)", [_away(3, 4)]),
    "rrelu_inplace": (f"{F}.rrelu(x0 * 1, 0.1, 0.2, inplace=True)", [_away(6)]),
    "torch_rrelu": ("torch.rrelu(x0, 0.2, 0.4)", [_away(6)]),
    "hardswish": (f"{F}.hardswish(x0)", [_away(4, 4)]),
    "hardswish_inplace": (f"{F}.hardswish(x0 * 1, inplace=True)", [_away(8)]),
    "hardsigmoid": (f"{F}.hardsigmoid(x0)", [_away(4, 4)]),
    "softsign": (f"{F}.softsign(x0)", [_r(3, 4)]),
    "tanhshrink": (f"{F}.tanhshrink(x0)", [_r(3, 4)]),
    "softshrink": (f"{F}.softshrink(x0)", [_away(4, 4)]),
    "softshrink_l": (f"{F}.softshrink(x0, 0.4)", [_away(4, 4)]),
    "hardshrink": (f"{F}.hardshrink(x0)", [_away(4, 4)]),
    "tensor_hardshrink": ("x0.hardshrink(0.4)", [_away(4, 4)]),
    "threshold": (f"{F}.threshold(x0, 0.5, -2.0)", [_away(4, 4)]),
    "threshold_inplace": (f"{F}.threshold(x0 * 1, 0.5, -2.0, inplace=True)", [_away(4, 4)]),
    "torch_threshold": ("torch.threshold(x0, 0.4, 3.0)", [_away(4, 4)]),
    "glu": (f"{F}.glu(x0)", [_r(3, 4)]),
    "glu_dim": (f"{F}.glu(x0, 0)", [_r(4, 3)]),
    "logsigmoid": (f"{F}.logsigmoid(x0)", [_r(3, 4)]),
    "prelu": (f"{F}.prelu(x0, x1)", [_away(2, 3, 4), _r(3)]),
    "prelu_scalar": (f"{F}.prelu(x0, x1)", [_away(2, 3), _r(1)]),
    "torch_prelu": ("torch.prelu(x0, x1)", [_away(2, 3, 2, 2), _r(3)]),
    "tensor_prelu": ("x0.prelu(x1)", [_away(5), _r(1)]),
    "softmin": (f"{F}.softmin(x0, 1)", [_r(3, 4)]),
    "softmin_dtype": (f"{F}.softmin(x0, dim=0, dtype=torch.float32)", [_r(3, 4)]),
    "normalize": (f"{F}.normalize(x0)", [_r(3, 4)]),
    "normalize_p1": (f"{F}.normalize(x0, p=1, dim=0)", [_r(3, 4)]),
    "group_norm": (f"{F}.group_norm(x0, 2)", [_r(2, 4, 3)]),
    "group_norm_affine": (f"{F}.group_norm(x0, 2, x1, x2, eps=1e-3)",
                          [_r(2, 4, 3, 2), _r(4), _r(4)]),
    "instance_norm": (f"{F}.instance_norm(x0)", [_r(2, 3, 4)]),
    "instance_norm_affine": (f"{F}.instance_norm(x0, weight=x1, bias=x2)",
                             [_r(2, 3, 2, 2), _r(3), _r(3)]),
    "local_response_norm": (f"{F}.local_response_norm(x0, 2)", [_r(2, 4, 3)]),
    "local_response_norm_3": (f"{F}.local_response_norm(x0, 3, alpha=0.5, beta=0.6, k=2.0)",
                              [_r(2, 5, 2, 2)]),
    "poisson_nll": (f"{F}.poisson_nll_loss(x0, x1)", [_r(3, 4), _r(3, 4, lo=0.1)]),
    "poisson_nll_nolog_full": (f"{F}.poisson_nll_loss(x0, x1, log_input=False, full=True, "
                               "reduction='sum')", [_r(3, 4, lo=0.1), _r(3, 4, lo=0.5) * 2]),
    "poisson_nll_none": (f"{F}.poisson_nll_loss(x0, x1, reduction='none')",
                         [_r(3, 4), _r(3, 4, lo=0.1)]),
    "gaussian_nll": (f"{F}.gaussian_nll_loss(x0, x1, x2)", [_r(3, 4), _r(3, 4), _r(3, 4, lo=0.1)]),
    "gaussian_nll_full": (f"{F}.gaussian_nll_loss(x0, x1, x2, full=True, reduction='sum')",
                          [_r(3, 4), _r(3, 4), _r(3, 1, lo=0.1)]),
    "gaussian_nll_none": (f"{F}.gaussian_nll_loss(x0, x1, x2, reduction='none')",
                          [_r(3, 4), _r(3, 4), _r(3, lo=0.1)]),
    "cosine_embedding": (f"{F}.cosine_embedding_loss(x0, x1, torch.tensor([1., -1., 1.], "
                         "dtype=torch.float64))", [_r(3, 4), _r(3, 4)]),
    "cosine_embedding_none": (f"{F}.cosine_embedding_loss(x0, x1, torch.tensor([1., -1., -1.], "
                              "dtype=torch.float64), margin=-0.5, reduction='none')",
                              [_r(3, 4), _r(3, 4)]),
    "margin_ranking": (f"{F}.margin_ranking_loss(x0, x1, torch.tensor([1., -1., 1.], "
                       "dtype=torch.float64), margin=0.1)", [_r(3), _r(3)]),
    "margin_ranking_none": (f"{F}.margin_ranking_loss(x0, x1, torch.tensor([1., -1., 1.], "
                            "dtype=torch.float64), reduction='none')", [_r(3), _r(3)]),
    "hinge_embedding": (f"{F}.hinge_embedding_loss(x0, torch.tensor([[1., -1., 1., -1.]] * 3, "
                        "dtype=torch.float64))", [_away(3, 4) / 4]),
    "hinge_embedding_none": (f"{F}.hinge_embedding_loss(x0, torch.tensor([1., -1., -1.], "
                             "dtype=torch.float64), margin=0.5, reduction='none')", [_away(3) / 4]),
    "soft_margin": (f"{F}.soft_margin_loss(x0, torch.tensor([[1., -1.], [-1., 1.]], "
                    "dtype=torch.float64))", [_r(2, 2)]),
    "soft_margin_none": (f"{F}.soft_margin_loss(x0, torch.tensor([[1., -1.], [-1., 1.]], "
                         "dtype=torch.float64), reduction='none')", [_r(2, 2)]),
    "soft_margin_sum": (f"{F}.soft_margin_loss(x0, x1.detach().sign(), reduction='sum')",
                        [_r(2, 2), _r(2, 2)]),
    "multilabel_soft_margin": (f"{F}.multilabel_soft_margin_loss(x0, torch.tensor([[1., 0., 1.], "
                               "[0., 0., 1.]], dtype=torch.float64))", [_r(2, 3)]),
    "multilabel_soft_margin_w": (f"{F}.multilabel_soft_margin_loss(x0, torch.tensor([[1., 0., 1.], "
                                 "[0., 0., 1.]], dtype=torch.float64), weight=x1, reduction='none')",
                                 [_r(2, 3), _r(3)]),
    "multilabel_margin": (f"{F}.multilabel_margin_loss(x0, torch.tensor([[3, 0, -1, 1], "
                          "[1, 2, 3, 0]]))", [_r(2, 4)]),
    "multilabel_margin_none": (f"{F}.multilabel_margin_loss(x0, torch.tensor([[3, 0, -1, 1], "
                               "[0, -1, 2, 1]]), reduction='none')", [_r(2, 4)]),
    "multilabel_margin_1d": (f"{F}.multilabel_margin_loss(x0, torch.tensor([2, -1, 0]))",
                             [_r(3)]),
    "multi_margin": (f"{F}.multi_margin_loss(x0, torch.tensor([1, 0, 3]))", [_r(3, 4)]),
    "multi_margin_p2_w": (f"{F}.multi_margin_loss(x0, torch.tensor([1, 0, 3]), p=2, margin=0.7, "
                          "weight=torch.tensor([1., 2., 0.5, 3.], dtype=torch.float64), "
                          "reduction='sum')", [_r(3, 4)]),
    "multi_margin_none": (f"{F}.multi_margin_loss(x0, torch.tensor([2, 2, 0]), reduction='none')",
                          [_r(3, 4)]),
    "triplet_margin": (f"{F}.triplet_margin_loss(x0, x1, x2)", [_r(3, 4), _r(3, 4), _r(3, 4)]),
    "triplet_margin_swap": (f"{F}.triplet_margin_loss(x0, x1, x2, margin=2.0, p=1, swap=True, "
                            "reduction='none')", [_r(3, 4), _r(3, 4), _r(3, 4)]),
    "triplet_distance": (f"{F}.triplet_margin_with_distance_loss(x0, x1, x2, margin=3.0)",
                         [_r(3, 4), _r(3, 4), _r(3, 4)]),
    "triplet_distance_fn": (f"{F}.triplet_margin_with_distance_loss(x0, x1, x2, "
                            f"distance_function=lambda a, b: 1 - {F}.cosine_similarity(a, b), "
                            "swap=True, reduction='sum')", [_r(3, 4), _r(3, 4), _r(3, 4)]),
    "cosine_similarity": (f"{F}.cosine_similarity(x0, x1)", [_r(3, 4), _r(3, 4)]),
    "cosine_similarity_dim": ("torch.cosine_similarity(x0, x1, dim=0)", [_r(3, 4), _r(1, 4)]),
    "pairwise_distance": (f"{F}.pairwise_distance(x0, x1)", [_r(3, 4), _r(3, 4)]),
    "pairwise_distance_p1": ("torch.pairwise_distance(x0, x1, p=1.0, keepdim=True)",
                             [_r(3, 4), _r(4)]),
    "pairwise_distance_p3": (f"{F}.pairwise_distance(x0, x1, p=3)", [_r(5), _r(5)]),
    "pdist": (f"{F}.pdist(x0)", [_r(4, 3)]),
    "pdist_p1": ("torch.pdist(x0, p=1)", [_r(4, 3)]),
    "pdist_p3": ("torch.pdist(x0, p=3)", [_r(3, 2)]),
    "pdist_inf": ("torch.pdist(x0, p=float('inf'))", [_r(3, 2)]),
    "cdist": ("torch.cdist(x0, x1)", [_r(3, 4), _r(5, 4)]),
    "cdist_p1_batched": ("torch.cdist(x0, x1, p=1)", [_r(2, 3, 4), _r(2, 2, 4)]),
    "cdist_p0.5": ("torch.cdist(x0, x1, p=0.5)", [_r(3, 2), _r(2, 2)]),
    "cdist_mm": ("torch.cdist(x0, x1)", [_r(30, 3), _r(4, 3)]),
    "cdist_mm_batched": ("torch.cdist(x0, x1, compute_mode='use_mm_for_euclid_dist')",
                         [_r(2, 3, 4), _r(1, 2, 4)]),
    "cdist_no_mm": ("torch.cdist(x0, x1, compute_mode='donot_use_mm_for_euclid_dist')",
                    [_r(30, 3), _r(4, 3)]),
    "one_hot": (f"{F}.one_hot(torch.tensor([0, 2, 1]))", []),
    "one_hot_n": (f"{F}.one_hot(torch.tensor([[0], [2]]), 4)", []),
    "pixel_shuffle": (f"{F}.pixel_shuffle(x0, 2)", [_r(2, 8, 2, 3)]),
    "pixel_unshuffle": ("torch.pixel_unshuffle(x0, 2)", [_r(1, 2, 4, 6)]),
    "pad_constant": (f"{F}.pad(x0, (1, 2))", [_r(3, 4)]),
    "pad_constant_value": (f"{F}.pad(x0, (1, 0, 0, 2), value=1.5)", [_r(2, 3, 4)]),
    "pad_constant_negative": (f"{F}.pad(x0, (-1, 2, 1, -1))", [_r(3, 4)]),
    "pad_reflect1": (f"{F}.pad(x0, (2, 1), mode='reflect')", [_r(2, 4)]),
    "pad_reflect2": (f"{F}.pad(x0, (1, 2, 2, 1), mode='reflect')", [_r(1, 2, 3, 4)]),
    "pad_reflect3": (f"{F}.pad(x0, (1, 1, 1, 0, 0, 1), mode='reflect')", [_r(1, 2, 3, 3, 3)]),
    "pad_replicate1": (f"{F}.pad(x0, (3, 1), mode='replicate')", [_r(1, 2, 3)]),
    "pad_replicate2": (f"{F}.pad(x0, (1, 2, 3, 0), mode='replicate')", [_r(2, 3, 3)]),
    "pad_replicate3": (f"{F}.pad(x0, (1, 0, 0, 1, 2, 1), mode='replicate')", [_r(1, 1, 2, 2, 2)]),
    "pad_circular": (f"{F}.pad(x0, (1, 2, 2, 1), mode='circular')", [_r(1, 2, 3, 4)]),
    "pad_circular1": (f"{F}.pad(x0, (2, 1), mode='circular')", [_r(2, 3, 4)]),
    "sdpa": (f"{F}.scaled_dot_product_attention(x0, x1, x2)", [_r(2, 2, 3, 4), _r(2, 2, 5, 4),
                                                              _r(2, 2, 5, 4)]),
    "sdpa_causal_scale": (f"{F}.scaled_dot_product_attention(x0, x1, x2, is_causal=True, "
                          "scale=0.3)", [_r(1, 2, 4, 3), _r(1, 2, 4, 3), _r(1, 2, 4, 3)]),
    "sdpa_float_mask": (f"{F}.scaled_dot_product_attention(x0, x1, x2, attn_mask=torch.tensor("
                        "[[0., -1., 2.], [1., 0., 0.5]], dtype=torch.float64))",
                        [_r(1, 1, 2, 3), _r(1, 1, 3, 3), _r(1, 1, 3, 3)]),
    "sdpa_bool_mask": (f"{F}.scaled_dot_product_attention(x0, x1, x2, attn_mask=torch.tensor("
                       "[[True, False, True], [False, True, True]]))",
                       [_r(1, 1, 2, 3), _r(1, 1, 3, 3), _r(1, 1, 3, 3)]),
    "sdpa_gqa": (f"{F}.scaled_dot_product_attention(x0, x1, x2, enable_gqa=True)",
                 [_r(1, 4, 2, 3), _r(1, 2, 3, 3), _r(1, 2, 3, 3)]),
    "sdpa_math_3d": (f"{F}.scaled_dot_product_attention(x0, x1, x2)",
                     [_r(2, 3, 4), _r(2, 5, 4), _r(2, 5, 2)]),
    "sdpa_math_head_dims": (f"{F}.scaled_dot_product_attention(x0, x1, x2, is_causal=True)",
                            [_r(1, 2, 3, 4), _r(1, 2, 3, 4), _r(1, 2, 3, 6)]),
    "embedding_bag_mean": (f"{F}.embedding_bag(torch.tensor([0, 2, 1, 3, 4, 1]), x0, "
                           "torch.tensor([0, 2, 5]))", [_r(5, 3)]),
    "embedding_bag_sum_2d": (f"{F}.embedding_bag(torch.tensor([[0, 2], [1, 1]]), x0, "
                             "mode='sum')", [_r(5, 3)]),
    "embedding_bag_max": (f"{F}.embedding_bag(torch.tensor([0, 2, 1, 3, 4]), x0, "
                          "torch.tensor([0, 2]), mode='max')", [_r(5, 3)]),
    "embedding_bag_max_empty": (f"{F}.embedding_bag(torch.tensor([0, 2, 1, 3]), x0, "
                                "torch.tensor([0, 0, 3]), mode='max')", [_r(5, 3)]),
    "embedding_bag_weights": (f"{F}.embedding_bag(torch.tensor([0, 2, 1, 3, 4]), x0, "
                              "torch.tensor([0, 2]), mode='sum', per_sample_weights=x1)",
                              [_r(5, 3), _r(5)]),
    "embedding_bag_padding_last": (f"{F}.embedding_bag(torch.tensor([0, 2, 1, 2, 4]), x0, "
                                   "torch.tensor([0, 2, 5]), padding_idx=2, "
                                   "include_last_offset=True)", [_r(5, 3)]),
    "affine_grid": (f"{F}.affine_grid(x0, (2, 3, 4, 5), align_corners=False)", [_r(2, 2, 3)]),
    "affine_grid_corners": (f"{F}.affine_grid(x0, (1, 1, 3, 2), align_corners=True)",
                            [_r(1, 2, 3)]),
    "affine_grid_3d": (f"{F}.affine_grid(x0, (1, 2, 2, 3, 4), align_corners=False)",
                       [_r(1, 3, 4)]),
    "ctc_loss": (f"{F}.ctc_loss(x0.log_softmax(2), torch.tensor([[1, 2], [3, 3]]), "
                 "torch.tensor([6, 5]), torch.tensor([2, 1]))", [_r(6, 2, 4)]),
    "ctc_loss_sum_blank": (f"{F}.ctc_loss(x0.log_softmax(2), torch.tensor([[1, 0, 2], [0, 0, 1]]),"
                           " torch.tensor([5, 6]), torch.tensor([3, 2]), blank=3, "
                           "reduction='sum')", [_r(6, 2, 4)]),
    "ctc_loss_none_flat": (f"{F}.ctc_loss(x0.log_softmax(2), torch.tensor([1, 2, 2, 1]), "
                           "torch.tensor([6, 6]), torch.tensor([3, 1]), reduction='none')",
                           [_r(6, 2, 3)]),
    "ctc_loss_unbatched": (f"{F}.ctc_loss(x0.log_softmax(1), torch.tensor([1, 2]), "
                           "torch.tensor(5), torch.tensor(2))", [_r(5, 3)]),
    "ctc_loss_zero_infinity": (f"{F}.ctc_loss(x0.log_softmax(2), torch.tensor([[1, 1, 1], "
                               "[1, 2, 0]]), torch.tensor([3, 4]), torch.tensor([3, 2]), "
                               "zero_infinity=True, reduction='none')", [_r(4, 2, 3)]),
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
        assert repr(g) == repr(t)
    if not any(o.requires_grad for o in t_out):
        return
    seeds = [np.random.default_rng(3).standard_normal(tuple(t.shape)) for t in t_out]
    t_loss = sum((o * torch.tensor(s)).sum() for o, s in zip(t_out, seeds, strict=True))
    g_loss = sum((o * gt.tensor(s)).sum() for o, s in zip(g_out, seeds, strict=True))
    t_loss.backward()
    g_loss.backward()
    for t, g in zip(t_in, g_in, strict=True):
        if t.grad is None:
            assert g.grad is None or not np.any(g.grad._data), name
            continue
        assert g.grad is not None, name
        np.testing.assert_allclose(g.grad._data, t.grad.numpy(), rtol=1e-6, atol=1e-7,
                                   err_msg=name)


NOT_GRADCHECKED = {"one_hot", "one_hot_n", "softmin_dtype"}
FIRST_ORDER_ONLY = {"ctc_loss", "ctc_loss_sum_blank", "ctc_loss_none_flat", "ctc_loss_unbatched",
                    "ctc_loss_zero_infinity",
                    "hardsigmoid",  # (no derivative of hardsigmoid_backward, as in PyTorch)
                    # (nor of _pdist_backward / _cdist_backward: the mm forms are composites)
                    "pdist", "pdist_p1", "pdist_p3", "pdist_inf", "cdist", "cdist_p1_batched",
                    "cdist_p0.5", "cdist_no_mm",
                    # (nor of multi_margin_loss_backward)
                    "multi_margin", "multi_margin_p2_w", "multi_margin_none"}


@pytest.mark.parametrize("name", sorted(set(CASES) - NOT_GRADCHECKED))
def test_gradcheck_and_gradgradcheck(name):
    expr, arrays = CASES[name]
    inputs = tuple(gt.tensor(a, dtype=gt.float64, requires_grad=True) for a in arrays)

    def fn(*xs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return eval(expr, {"torch": gt}, {f"x{i}": x for i, x in enumerate(xs)})  # noqa: S307

    assert gt.autograd.gradcheck(fn, inputs)
    if "inplace" not in name and name not in FIRST_ORDER_ONLY:
        assert gt.autograd.gradgradcheck(fn, inputs)


def test_ctc_loss_has_no_second_derivative_as_in_pytorch():
    errors = []
    for module in (torch, gt):
        lp = module.tensor(np.random.default_rng(0).standard_normal((4, 1, 3)), requires_grad=True)
        loss = module.nn.functional.ctc_loss(lp.log_softmax(2), module.tensor([[1, 2]]),
                                             module.tensor([4]), module.tensor([2]))
        g, = module.autograd.grad(loss, lp, create_graph=True)
        with pytest.raises(RuntimeError) as err:
            g.sum().backward()
        errors.append(str(err.value))
    assert errors[0] == errors[1]


ERRORS = {
    "glu_odd": f"{F}.glu(torch.ones(3, 3))",
    "glu_scalar": f"{F}.glu(torch.tensor(1.))",
    "softshrink_negative": f"{F}.softshrink(torch.ones(3), -1.)",
    "prelu_mismatch": f"{F}.prelu(torch.ones(2, 4), torch.ones(3))",
    "prelu_2d_weight": f"{F}.prelu(torch.ones(2, 4), torch.ones(2, 2))",
    "group_norm_groups": f"{F}.group_norm(torch.ones(2, 3, 4), 2)",
    "group_norm_weight": f"{F}.group_norm(torch.ones(2, 4, 4), 2, torch.ones(3))",
    "pdist_1d": "torch.pdist(torch.ones(3))",
    "pdist_negative_p": "torch.pdist(torch.ones(3, 2), p=-1)",
    "cdist_cols": "torch.cdist(torch.ones(3, 2), torch.ones(3, 3))",
    "cdist_1d": "torch.cdist(torch.ones(3), torch.ones(3, 3))",
    "one_hot_float": f"{F}.one_hot(torch.ones(3))",
    "one_hot_small": f"{F}.one_hot(torch.tensor([0, 3]), 2)",
    "one_hot_negative": f"{F}.one_hot(torch.tensor([0, -1]))",
    "pixel_shuffle_channels": f"{F}.pixel_shuffle(torch.ones(1, 3, 2, 2), 2)",
    "pixel_shuffle_2d": f"{F}.pixel_shuffle(torch.ones(4, 2), 2)",
    "pixel_unshuffle_height": f"{F}.pixel_unshuffle(torch.ones(1, 1, 3, 4), 2)",
    "pad_odd": f"{F}.pad(torch.ones(3), (1,))",
    "pad_too_long": f"{F}.pad(torch.ones(3), (1, 1, 1, 1))",
    "pad_reflect_big": f"{F}.pad(torch.ones(1, 2, 3), (3, 0), mode='reflect')",
    "pad_negative_size": f"{F}.pad(torch.ones(3), (-2, -2))",
    "pad_mode": f"{F}.pad(torch.ones(1, 2, 3), (1, 1), mode='foo')",
    "multi_margin_p": f"{F}.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 1]), p=3)",
    "multi_margin_target": f"{F}.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 1, 2]))",
    "reduction": f"{F}.poisson_nll_loss(torch.ones(3), torch.ones(3), reduction='avg')",
    "gaussian_var_size": f"{F}.gaussian_nll_loss(torch.ones(3, 4), torch.ones(3, 4), torch.ones(2))",
    "gaussian_var_negative": f"{F}.gaussian_nll_loss(torch.ones(3), torch.ones(3), -torch.ones(3))",
    "triplet_dims": f"{F}.triplet_margin_loss(torch.ones(3, 2), torch.ones(3, 2), torch.ones(2))",
    "triplet_distance_margin": f"{F}.triplet_margin_with_distance_loss(torch.ones(3, 2), "
                               "torch.ones(3, 2), torch.ones(3, 2), margin=0)",
    "selu_long": f"{F}.selu(torch.tensor([1, 2]))",
    "softshrink_long": f"{F}.softshrink(torch.tensor([1, 2]))",
    "group_norm_long": f"{F}.group_norm(torch.ones(1, 2, 2, dtype=torch.long), 1)",
    "pad_reflect_1d": f"{F}.pad(torch.ones(4), (1, 1), mode='reflect')",
    "rrelu_long": f"{F}.rrelu(torch.tensor([1, 2]))",
    "cosine_embedding_dims": f"{F}.cosine_embedding_loss(torch.ones(3, 2), torch.ones(3), "
                             "torch.ones(3))",
}


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


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("form", ["F.rrelu", "torch.rrelu", "F.rrelu_"])
def test_rrelu_training_draws_pytorchs_slopes(dtype, form):
    # one draw per element <= 0 (in a contiguous copy's order), PyTorch's bits after the
    # same seed, the gradient through the drawn slopes, and the generator left where
    # PyTorch's is (the next rand agrees)
    data = np.random.default_rng(5).normal(size=(4, 5)).T  # a transposed input
    data[0, 0] = 0.0
    results = []
    for mod in (torch, gt):
        mod.manual_seed(11)
        x = mod.tensor(data, dtype=getattr(mod, dtype), requires_grad=True)
        y = x * 1
        if form == "F.rrelu":
            out = mod.nn.functional.rrelu(y, 0.1, 0.6, training=True)
        elif form == "torch.rrelu":
            out = mod.rrelu(y, 0.1, 0.6, training=True)
        else:
            out = mod.nn.functional.rrelu_(y, 0.1, 0.6, training=True)
        out.backward(mod.arange(20.0, dtype=out.dtype).reshape(5, 4))
        results.append((out.detach().numpy() if mod is torch else out._data,
                        type(out.grad_fn).__name__, x.grad.numpy() if mod is torch
                        else x.grad._data, mod.rand(3).tolist()))
    (t_out, t_fn, t_grad, t_next), (g_out, g_fn, g_grad, g_next) = results
    np.testing.assert_array_equal(g_out, t_out)
    assert g_fn == t_fn
    np.testing.assert_array_equal(g_grad, t_grad)
    assert g_next == t_next


def test_sdpa_dropout_draws_pytorchs_mask():
    data = np.random.default_rng(6).normal(size=(3, 2, 4, 5))
    results = []
    for mod in (torch, gt):
        mod.manual_seed(4)
        q = mod.tensor(data, requires_grad=True)
        out = mod.nn.functional.scaled_dot_product_attention(q, q * 0.5, q.cos(),
                                                              dropout_p=0.3)
        out.sum().backward()
        results.append((out.detach().numpy() if mod is torch else out._data,
                        type(out.grad_fn).__name__,
                        q.grad.numpy() if mod is torch else q.grad._data))
    (t_out, t_fn, t_grad), (g_out, g_fn, g_grad) = results
    np.testing.assert_allclose(g_out, t_out, rtol=1e-7, atol=1e-7)
    assert g_fn == t_fn == "UnsafeViewBackward0"  # the math path: no fused kernel with dropout
    np.testing.assert_allclose(g_grad, t_grad, rtol=1e-7, atol=1e-7)
