"""Every entry of the op table, checked generically from its `torch_call`.

For each op in `gradcli.engine.ops.registry.OPS`:

* (a) float64 gradcheck against finite differences, first and second order, over
  several shapes (0-d, vectors, matrices, broadcasting pairs), inputs kept away
  from kinks and poles (the op's `domain`);
* (b) comparison with PyTorch 2.13 over hypothesis-generated inputs: values, dtype,
  shape, printed text, `grad_fn` name, gradients, and the exact error where
  PyTorch raises one;
* the `torch_call` really reaches the op (its node appears in the graph).

An op with no `torch_call` must be listed in INTERNAL with how it is covered,
so a new op cannot go untested.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradcli.torch as gt
from gradcli.engine.ops.registry import OPS

# Ops without a public spelling of their own: how each is exercised instead.
INTERNAL = {
    # complex tensors (ops/complex.py): the generic tests draw real inputs and compare real
    # outputs; tests/test_complex.py compares these with PyTorch, gradients and gradcheck
    **{name: "a complex op: tests/test_complex.py compares it with PyTorch" for name in (
        "view_as_real", "view_as_complex", "conj", "conj_physical", "complex", "polar",
        "angle_complex", "sgn_complex", "linalg_eig", "vdot_complex", "view_as_complex_copy")},
    "values_copy": "a CSR tensor's values (2-d only): tests/test_sparse_mask_and_copies.py "
                   "compares it, its gradient and its refusals with PyTorch",
    # the three transforms torch.fft composes (ops/fft.py): complex in or out, so the real
    # generic tests cannot reach them; tests/test_fft.py compares every transform built on
    # them, gradients, double backward and gradcheck, with PyTorch
    **{name: "an fft primitive: tests/test_fft.py compares it with PyTorch" for name in (
        "fft_c2c", "fft_r2c", "fft_c2r")},
    "grid_sampler_2d_backward": "grid_sample's gradients recorded under create_graph "
                                "(GridSampler2DBackwardBackward0): tests/test_ops_grid_sampler.py "
                                "compares second derivatives with PyTorch",
    "grid_sampler_3d_backward": "as grid_sampler_2d_backward: tests/test_ops_grid_sampler.py",
    "segment_reduce": "its gradient refuses a second derivative, which the generic tests take: "
                      "tests/test_ops_aten_breadth.py compares every OpInfo sample and that "
                      "error with PyTorch",
    "_segment_reduce_backward": "segment_reduce's gradient: tests/test_ops_aten_breadth.py",
    "linear_cross_entropy_chunked": "reached only with PyTorch's options object: "
                                    "tests/test_ops_linear_ce_chunked.py compares it",
    "linear_cross_entropy_chunked_none": "as linear_cross_entropy_chunked (reduction='none')",
    "ormqr": "three operands of related shapes (reflectors, tau, other): tests/test_ops_ormqr.py "
             "runs every OpInfo sample in float64 and float32 against PyTorch",
    "fractional_max_pool2d": "a random draw per plane: tests/test_ops_fractional_pool.py compares "
                             "seeded outputs, indices and gradients bit for bit",
    "fractional_max_pool3d": "as fractional_max_pool2d: tests/test_ops_fractional_pool.py",
    "fractional_max_pool2d_backward": "the pools' gradients under create_graph: "
                                      "tests/test_ops_fractional_pool.py",
    "fractional_max_pool3d_backward": "as fractional_max_pool2d_backward",
    "standard_gamma": "a random draw (torch._standard_gamma): tests/test_distributions_more.py "
                      "compares its seeded draws bit for bit and its gradient with PyTorch",
    "vander_cumprod": "PyTorch's vander saves a cumprod it overwrites, so its backward always "
                      "fails: tests/test_aliases_and_config.py compares vander and that error",
    "unique": "no derivative (PyTorch's Unique2Backward0 raises): tests/test_ops_searchsorted.py "
              "compares values, inverse, counts and that error with PyTorch",
    "unique_dim": "no derivative (PyTorch's UniqueDimBackward0 raises): "
                  "tests/test_ops_searchsorted.py compares it with PyTorch",
    "unique_consecutive": "no derivative (UniqueConsecutiveBackward0): "
                          "tests/test_autograd_unique_variants.py compares it with PyTorch",
    "unique_v1": "torch._unique's UniqueBackward0 (no derivative): "
                 "tests/test_autograd_unique_variants.py compares it with PyTorch",
    "unique_v2": "torch._unique2's Unique2Backward0 (no derivative): "
                 "tests/test_autograd_unique_variants.py compares it with PyTorch",
    "unique_dim_vf": "torch._VF.unique_dim's UniqueDimBackward0 (no derivative): "
                     "tests/test_autograd_unique_variants.py compares it with PyTorch",
    "native_channel_shuffle": "no derivative (PyTorch's NotImplemented node): "
                              "tests/test_functional_extras.py compares values, errors and that "
                              "node's error with PyTorch",
    "detach_copy": "no derivative (PyTorch's NotImplemented node): tests/test_aten_forms.py",
    "native_dropout": "a random mask: tests/test_aten_forms.py compares seeded outputs, masks "
                      "and gradients with PyTorch",
    "geqrf": "no derivative (GeqrfBackward0 raises): tests/test_ldl_geqrf.py",
    "linalg_ldl_factor_ex": "no derivative (NotImplemented): tests/test_ldl_geqrf.py",
    "linalg_ldl_solve": "no derivative (NotImplemented): tests/test_ldl_geqrf.py",
    "_histogramdd_bin_edges": "no derivative (NotImplemented): tests/test_histogramdd.py",
    "_histogramdd_from_bin_cts": "no derivative (NotImplemented): tests/test_histogramdd.py",
    "binomial": "a random draw with no derivative: tests/test_binomial.py compares "
                "seeded draws bit for bit and the NotImplemented node's error",
    "select_backward": "the backward of SelectBackward0: second order of 'select' runs it",
    "slice_backward": "the backward of SliceBackward0: second order of 'slice' runs it",
    "index_backward": "the backward of IndexBackward0: second order of 'index' runs it",
    "region_put": "the backward of AsStridedBackward0 (and of CopySlices): second order of "
                  "'as_strided' and 'copy_slices' runs it",
    "scatter": "the backward of MaxBackward0/MinBackward0: second order of 'max_dim' runs it",
    "gather": "the backward of ScatterBackward0: third-order test below",
    "cond_nan_to_num": "linalg.cond(A, 'fro'/1/inf)'s last step, whose backward fails in "
                       "PyTorch 2.13 itself: tests/test_linalg_ext.py compares that error",
    "ctc_loss": "PyTorch has no second derivative of ctc_loss (gradgradcheck cannot run): "
                "tests/test_functional_ext.py compares it with PyTorch and gradchecks it",
    "ctc_loss_backward": "the NotImplemented node of ctc_loss's create_graph gradient: "
                         "tests/test_functional_ext.py checks its error against PyTorch's",
    "rnn_output_transpose": "nn.RNN/GRU(batch_first=True)'s output node (layers' random "
                            "weights): tests/test_nn_layers.py compares with PyTorch",
    "lstm_layer_output": "nn.LSTM's output node (random weights): tests/test_nn_layers.py",
    "pdist_backward": "PdistBackwardBackward0, whose backward raises as PyTorch's: "
                      "tests/test_double_backward_nodes.py compares graph and error",
    "cdist_backward": "CdistBackwardBackward0, whose backward raises as PyTorch's: "
                      "tests/test_double_backward_nodes.py compares graph and error",
    "multi_margin_loss_backward": "the NotImplemented node of multi_margin_loss's "
                                  "create_graph gradient: tests/test_double_backward_nodes.py",
    "hardsigmoid_backward": "the NotImplemented node of hardsigmoid's create_graph gradient: "
                            "tests/test_double_backward_nodes.py checks its error against "
                            "PyTorch's",
}

# Ops PyTorch gives no second derivative (their create_graph gradient's backward raises)
FIRST_ORDER_ONLY = {"hardsigmoid", "pdist", "cdist", "multi_margin_loss"}

CALLED = sorted(name for name, op in OPS.items() if op.torch_call)

# Ops whose forward sums products through BLAS (float32: see test_matches_pytorch).
BLAS_SUMS = {"mm", "addmm", "mv", "dot", "bmm"}
# ... and the LAPACK ones of engine/ops/linalg_ext.py (computed at float64, rounded once:
# PyTorch's float32 LAPACK rounds on the way, so the last bit, and rarely a printed digit,
# differs; not emulated, by the house rule for new ops)
BLAS_SUMS |= {"addbmm", "addmv", "addr", "baddbmm", "cholesky", "cholesky_inverse",
              "cholesky_solve", "linalg_cholesky_ex", "linalg_det", "linalg_eigh",
              "linalg_inv_ex", "linalg_lstsq", "linalg_matrix_exp", "linalg_pinv", "linalg_qr",
              "linalg_slogdet", "linalg_solve", "linalg_solve_triangular", "linalg_svd",
              "linalg_vector_norm", "triangular_solve", "linalg_cross", "vdot",
              "linalg_householder_product", "linalg_lu_factor_ex", "linalg_lu",
              "linalg_lu_solve"}

# The ops of the modules that reproduce PyTorch's kernels bit for bit are held to a tight
# tolerance; every other op (SPEC 1.1: no new bit emulation) to torch.testing's defaults,
# and its printing is checked on PyTorch's own values when one last bit moved a digit.
EMULATED_MODULES = {"creation", "elementwise", "linalg", "nn", "reductions", "shape", "views",
                    "__init__"}


def _new_op(op) -> bool:
    fn = op.backward if op.backward is not None else op.forward
    return (getattr(fn, "__module__", "") or "").rsplit(".", 1)[-1] not in EMULATED_MODULES

UNARY_SHAPES = [(), (3,), (2, 3), (2, 1, 3)]
BINARY_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)),
                 ((2, 3), ()), ((2, 3), (2, 3))]

DOMAINS = {"real": (0.3, 2.0, True), "positive": (0.3, 2.0, False), "small": (0.2, 1.2, True)}


def _uses_b(expr: str) -> bool:
    return "b" in compile(expr, "<torch_call>", "eval").co_names


def _shape_cases(op) -> list:
    if _uses_b(op.torch_call):
        return BINARY_SHAPES
    return [(s, ()) for s in UNARY_SHAPES]


def _values(rng, shape, domain: str, dtype=np.float64) -> np.ndarray:
    """Values whose magnitude stays in [lo, hi]: away from 0, kinks at 0 and poles."""
    lo, hi, signed = DOMAINS[domain]
    mag = rng.uniform(lo, hi, size=shape)
    if signed:
        mag = mag * rng.choice([-1.0, 1.0], size=shape)
    return np.asarray(mag, dtype=dtype)


def _call(module, expr: str, a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(expr, {"torch": module}, {"a": a, "b": b})  # noqa: S307 - the op table's own text


def _inputs(op, seed: int, shapes, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return _values(rng, shapes[0], op.domain, dtype), _values(rng, shapes[1], "real", dtype)


def _graph_ops(t) -> set:
    seen, stack, ops = set(), [t.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if node.op is not None:
            ops.add(node.op.name)
            if node.op.name == "copy_slices":
                stack.append(node.meta[1])
        stack.extend(f for f, _ in node.next_functions)
    return ops


# ---------------------------------------------------------------- coverage


def test_every_op_is_called_or_listed_as_internal():
    untested = [n for n, op in OPS.items() if not op.torch_call and n not in INTERNAL]
    assert not untested, f"ops with neither a torch_call nor an INTERNAL entry: {untested}"
    stale = [n for n in INTERNAL if n not in OPS or OPS[n].torch_call]
    assert not stale, f"INTERNAL lists ops that are gone or now have a torch_call: {stale}"


@pytest.mark.parametrize("name", CALLED)
def test_torch_call_reaches_its_op(name):
    op = OPS[name]
    reached = False
    for shapes in _shape_cases(op):
        a_np, b_np = _inputs(op, 0, shapes)
        a = gt.tensor(a_np, requires_grad=True)
        b = gt.tensor(b_np, requires_grad=True)
        try:
            out = _call(gt, op.torch_call, a, b)
        except (RuntimeError, IndexError, ValueError, TypeError):
            continue
        reached = reached or name in _graph_ops(out)
    assert reached, f"{op.torch_call!r} never ran op {name!r}"


# ------------------------------------------------- (a) finite differences


def _differentiable(op, shapes):
    """The function gradcheck sees, and the float64 inputs (None when the shape is invalid)."""
    uses_b = _uses_b(op.torch_call)
    a_np, b_np = _inputs(op, 1, shapes)
    a = gt.tensor(a_np, requires_grad=True)
    b = gt.tensor(b_np, requires_grad=True)
    try:
        out = _call(gt, op.torch_call, a, b)
    except (RuntimeError, IndexError, ValueError, TypeError):
        return None, None
    if out.grad_fn is not None and (out.grad_fn.name() == "NotImplemented"
                                    or getattr(op.backward, "no_derivative", False)):
        return "not implemented", None
    if not np.isfinite(out._data).all():  # e.g. var of one element: nan, as in PyTorch
        return None, None
    if uses_b:
        return (lambda x, y: _call(gt, op.torch_call, x, y)), (a, b)
    return (lambda x: _call(gt, op.torch_call, x, None)), (a,)


@pytest.mark.parametrize("name", CALLED)
def test_gradcheck_first_and_second_order(name):
    op = OPS[name]
    checked = 0
    for shapes in _shape_cases(op):
        fn, inputs = _differentiable(op, shapes)
        if fn is None:
            continue
        if fn == "not implemented":
            checked += 1
            continue
        assert gt.autograd.gradcheck(fn, inputs), (name, shapes)
        if name not in FIRST_ORDER_ONLY:
            assert gt.autograd.gradgradcheck(fn, inputs), (name, shapes)
        checked += 1
    assert checked, f"no shape could run {op.torch_call!r}"


def test_not_implemented_derivative_raises_pytorch_message():
    a = gt.tensor([1.5, 2.5], requires_grad=True)
    out = a // 2
    assert type(out.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not implemented"):
        out.sum().backward()


def test_third_order_through_max_dim_runs_gather():
    # max(dim)'s backward is a scatter, whose backward is a gather: differentiate three times
    x = gt.tensor([[1.0, 3.0], [4.0, 2.0]], dtype=gt.float64, requires_grad=True)

    def f(t):
        return (t.max(0)[0] ** 3).sum()

    g1, = gt.autograd.grad(f(x), x, create_graph=True)
    g2, = gt.autograd.grad((g1 * g1).sum(), x, create_graph=True)
    g3, = gt.autograd.grad(g2.sum(), x)
    assert "gather" in _graph_ops(g2) or g3 is not None
    # d/dx of sum(2*g1*dg1/dx) for g1 = 3 m^2 at the maxima m: 2 * 3m^2 * 6m -> d/dm = 108 m^2
    expected = np.zeros((2, 2))
    expected[1, 0] = 108 * 16.0
    expected[0, 1] = 108 * 9.0
    np.testing.assert_allclose(g3._data, expected)


# ----------------------------------------------------- (b) against PyTorch


def _outcome(module, op, a_np, b_np):
    """(result, inputs, error) of evaluating the op's torch_call with `module`."""
    a = module.tensor(a_np, requires_grad=True)
    b = module.tensor(b_np, requires_grad=True)
    try:
        return _call(module, op.torch_call, a, b), (a, b), None
    except Exception as err:  # noqa: BLE001 - compared with PyTorch's
        return None, (a, b), err


def _same_error(ours, theirs) -> None:
    assert ours is not None, f"PyTorch raised {type(theirs).__name__}: {theirs}; gradcli did not"
    assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("name", CALLED)
@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_matches_pytorch(name, data):
    torch = pytest.importorskip("torch")
    op = OPS[name]
    shapes = data.draw(st.sampled_from(_shape_cases(op)), label="shapes")
    dtype = data.draw(st.sampled_from([np.float32, np.float64]), label="dtype")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    a_np, b_np = _inputs(op, seed, shapes, dtype)

    theirs, (ta, tb), terr = _outcome(torch, op, a_np, b_np)
    ours, (ga, gb), gerr = _outcome(gt, op, a_np, b_np)
    if terr is not None:
        _same_error(gerr, terr)
        return
    assert gerr is None, f"gradcli raised {gerr!r} where PyTorch gave {theirs!r}"

    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.requires_grad == theirs.requires_grad
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    if _new_op(op):
        tol = dict(rtol=1.3e-6, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(ours._data, theirs.detach().numpy(), **tol)
    if (name in BLAS_SUMS and dtype == np.float32 or _new_op(op)) and repr(ours) != repr(theirs):
        # numpy's OpenBLAS and PyTorch's MKL sum float32 products in different orders: the
        # last bit may differ, and a value at a rounding boundary then prints one digit
        # apart. The printing itself must still be PyTorch's: our formatter, given
        # PyTorch's values, prints PyTorch's text.
        if name in BLAS_SUMS:
            assert np.abs(ours._data.astype(np.float64) - theirs.detach().numpy()).max() <= (
                4 * np.spacing(np.abs(theirs.detach().numpy())).max())
        ours = gt.tensor(theirs.detach().numpy(), requires_grad=True) * 1.0
        theirs = theirs.detach().requires_grad_() * 1.0
    assert repr(ours) == repr(theirs)

    if not theirs.requires_grad:
        return
    seed_grad = np.random.default_rng(seed + 1).uniform(-1, 1, size=tuple(theirs.shape))
    t_err = g_err = None
    try:
        theirs.backward(torch.tensor(seed_grad, dtype=theirs.dtype))
    except RuntimeError as err:
        t_err = err
    try:
        ours.backward(gt.tensor(seed_grad, dtype=ours.dtype))
    except RuntimeError as err:
        g_err = err
    if t_err is not None:
        _same_error(g_err, t_err)
        return
    assert g_err is None, g_err
    for t_in, g_in in ((ta, ga), (tb, gb)):
        if t_in.grad is None:
            assert g_in.grad is None
            continue
        assert g_in.grad is not None
        assert str(g_in.grad.dtype) == str(t_in.grad.dtype)
        np.testing.assert_allclose(g_in.grad._data, t_in.grad.numpy(), **tol)
