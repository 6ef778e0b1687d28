"""torch.nn.utils.parametrize against PyTorch: each scenario runs on both libraries and
must print, name, save and differentiate alike (the Parametrizations tutorial's ground,
walked with other modules, buffers, chains, inverses and errors)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402


def _utils(lib):
    return lib.nn, lib.nn.utils.parametrize


def _same(ref, got):
    """Reprs and names exactly, tensors within float32 tolerance plus their grad_fn."""
    assert len(ref) == len(got)
    for i, (a, b) in enumerate(zip(ref, got)):
        if isinstance(a, torch.Tensor):
            assert isinstance(b, gt.Tensor), (i, b)
            assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype), i
            assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__, i
            np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1.3e-6,
                                       atol=1e-5, err_msg=str(i))
        else:
            assert a == b, (i, a, b)


def _both(scenario):
    out = []
    for lib in (torch, gt):
        lib.manual_seed(3)
        out.append(scenario(lib))
    _same(*out)
    return out


def _raises(scenario):
    """Both libraries raise the same exception type with the same text."""
    caught = []
    for lib in (torch, gt):
        lib.manual_seed(0)
        with pytest.raises(Exception) as info:
            scenario(lib)
        caught.append((type(info.value).__name__, str(info.value)))
    assert caught[0] == caught[1]


def _lower_tri(lib):
    nn, _ = _utils(lib)

    class LowerTri(nn.Module):
        def forward(self, X):
            return X.tril()

        def right_inverse(self, A):
            return A.tril()

    return LowerTri


def _scale(lib):
    nn, _ = _utils(lib)

    class Scale(nn.Module):
        def __init__(self, k):
            super().__init__()
            self.k = nn.Parameter(lib.tensor(k))

        def forward(self, X):
            return X * self.k

        def right_inverse(self, A):
            return A / self.k

    return Scale


def test_buffer_parametrized_prints_and_saves_as_pytorch():
    def scenario(lib):
        nn, P = _utils(lib)
        bn = nn.BatchNorm1d(3)
        P.register_parametrization(bn, "running_var", _scale(lib)(2.0))
        return [repr(bn), type(bn).__name__, sorted(bn.state_dict()),
                sorted(n for n, _ in bn.named_buffers()), bn.running_var,
                P.is_parametrized(bn, "running_var"), P.is_parametrized(bn, "weight")]

    ref, got = _both(scenario)
    assert "ParametrizationList" in got[0]


def test_chain_with_parameters_differentiates_every_original():
    def scenario(lib):
        nn, P = _utils(lib)
        conv = nn.Conv1d(2, 4, 3, bias=False)
        P.register_parametrization(conv, "weight", _lower_tri(lib)())
        P.register_parametrization(conv, "weight", _scale(lib)(2.5))
        x = lib.randn(2, 2, 5)
        out = conv(x).tanh().sum()
        out.backward()
        chain = conv.parametrizations.weight
        return [repr(conv), conv.weight, chain.original.grad, chain[1].k.grad,
                [n for n, _ in conv.named_parameters()], len(chain), repr(chain[1])]

    _both(scenario)


def test_assignment_runs_the_inverses_last_first():
    def scenario(lib):
        nn, P = _utils(lib)
        lin = nn.Linear(3, 3)
        P.register_parametrization(lin, "weight", _lower_tri(lib)())
        P.register_parametrization(lin, "weight", _scale(lib)(-2.0))
        before = lin.parametrizations.weight.original
        lin.weight = lib.arange(9.).reshape(3, 3)
        same_object = lin.parametrizations.weight.original is before
        return [lin.weight, lin.parametrizations.weight.original, same_object,
                lin.parametrizations.weight.original.requires_grad]

    _both(scenario)


def test_tuple_right_inverse_makes_numbered_originals():
    def scenario(lib):
        nn, P = _utils(lib)

        class SumOfTwo(nn.Module):
            def forward(self, a, b):
                return a + b

            def right_inverse(self, W):
                return W * 0.25, W * 0.75

        lin = nn.Linear(2, 3)
        P.register_parametrization(lin, "weight", SumOfTwo())
        chain = lin.parametrizations.weight
        names = [n for n, _ in lin.named_parameters()]
        lin(lib.ones(1, 2)).pow(2).sum().backward()
        grads = [chain.original0.grad, chain.original1.grad]
        lin.weight = lib.ones(3, 2)
        P.remove_parametrizations(lin, "weight")
        return [names, chain.original0, chain.original1, *grads, chain.ntensors, lin.weight,
                type(lin).__name__, isinstance(lin.weight, lib.nn.Parameter)]

    _both(scenario)


def test_cached_computes_each_tensor_once_per_block():
    def scenario(lib):
        nn, P = _utils(lib)
        calls = []

        class Counting(nn.Module):
            def forward(self, X):
                calls.append(1)
                return X * 2

        lin = nn.Linear(2, 2)
        P.register_parametrization(lin, "weight", Counting())
        n0 = len(calls)
        reads = [lin.weight, lin.weight]
        n1 = len(calls)
        with P.cached():
            a = lin.weight
            b = lin.weight
            with P.cached():
                c = lin.weight
        reads.append(lin.weight)
        return [n0, n1, len(calls), a is b, b is c, reads[0] is reads[1]]

    _both(scenario)


def test_remove_restores_class_and_keeps_value_or_original():
    def scenario(lib):
        nn, P = _utils(lib)
        out = []
        for leave in (True, False):
            lin = nn.Linear(3, 2)
            param = lin.weight
            P.register_parametrization(lin, "weight", _scale(lib)(3.0))
            P.register_parametrization(lin, "bias", _scale(lib)(0.5))
            P.remove_parametrizations(lin, "weight", leave_parametrized=leave)
            out += [repr(lin), type(lin).__name__, lin.weight, lin.weight is param,
                    P.type_before_parametrizations(lin).__name__]
            P.remove_parametrizations(lin, "bias")
            out += [repr(lin), type(lin).__name__, hasattr(lin, "parametrizations"), lin.bias]
        return out

    _both(scenario)


def test_transfer_shares_the_parametrization_objects():
    def scenario(lib):
        nn, P = _utils(lib)
        src = nn.Linear(3, 3)
        P.register_parametrization(src, "weight", _lower_tri(lib)())
        dst = nn.Linear(3, 3)
        P.transfer_parametrizations_and_params(src, dst)
        return [repr(dst), dst.weight, dst.parametrizations.weight[0] is
                src.parametrizations.weight[0],
                dst.parametrizations.weight.original is src.parametrizations.weight.original]

    _both(scenario)


def test_training_flag_follows_the_module_at_registration():
    def scenario(lib):
        nn, P = _utils(lib)
        lin = nn.Linear(2, 2).eval()
        step = _lower_tri(lib)()
        P.register_parametrization(lin, "weight", step)
        lin.train()
        return [step.training, lin.parametrizations.training]

    _both(scenario)


def _shape_changer(lib):
    nn, _ = _utils(lib)

    class Flat(nn.Module):
        def forward(self, X):
            return X.reshape(-1)

    return Flat


def _dtype_changer(lib):
    nn, _ = _utils(lib)

    class Double(nn.Module):
        def forward(self, X):
            return X.double()

    return Double


@pytest.mark.parametrize("case", [
    lambda lib: _utils(lib)[1].register_parametrization(
        lib.nn.Linear(2, 3), "weight", _shape_changer(lib)()),
    lambda lib: _utils(lib)[1].register_parametrization(
        lib.nn.Linear(2, 3), "weight", _dtype_changer(lib)()),
    lambda lib: _utils(lib)[1].register_parametrization(
        _utils(lib)[1].register_parametrization(lib.nn.Linear(2, 3), "weight",
                                                _lower_tri(lib)()),
        "weight", _shape_changer(lib)()),
    lambda lib: _utils(lib)[1].remove_parametrizations(lib.nn.Linear(2, 3), "weight"),
    lambda lib: _utils(lib)[1].register_parametrization(lib.nn.Linear(2, 3), "nothing",
                                                        _lower_tri(lib)()),
], ids=["shape", "dtype", "shape-chained", "remove-unparametrized", "unknown-name"])
def test_errors_as_pytorch(case):
    _raises(case)


def test_assigning_without_right_inverse_raises_as_pytorch():
    def scenario(lib):
        nn, P = _utils(lib)
        lin = nn.Linear(2, 2)
        P.register_parametrization(lin, "weight", _shape_changer(lib)(), unsafe=True)
        lin.weight = lib.zeros(4)

    _raises(scenario)


def test_unsafe_allows_a_new_shape():
    def scenario(lib):
        nn, P = _utils(lib)
        lin = nn.Linear(2, 3)
        P.register_parametrization(lin, "weight", _shape_changer(lib)(), unsafe=True)
        return [lin.weight, lin.parametrizations.weight.unsafe]

    _both(scenario)


def test_type_of_parametrized_module_prints_as_pytorch():
    def scenario(lib):
        nn, P = _utils(lib)
        lin = nn.Linear(2, 2)
        P.register_parametrization(lin, "weight", _lower_tri(lib)())
        return [str(type(lin)).replace("gradcli.", ""), isinstance(lin, nn.Linear),
                str(type(lin.parametrizations.weight))]

    _both(scenario)
