"""The nn layer classes of issue #23 against real PyTorch: after the same manual_seed each
class holds PyTorch's parameters bit for bit (same names, order, shapes, dtypes), prints
PyTorch's repr and type, and its forward gives PyTorch's values, grad_fn name and
gradients (of the inputs and of the parameters); a few constructor errors as PyTorch's."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gradcli.torch as G

torch = pytest.importorskip("torch")


def f(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(dtype)


def pos(*shape, seed=0):
    return np.abs(f(*shape, seed=seed)) + np.float32(0.1)


def ints(high, *shape, seed=0):
    return np.random.default_rng(seed + 7).integers(0, high, shape).astype(np.int64)


def sign(*shape):
    return np.where(f(*shape, seed=3) > 0, 1.0, -1.0).astype(np.float32)


def _arr(t):
    return np.array(t.detach().tolist()) if t is not None else None


# name: (constructor args, constructor kwargs, inputs (numpy arrays; float ones require grad))
CASES = {
    # activations
    "Threshold": ((0.1, 20.0), {}, [f(3, 4)]),
    "RReLU": ((), {}, [f(3, 4)]),  # eval mode below; training draws: own test
    "Hardsigmoid": ((), {}, [f(3, 4) * 4]),
    "Hardswish": ((), {}, [f(3, 4) * 4]),
    "Mish": ((), {}, [f(3, 4)]),
    "SELU": ((), {}, [f(3, 4)]),
    "CELU": ((0.7,), {}, [f(3, 4)]),
    "GLU": ((), {"dim": 1}, [f(3, 4)]),
    "Hardshrink": ((0.3,), {}, [f(3, 4)]),
    "Softshrink": ((), {}, [f(3, 4)]),
    "LogSigmoid": ((), {}, [f(3, 4)]),
    "PReLU": ((), {"num_parameters": 3, "init": 0.2}, [f(2, 3, 4)]),
    "PReLU_1": ((), {}, [f(2, 3, 4)]),
    "Softsign": ((), {}, [f(3, 4)]),
    "Tanhshrink": ((), {}, [f(3, 4)]),
    "Softmin": ((1,), {}, [f(3, 4)]),
    "Softmax2d": ((), {}, [f(2, 3, 2, 2)]),
    # convolutions
    "Conv3d": ((2, 4, 2), {"stride": (1, 2, 1), "padding": 1}, [f(2, 2, 3, 4, 3)]),
    "Conv3d_groups": ((2, 4, (1, 2, 2)), {"groups": 2, "bias": False}, [f(1, 2, 3, 3, 3)]),
    "ConvTranspose1d": ((2, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1},
                        [f(2, 2, 5)]),
    "ConvTranspose2d": ((4, 2, (3, 2)), {"stride": 2, "groups": 2, "dilation": (1, 2)},
                        [f(1, 4, 3, 3)]),
    "ConvTranspose2d_nobias": ((2, 3, 2), {"bias": False}, [f(2, 3, 3)]),
    "ConvTranspose3d": ((2, 2, 2), {"stride": (2, 1, 1)}, [f(1, 2, 2, 3, 2)]),
    # normalisation
    "GroupNorm": ((2, 4), {}, [f(3, 4, 5)]),
    "GroupNorm_noaffine": ((1, 4), {"affine": False, "eps": 1e-3}, [f(2, 4, 2, 3)]),
    "RMSNorm": ((4,), {}, [f(3, 4)]),
    "RMSNorm_eps": (((2, 3),), {"eps": 1e-3, "elementwise_affine": False}, [f(2, 2, 3)]),
    "LocalResponseNorm": ((3,), {"alpha": 0.1, "k": 2.0}, [f(2, 5, 3)]),
    "CrossMapLRN2d": ((3,), {"alpha": 0.5, "beta": 0.6, "k": 2}, [f(2, 5, 3, 2)]),
    "CrossMapLRN2d_wide": ((4,), {}, [f(1, 7, 2, 2) * 30]),
    "CrossMapLRN2d_narrow": ((5,), {"alpha": 1.0}, [f(2, 2, 1, 3)]),
    # pooling
    "MaxPool3d": ((2,), {"stride": 1}, [f(1, 2, 3, 3, 3)]),
    "AvgPool1d": ((3,), {"stride": 2, "padding": 1}, [f(2, 3, 7)]),
    "AvgPool3d": ((2,), {"ceil_mode": True}, [f(1, 2, 3, 4, 5)]),
    "AdaptiveAvgPool1d": ((3,), {}, [f(2, 3, 7)]),
    "AdaptiveAvgPool3d": (((2, None, 1),), {}, [f(1, 2, 3, 4, 5)]),
    "AdaptiveMaxPool1d": ((3,), {}, [f(2, 3, 7)]),
    "AdaptiveMaxPool2d": ((2,), {"return_indices": True}, [f(1, 2, 5, 4)]),
    "AdaptiveMaxPool3d": ((2,), {}, [f(1, 2, 3, 4, 5)]),
    "LPPool1d": ((2, 3), {"stride": 2}, [f(2, 3, 7)]),
    "LPPool2d": ((3, 2), {}, [pos(1, 2, 4, 4)]),
    "LPPool3d": ((2, 2), {}, [f(1, 2, 4, 4, 4)]),
    "LPPool1d_inf": ((float("inf"), 2), {}, [f(2, 3, 6)]),
    "LPPool2d_inf": ((float("inf"), 2), {"stride": 1}, [f(1, 2, 4, 4)]),
    "LPPool2d_neginf": ((-float("inf"), (2, 1)), {"ceil_mode": True}, [f(2, 3, 5)]),
    "LPPool3d_inf": ((float("inf"), 2), {}, [f(1, 2, 4, 4, 4)]),
    # padding
    **{f"{kind}Pad{n}d": (((1, 2) * n,) if kind != "Constant" else ((1, 2) * n, 0.5), {},
                          [f(*(2,) * 1, *(3,) * (n + 1))])
       for kind in ("Zero", "Constant", "Reflection", "Replication", "Circular")
       for n in (1, 2, 3)},
    "ZeroPad2d_int": ((2,), {}, [f(1, 2, 3)]),
    # reshaping and distances
    "PixelShuffle": ((2,), {}, [f(1, 8, 2, 3)]),
    "PixelUnshuffle": ((2,), {}, [f(1, 2, 4, 6)]),
    "ChannelShuffle": ((2,), {}, [f(1, 4, 2, 2)]),
    "Fold": (((3, 4), 2), {}, [f(2, 12, 6)]),
    "Unfold": ((2,), {"padding": 1, "stride": 2}, [f(2, 3, 4, 5)]),
    "Upsample": ((), {"scale_factor": 2, "mode": "bilinear"}, [f(1, 2, 3, 3)]),
    "UpsamplingNearest2d": ((), {"size": (4, 5)}, [f(1, 2, 3, 3)]),
    "UpsamplingBilinear2d": ((), {"scale_factor": 2}, [f(1, 2, 2, 3)]),
    "CosineSimilarity": ((), {"dim": 0}, [f(3, 4), f(3, 4, seed=1)]),
    "PairwiseDistance": ((), {"p": 1.5, "keepdim": True}, [f(3, 4), f(3, 4, seed=1)]),
    "EmbeddingBag": ((6, 3), {"mode": "sum", "padding_idx": 2}, [ints(6, 2, 4)]),
    "EmbeddingBag_max": ((6, 3), {"mode": "max"}, [ints(6, 3, 2)]),
    "EmbeddingBag_maxnorm": ((6, 3), {"max_norm": 0.7, "norm_type": 1.5}, [ints(6, 2, 3)]),
    # losses
    "PoissonNLLLoss": ((), {}, [f(3, 4), pos(3, 4, seed=1)]),
    "PoissonNLLLoss_full": ((), {"log_input": False, "full": True, "reduction": "sum"},
                            [pos(3, 4), pos(3, 4, seed=1) * np.float32(3)]),
    "GaussianNLLLoss": ((), {"full": True}, [f(3, 4), f(3, 4, seed=1), pos(3, 4, seed=2)]),
    "HingeEmbeddingLoss": ((), {"margin": 0.5}, [f(3, 4), sign(3, 4)]),
    "MultiLabelMarginLoss": ((), {}, [f(2, 4), np.array([[3, 0, -1, 1], [1, 2, 3, -1]])]),
    "SoftMarginLoss": ((), {"reduction": "none"}, [f(3, 4), sign(3, 4)]),
    "MultiLabelSoftMarginLoss": ((), {}, [f(3, 4), (sign(3, 4) + 1) / np.float32(2)]),
    "CosineEmbeddingLoss": ((), {"margin": 0.2}, [f(3, 4), f(3, 4, seed=1), sign(3)]),
    "MarginRankingLoss": ((), {"margin": 0.1}, [f(5), f(5, seed=1), sign(5)]),
    "MultiMarginLoss": ((), {"p": 2, "margin": 0.5}, [f(3, 4), ints(4, 3)]),
    "TripletMarginLoss": ((), {"swap": True}, [f(3, 4), f(3, 4, seed=1), f(3, 4, seed=2)]),
    "TripletMarginWithDistanceLoss": ((), {}, [f(3, 4), f(3, 4, seed=1), f(3, 4, seed=2)]),
    "NLLLoss2d": ((), {}, [f(2, 3, 2, 2), ints(3, 2, 2, 2)]),
    "AdaptiveLogSoftmaxWithLoss": ((8, 13, [3, 6, 10]), {"div_value": 2.0, "head_bias": True},
                                   [f(6, 8), np.array([0, 3, 5, 9, 12, 2])]),
    "AdaptiveLogSoftmaxWithLoss_unbatched": ((5, 7, (2,)), {}, [f(5), np.array(4)]),
    "LinearCrossEntropyLoss": ((6, 5), {"bias": True, "label_smoothing": 0.1}, [f(4, 6),
                                                                              ints(5, 4)]),
    "LinearCrossEntropyLoss_kdim": ((6, 5), {"out_features": (3,), "ignore_index": 2,
                                             "reduction": "sum"}, [f(4, 6), ints(5, 4, 3)]),
}


def _build(lib, key):
    args, kwargs, _ = CASES[key]
    name = key.split("_")[0]
    lib.manual_seed(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        module = getattr(lib.nn, name)(*args, **kwargs)
    if name == "RReLU":
        module.eval()
    return module


def _run(lib, module, arrays):
    ins = [lib.tensor(a, requires_grad=a.dtype.kind == "f" and a.dtype != np.int64
                      and not _is_target(module, i))
           for i, a in enumerate(arrays)]
    out = module(*ins)
    first = out[0] if isinstance(out, tuple) else out
    weights = lib.tensor(np.linspace(-1, 1, first.numel()).reshape(tuple(first.shape)))
    (first * weights.to(first.dtype)).sum().backward()
    return ins, out


def _is_target(module, i):
    """The losses' targets (the last input but for the three-input distance losses) take no
    gradient, so the comparison covers the gradients PyTorch computes."""
    name = type(module).__name__
    if not name.endswith("Loss") and name != "NLLLoss2d":
        return False
    if name in ("TripletMarginLoss", "TripletMarginWithDistanceLoss"):
        return False
    if name == "GaussianNLLLoss":
        return i == 1
    if name in ("CosineEmbeddingLoss", "MarginRankingLoss"):
        return i == 2
    return i == 1


@pytest.mark.parametrize("key", sorted(CASES))
def test_module_matches_pytorch(key):
    ours, theirs = _build(G, key), _build(torch, key)
    assert repr(ours) == repr(theirs)
    assert repr(type(ours)) == repr(type(theirs))
    ours_sd, theirs_sd = ours.state_dict(), theirs.state_dict()
    assert list(ours_sd) == list(theirs_sd)
    for name in theirs_sd:  # the seeded initialisation, bit for bit
        a, b = ours_sd[name], theirs_sd[name]
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
        assert np.array_equal(np.asarray(a.tolist()), b.numpy()), name
    arrays = CASES[key][2]
    g_in, g_out = _run(G, ours, arrays)
    t_in, t_out = _run(torch, theirs, arrays)
    g_outs = g_out if isinstance(g_out, tuple) else (g_out,)
    t_outs = t_out if isinstance(t_out, tuple) else (t_out,)
    assert len(g_outs) == len(t_outs)
    for a, b in zip(g_outs, t_outs):
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
        torch.testing.assert_close(torch.tensor(_arr(a), dtype=b.dtype), b.detach())
    assert type(g_outs[0].grad_fn).__name__ == type(t_outs[0].grad_fn).__name__
    for a, b in zip(g_in, t_in):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            torch.testing.assert_close(torch.tensor(_arr(a.grad), dtype=b.grad.dtype), b.grad)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert (p.grad is None) == (q.grad is None), name
        if q.grad is not None:
            torch.testing.assert_close(torch.tensor(_arr(p.grad), dtype=q.dtype), q.grad)


def test_conv_transpose_output_size_as_pytorch():
    G.manual_seed(0)
    ours = G.nn.ConvTranspose2d(2, 3, 3, stride=2)
    torch.manual_seed(0)
    theirs = torch.nn.ConvTranspose2d(2, 3, 3, stride=2)
    x = f(1, 2, 4, 4)
    a = ours(G.tensor(x), output_size=[10, 10])
    b = theirs(torch.tensor(x), output_size=[1, 3, 10, 10])
    assert tuple(a.shape) == tuple(b.shape) == (1, 3, 10, 10)
    torch.testing.assert_close(torch.tensor(_arr(a), dtype=b.dtype), b.detach())
    for size in ([12, 12], [9]):
        with pytest.raises(ValueError) as theirs_err:
            theirs(torch.tensor(x), output_size=size)
        with pytest.raises(ValueError) as ours_err:
            ours(G.tensor(x), output_size=size)
        assert str(ours_err.value) == str(theirs_err.value)


def test_conv_transpose_repr_lists_output_padding_before_groups():
    args = (4, 6, 3)
    kwargs = {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2, "dilation": 2,
              "bias": False}
    assert repr(G.nn.ConvTranspose1d(*args, **kwargs)) == \
        repr(torch.nn.ConvTranspose1d(*args, **kwargs))


@pytest.mark.parametrize("name, p", [("RReLU", None), ("AlphaDropout", 0.3),
                                     ("FeatureAlphaDropout", 0.4)])
def test_random_layers_draw_as_pytorch_in_training(name, p):
    x = f(2, 3, 4, 2)
    outs = []
    for lib in (G, torch):
        module = getattr(lib.nn, name)() if p is None else getattr(lib.nn, name)(p)
        assert module.training
        lib.manual_seed(3)
        t = lib.tensor(x, requires_grad=True)
        y = module(t)
        y.sum().backward()
        module.eval()
        same = module(t)
        outs.append((_arr(y), type(y.grad_fn).__name__, _arr(t.grad), _arr(same), repr(module)))
    (yg, ng, gg, eg, rg), (yt, nt, gt, et, rt) = outs
    np.testing.assert_allclose(yg, yt, rtol=1e-7, atol=1e-7)
    assert ng == nt and rg == rt
    np.testing.assert_allclose(gg, gt, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(eg, et, rtol=1e-7, atol=1e-7)


def test_maxunpool_inverts_maxpool_as_pytorch():
    x = f(1, 2, 4, 4)
    results = []
    for lib in (G, torch):
        pool = lib.nn.MaxPool2d(2, stride=2, return_indices=True)
        unpool = lib.nn.MaxUnpool2d(2, stride=2)
        t = lib.tensor(x, requires_grad=True)
        y, idx = pool(t)
        z = unpool(y, idx, output_size=[5, 5])
        z.sum().backward()
        results.append((_arr(z), type(z.grad_fn).__name__, _arr(t.grad), repr(unpool)))
    (zg, ng, gg, rg), (zt, nt, gt, rt) = results
    np.testing.assert_allclose(zg, zt)
    assert ng == nt and rg == rt
    np.testing.assert_allclose(gg, gt)
    for n in (1, 3):
        args = (2, 1, 1) if n == 1 else ((2, 1, 2),)
        assert repr(getattr(G.nn, f"MaxUnpool{n}d")(*args)) == \
            repr(getattr(torch.nn, f"MaxUnpool{n}d")(*args))


def test_ctc_loss_module_matches():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((6, 2, 4))
    targets = np.array([[1, 2, 2], [3, 1, 0]])
    results = []
    for lib in (G, torch):
        loss = lib.nn.CTCLoss(blank=0, zero_infinity=True)
        x = lib.tensor(logits, requires_grad=True)
        y = loss(x.log_softmax(2), lib.tensor(targets), lib.tensor([6, 5]), lib.tensor([3, 2]))
        y.backward()
        results.append((_arr(y), _arr(x.grad), repr(loss)))
    (yg, gg, rg), (yt, gt, rt) = results
    np.testing.assert_allclose(yg, yt, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(gg, gt, rtol=1e-6, atol=1e-7)
    assert rg == rt


def test_embedding_bag_from_pretrained_and_offsets():
    w = f(5, 3)
    results = []
    for lib in (G, torch):
        bag = lib.nn.EmbeddingBag.from_pretrained(lib.tensor(w), freeze=False, mode="mean")
        y = bag(lib.tensor([0, 2, 4, 1, 3]), lib.tensor([0, 2]))
        y.sum().backward()
        results.append((_arr(y), _arr(bag.weight.grad), bag.weight.requires_grad, repr(bag)))
    (yg, gg, qg, rg), (yt, gt, qt, rt) = results
    np.testing.assert_allclose(yg, yt)
    np.testing.assert_allclose(gg, gt)
    assert qg == qt and rg == rt


def test_nllloss2d_warns_as_pytorch():
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated") as ours:
        G.nn.NLLLoss2d()
    assert ours[0].filename == __file__


@pytest.mark.filterwarnings("ignore:size_average and reduce")
def test_more_module_reprs_with_options():
    cases = [("Threshold", (0.5, 1.0), {"inplace": True}), ("RReLU", (0.1, 0.3), {}),
             ("Mish", (), {"inplace": True}), ("SELU", (), {"inplace": True}),
             ("Hardswish", (), {"inplace": True}), ("CELU", (), {"inplace": True}),
             ("GroupNorm", (3, 6), {"affine": False}), ("GroupNorm", (3, 6), {"bias": False}),
             ("RMSNorm", ([2, 3],), {"eps": 1e-5}),
             ("AvgPool3d", (2,), {"stride": 1, "padding": 1}),
             ("MaxPool3d", ((1, 2, 2),), {"ceil_mode": True}),
             ("LPPool2d", (2, 3), {"stride": 1, "ceil_mode": True}),
             ("Upsample", (), {"size": 4}), ("Upsample", (), {"scale_factor": (2, 3)}),
             ("EmbeddingBag", (4, 2), {"max_norm": 1.0, "norm_type": 1.0,
                                       "scale_grad_by_freq": True, "padding_idx": -1}),
             ("Conv3d", (2, 4, 3), {"padding": "same", "dilation": 2,
                                    "padding_mode": "reflect"}),
             ("TripletMarginWithDistanceLoss", (), {"distance_function": None, "margin": 2.0}),
             ("MultiMarginLoss", (), {"weight": [1.0, 2.0]}),
             ("PoissonNLLLoss", (), {"size_average": False})]
    for name, args, kwargs in cases:
        kw_g = {k: (G.tensor(v) if isinstance(v, list) and k == "weight" else v)
                for k, v in kwargs.items()}
        kw_t = {k: (torch.tensor(v) if isinstance(v, list) and k == "weight" else v)
                for k, v in kwargs.items()}
        ours = getattr(G.nn, name)(*args, **kw_g)
        theirs = getattr(torch.nn, name)(*args, **kw_t)
        assert repr(ours) == repr(theirs), name
        assert getattr(ours, "reduction", None) == getattr(theirs, "reduction", None)


ERRORS = [
    ("GroupNorm", (3, 4), {}),
    ("ConvTranspose2d", (2, 3, 3), {"padding_mode": "reflect"}),
    ("ConvTranspose1d", (3, 4, 3), {"groups": 2}),
    ("Conv3d", (2, 4, 3), {"padding": "same", "stride": 2}),
    ("MultiMarginLoss", (), {"p": 3}),
    ("TripletMarginLoss", (), {"margin": 0.0}),
    ("TripletMarginWithDistanceLoss", (), {"margin": -1.0}),
    ("AlphaDropout", (1.5,), {}),
    ("EmbeddingBag", (4, 2), {"padding_idx": 4}),
    ("AdaptiveLogSoftmaxWithLoss", (4, 5, [3, 2]), {}),
    ("AdaptiveLogSoftmaxWithLoss", (4, 5, []), {}),
    ("FractionalMaxPool2d", (2,), {}),
    ("FractionalMaxPool2d", (2,), {"output_size": 3, "output_ratio": 0.5}),
    ("FractionalMaxPool2d", (2,), {"output_ratio": (0.5, 1.0)}),
    ("FractionalMaxPool3d", ((2, 0, 2),), {"output_size": 2}),
    ("LinearCrossEntropyLoss", (3, 2), {"label_smoothing": 1.5}),
]


@pytest.mark.parametrize("name, args, kwargs", ERRORS)
def test_constructor_errors_match(name, args, kwargs):
    with pytest.raises(Exception) as theirs:
        getattr(torch.nn, name)(*args, **kwargs)
    with pytest.raises(Exception) as ours:
        getattr(G.nn, name)(*args, **kwargs)
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value) == str(theirs.value)


def test_forward_errors_match():
    for build, shape in [(lambda L: L.nn.Softmax2d(), (2, 3)),
                         (lambda L: L.nn.CircularPad2d(1), (2, 3)),
                         (lambda L: L.nn.CrossMapLRN2d(3), (2, 3, 4)),
                         (lambda L: L.nn.GroupNorm(2, 4), (2, 6, 3))]:
        with pytest.raises(Exception) as theirs:
            build(torch)(torch.zeros(shape))
        with pytest.raises(Exception) as ours:
            build(G)(G.zeros(shape))
        assert type(ours.value).__name__ == type(theirs.value).__name__
        assert str(ours.value) == str(theirs.value)


def test_module_classes_print_as_pytorch():
    from gradcli.torch.nn.modules import _MORE

    for names in _MORE.values():
        for name in names.split():
            assert repr(getattr(G.nn, name)) == repr(getattr(torch.nn, name))


def _params(fn):
    import inspect

    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def test_constructor_and_forward_signatures_are_pytorch_s():
    """Same parameter names, kinds and defaults, and an __init__ of the same name (so a wrong
    call's TypeError reads as PyTorch's)."""
    from gradcli.torch.nn.modules import _MORE

    for names in _MORE.values():
        for name in names.split():
            ours, theirs = getattr(G.nn, name), getattr(torch.nn, name)
            assert _params(ours.__init__) == _params(theirs.__init__), name
            assert _params(ours.forward) == _params(theirs.forward), name
            assert ours.__init__.__qualname__ == _defining_init(theirs), name


def _defining_init(cls) -> str:
    """`Class.__init__` of the class in `cls`'s MRO that defines __init__, as PyTorch's source
    names it: read from the class, not the function, because PyTorch's dynamo (started by
    a torch.compile of an earlier test in this process) replaces nn.Module.__init__ by its
    `install_generation_tagging_init.<locals>.patched_init` for the rest of the process."""
    owner = next(c for c in cls.__mro__ if "__init__" in vars(c))
    return f"{owner.__qualname__}.__init__"


@pytest.mark.parametrize("name, args", [("ReflectionPad2d", ()), ("ConvTranspose2d", (2, 3)),
                                        ("Hardswish", (True, 1)), ("GroupNorm", (2,)),
                                        ("MaxUnpool3d", ())])
def test_wrong_calls_raise_pytorch_s_type_error(name, args):
    with pytest.raises(TypeError) as theirs:
        getattr(torch.nn, name)(*args)
    with pytest.raises(TypeError) as ours:
        getattr(G.nn, name)(*args)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("norm_type, kwargs", [(2.0, {"stride": 1}), (1.5, {"ceil_mode": True}),
                                               (float("inf"), {}), (-float("inf"), {"stride": 1}),
                                               (3, {"stride": 2})])
def test_functional_lp_pools_match(dims, norm_type, kwargs):
    """F.lp_pool1d/2d/3d, p = +-inf included (the max pool of |x|, as PyTorch's)."""
    x = f(*(1, 2, 4, 5, 4)[:dims + 2], dtype=np.float64)
    x = np.abs(x) if norm_type == 1.5 else x
    results = []
    for lib in (G, torch):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, f"lp_pool{dims}d")(t, norm_type, 2, **kwargs)
        y.backward(lib.ones_like(y))
        results.append((_arr(y), type(y.grad_fn).__name__, _arr(t.grad)))
    (yg, ng, gg), (yt, nt, gt) = results
    np.testing.assert_allclose(yg, yt, rtol=1e-7, atol=1e-7)
    assert ng == nt
    np.testing.assert_allclose(gg, gt, rtol=1e-7, atol=1e-7)


def test_recurrent_bases_are_importable_and_are_the_layers_bases():
    for name in ("RNNBase", "RNNCellBase"):
        assert repr(getattr(G.nn, name)) == repr(getattr(torch.nn, name))
    for layer in ("RNN", "LSTM", "GRU"):
        assert isinstance(getattr(G.nn, layer)(2, 3), G.nn.RNNBase)
    for cell in ("RNNCell", "LSTMCell", "GRUCell"):
        assert isinstance(getattr(G.nn, cell)(2, 3), G.nn.RNNCellBase)
        assert not isinstance(getattr(G.nn, cell)(2, 3), G.nn.RNNBase)


PROGRAM = """\
import torch
from torch import nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Sequential(nn.ConvTranspose2d(4, 8, 3, stride=2, padding=1, output_padding=1),
                                nn.GroupNorm(2, 8), nn.PReLU(8), nn.ReflectionPad2d(1),
                                nn.Conv2d(8, 4, 3), nn.PixelShuffle(2), nn.Hardswish())
        self.pool = nn.AdaptiveMaxPool2d(2)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(4, 3), nn.SELU(), nn.AlphaDropout(0.2))

    def forward(self, x):
        return self.head(self.pool(self.up(x)))


net = Generator()
print(net)
print([type(m) for m in net.modules()][:6])
print(net.up[0].weight[0, 0])
print(net.up[2].weight)
x = torch.randn(2, 4, 3, 3)
y = net(x)
print(y.shape, y.grad_fn.name())
loss = nn.TripletMarginLoss()(y[:1], y[1:], y[:1].flip(1))
print(loss.grad_fn.name())
loss.backward()
print(net.up[0].weight.grad.shape, net.up[1].weight.grad.shape)
print(list(net.state_dict())[:6])
"""


def test_pasted_program_runs_as_under_pytorch(tmp_path):
    """Issue #23's use: a pasted model built of the new layers prints, initialises (seeded
    weights printed), runs and back-propagates under `gradcli run` as under PyTorch."""
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    env = {**os.environ, "NO_COLOR": "1"}
    ours = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert ours.returncode == 0, ours.stderr
    ref = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         timeout=120, env=env)
    assert ref.returncode == 0, ref.stderr
    assert ours.stdout == ref.stdout
    assert "output_padding=(1, 1)" in ours.stdout


def test_adaptive_log_softmax_log_prob_predict_and_errors():
    x = f(5, 6)
    results = []
    for lib in (G, torch):
        lib.manual_seed(2)
        asm = lib.nn.AdaptiveLogSoftmaxWithLoss(6, 9, [2, 5], div_value=2.0, head_bias=True)
        t = lib.tensor(x, requires_grad=True)
        log_prob = asm.log_prob(t)
        log_prob.sum().backward()
        errors = []
        for target in ([1, 9, 0, 0, 0], [[1]], [1, 2]):
            try:
                asm(t, lib.tensor(target))
            except RuntimeError as exc:
                errors.append(str(exc))
        results.append((_arr(log_prob), _arr(t.grad), asm.predict(t).tolist(),
                        asm.predict(t[:1] * 0).tolist(), errors))
    (lg, gg, pg, zg, eg), (lt, gt, pt, zt, et) = results
    np.testing.assert_allclose(lg, lt, rtol=1.3e-6, atol=1e-5)
    np.testing.assert_allclose(gg, gt, rtol=1.3e-6, atol=1e-5)
    assert pg == pt and zg == zt
    assert eg == et and len(et) == 3


@pytest.mark.parametrize("dims", [2, 3])
def test_fractional_max_pool_layers(dims):
    """Options, buffers and repr as PyTorch's; the forward is F.fractional_max_pool2d/3d's
    (PyTorch's draws after manual_seed) where gradcli has it, else a clear error."""
    name = f"FractionalMaxPool{dims}d"
    ours = getattr(G.nn, name)(2, output_ratio=0.5, return_indices=True)
    theirs = getattr(torch.nn, name)(2, output_ratio=0.5, return_indices=True)
    assert repr(ours) == repr(theirs)
    assert (ours.kernel_size, ours.output_ratio, ours.output_size) == \
        (theirs.kernel_size, theirs.output_ratio, theirs.output_size)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == []
    x = f(1, 2, *(6,) * dims)
    if not hasattr(G.nn.functional, f"fractional_max_pool{dims}d"):
        with pytest.raises(RuntimeError, match="is not supported by gradcli"):
            ours(G.tensor(x))
        return
    G.manual_seed(4)
    torch.manual_seed(4)
    (a, ia), (b, ib) = ours(G.tensor(x)), theirs(torch.tensor(x))
    torch.testing.assert_close(torch.tensor(_arr(a), dtype=b.dtype), b)
    assert ia.tolist() == ib.tolist()


def test_whole_model_of_new_layers_round_trips_through_save_both_ways():
    import io

    net = G.nn.Sequential(G.nn.ConvTranspose2d(2, 3, 3), G.nn.GroupNorm(1, 3), G.nn.PReLU(),
                          G.nn.ReflectionPad2d(1), G.nn.EmbeddingBag(3, 2),
                          G.nn.TripletMarginWithDistanceLoss(),
                          G.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2]))
    buf = io.BytesIO()
    G.save(net, buf)
    buf.seek(0)
    ref = torch.load(buf, weights_only=False)  # PyTorch finds its own classes
    assert type(ref[0]) is torch.nn.ConvTranspose2d and repr(ref) == repr(net)
    assert torch.equal(ref[0].weight, torch.tensor(net[0].weight.tolist()))
    again = io.BytesIO()
    torch.save(ref, again)
    again.seek(0)
    back = G.load(again, weights_only=False)
    assert type(back[6]) is G.nn.AdaptiveLogSoftmaxWithLoss and repr(back) == repr(net)
    assert G.equal(back[1].weight, net[1].weight)


@pytest.mark.parametrize("name, args", [("ConvTranspose2d", (2, 3, 3)), ("Conv3d", (2, 3, 2)),
                                        ("EmbeddingBag", (5, 3)), ("PReLU", (3, 0.1)),
                                        ("AdaptiveLogSoftmaxWithLoss", (8, 10, [4]))])
def test_float64_layers_draw_pytorchs_float64_numbers(name, args):
    states = []
    for lib in (G, torch):
        lib.manual_seed(5)
        states.append(getattr(lib.nn, name)(*args, dtype=lib.float64).state_dict())
    ours, theirs = states
    assert list(ours) == list(theirs)
    for key in theirs:
        assert str(ours[key].dtype) == str(theirs[key].dtype) == "torch.float64"
        assert np.array_equal(np.asarray(ours[key].tolist()), theirs[key].numpy()), key


# A wrong-rank input to each layer: the error is the functional form's, as PyTorch's.
_RANK_CTOR = {"Threshold": (0.1, 1.0), "Conv3d": (2, 2, 1), "ConvTranspose1d": (2, 2, 1),
              "ConvTranspose2d": (2, 2, 1), "ConvTranspose3d": (2, 2, 1), "GroupNorm": (1, 2),
              "RMSNorm": (2,), "LocalResponseNorm": (2,), "CrossMapLRN2d": (2,), "PReLU": (2,),
              "MaxPool3d": (2,), "AvgPool1d": (2,), "AvgPool3d": (2,), "AdaptiveAvgPool1d": (2,),
              "AdaptiveAvgPool3d": (2,), "AdaptiveMaxPool1d": (2,), "AdaptiveMaxPool2d": (2,),
              "AdaptiveMaxPool3d": (2,), "LPPool1d": (2, 2), "LPPool2d": (2, 2),
              "LPPool3d": (2, 2), "PixelShuffle": (2,), "PixelUnshuffle": (2,),
              "ChannelShuffle": (2,), "Fold": ((2, 2), 1), "Unfold": (2,), "EmbeddingBag": (3, 2),
              "Softmin": (1,)}
def _rank_cases():
    from gradcli.torch.nn.modules import _MORE

    skip = ("Fractional", "MaxUnpool", "AdaptiveLogSoftmax")
    for names in _MORE.values():
        for name in names.split():
            if name.startswith(skip) or name.endswith("Loss") or name == "NLLLoss2d" \
                    or name in ("CosineSimilarity", "PairwiseDistance"):
                continue
            if "Pad" in name:
                args = (1, 0.0) if name.startswith("Constant") else (1,)
            else:
                args = _RANK_CTOR.get(name, ())
            for shape in ((2,), (2, 2, 3, 3, 3, 3)):
                yield pytest.param(name, args, shape, id=f"{name}-{len(shape)}d")


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name, args, shape", list(_rank_cases()))
def test_wrong_rank_inputs_fail_or_pass_as_pytorch(name, args, shape):
    results = []
    for lib in (G, torch):
        try:
            y = getattr(lib.nn, name)(*args)(lib.tensor(np.ones(shape, np.float32)))
            results.append(("ok", tuple(y.shape)))
        except Exception as exc:  # the comparison is of the type and text
            results.append((type(exc).__name__, str(exc)))
    assert results[0] == results[1]


def test_linear_cross_entropy_options_as_pytorch():
    for lib in (G, torch):
        assert repr(lib.nn.LinearCrossEntropyOptions()) == \
            repr(torch.nn.LinearCrossEntropyOptions())
    assert repr(G.nn.LinearCrossEntropyOptions) == repr(torch.nn.LinearCrossEntropyOptions)
    opts = {"batch_chunk_size": 4, "chunking_method": None, "acc_policy": "compact"}
    assert repr(G.nn.LinearCrossEntropyLoss(3, 2, options=G.nn.LinearCrossEntropyOptions(
        **opts))) == repr(torch.nn.LinearCrossEntropyLoss(
            3, 2, options=torch.nn.LinearCrossEntropyOptions(**opts)))
    for bad in ({"acc_policy": "x"}, {"chunking_method": "aspect_ratio:0"},
                {"batch_chunk_size": 0}, {"chunking_method": "wide"}):
        with pytest.raises(ValueError) as theirs:
            torch.nn.LinearCrossEntropyOptions(**bad)
        with pytest.raises(ValueError) as ours:
            G.nn.LinearCrossEntropyOptions(**bad)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(Exception) as frozen:
        G.nn.LinearCrossEntropyOptions().acc_policy = "compact"
    assert type(frozen.value).__name__ == "FrozenInstanceError"


def test_data_parallel_without_accelerators_calls_its_module():
    results = []
    for lib in (G, torch):
        lib.manual_seed(0)
        net = lib.nn.DataParallel(lib.nn.Linear(3, 2))
        x = lib.tensor(f(4, 3), requires_grad=True)
        y = net(x)
        y.sum().backward()
        results.append((repr(net), repr(type(net)), list(net.state_dict()), net.device_ids,
                        _arr(y), y.grad_fn.name(), _arr(net.module.weight.grad),
                        isinstance(net, lib.nn.Module)))
    ours, theirs = results
    assert ours[:4] == theirs[:4] and ours[5] == theirs[5] and ours[7] and theirs[7]
    np.testing.assert_allclose(ours[4], theirs[4], rtol=1.3e-6, atol=1e-5)
    np.testing.assert_allclose(ours[6], theirs[6], rtol=1.3e-6, atol=1e-5)
    assert _params(G.nn.DataParallel.__init__) == _params(torch.nn.DataParallel.__init__)
