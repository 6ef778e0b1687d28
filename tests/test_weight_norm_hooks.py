"""parametrizations.weight_norm / spectral_norm / orthogonal and the older hook forms
(torch.nn.utils.weight_norm, spectral_norm) against PyTorch: values, grad_fn names,
gradients (a second order too), the power-iteration buffers drawn after manual_seed bit
for bit, state_dict keys and errors."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402
from tests.test_parametrize import _both, _raises  # noqa: E402


def _P(lib):
    return lib.nn.utils.parametrizations


@pytest.mark.parametrize("dim", [0, 1, 2, -1, None])
def test_weight_norm_dims_values_nodes_and_grads(dim):
    def scenario(lib):
        conv = lib.nn.Conv1d(3, 4, 2)
        _P(lib).weight_norm(conv, dim=dim)
        chain = conv.parametrizations.weight
        x = lib.randn(2, 3, 6)
        y = conv(x).sin().sum()
        y.backward()
        return [repr(conv), chain.original0, chain.original1, conv.weight,
                chain.original0.grad, chain.original1.grad, list(conv.state_dict())]

    _both(scenario)


def test_weight_norm_second_order_gradient():
    def scenario(lib):
        lin = lib.nn.Linear(3, 2).double()
        _P(lib).weight_norm(lin)
        g, v = lin.parametrizations.weight.original0, lin.parametrizations.weight.original1
        out = (lin(lib.randn(4, 3, dtype=lib.float64)) ** 2).sum()
        gv, = lib.autograd.grad(out, v, create_graph=True)
        gg, = lib.autograd.grad(gv.pow(2).sum(), g)
        return [gv, gg]

    _both(scenario)


def test_weight_norm_removed_keeps_the_value():
    def scenario(lib):
        lin = lib.nn.Linear(3, 2)
        _P(lib).weight_norm(lin, dim=1)
        lin.weight = lib.ones(2, 3) * 3
        g = lin.parametrizations.weight.original0.clone()
        lib.nn.utils.parametrize.remove_parametrizations(lin, "weight")
        return [g, lin.weight, repr(lin), [n for n, _ in lin.named_parameters()]]

    _both(scenario)


def test_norm_except_dim_and_weight_norm_function():
    def scenario(lib):
        v = lib.randn(2, 3, 4, requires_grad=True)
        g = lib.rand(1, 3, 1, requires_grad=True)
        w = lib._weight_norm(v, g, 1)
        w.sum().backward()
        return [lib.norm_except_dim(v, 2, 0), lib.norm_except_dim(v, 2, 1),
                lib.norm_except_dim(v, 2, 2), lib.norm_except_dim(v, 2, -1), w, v.grad,
                g.grad]

    _both(scenario)


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.Linear(6, 4),
    lambda lib: lib.nn.Conv2d(2, 3, 3),
    lambda lib: lib.nn.Bilinear(2, 3, 4),
], ids=["linear", "conv2d", "bilinear"])
@pytest.mark.parametrize("dim,iters", [(None, 1), (1, 3), (-1, 2)])
def test_spectral_norm_buffers_values_and_grads(make, dim, iters):
    def scenario(lib):
        mod = make(lib)
        _P(lib).spectral_norm(mod, n_power_iterations=iters, dim=dim)
        bufs = dict(mod.named_buffers())
        first = [bufs["parametrizations.weight.0._u"].clone(),
                 bufs["parametrizations.weight.0._v"].clone()]
        w = mod.weight
        w.pow(2).sum().backward()
        mod.eval()
        frozen = mod.weight
        return [repr(mod), *first, w, mod.parametrizations.weight.original.grad, frozen,
                bufs["parametrizations.weight.0._u"], list(mod.state_dict())]

    _both(scenario)


def test_spectral_norm_of_a_vector_normalises_it():
    def scenario(lib):
        lin = lib.nn.Linear(3, 5)
        _P(lib).spectral_norm(lin, "bias")
        lin.bias.sum().backward()
        return [lin.bias, lin.parametrizations.bias.original.grad,
                sorted(n for n, _ in lin.named_buffers())]

    _both(scenario)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 3)])
@pytest.mark.parametrize("kind", [None, "matrix_exp", "cayley", "householder"])
def test_orthogonal_maps(shape, kind):
    if kind == "householder" and len(shape) == 3:
        pytest.skip("covered by the square/tall/wide cases")

    def scenario(lib):
        mod = lib.nn.Module()
        mod.register_parameter("weight", lib.nn.Parameter(lib.randn(*shape)))
        _P(lib).orthogonal(mod, orthogonal_map=kind)
        Q = mod.weight
        n = min(shape[-2:])
        gram = Q.mT @ Q if shape[-2] >= shape[-1] else Q @ Q.mT
        (Q * lib.linspace(-1, 1, Q.numel()).reshape(Q.shape)).sum().backward()
        return [repr(mod), Q, bool(lib.allclose(gram, lib.eye(n).expand_as(gram), atol=1e-5)),
                mod.parametrizations.weight.original.grad]

    _both(scenario)


def test_orthogonal_assignment_and_no_trivialization():
    def scenario(lib):
        lin = lib.nn.Linear(3, 3)
        _P(lib).orthogonal(lin)
        target = lib.nn.init.orthogonal_(lib.empty(3, 3))
        lin.weight = target
        plain = lib.nn.Linear(4, 3)
        _P(lib).orthogonal(plain, orthogonal_map="householder", use_trivialization=False)
        names = sorted(n for n, _ in plain.named_buffers())
        return [lin.weight, plain.weight, names]

    _both(scenario)


@pytest.mark.parametrize("case", [
    lambda lib: _P(lib).orthogonal(lib.nn.Linear(3, 3), "bias"),
    lambda lib: _P(lib).orthogonal(lib.nn.Linear(3, 3), orthogonal_map="qr"),
    lambda lib: _P(lib).orthogonal(lib.nn.Linear(3, 3), "nope"),
    lambda lib: _P(lib).spectral_norm(lib.nn.Linear(3, 3), n_power_iterations=0),
    lambda lib: _P(lib).spectral_norm(lib.nn.Linear(3, 3), dim=2),
    lambda lib: setattr(_P(lib).orthogonal(lib.nn.Linear(3, 3), orthogonal_map="cayley",
                                           use_trivialization=False), "weight", lib.eye(3)),
    lambda lib: setattr(_P(lib).orthogonal(lib.nn.Linear(3, 3)), "weight", lib.eye(2)),
], ids=["vector", "bad-map", "no-name", "iterations", "dim", "cayley-no-trivialization",
        "assign-shape"])
def test_errors_as_pytorch(case):
    _raises(case)


def test_old_weight_norm_hook():
    def scenario(lib):
        import warnings

        lin = lib.nn.Linear(4, 3)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            lib.nn.utils.weight_norm(lin, dim=1)
        out = lin(lib.randn(2, 4)).exp().sum()
        out.backward()
        got = [repr(lin), [str(w.message) for w in seen], lin.weight, lin.weight_g,
               lin.weight_g.grad, lin.weight_v.grad, list(lin.state_dict())]
        lib.nn.utils.remove_weight_norm(lin)
        return got + [lin.weight, [n for n, _ in lin.named_parameters()]]

    _both(scenario)


def test_old_spectral_norm_hook():
    def scenario(lib):
        conv = lib.nn.Conv2d(2, 3, 2)
        lib.nn.utils.spectral_norm(conv, n_power_iterations=2)
        first = [conv.weight_u.clone(), conv.weight_v.clone(), conv.weight]
        for _ in range(2):
            conv(lib.randn(1, 2, 4, 4)).sum().backward()
        conv.eval()
        conv(lib.ones(1, 2, 3, 3))
        got = first + [conv.weight, conv.weight_u, conv.weight_orig.grad,
                       list(conv.state_dict())]
        lib.nn.utils.remove_spectral_norm(conv)
        return got + [conv.weight, [n for n, _ in conv.named_parameters()],
                      list(conv.state_dict())]

    _both(scenario)


@pytest.mark.parametrize("case", [
    lambda lib: lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2)),
    lambda lib: lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2)),
    lambda lib: lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2))),
], ids=["remove-wn", "remove-sn", "twice-sn"])
def test_old_hook_errors_as_pytorch(case):
    _raises(case)


def test_spectral_norm_draws_as_many_numbers_as_pytorch():
    """u and v are drawn from the generator as PyTorch draws them (what follows is the same
    bit for bit); the 15 power-iteration steps after the draws agree to rounding."""
    got = []
    for lib in (torch, gt):
        lib.manual_seed(11)
        lin = lib.nn.Linear(7, 5)
        _P(lib).spectral_norm(lin)
        bufs = dict(lin.named_buffers())
        got.append(([bufs[k].detach().numpy() for k in sorted(bufs)],
                    lib.rand(3).numpy().tobytes()))
    assert got[0][1] == got[1][1]
    for ref, mine in zip(got[0][0], got[1][0]):
        np.testing.assert_allclose(mine, ref, rtol=1.3e-6, atol=1e-5)
