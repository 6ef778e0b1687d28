"""optim.Adafactor, optim.Muon and optim.SparseAdam against PyTorch: parameters and state
after several steps (matrices and vectors, weight decay, maximize, eps1 given or not),
the constructors' argument errors, SparseAdam's refusal of dense gradients."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402

RNG = np.random.default_rng(3)
W = RNG.standard_normal((4, 3)).astype(np.float32)
B = RNG.standard_normal(3).astype(np.float32)
X = RNG.standard_normal((5, 4)).astype(np.float32)


def _train(lib, make, steps=4, use_bias=True, w=W):
    weight = lib.tensor(w, requires_grad=True)
    bias = lib.tensor(B, requires_grad=True)
    opt = make(lib, [weight, bias] if use_bias else [weight])
    for _ in range(steps):
        opt.zero_grad()
        out = lib.tensor(X[:, :w.shape[0]]) @ weight
        loss = ((out + bias) ** 2).sum() if use_bias else (out ** 2).sum()
        loss.backward()
        opt.step()
    return weight, bias, opt


@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.05, "weight_decay": 0.1},
                                    {"maximize": True, "d": 2.0},
                                    {"eps": (1e-20, 1e-2), "beta2_decay": -0.5}])
def test_adafactor_as_pytorch(kwargs):
    runs = [_train(lib, lambda lib, ps: lib.optim.Adafactor(ps, **kwargs)) for lib in (gt, torch)]
    (w1, b1, o1), (w2, b2, o2) = runs
    np.testing.assert_allclose(w1.detach().numpy(), w2.detach().numpy(), rtol=1.3e-6, atol=1e-5)
    np.testing.assert_allclose(b1.detach().numpy(), b2.detach().numpy(), rtol=1.3e-6, atol=1e-5)
    for key in ("row_var", "col_var"):
        np.testing.assert_allclose(o1.state[w1][key].numpy(), o2.state[w2][key].numpy(),
                                   rtol=1.3e-6, atol=1e-5)
    np.testing.assert_allclose(o1.state[b1]["variance"].numpy(), o2.state[b2]["variance"].numpy(),
                               rtol=1.3e-6, atol=1e-5)
    assert o1.state[w1]["step"].item() == o2.state[w2]["step"].item()
    assert repr(o1) == repr(o2)


@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.02, "nesterov": False},
                                    {"adjust_lr_fn": "match_rms_adamw", "weight_decay": 0.0},
                                    {"ns_steps": 3, "momentum": 0.5}])
@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_muon_as_pytorch(kwargs, shape):
    w = RNG.standard_normal(shape).astype(np.float32)
    runs = [_train(lib, lambda lib, ps: lib.optim.Muon(ps, **kwargs), use_bias=False, w=w)
            for lib in (gt, torch)]
    (w1, _, o1), (w2, _, o2) = runs
    # (bfloat16 Newton-Schulz: agreement to bfloat16's precision, scaled by the step)
    np.testing.assert_allclose(w1.detach().numpy(), w2.detach().numpy(), rtol=0, atol=1e-3)
    np.testing.assert_allclose(o1.state[w1]["momentum_buffer"].numpy(),
                               o2.state[w2]["momentum_buffer"].numpy(), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("name, kwargs", [
    ("Adafactor", {"lr": -1.0}), ("Adafactor", {"beta2_decay": 0.5}),
    ("Adafactor", {"eps": (-1.0, 1e-3)}), ("Adafactor", {"eps": (None, -1.0)}),
    ("Adafactor", {"d": 0.5}), ("Adafactor", {"weight_decay": -1.0}),
    ("Muon", {"lr": -1.0}), ("Muon", {"momentum": -1.0}), ("Muon", {"weight_decay": -1.0}),
    ("Muon", {"adjust_lr_fn": "other"}),
    ("SparseAdam", {"lr": 0.0}), ("SparseAdam", {"eps": 0.0}),
    ("SparseAdam", {"betas": (1.0, 0.9)}), ("SparseAdam", {"betas": (0.9, -0.1)}),
])
def test_constructor_errors(name, kwargs):
    messages = []
    for lib in (gt, torch):
        with pytest.raises(ValueError) as info:
            getattr(lib.optim, name)([lib.zeros(2, 2, requires_grad=True)], **kwargs)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_muon_refuses_non_matrices():
    messages = []
    for lib in (gt, torch):
        with pytest.raises(ValueError) as info:
            lib.optim.Muon([lib.zeros(3, requires_grad=True)])
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_sparse_adam_refuses_dense_gradients():
    for lib in (gt, torch):
        p = lib.ones(3, requires_grad=True)
        opt = lib.optim.SparseAdam([p])
        (p * 2).sum().backward()
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, "
                                               "please consider Adam instead"):
            opt.step()
        opt.zero_grad()
        assert opt.step() is None  # (no gradient: nothing to refuse)


def test_classes_print_as_pytorchs():
    for name in ("Adafactor", "Muon", "SparseAdam"):
        assert str(getattr(gt.optim, name)) == str(getattr(torch.optim, name))
