"""torch.linalg and the torch.* linear-algebra forms (engine/ops/linalg_ext.py) against
PyTorch 2.13 in float64: values, grad_fn names, vector-Jacobian products, errors, and
gradcheck / gradgradcheck on gradcli alone. Decompositions whose factors are defined up to
sign (eigh's, svd's vectors) are compared through sign-free expressions of them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from expr_compare import run_expr as _run

import gradcli.torch as gt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1234)


def _mat(n, m=None, shift=3.0, batch=()):
    m = n if m is None else m
    a = RNG.standard_normal(batch + (n, m))
    if shift and n == m:
        a = a + shift * np.eye(n)
    return a


def _spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _lower(n, batch=()):
    return np.tril(RNG.standard_normal(batch + (n, n))) + 3 * np.eye(n)


def _sym(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a + np.swapaxes(a, -1, -2)


def _vec(*shape):
    return RNG.standard_normal(shape)


# name -> (expression over `torch` and inputs x0, x1..., [input arrays])
CASES = {
    "inv": ("torch.linalg.inv(x0)", [_mat(3)]),
    "inv_batched": ("torch.linalg.inv(x0)", [_mat(3, batch=(2,))]),
    "inv_ex": ("torch.linalg.inv_ex(x0)", [_mat(3)]),
    "inverse": ("torch.inverse(x0)", [_mat(4)]),
    "tensor_inverse": ("x0.inverse()", [_mat(2)]),
    "det": ("torch.linalg.det(x0)", [_mat(3)]),
    "det_batched": ("torch.linalg.det(x0)", [_mat(3, batch=(2, 2))]),
    "torch_det": ("torch.det(x0)", [_mat(4)]),
    "slogdet": ("torch.linalg.slogdet(x0)", [_mat(3)]),
    "torch_slogdet": ("torch.slogdet(x0)", [_mat(3, batch=(2,))]),
    "logdet": ("torch.logdet(x0)", [_spd(3)]),
    "solve": ("torch.linalg.solve(x0, x1)", [_mat(3), _vec(3, 2)]),
    "solve_vector": ("torch.linalg.solve(x0, x1)", [_mat(3), _vec(3)]),
    "solve_batched_vector": ("torch.linalg.solve(x0, x1)", [_mat(3, batch=(2,)), _vec(2, 3)]),
    "solve_broadcast": ("torch.linalg.solve(x0, x1)", [_mat(3, batch=(2,)), _vec(3, 4)]),
    "solve_right": ("torch.linalg.solve(x0, x1, left=False)", [_mat(3), _vec(2, 3)]),
    "solve_ex": ("torch.linalg.solve_ex(x0, x1)", [_mat(3), _vec(3, 2)]),
    "cholesky": ("torch.linalg.cholesky(x0)", [_spd(3)]),
    "cholesky_upper": ("torch.linalg.cholesky(x0, upper=True)", [_spd(3, batch=(2,))]),
    "cholesky_ex": ("torch.linalg.cholesky_ex(x0)", [_spd(4)]),
    "torch_cholesky": ("torch.cholesky(x0)", [_spd(3)]),
    "qr": ("torch.linalg.qr(x0)", [_mat(4, 3)]),
    "qr_wide": ("torch.linalg.qr(x0)", [_mat(2, 4)]),
    "qr_square_batched": ("torch.linalg.qr(x0)", [_mat(3, batch=(2,))]),
    "qr_complete_wide": ("torch.linalg.qr(x0, mode='complete')", [_mat(2, 3)]),
    "torch_qr": ("torch.qr(x0)", [_mat(4, 2)]),
    "eigh": ("(lambda r: (r[0], r[1] * r[1], r[1][..., :1] * r[1][..., :1].mT))"
             "(torch.linalg.eigh(x0))", [_sym(3)]),
    "eigh_upper": ("(lambda r: (r[0], r[1] * r[1]))(torch.linalg.eigh(x0, UPLO='U'))", [_sym(4)]),
    "eigvalsh": ("torch.linalg.eigvalsh(x0)", [_sym(3, batch=(2,))]),
    "svd_values": ("torch.linalg.svd(x0)[1]", [_mat(4, 3)]),
    "svd_square": ("(lambda r: (r.U * r.U, r.S, r.Vh * r.Vh, r.U[:, :1] * r.Vh[:1]))"
                   "(torch.linalg.svd(x0))", [_mat(3, shift=0)]),
    "svd_tall": ("(lambda r: (r.U * r.U, r.S, r.Vh * r.Vh))(torch.linalg.svd(x0, "
                 "full_matrices=False))", [_mat(4, 3)]),
    "svd_wide": ("(lambda r: (r.U * r.U, r.S, r.Vh * r.Vh))(torch.linalg.svd(x0, "
                 "full_matrices=False))", [_mat(2, 4)]),
    "svdvals": ("torch.linalg.svdvals(x0)", [_mat(3, 5, batch=(2,))]),
    "torch_svd": ("(lambda r: (r.U * r.U, r.S, r.V * r.V))(torch.svd(x0))", [_mat(4, 3)]),
    "pinv": ("torch.linalg.pinv(x0)", [_mat(4, 3)]),
    "pinv_wide": ("torch.linalg.pinv(x0)", [_mat(2, 3)]),
    "pinv_hermitian": ("torch.linalg.pinv(x0, hermitian=True)", [_spd(3)]),
    "pinverse": ("torch.pinverse(x0)", [_mat(3, 2)]),
    "lstsq": ("torch.linalg.lstsq(x0, x1).solution", [_mat(4, 3), _vec(4, 2)]),
    "lstsq_gelsd": ("torch.linalg.lstsq(x0, x1, driver='gelsd')[:2]", [_mat(4, 3), _vec(4, 2)]),
    "matrix_norm": ("torch.linalg.matrix_norm(x0)", [_mat(3, 4)]),
    "matrix_norm_nuc": ("torch.linalg.matrix_norm(x0, 'nuc')", [_mat(3, 4)]),
    "matrix_norm_2": ("torch.linalg.matrix_norm(x0, 2)", [_mat(3, 4)]),
    "matrix_norm_-2": ("torch.linalg.matrix_norm(x0, -2)", [_mat(3)]),
    "matrix_norm_1": ("torch.linalg.matrix_norm(x0, 1)", [_mat(3, 4)]),
    "matrix_norm_inf": ("torch.linalg.matrix_norm(x0, float('inf'), keepdim=True)", [_mat(3, 4)]),
    "matrix_norm_-1_dims": ("torch.linalg.matrix_norm(x0, -1, dim=(0, 2))", [_mat(3, 4, batch=(2,))]),
    "vector_norm": ("torch.linalg.vector_norm(x0)", [_vec(3, 4)]),
    "vector_norm_1": ("torch.linalg.vector_norm(x0, 1, dim=0)", [_vec(3, 4)]),
    "vector_norm_3": ("torch.linalg.vector_norm(x0, 3, dim=(0, 1), keepdim=True)", [_vec(3, 4)]),
    "vector_norm_half": ("torch.linalg.vector_norm(x0, 0.5, dim=-1)", [_vec(3, 4)]),
    "vector_norm_1.5": ("torch.linalg.vector_norm(x0, 1.5)", [_vec(5)]),
    "vector_norm_inf": ("torch.linalg.vector_norm(x0, float('inf'), dim=1)", [_vec(3, 4)]),
    "vector_norm_-inf": ("torch.linalg.vector_norm(x0, -float('inf'))", [_vec(3, 4)]),
    "vector_norm_0": ("torch.linalg.vector_norm(x0, 0)", [_vec(3, 4)]),
    "norm_matrix": ("torch.linalg.norm(x0)", [_mat(3, 4)]),
    "norm_vector_ord": ("torch.linalg.norm(x0, 1)", [_vec(5)]),
    "norm_matrix_ord": ("torch.linalg.norm(x0, 'nuc')", [_mat(3, 4)]),
    "norm_dim": ("torch.linalg.norm(x0, dim=1)", [_vec(3, 4)]),
    "cond": ("torch.linalg.cond(x0)", [_mat(3)]),
    "cond_-2": ("torch.linalg.cond(x0, -2)", [_mat(3)]),
    "cond_fro": ("torch.linalg.cond(x0, 'fro')", [_mat(3)]),
    "cond_1": ("torch.linalg.cond(x0, 1)", [_mat(3)]),
    "matrix_power_2": ("torch.linalg.matrix_power(x0, 2)", [_mat(3)]),
    "matrix_power_5": ("torch.linalg.matrix_power(x0, 5)", [_mat(3) / 3]),
    "matrix_power_-2": ("torch.linalg.matrix_power(x0, -2)", [_mat(3)]),
    "matrix_power_1": ("torch.linalg.matrix_power(x0, 1)", [_mat(3)]),
    "matrix_power_0": ("torch.linalg.matrix_power(x0, 0)", [_mat(3)]),
    "torch_matrix_power": ("torch.matrix_power(x0, 3)", [_mat(2)]),
    "matrix_exp": ("torch.linalg.matrix_exp(x0)", [_mat(3, shift=0)]),
    "matrix_exp_batched": ("torch.matrix_exp(x0)", [_mat(2, shift=0, batch=(2,))]),
    "cross": ("torch.linalg.cross(x0, x1)", [_vec(4, 3), _vec(4, 3)]),
    "cross_broadcast": ("torch.linalg.cross(x0, x1, dim=0)", [_vec(3, 2), _vec(3, 1)]),
    "torch_cross": ("torch.cross(x0, x1, dim=1)", [_vec(2, 3), _vec(2, 3)]),
    "vecdot": ("torch.linalg.vecdot(x0, x1)", [_vec(3, 4), _vec(3, 4)]),
    "vecdot_1d": ("torch.linalg.vecdot(x0, x1)", [_vec(4), _vec(4)]),
    "vdot": ("torch.vdot(x0, x1)", [_vec(4), _vec(4)]),
    "multi_dot": ("torch.linalg.multi_dot([x0, x1, x2])", [_vec(3, 4), _vec(4, 2), _vec(2, 5)]),
    "multi_dot_vectors": ("torch.linalg.multi_dot([x0, x1, x2, x3])",
                          [_vec(3), _vec(3, 4), _vec(4, 2), _vec(2)]),
    "multi_dot_2": ("torch.linalg.multi_dot([x0, x1])", [_vec(3, 4), _vec(4, 2)]),
    "chain_matmul": ("torch.chain_matmul(x0, x1, x2)", [_vec(3, 4), _vec(4, 2), _vec(2, 5)]),
    "solve_triangular": ("torch.linalg.solve_triangular(x0, x1, upper=False)",
                         [_lower(3), _vec(3, 2)]),
    "solve_triangular_upper_right": (
        "torch.linalg.solve_triangular(x0, x1, upper=True, left=False, unitriangular=True)",
        [_mat(3), _vec(2, 3)]),
    "triangular_solve": ("torch.triangular_solve(x1, x0, upper=False)", [_lower(3), _vec(3, 2)]),
    "triangular_solve_t": ("torch.triangular_solve(x1, x0, transpose=True)",
                           [_mat(3), _vec(3, 2)]),
    "cholesky_solve": ("torch.cholesky_solve(x1, x0)", [_lower(3), _vec(3, 2)]),
    "cholesky_solve_upper": ("torch.cholesky_solve(x1, x0, upper=True)",
                             [np.swapaxes(_lower(3), -1, -2).copy(), _vec(3, 2)]),
    "cholesky_inverse": ("torch.cholesky_inverse(x0)", [_lower(3)]),
    "cholesky_inverse_upper": ("torch.cholesky_inverse(x0, upper=True)",
                               [np.swapaxes(_lower(3), -1, -2).copy()]),
    "addmv": ("torch.addmv(x0, x1, x2, beta=0.5, alpha=2)", [_vec(3), _vec(3, 4), _vec(4)]),
    "addmv_broadcast": ("torch.addmv(x0, x1, x2)", [_vec(1), _vec(3, 4), _vec(4)]),
    "addr": ("torch.addr(x0, x1, x2, alpha=3)", [_vec(3, 4), _vec(3), _vec(4)]),
    "addbmm": ("torch.addbmm(x0, x1, x2, beta=2)", [_vec(3, 4), _vec(2, 3, 5), _vec(2, 5, 4)]),
    "baddbmm": ("torch.baddbmm(x0, x1, x2, alpha=0.5)",
                [_vec(1, 4), _vec(2, 3, 5), _vec(2, 5, 4)]),
    "lu": ("torch.linalg.lu(x0)", [_mat(3, shift=0)]),
    "lu_wide": ("torch.linalg.lu(x0)", [_mat(3, 5, shift=0)]),
    "lu_tall": ("torch.linalg.lu(x0)", [_mat(5, 3, shift=0, batch=(2,))]),
    "lu_factor": ("torch.linalg.lu_factor(x0)", [_mat(4, shift=0)]),
    "lu_factor_wide": ("torch.linalg.lu_factor(x0)", [_mat(2, 4, shift=0)]),
    "lu_factor_tall": ("torch.linalg.lu_factor(x0)", [_mat(4, 2, shift=0)]),
    "lu_factor_ex": ("torch.linalg.lu_factor_ex(x0)", [_mat(3, shift=0, batch=(2,))]),
    "lu_solve": ("torch.linalg.lu_solve(x0, torch.linalg.lu_factor(x0.detach())[1], x1)",
                 [np.array(__import__("scipy.linalg").linalg.lu_factor(_mat(3))[0]), _vec(3, 2)]),
    "lu_solve_adjoint": ("torch.linalg.lu_solve(*torch.linalg.lu_factor(x0), x1, adjoint=True)",
                         [_mat(3, shift=0), _vec(3, 2)]),
    "lu_solve_right": ("torch.linalg.lu_solve(*torch.linalg.lu_factor(x0), x1, left=False)",
                       [_mat(3, shift=0), _vec(2, 3)]),
    "lu_solve_right_adjoint": ("torch.linalg.lu_solve(*torch.linalg.lu_factor(x0), x1, "
                               "left=False, adjoint=True)", [_mat(3, shift=0), _vec(2, 3)]),
    "lu_solve_chain": ("torch.linalg.lu_solve(*torch.linalg.lu_factor(x0), x1)",
                       [_mat(3, shift=0, batch=(2,)), _vec(2, 3, 2)]),
    "householder_product": ("torch.linalg.householder_product(x0, x1)", [_vec(4, 3), _vec(2)]),
    "householder_square": ("torch.linalg.householder_product(x0, x1)", [_vec(3, 3), _vec(3)]),
    "orgqr": ("torch.orgqr(x0, x1)", [_vec(2, 4, 2), _vec(2, 2)]),
    "addmv_inplace": ("(x0 * 1).addmv_(x1, x2, beta=0.5)", [_vec(3), _vec(3, 4), _vec(4)]),
    "torch_addmv_": ("torch.addmv_(x0 * 1, x1, x2, alpha=2)", [_vec(3), _vec(3, 4), _vec(4)]),
    "addr_inplace": ("(x0 * 1).addr_(x1, x2)", [_vec(3, 4), _vec(3), _vec(4)]),
    "addbmm_inplace": ("(x0 * 1).addbmm_(x1, x2)", [_vec(3, 4), _vec(2, 3, 5), _vec(2, 5, 4)]),
    "baddbmm_inplace": ("(x0 * 1).baddbmm_(x1, x2, alpha=3)",
                        [_vec(2, 3, 4), _vec(2, 3, 5), _vec(2, 5, 4)]),
    "torch_lu": ("torch.lu(x0)", [_mat(3, shift=0)]),
    "torch_lu_infos": ("torch.lu(x0, get_infos=True)", [_mat(3, shift=0, batch=(2,))]),
    "torch_lu_solve": ("torch.lu_solve(x1, *torch.lu(x0))", [_mat(3, shift=0), _vec(3, 2)]),
    "tensorinv": ("torch.linalg.tensorinv(x0, ind=2)", [_mat(6).reshape(2, 3, 6)]),
    "tensorsolve": ("torch.linalg.tensorsolve(x0, x1)", [_mat(6).reshape(2, 3, 6), _vec(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_pytorch(name):
    expr, arrays = CASES[name]
    t_in, t_out = _run(torch, expr, arrays)
    g_in, g_out = _run(gt, expr, arrays)
    assert len(t_out) == len(g_out)
    for t, g in zip(t_out, g_out, strict=True):
        assert str(g.dtype) == str(t.dtype), name
        assert tuple(g.shape) == tuple(t.shape), name
        np.testing.assert_allclose(g._data, t.detach().numpy(), rtol=1e-7, atol=1e-7)
        tn = type(t.grad_fn).__name__ if t.grad_fn is not None else None
        gn = type(g.grad_fn).__name__ if g.grad_fn is not None else None
        assert gn == tn, (name, gn, tn)
    # vector-Jacobian product of every differentiable output with a random seed
    seeds = [np.random.default_rng(7).standard_normal(tuple(t.shape)) for t in t_out]
    t_loss = sum((o * torch.tensor(s)).sum() for o, s in zip(t_out, seeds, strict=True)
                 if o.requires_grad)
    g_loss = sum((o * gt.tensor(s)).sum() for o, s in zip(g_out, seeds, strict=True)
                 if o.requires_grad)
    if not isinstance(t_loss, torch.Tensor):
        return
    try:
        t_loss.backward()
    except RuntimeError as err:  # cond(A, 'fro' / 1 / inf): PyTorch's own backward fails
        with pytest.raises(RuntimeError) as ours:
            g_loss.backward()
        assert str(ours.value) == str(err)
        return
    g_loss.backward()
    for t, g in zip(t_in, g_in, strict=True):
        if t.grad is None:
            assert g.grad is None or not np.any(g.grad._data), name
            continue
        assert g.grad is not None, name
        np.testing.assert_allclose(g.grad._data, t.grad.numpy(), rtol=1e-6, atol=1e-7,
                                   err_msg=name)


GRADCHECK = ["inv", "det", "slogdet", "solve", "solve_right", "cholesky", "cholesky_upper",
             "qr", "qr_wide", "eigh", "svd_square", "svd_tall", "svd_wide", "pinv", "pinv_wide",
             "matrix_exp", "cross", "solve_triangular", "solve_triangular_upper_right",
             "triangular_solve", "cholesky_solve", "cholesky_inverse", "addmv", "addr",
             "addbmm", "baddbmm", "vector_norm_3", "lstsq", "lstsq_gelsd", "matrix_norm_nuc",
             "multi_dot_vectors", "lu", "lu_wide", "lu_tall", "lu_factor", "lu_factor_wide",
             "lu_factor_tall", "lu_solve_adjoint", "lu_solve_right", "lu_solve_right_adjoint",
             "lu_solve_chain", "householder_product", "householder_square"]


# PyTorch's gradients of eigh and cholesky are symmetric matrices (they read one triangle of
# a matrix assumed symmetric): they are checked on a symmetric function of the input.
SYMMETRIC = {"eigh": "(lambda r: (r[0], r[1] * r[1]))(torch.linalg.eigh(x0 + x0.mT))",
             "cholesky": "torch.linalg.cholesky(x0 @ x0.mT + torch.eye(3, dtype=x0.dtype))",
             "cholesky_upper": "torch.linalg.cholesky(x0 @ x0.mT + 2 * torch.eye(3, "
                               "dtype=x0.dtype), upper=True)",
             # ... and cholesky_inverse's / cholesky_solve's read one triangle but differentiate
             # the whole factor: checked on a triangular one
             "cholesky_inverse": "torch.cholesky_inverse(x0 * _LOWER)",
             "cholesky_solve": "torch.cholesky_solve(x1, x0 * _LOWER)"}
_LOWER = "(torch.arange(3).reshape(-1, 1) >= torch.arange(3))"


def _checked(name):
    expr, arrays = CASES[name]
    return SYMMETRIC.get(name, expr).replace("_LOWER", _LOWER), arrays


@pytest.mark.parametrize("name", GRADCHECK)
def test_gradcheck(name):
    expr, arrays = _checked(name)
    inputs = [gt.tensor(a, dtype=gt.float64, requires_grad=True) for a in arrays]

    def fn(*xs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = eval(expr, {"torch": gt}, {f"x{i}": x for i, x in enumerate(xs)})  # noqa: S307
        outs = tuple(o for o in (out if isinstance(out, tuple) else (out,))
                     if o.dtype.is_floating_point and o.numel())
        return outs if len(outs) > 1 else outs[0]

    assert gt.autograd.gradcheck(fn, tuple(inputs))


SECOND_ORDER = ["inv", "det", "slogdet", "solve", "cholesky", "qr", "eigh", "svd_tall", "pinv",
                "matrix_exp", "solve_triangular", "cholesky_inverse", "vector_norm_3",
                "lu", "lu_factor", "lu_solve_chain", "householder_product"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_gradgradcheck(name):
    expr, arrays = _checked(name)
    inputs = [gt.tensor(a, dtype=gt.float64, requires_grad=True) for a in arrays]

    def fn(*xs):
        out = eval(expr, {"torch": gt}, {f"x{i}": x for i, x in enumerate(xs)})  # noqa: S307
        outs = tuple(o for o in (out if isinstance(out, tuple) else (out,))
                     if o.dtype.is_floating_point and o.numel())
        return outs if len(outs) > 1 else outs[0]

    assert gt.autograd.gradgradcheck(fn, tuple(inputs))


# ---------------------------------------------------------------- errors

def _square(n):
    return np.eye(n) + 1.0


ERRORS = {
    "inv_nonsquare": ("torch.linalg.inv(x0)", [np.ones((2, 3))]),
    "inv_1d": ("torch.linalg.inv(x0)", [np.ones(3)]),
    "inv_int": ("torch.linalg.inv(x0.long())", [np.ones((2, 2))]),
    "inv_singular": ("torch.linalg.inv(x0)", [np.zeros((3, 3))]),
    "inv_singular_batch": ("torch.linalg.inv(x0)", [np.stack([np.eye(3), np.ones((3, 3))])]),
    "inverse_singular": ("torch.inverse(x0)", [np.array([[1.0, 2.0], [2.0, 4.0]])]),
    "det_nonsquare": ("torch.linalg.det(x0)", [np.ones((2, 3))]),
    "det_int": ("torch.det(x0.long())", [np.ones((2, 2))]),
    "slogdet_nonsquare": ("torch.linalg.slogdet(x0)", [np.ones((2, 3))]),
    "solve_shapes": ("torch.linalg.solve(x0, x1)", [np.eye(3), np.ones(2)]),
    "solve_shapes2": ("torch.linalg.solve(x0, x1)", [np.eye(3), np.ones((2, 2))]),
    "solve_singular": ("torch.linalg.solve(x0, x1)", [np.zeros((3, 3)), np.ones(3)]),
    "solve_dtype": ("torch.linalg.solve(x0, x1.float())", [np.eye(3), np.ones(3)]),
    "cholesky_not_pd": ("torch.linalg.cholesky(x0)", [np.array([[1.0, 2], [2, 1]])]),
    "cholesky_batch": ("torch.linalg.cholesky(x0)",
                       [np.stack([np.eye(2), np.array([[1.0, 2], [2, 1]])])]),
    "cholesky_nonsquare": ("torch.linalg.cholesky(x0)", [np.ones((2, 3))]),
    "qr_1d": ("torch.linalg.qr(x0)", [np.ones(3)]),
    "qr_mode": ("torch.linalg.qr(x0, mode='foo')", [np.ones((2, 2))]),
    "eigh_uplo": ("torch.linalg.eigh(x0, UPLO='X')", [np.eye(2)]),
    "eigh_nonsquare": ("torch.linalg.eigh(x0)", [np.ones((2, 3))]),
    "svd_1d": ("torch.linalg.svd(x0)", [np.ones(3)]),
    "pinv_1d": ("torch.linalg.pinv(x0)", [np.ones(3)]),
    "matrix_norm_1d": ("torch.linalg.matrix_norm(x0)", [np.ones(3)]),
    "matrix_norm_ord": ("torch.linalg.matrix_norm(x0, 3)", [np.eye(2)]),
    "matrix_norm_dims": ("torch.linalg.matrix_norm(x0, dim=(0, 0))", [np.eye(2)]),
    "vector_norm_int": ("torch.linalg.vector_norm(x0.long())", [np.eye(2)]),
    "vector_norm_dup": ("torch.linalg.vector_norm(x0, dim=(0, 0))", [np.eye(2)]),
    "norm_fro_vector": ("torch.linalg.norm(x0, 'fro')", [np.ones(3)]),
    "matrix_power_nonsquare": ("torch.linalg.matrix_power(x0, 2)", [np.ones((2, 3))]),
    "matrix_exp_nonsquare": ("torch.linalg.matrix_exp(x0)", [np.ones((2, 3))]),
    "cross_len": ("torch.linalg.cross(x0, x1)", [np.ones(3), np.ones(4)]),
    "cross_dim": ("torch.linalg.cross(x0, x0, dim=5)", [np.ones((3, 3))]),
    "vecdot_size": ("torch.linalg.vecdot(x0, x1)", [np.ones(3), np.ones(4)]),
    "multi_dot_one": ("torch.linalg.multi_dot([x0])", [np.eye(2)]),
    "multi_dot_3d": ("torch.linalg.multi_dot([x0, x1])", [np.eye(2), np.ones((2, 2, 2))]),
    "multi_dot_shapes": ("torch.linalg.multi_dot([x0, x1])", [np.eye(2), np.ones((3, 2))]),
    "tensorinv_shape": ("torch.linalg.tensorinv(x0, ind=1)", [np.ones((2, 3))]),
    "tensorinv_ind": ("torch.linalg.tensorinv(x0, ind=0)", [np.eye(2)]),
    "addmv_size": ("torch.addmv(x1, x0, x1)", [np.eye(2), np.ones(3)]),
    "addr_expand": ("torch.addr(x0, x1, x1)", [np.eye(2), np.ones(3)]),
    "baddbmm_expand": ("torch.baddbmm(x0, x0.expand(2, 2, 2), x1.expand(2, 2, 3))",
                       [np.eye(2), np.ones((2, 3))]),
    "chain_matmul_empty": ("torch.chain_matmul()", [np.eye(2)]),
    "cholesky_inverse_nonsquare": ("torch.cholesky_inverse(x0)", [np.ones((2, 3))]),
    "logdet_int": ("torch.logdet(x0.long())", [np.eye(2)]),
    "matrix_rank_int": ("torch.linalg.matrix_rank(x0.long())", [np.eye(2)]),
    "removed_solve": ("torch.solve(x0, x0)", [np.eye(2)]),
    "removed_lstsq": ("x0.lstsq(x0)", [np.eye(2)]),
    "removed_matrix_rank": ("torch.matrix_rank(x0)", [np.eye(2)]),
    "lstsq_rows": ("torch.linalg.lstsq(x0, x1)", [np.eye(2), np.ones(3)]),
}


def _raised(module, expr, arrays):
    inputs = {f"x{i}": module.tensor(a, dtype=module.float64) for i, a in enumerate(arrays)}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eval(expr, {"torch": module}, inputs)  # noqa: S307 - the table above
    except Exception as err:  # noqa: BLE001 - compared with PyTorch's
        return err
    return None


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(name):
    expr, arrays = ERRORS[name]
    theirs = _raised(torch, expr, arrays)
    ours = _raised(gt, expr, arrays)
    assert theirs is not None
    assert ours is not None, f"PyTorch raised {theirs!r}; gradcli did not"
    assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
    assert str(ours) == str(theirs)


def test_singular_results_and_info():
    z = np.array([[1.0, 2.0], [2.0, 4.0]])
    for module in (torch, gt):
        assert int(module.linalg.inv_ex(module.tensor(z)).info) == 2
        assert int(module.linalg.cholesky_ex(module.tensor(-np.eye(2))).info) == 1
    t, g = torch.tensor(z, requires_grad=True), gt.tensor(z, requires_grad=True)
    torch.linalg.det(t).backward()  # singular: the adjugate's transpose
    gt.linalg.det(g).backward()
    np.testing.assert_allclose(g.grad._data, t.grad.numpy(), atol=1e-7)


def test_matrix_rank_and_return_type_repr():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    for fn in ("torch.linalg.matrix_rank(x)", "torch.linalg.matrix_rank(x, hermitian=True)",
               "torch.linalg.matrix_rank(x, atol=1.0, rtol=0.0)"):
        t = eval(fn, {"torch": torch}, {"x": torch.tensor(a)})  # noqa: S307
        g = eval(fn, {"torch": gt}, {"x": gt.tensor(a)})  # noqa: S307
        assert repr(g) == repr(t)
    x = np.array([[2.0, 1.0], [1.0, 3.0]])
    for fn in ("torch.linalg.slogdet(x)", "torch.linalg.inv_ex(x)", "torch.slogdet(x)",
               "torch.linalg.cholesky_ex(x)", "torch.linalg.qr(x)", "torch.linalg.lu_factor(x)"):
        t = eval(fn, {"torch": torch}, {"x": torch.tensor(x, requires_grad=True)})  # noqa: S307
        g = eval(fn, {"torch": gt}, {"x": gt.tensor(x, requires_grad=True)})  # noqa: S307
        assert repr(g) == repr(t), fn
        assert type(g).__name__ == type(t).__name__
