"""The tangent's own graph under forward AD, compared with PyTorch 2.13 op by op.

PyTorch computes an output's tangent with its forward-derivative formula
(derivatives.yaml `result:`), and when that formula reads a primal that requires grad,
or a tangent that does, the tangent gets a graph whose last node is the formula's last
op. So the printed `grad_fn` of a tangent shows which formula ran: this test runs every
op of the op table inside a dual level in both situations (the primals require grad;
the tangents do) and compares the name of each output tangent's grad_fn (or its absence)
with PyTorch's. The values are test_forward_ad_ops.py's business."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradcli.torch as gt
from gradcli.engine.forward_ad import tangent_of
from gradcli.engine.ops.registry import OPS

torch = pytest.importorskip("torch")

from tests.test_forward_ad_ops import SHAPES_BINARY, SHAPES_UNARY, _call, _leaves, _uses_b, _values  # noqa: E402 - after the importorskip

CALLED = sorted(name for name, op in OPS.items() if op.torch_call)
MODES = ("primal_requires_grad", "tangent_requires_grad")

# ops whose tangent's graph still ends in another node than PyTorch's, with the reason;
# (op, mode) -> reason. Strict: an entry that starts matching fails the run.
_DIFFERENT: dict[tuple[str, str], str] = {
    ("acos", "primal_requires_grad"): "ends in DivBackward0, PyTorch's in MulBackward0",
    ("acos", "tangent_requires_grad"): "ends in DivBackward0, PyTorch's in MulBackward0",
    ("acosh", "primal_requires_grad"): "ends in DivBackward0, PyTorch's in MulBackward0",
    ("acosh", "tangent_requires_grad"): "ends in DivBackward0, PyTorch's in MulBackward0",
    ("adaptive_max_pool2d", "primal_requires_grad"): "ends in LinearMapBackward0, PyTorch's in ViewBackward0",
    ("adaptive_max_pool2d", "tangent_requires_grad"): "ends in LinearMapBackward0, PyTorch's in ViewBackward0",
    ("adaptive_max_pool3d", "primal_requires_grad"): "ends in LinearMapBackward0, PyTorch's in ViewBackward0",
    ("adaptive_max_pool3d", "tangent_requires_grad"): "ends in LinearMapBackward0, PyTorch's in ViewBackward0",
    ("as_strided_", "primal_requires_grad"): "ends in AsStridedBackward0, PyTorch's in AsStridedBackward1",
    ("as_strided_", "tangent_requires_grad"): "ends in AsStridedBackward0, PyTorch's in AsStridedBackward1",
    ("asin", "primal_requires_grad"): "ends in DivBackward0, PyTorch's in MulBackward0",
    ("asin", "tangent_requires_grad"): "ends in DivBackward0, PyTorch's in MulBackward0",
    ("asinh", "primal_requires_grad"): "ends in DivBackward0, PyTorch's in MulBackward0",
    ("asinh", "tangent_requires_grad"): "ends in DivBackward0, PyTorch's in MulBackward0",
    ("backward_hook_function", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in AddBackward0",
    ("binary_cross_entropy", "primal_requires_grad"): "ends in AddBackward0, PyTorch's in CopyBackwards",
    ("binary_cross_entropy", "tangent_requires_grad"): "ends in AddBackward0, PyTorch's in CopyBackwards",
    ("binary_cross_entropy_with_logits", "primal_requires_grad"): "ends in AddBackward0, PyTorch's in MeanBackward0",
    ("binary_cross_entropy_with_logits", "tangent_requires_grad"): "ends in AddBackward0, PyTorch's in MeanBackward0",
    ("celu", "primal_requires_grad"): "ends in MulBackward0, PyTorch's in EluBackwardBackward0",
    ("celu", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in EluBackwardBackward0",
    ("cholesky_inverse", "primal_requires_grad"): "ends in AddBackward0, PyTorch's in CopyBackwards",
    ("cholesky_inverse", "tangent_requires_grad"): "ends in AddBackward0, PyTorch's in CopyBackwards",
    ("convolution", "tangent_requires_grad"): "ends in ConvolutionBackward0, PyTorch's in AddBackward0",
    ("convolution_ext", "primal_requires_grad"): "ends in ViewBackward0, PyTorch's in AddBackward0",
    ("convolution_ext", "tangent_requires_grad"): "ends in ViewBackward0, PyTorch's in AddBackward0",
    ("cumprod", "primal_requires_grad"): "ends in MulBackward0, PyTorch's in WhereBackward0",
    ("cumprod", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in WhereBackward0",
    ("deg2rad", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in MulBackward1",
    ("dist", "primal_requires_grad"): "ends in SumBackward0, PyTorch's in MaskedFillBackward0",
    ("dist", "tangent_requires_grad"): "ends in SumBackward0, PyTorch's in MaskedFillBackward0",
    ("exp2", "primal_requires_grad"): "ends in MulBackward0, PyTorch's in MulBackward1",
    ("exp2", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in MulBackward1",
    ("fill", "tangent_requires_grad"): "ends in CopyBackwards, PyTorch's in FillBackward2",
    ("fill_scalar", "tangent_requires_grad"): "ends in None, PyTorch's in FillBackward0",
    ("fill_tensor", "tangent_requires_grad"): "ends in CopyBackwards, PyTorch's in FillBackward3",
    ("glu", "primal_requires_grad"): "ends in AddBackward0, PyTorch's in NotImplemented",
    ("glu", "tangent_requires_grad"): "ends in AddBackward0, PyTorch's in NotImplemented",
    ("hardshrink", "primal_requires_grad"): "ends in None, PyTorch's in HardshrinkBackwardBackward0",
    ("hardshrink", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in HardshrinkBackwardBackward0",
    ("hardsigmoid", "primal_requires_grad"): "ends in MulBackward0, PyTorch's in NotImplemented",
    ("hardsigmoid", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in NotImplemented",
    ("hardswish", "primal_requires_grad"): "ends in MulBackward0, PyTorch's in HardswishBackwardBackward0",
    ("hardswish", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in HardswishBackwardBackward0",
    ("hardtanh_backward", "primal_requires_grad"): "ends in HardtanhBackwardBackward0, PyTorch's in WhereBackward0",
    ("huber_loss", "primal_requires_grad"): "ends in AddBackward0, PyTorch's in MeanBackward0",
    ("huber_loss", "tangent_requires_grad"): "ends in AddBackward0, PyTorch's in MeanBackward0",
    ("index_put", "primal_requires_grad"): "ends in CopyBackwards, PyTorch's in IndexPutBackward0",
    ("index_put", "tangent_requires_grad"): "ends in CopyBackwards, PyTorch's in IndexPutBackward0",
    ("ldexp", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in AddBackward0",
    ("linalg_cholesky_ex", "primal_requires_grad"): "ends in TBackward0, PyTorch's in CopyBackwards",
    ("linalg_cholesky_ex", "tangent_requires_grad"): "ends in TBackward0, PyTorch's in CopyBackwards",
    ("linalg_eigh", "primal_requires_grad"): "ends in SqueezeBackward1, PyTorch's in CopyBackwards",
    ("linalg_eigh", "tangent_requires_grad"): "ends in SqueezeBackward1, PyTorch's in CopyBackwards",
    ("linalg_householder_product", "primal_requires_grad"): "ends in TBackward0, PyTorch's in AddBackward0",
    ("linalg_householder_product", "tangent_requires_grad"): "ends in TBackward0, PyTorch's in AddBackward0",
    ("linalg_inv_ex", "primal_requires_grad"): "ends in TBackward0, PyTorch's in CopyBackwards",
    ("linalg_inv_ex", "tangent_requires_grad"): "ends in TBackward0, PyTorch's in CopyBackwards",
    ("linalg_lu_factor_ex", "primal_requires_grad"): "ends in AddBackward0, PyTorch's in CopyBackwards",
    ("linalg_lu_factor_ex", "tangent_requires_grad"): "ends in AddBackward0, PyTorch's in CopyBackwards",
    ("linalg_matrix_exp", "primal_requires_grad"): "ends in SliceBackward0, PyTorch's in CopyBackwards",
    ("linalg_matrix_exp", "tangent_requires_grad"): "ends in SliceBackward0, PyTorch's in CopyBackwards",
    ("linalg_pinv", "primal_requires_grad"): "ends in TransposeBackward0, PyTorch's in AddBackward0",
    ("linalg_pinv", "tangent_requires_grad"): "ends in TransposeBackward0, PyTorch's in AddBackward0",
    ("linalg_qr", "primal_requires_grad"): "ends in MmBackward0, PyTorch's in CopyBackwards",
    ("linalg_qr", "tangent_requires_grad"): "ends in MmBackward0, PyTorch's in CopyBackwards",
    ("linalg_slogdet", "primal_requires_grad"): "ends in SqueezeBackward1, PyTorch's in SumBackward1",
    ("linalg_slogdet", "tangent_requires_grad"): "ends in SqueezeBackward1, PyTorch's in SumBackward1",
    ("linalg_solve", "primal_requires_grad"): "ends in LinalgSolveExBackward0, PyTorch's in SqueezeBackward1",
    ("linalg_solve", "tangent_requires_grad"): "ends in LinalgSolveExBackward0, PyTorch's in SqueezeBackward1",
    ("linalg_svd", "primal_requires_grad"): "ends in SqueezeBackward1, PyTorch's in CopyBackwards",
    ("linalg_svd", "tangent_requires_grad"): "ends in SqueezeBackward1, PyTorch's in CopyBackwards",
    ("logcumsumexp", "primal_requires_grad"): "ends in MulBackward0, PyTorch's in DivBackward0",
    ("logcumsumexp", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in DivBackward0",
    ("logit", "primal_requires_grad"): "ends in MaskedFillBackward0, PyTorch's in WhereBackward0",
    ("logit", "tangent_requires_grad"): "ends in MaskedFillBackward0, PyTorch's in WhereBackward0",
    ("max_pool3d_with_indices", "primal_requires_grad"): "ends in LinearMapBackward0, PyTorch's in ViewBackward0",
    ("max_pool3d_with_indices", "tangent_requires_grad"): "ends in LinearMapBackward0, PyTorch's in ViewBackward0",
    ("mse_loss", "primal_requires_grad"): "ends in MeanBackward0, PyTorch's in CopyBackwards",
    ("mse_loss", "tangent_requires_grad"): "ends in MeanBackward0, PyTorch's in CopyBackwards",
    ("nextafter", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in WhereBackward0",
    ("norm_dim", "primal_requires_grad"): "ends in SqueezeBackward1, PyTorch's in MaskedFillBackward0",
    ("norm_dim", "tangent_requires_grad"): "ends in SqueezeBackward1, PyTorch's in MaskedFillBackward0",
    ("prelu", "primal_requires_grad"): "ends in AddBackward0, PyTorch's in WhereBackward0",
    ("prelu", "tangent_requires_grad"): "ends in AddBackward0, PyTorch's in WhereBackward0",
    ("prod_dim", "primal_requires_grad"): "ends in SqueezeBackward1, PyTorch's in SumBackward1",
    ("prod_dim", "tangent_requires_grad"): "ends in SqueezeBackward1, PyTorch's in SumBackward1",
    ("quantile_out", "primal_requires_grad"): "ends in SqueezeBackward1, PyTorch's in SqueezeBackward4",
    ("quantile_out", "tangent_requires_grad"): "ends in SqueezeBackward1, PyTorch's in SqueezeBackward4",
    ("rad2deg", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in MulBackward1",
    ("renorm", "primal_requires_grad"): "ends in AddBackward0, PyTorch's in WhereBackward0",
    ("renorm", "tangent_requires_grad"): "ends in AddBackward0, PyTorch's in WhereBackward0",
    ("rrelu", "primal_requires_grad"): "ends in None, PyTorch's in RreluWithNoiseBackwardBackward0",
    ("rrelu", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in RreluWithNoiseBackwardBackward0",
    ("rsub_alpha", "tangent_requires_grad"): "ends in NegBackward0, PyTorch's in MulBackward1",
    ("scatter_reduce", "primal_requires_grad"): "ends in AddBackward0, PyTorch's in ScatterReduceBackward0",
    ("scatter_reduce", "tangent_requires_grad"): "ends in AddBackward0, PyTorch's in ScatterReduceBackward0",
    ("selu", "primal_requires_grad"): "ends in MulBackward0, PyTorch's in EluBackwardBackward0",
    ("selu", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in EluBackwardBackward0",
    ("sinc", "primal_requires_grad"): "ends in MulBackward0, PyTorch's in WhereBackward0",
    ("sinc", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in WhereBackward0",
    ("smooth_l1_loss", "primal_requires_grad"): "ends in AddBackward0, PyTorch's in CopyBackwards",
    ("smooth_l1_loss", "tangent_requires_grad"): "ends in AddBackward0, PyTorch's in CopyBackwards",
    ("soft_margin_loss", "primal_requires_grad"): "ends in SumBackward0, PyTorch's in CopyBackwards",
    ("soft_margin_loss", "tangent_requires_grad"): "ends in SumBackward0, PyTorch's in CopyBackwards",
    ("softmax_backward_data_public", "primal_requires_grad"): "ends in AddBackward0, PyTorch's in SubBackward0",
    ("softmax_backward_data_public", "tangent_requires_grad"): "ends in AddBackward0, PyTorch's in SubBackward0",
    ("softshrink", "primal_requires_grad"): "ends in None, PyTorch's in SoftshrinkBackwardBackward0",
    ("softshrink", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in SoftshrinkBackwardBackward0",
    ("special_xlog1py_scalar_self", "primal_requires_grad"): "ends in MulBackward0, PyTorch's in DivBackward0",
    ("special_xlog1py_scalar_self", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in DivBackward0",
    ("split_with_sizes_copy", "tangent_requires_grad"): "ends in None, PyTorch's in CopyBackwards",
    ("squeeze_copy", "tangent_requires_grad"): "ends in ViewBackward0, PyTorch's in SqueezeBackward0",
    ("squeeze_copy_dim", "tangent_requires_grad"): "ends in ViewBackward0, PyTorch's in SqueezeBackward1",
    ("squeeze_copy_dims", "tangent_requires_grad"): "ends in ViewBackward0, PyTorch's in SqueezeBackward2",
    ("std_mean", "primal_requires_grad"): "ends in SqueezeBackward1, PyTorch's in MaskedFillBackward0",
    ("std_mean", "tangent_requires_grad"): "ends in SqueezeBackward1, PyTorch's in MaskedFillBackward0",
    ("threshold_backward", "primal_requires_grad"): "ends in ThresholdBackwardBackward0, PyTorch's in AddBackward0",
    ("unbind_copy", "tangent_requires_grad"): "ends in None, PyTorch's in CopyBackwards",
    ("unsafe_split", "tangent_requires_grad"): "ends in None, PyTorch's in AddBackward0",
    ("unsqueeze_copy", "tangent_requires_grad"): "ends in ViewBackward0, PyTorch's in UnsqueezeBackward0",
    ("var_mean", "primal_requires_grad"): "ends in SqueezeBackward1, PyTorch's in MeanBackward1",
    ("var_mean", "tangent_requires_grad"): "ends in SqueezeBackward1, PyTorch's in MeanBackward1",
    ("xlogy_scalar_self", "primal_requires_grad"): "ends in MulBackward0, PyTorch's in DivBackward0",
    ("xlogy_scalar_self", "tangent_requires_grad"): "ends in MulBackward0, PyTorch's in DivBackward0",

}


def _name(t) -> str | None:
    fn = None if t is None else t.grad_fn
    return None if fn is None else type(fn).__name__


def _names(module, expr, arrays, tangents, uses_b, mode):
    fwad = module.autograd.forward_ad
    primal_rg = mode == MODES[0]
    with fwad.dual_level():
        ins = [fwad.make_dual(module.tensor(x, requires_grad=primal_rg),
                              module.tensor(t, requires_grad=not primal_rg))
               for x, t in zip(arrays, tangents)]
        out = _call(module, expr, ins[0], ins[1] if uses_b else None)
        got = []
        for o in _leaves(out):
            if isinstance(o, module.Tensor):
                t = fwad.unpack_dual(o).tangent if module is torch else tangent_of(o)
                got.append(_name(t))
    return got


def _params():
    for mode in MODES:
        for name in CALLED:
            reason = _DIFFERENT.get((name, mode))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            yield pytest.param(name, mode, id=f"{name}-{mode}", marks=marks)


@pytest.mark.parametrize(("name", "mode"), list(_params()))
def test_tangent_grad_fn_matches_pytorch(name, mode):
    op = OPS[name]
    uses_b = _uses_b(op.torch_call)
    compared = 0
    for seed, shapes in enumerate(SHAPES_BINARY if uses_b else SHAPES_UNARY):
        rng = np.random.default_rng(seed)
        arrays = [_values(rng, shapes[0], op.domain)]
        if uses_b:
            arrays.append(_values(rng, shapes[1], "real"))
        tangents = [rng.standard_normal(x.shape) for x in arrays]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = _names(torch, op.torch_call, arrays, tangents, uses_b, mode)
        except (RuntimeError, NotImplementedError, IndexError, ValueError, TypeError):
            continue  # no forward AD in PyTorch (or not this shape): nothing to match
        got = _names(gt, op.torch_call, arrays, tangents, uses_b, mode)
        assert got == expected, f"{name} ({mode}): gradcli {got}, PyTorch {expected}"
        compared += 1
    if not compared:
        pytest.skip(f"PyTorch has no forward AD for {op.torch_call!r}")
