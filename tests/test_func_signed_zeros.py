"""torch.func: a reverse pass through a Jacobian that jacrev (or jacfwd) made sums, as PyTorch's
vmapped passes do, the gradient of each value the passes read without depending on the
cotangent (the forward's tensors) over the rows: zeros come out as PyTorch's +0, not one
row's -0 (tanh's second derivative off the diagonal prints 0., not -0.)."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

FUNCTIONS = {
    "tanh": lambda m: m.tanh,
    "sigmoid": lambda m: m.sigmoid,
    "sin_times_x": lambda m: (lambda x: x.sin() * x),
    "softplus": lambda m: m.nn.functional.softplus,
    "cos": lambda m: m.cos,
    "exp_of_square": lambda m: (lambda x: (x * x).exp()),
    "tanh_of_scaled": lambda m: (lambda x: (x * 3).tanh() * x[0]),
}


def _same_bits(got, want):
    got = np.asarray(got.detach().numpy())
    want = want.detach().numpy()
    torch.testing.assert_close(torch.from_numpy(got.copy()), torch.from_numpy(want.copy()))
    zeros = want == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


@pytest.mark.parametrize("inner", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_jacrev_of_a_jacobian_zeros_are_pytorchs(name, dtype, inner):
    """(jacfwd's vmapped jvps read the forward's values once for the batch of tangents too)"""
    x = np.array([0.5, -1.0, 2.0, -0.25], dtype=dtype)
    want = torch.func.jacrev(getattr(torch.func, inner)(FUNCTIONS[name](torch)))(torch.tensor(x))
    got = gt.func.jacrev(getattr(gt.func, inner)(FUNCTIONS[name](gt)))(gt.tensor(x))
    _same_bits(got, want)


def test_printed_second_derivative_is_pytorchs():
    def shown(module):
        x = module.tensor([0.5, -1.0, 2.0])
        return str(module.func.jacrev(module.func.jacrev(module.tanh))(x))

    assert shown(gt) == shown(torch)


@pytest.mark.parametrize("name", ["tanh", "sin_times_x"])
def test_third_derivative_through_kept_graph(name):
    """Inputs that need a gradient: the nested Jacobian keeps its graph; a backward
    through it still gives PyTorch's values and zeros."""
    x = np.array([0.5, -1.0, 2.0], dtype=np.float64)
    xt = torch.tensor(x, requires_grad=True)
    xg = gt.tensor(x, requires_grad=True)
    want = torch.func.jacrev(torch.func.jacrev(FUNCTIONS[name](torch)))(xt)
    got = gt.func.jacrev(gt.func.jacrev(FUNCTIONS[name](gt)))(xg)
    _same_bits(got, want)
    (want_grad,) = torch.autograd.grad((want * want).sum(), xt)
    (got_grad,) = gt.autograd.grad((got * got).sum(), xg)
    _same_bits(got_grad, want_grad)
