"""A layer's gradient under create_graph, compared with the graph PyTorch 2.13 records.

Where PyTorch's derivative of a layer is a named backward function, its create_graph
gradients hang off one `<Name>BackwardBackward0` node whose inputs are that function's
(grad_output, input, weight...): a gradient requires grad when any of them does (even one
it does not depend on), differentiating it along such an input gives None, and
`g.sum().backward()` runs. Each scenario compares, with PyTorch: the gradients' node
names, output numbers, next_functions, requires_grad and values; the second derivatives
(values, and None under allow_unused); and what `g.sum().backward()` does.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _name(fn):
    return None if fn is None else type(fn).__name__


def _outcome(call):
    """The value of call(), or the type and text of what it raised."""
    try:
        return ("ok", call())
    except Exception as err:  # noqa: BLE001 - the error itself is compared
        return ("raised", type(err).__name__, str(err).split("\n")[0])


def _round(t, digits=7):
    if t is None:
        return None
    t = t.detach()
    plain = t + t.new_zeros(t.shape)  # (PyTorch's ZeroTensor has no numpy view)
    return np.round(plain.numpy().astype(np.float64), digits).tolist()


def _scenario(T, build, seed=3):
    """Run one layer under create_graph with T (gradcli.torch or torch)."""
    rng = np.random.default_rng(seed)

    def leaf(*shape, grad=True):
        return T.tensor(rng.standard_normal(shape), dtype=T.float64, requires_grad=grad)

    inputs, out = build(T, leaf)
    grads = T.autograd.grad((out * out.detach().cos()).sum(), inputs, create_graph=True,
                            allow_unused=True)
    seen = []
    for g in grads:
        if g is None:
            seen.append(None)
            continue
        fn = g.grad_fn
        seen.append((g.requires_grad, _name(fn), g.output_nr if fn is not None else None,
                     None if fn is None else [_name(n) for n, _ in fn.next_functions],
                     _round(g)))
    second = []
    for g in grads:
        if g is None or not g.requires_grad:
            second.append("no graph")
            continue
        got = _outcome(lambda g=g: T.autograd.grad((g * g.detach().sin()).sum(), inputs,
                                                   allow_unused=True, retain_graph=True))
        if got[0] == "ok":
            got = ("ok", [_round(s, 6) for s in got[1]])
        second.append(got)
    # `g.sum().backward()` on the first gradient: runs (leaving .grad as PyTorch does) or
    # raises PyTorch's error
    for t in inputs:
        t.grad = None
    first = next((g for g in grads if g is not None), None)
    ran = _outcome(lambda: first.sum().backward()) if first is not None else ("none",)
    ran = ran[:1] if ran[0] == "ok" else ran
    left = [None if t.grad is None else _round(t.grad, 6) for t in inputs]
    return seen, second, ran, left


def _norm_cases():
    def bn(training, shape, w=True, b=True, x=True):
        def build(T, leaf):
            xs = leaf(*shape, grad=x)
            ws = leaf(shape[1], grad=True) if w else None
            bs = leaf(shape[1], grad=True) if b else None
            rm, rv = T.zeros(shape[1], dtype=T.float64), T.ones(shape[1], dtype=T.float64)
            out = T.nn.functional.batch_norm(xs, rm, rv, ws, bs, training=training)
            return tuple(t for t in (xs, ws, bs) if t is not None and t.requires_grad), out
        return build

    def ln(shape, k, w=True, b=True, x=True):
        def build(T, leaf):
            xs = leaf(*shape, grad=x)
            ws = leaf(*shape[-k:]) if w else None
            bs = leaf(*shape[-k:]) if b else None
            out = T.nn.functional.layer_norm(xs, shape[-k:], ws, bs)
            return tuple(t for t in (xs, ws, bs) if t is not None and t.requires_grad), out
        return build

    def inorm(shape):
        def build(T, leaf):
            xs = leaf(*shape)
            return (xs,), T.nn.functional.instance_norm(xs)
        return build

    def gn(shape, groups, w=True, b=True):
        def build(T, leaf):
            xs = leaf(*shape)
            ws = leaf(shape[1]) if w else None
            bs = leaf(shape[1]) if b else None
            out = T.nn.functional.group_norm(xs, groups, ws, bs)
            return tuple(t for t in (xs, ws, bs) if t is not None), out
        return build

    def module(make, shape, train=True):
        def build(T, leaf):
            T.manual_seed(0)
            m = make(T).double()
            m.train(train)
            with T.no_grad():
                for p in m.parameters():
                    p.copy_(T.linspace(-1.5, 2.0, p.numel(), dtype=T.float64).reshape(p.shape))
            xs = leaf(*shape)
            return (xs,) + tuple(m.parameters()), m(xs)
        return build

    return {
        "batch_norm_train": bn(True, (4, 3)),
        "batch_norm_eval": bn(False, (4, 3)),
        "batch_norm_2d": bn(True, (2, 3, 2, 2)),
        "batch_norm_3d_eval": bn(False, (2, 2, 2, 1, 3)),
        "batch_norm_no_affine": bn(True, (5, 2), w=False, b=False),
        "batch_norm_weight_only": bn(True, (4, 3), b=False),
        "batch_norm_constant_input": bn(True, (4, 3), x=False),
        "batch_norm_eval_constant_input": bn(False, (4, 3), x=False),
        "BatchNorm1d": module(lambda T: T.nn.BatchNorm1d(3), (4, 3)),
        "BatchNorm2d_eval": module(lambda T: T.nn.BatchNorm2d(2), (2, 2, 3, 3), train=False),
        "BatchNorm3d": module(lambda T: T.nn.BatchNorm3d(2), (2, 2, 2, 2, 2)),
        "layer_norm": ln((4, 3), 1),
        "layer_norm_2d": ln((2, 3, 4), 2),
        "layer_norm_x_only": ln((4, 3), 1, w=False, b=False),
        "layer_norm_constant_input": ln((4, 3), 1, x=False),
        "layer_norm_no_bias": ln((3, 5), 1, b=False),
        "LayerNorm": module(lambda T: T.nn.LayerNorm(4), (3, 4)),
        "group_norm": gn((2, 4, 3), 2),
        "group_norm_2d_no_affine": gn((2, 4, 2, 2), 4, w=False, b=False),
        "instance_norm": inorm((2, 3, 4)),
        "instance_norm_2d": inorm((2, 2, 3, 3)),
        "InstanceNorm1d": module(lambda T: T.nn.InstanceNorm1d(3), (2, 3, 4)),
        "InstanceNorm1d_affine": module(lambda T: T.nn.InstanceNorm1d(3, affine=True), (2, 3, 4)),
    }


# PyTorch's repeat backward sums a view (SumBackward1 over ViewBackward0) where gradcli's
# views a sum: the weight of an affine instance norm is repeated N times
REPEAT_ORDER = {"InstanceNorm1d_affine"}


NORM_CASES = _norm_cases()


@pytest.mark.parametrize("case", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason="repeat's backward order"))
    if c in REPEAT_ORDER else c for c in sorted(NORM_CASES)])
def test_norm_gradient_graph_is_pytorchs(case):
    build = NORM_CASES[case]
    assert _scenario(gt, build) == _scenario(torch, build)


def test_batch_norm_gradients_share_one_node_with_output_numbers():
    for T in (gt, torch):
        x = T.tensor([[1.0, -2.0], [0.5, 3.0], [2.0, 0.0]], requires_grad=True)
        w = T.tensor([0.5, 2.0], requires_grad=True)
        b = T.tensor([0.1, -0.3], requires_grad=True)
        y = T.nn.functional.batch_norm(x, None, None, w, b, training=True)
        c = T.tensor([[1.0, 2.0], [-1.0, 0.5], [3.0, 1.0]])
        gs = T.autograd.grad((y * c).sum(), (x, w, b), create_graph=True)
        assert [g.grad_fn is gs[0].grad_fn for g in gs] == [True, True, True]
        assert [g.output_nr for g in gs] == [0, 1, 2]
        # the bias's gradient depends on grad_output alone (a constant): nothing along w, b
        assert T.autograd.grad(gs[2].sum(), (x, w, b), allow_unused=True,
                               retain_graph=True)[1:] == (None, None)


def test_layer_norm_weight_gradient_of_a_constant_input_runs_backward():
    """layer_norm(x, w) with only w requiring grad: w's create_graph gradient has a graph
    (its node takes w) though it does not depend on w, so its backward runs and w.grad
    stays None, as in PyTorch (gradcli's had no graph: the backward raised)."""
    for T in (gt, torch):
        x = T.tensor([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])
        w = T.tensor([0.5, 2.0, -1.0], requires_grad=True)
        c = T.tensor([[1.0, 2.0, -1.0], [0.5, 3.0, 1.0]])
        gw, = T.autograd.grad((T.nn.functional.layer_norm(x, (3,), w) * c).sum(), w,
                              create_graph=True)
        assert type(gw.grad_fn).__name__ == "NativeLayerNormBackwardBackward0"
        gw.sum().backward()
        assert w.grad is None


def test_batch_norm_first_order_unchanged_without_create_graph():
    """Without create_graph the gradients carry no graph at all."""
    x = gt.tensor([[1.0, -2.0], [0.5, 3.0], [2.0, 0.0]], requires_grad=True)
    w = gt.tensor([0.5, 2.0], requires_grad=True)
    y = gt.nn.functional.batch_norm(x, None, None, w, training=True)
    gx, gw = gt.autograd.grad((y * y).sum(), (x, w))
    assert not gx.requires_grad and gx.grad_fn is None and gw.grad_fn is None


@pytest.mark.parametrize("op", ["batch_norm", "layer_norm"])
def test_third_order_gradcheck(op):
    """gradgradcheck through the new node: the gradient of the create_graph gradient is
    the node's own (reentrant) backward, checked against finite differences twice."""
    rng = np.random.default_rng(0)
    x = gt.tensor(rng.standard_normal((4, 3)), dtype=gt.float64, requires_grad=True)
    w = gt.tensor(rng.standard_normal(3), dtype=gt.float64, requires_grad=True)

    def first_grads(x, w):
        if op == "batch_norm":
            y = gt.nn.functional.batch_norm(x, None, None, w, training=True)
        else:
            y = gt.nn.functional.layer_norm(x, (3,), w)
        return gt.autograd.grad((y * y.sin()).sum(), (x, w), create_graph=True)

    assert gt.autograd.gradcheck(first_grads, (x, w))
    assert gt.autograd.gradgradcheck(first_grads, (x, w))


def _unary(fn, *shape):
    """A layer of one input x (a leaf requiring grad)."""
    def build(T, leaf):
        xs = leaf(*shape)
        return (xs,), fn(T, xs)
    return build


def _module(name, args, *shape, kwargs=None):
    def build(T, leaf):
        xs = leaf(*shape)
        return (xs,), getattr(T.nn, name)(*args, **(kwargs or {}))(xs)
    return build


def _f(name, *args, **kwargs):
    return lambda T, x: getattr(T.nn.functional, name)(x, *args, **kwargs)


POOL_PAD_CASES = {
    "avg_pool2d": _unary(_f("avg_pool2d", 2), 1, 1, 4, 4),
    "avg_pool2d_padded_ceil": _unary(_f("avg_pool2d", 3, 2, 1, ceil_mode=True,
                                        count_include_pad=False), 2, 2, 5, 4),
    "avg_pool2d_unbatched": _unary(_f("avg_pool2d", (2, 1)), 2, 4, 3),
    "max_pool2d": _unary(_f("max_pool2d", 2), 1, 2, 4, 4),
    "max_pool2d_strided_ceil": _unary(_f("max_pool2d", 3, 2, 1, ceil_mode=True), 2, 1, 5, 4),
    "max_pool1d": _unary(_f("max_pool1d", 2), 1, 2, 6),
    "avg_pool1d": _unary(_f("avg_pool1d", 2), 1, 2, 4),
    "avg_pool3d": _unary(_f("avg_pool3d", 2), 1, 1, 2, 4, 4),
    "avg_pool3d_padded": _unary(_f("avg_pool3d", 3, 2, 1), 1, 2, 3, 4, 3),
    "adaptive_max_pool2d": _unary(_f("adaptive_max_pool2d", 1), 1, 2, 4, 4),
    "adaptive_max_pool2d_3x2": _unary(_f("adaptive_max_pool2d", (3, 2)), 2, 1, 5, 4),
    "adaptive_max_pool3d": _unary(_f("adaptive_max_pool3d", (2, 1, 2)), 1, 2, 3, 2, 4),
}
for _mode in ("reflect", "replicate"):
    POOL_PAD_CASES[f"pad_{_mode}_1d"] = _unary(_f("pad", (1, 2), mode=_mode), 1, 2, 4)
    POOL_PAD_CASES[f"pad_{_mode}_2d"] = _unary(_f("pad", (1, 0, 2, 1), mode=_mode), 1, 2, 3, 4)
    POOL_PAD_CASES[f"pad_{_mode}_3d"] = _unary(_f("pad", (1, 1, 0, 1, 1, 0), mode=_mode),
                                               1, 1, 2, 3, 3)
    POOL_PAD_CASES[f"pad_{_mode}_unbatched"] = _unary(_f("pad", (2, 1), mode=_mode), 2, 4)


@pytest.mark.parametrize("case", sorted(POOL_PAD_CASES))
def test_pool_and_pad_gradient_graph_is_pytorchs(case):
    build = POOL_PAD_CASES[case]
    assert _scenario(gt, build) == _scenario(torch, build)


def test_avg_pool_gradient_of_a_leaf_differentiates_to_zeros():
    """The node takes the input: the gradient of a leaf x requires grad (gradcli's had no
    graph) and its own gradient along x is zeros, not None."""
    for T in (gt, torch):
        x = T.arange(16.0).reshape(1, 1, 4, 4).requires_grad_()
        g, = T.autograd.grad(T.nn.functional.avg_pool2d(x, 2).sum(), x, create_graph=True)
        assert g.requires_grad and type(g.grad_fn).__name__ == "AvgPool2DBackwardBackward0"
        gg, = T.autograd.grad(g.sum(), x, allow_unused=True)
        assert gg is not None and not gg.any()


ACTIVATION_CASES = {
    "selu": _unary(_f("selu"), 6),
    "celu": _unary(_f("celu", 1.5), 2, 3),
    "torch_selu": _unary(lambda T, x: T.selu(x), 5),
    "glu": _unary(_f("glu"), 4),
    "glu_dim0": _unary(_f("glu", 0), 4, 3),
    "hardswish": _unary(lambda T, x: T.nn.functional.hardswish(x * 3), 7),
    "hardsigmoid": _unary(lambda T, x: T.nn.functional.hardsigmoid(x * 3), 7),
    "silu": _unary(_f("silu"), 5),
    "l1_loss": _unary(lambda T, x: T.nn.functional.l1_loss(x, T.linspace(-1, 1, 5,
                                                                          dtype=T.float64)), 5),
    "abs": _unary(lambda T, x: x.abs(), 4),
    "softshrink": _unary(_f("softshrink", 0.3), 6),
    "hardshrink": _unary(_f("hardshrink", 0.3), 2, 3),
    "rrelu_eval": _unary(_f("rrelu"), 6),
    "SiLU": _module("SiLU", (), 6),
    "L1Loss": lambda T, leaf: (lambda x: ((x,), T.nn.L1Loss()(x, T.zeros(4, dtype=T.float64))))(
        leaf(4)),
}


@pytest.mark.parametrize("case", sorted(ACTIVATION_CASES))
def test_activation_gradient_graph_is_pytorchs(case):
    build = ACTIVATION_CASES[case]
    assert _scenario(gt, build) == _scenario(torch, build)


def test_hardsigmoid_double_backward_raises_as_pytorch():
    """PyTorch has no derivative of hardsigmoid_backward: the create_graph gradient hangs
    off a NotImplemented node over the inputs that require grad, whose backward raises."""
    seen = []
    for T in (gt, torch):
        x = T.tensor([-4.0, -1.0, 0.5, 2.0], requires_grad=True)
        gout = T.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        edges = []
        for g0 in (gout, gout.detach()):
            g, = T.autograd.grad(T.nn.functional.hardsigmoid(x), x, g0, create_graph=True)
            edges.append((type(g.grad_fn).__name__, len(g.grad_fn.next_functions)))
        with pytest.raises(RuntimeError) as err:
            g.sum().backward()
        seen.append((edges, str(err.value)))
    assert seen[0] == seen[1]
    assert seen[0][1] == "derivative for aten::hardsigmoid_backward is not implemented"


def test_new_backward_ops_gradgradcheck():
    """Third order through the named nodes (their reentrant vjp) against finite differences."""
    rng = np.random.default_rng(1)
    x = gt.tensor(rng.standard_normal(6) * 2, dtype=gt.float64, requires_grad=True)
    for fn in (gt.nn.functional.selu, gt.nn.functional.hardswish, gt.nn.functional.glu,
               lambda t: gt.nn.functional.celu(t, 0.7)):
        def first(t, fn=fn):
            return gt.autograd.grad((fn(t) ** 2).sum(), t, create_graph=True)[0]
        assert gt.autograd.gradcheck(first, (x,))
        assert gt.autograd.gradgradcheck(first, (x,))


def _prelu(xs, ws):
    def build(T, leaf):
        x, w = leaf(*xs), leaf(*ws)
        return (x, w), T.nn.functional.prelu(x, w)
    return build


LOSS_CASES = {
    "prelu_2d_one_weight": _prelu((2, 3), (1,)),
    "prelu_1d": _prelu((5,), (1,)),
    "prelu_2d_channels": _prelu((4, 3), (3,)),
    "poisson_nll": _unary(lambda T, x: T.nn.functional.poisson_nll_loss(
        x, T.linspace(0.1, 2.0, 5, dtype=T.float64)), 5),
    "poisson_nll_full": _unary(lambda T, x: T.nn.functional.poisson_nll_loss(
        x, T.linspace(0.1, 3.0, 5, dtype=T.float64), full=True, reduction="sum"), 5),
    "gaussian_nll": _unary(lambda T, x: T.nn.functional.gaussian_nll_loss(
        x, T.linspace(-1, 1, 5, dtype=T.float64), T.ones(5, dtype=T.float64)), 5),
    "soft_margin": _unary(lambda T, x: T.nn.functional.soft_margin_loss(
        x, T.tensor([1.0, -1.0, 1.0, 1.0, -1.0], dtype=T.float64)), 5),
    "soft_margin_sum": _unary(lambda T, x: T.nn.functional.soft_margin_loss(
        x, T.ones(2, 3, dtype=T.float64), reduction="sum"), 2, 3),
    "multi_margin": _unary(lambda T, x: T.nn.functional.multi_margin_loss(
        x, T.tensor([0, 2])), 2, 3),
    "pow_scalar": _unary(lambda T, x: x ** 3, 4),
    "mse_by_pow": _unary(lambda T, x: ((x - 1) ** 2).mean(), 4),
}


@pytest.mark.parametrize("case", sorted(LOSS_CASES))
def test_loss_and_prelu_gradient_graph_is_pytorchs(case):
    build = LOSS_CASES[case]
    assert _scenario(gt, build) == _scenario(torch, build)


def test_prelu_forward_views_the_weight_as_pytorch():
    for T in (gt, torch):
        x = T.ones(2, 3, 4, requires_grad=True)
        w = T.tensor([0.1, 0.2, 0.3], requires_grad=True)
        y = T.nn.functional.prelu(x, w)
        assert [type(n).__name__ for n, _ in y.grad_fn.next_functions] == [
            "AccumulateGrad", "ViewBackward0"]


def _cdist(x1_grad, x2_grad, p=2.0):
    def build(T, leaf):
        x1, x2 = leaf(4, 3, grad=x1_grad), leaf(2, 3, grad=x2_grad)
        return tuple(t for t in (x1, x2) if t.requires_grad), T.cdist(x1, x2, p)
    return build


DIST_CASES = {
    "pdist": _unary(_f("pdist"), 4, 3),
    "pdist_p1": _unary(_f("pdist", 1.0), 3, 2),
    "cdist_x1": _cdist(True, False),
    "cdist_x2": _cdist(False, True),
    "cdist_both_p3": _cdist(True, True, 3.0),
}


@pytest.mark.parametrize("case", sorted(DIST_CASES))
def test_distance_gradient_graph_and_its_error_are_pytorchs(case):
    """pdist/cdist: the create_graph gradient hangs off PdistBackwardBackward0 /
    CdistBackwardBackward0 (over grad, the inputs and the result), whose backward raises
    PyTorch's NotImplementedError."""
    build = DIST_CASES[case]
    ours, theirs = _scenario(gt, build), _scenario(torch, build)
    assert ours == theirs
    assert all(s[0] == "raised" and s[1] == "NotImplementedError" for s in theirs[1])


def _bilinear(lead, bias=True, same=False):
    def build(T, leaf):
        x1 = leaf(*lead, 3)
        x2 = x1 if same else leaf(*lead, 2)
        w = leaf(4, 3, 3 if same else 2)
        b = leaf(4) if bias else None
        out = T.nn.functional.bilinear(x1, x2, w, b)
        return tuple(t for t in (x1, x2, w, b) if t is not None and not (same and t is x2)), out
    return build


BILINEAR_CASES = {
    "bilinear": _bilinear((5,)),
    "bilinear_batched_no_bias": _bilinear((2, 3), bias=False),
    "bilinear_same_input": _bilinear((4,), same=True),
}


@pytest.mark.parametrize("case", sorted(BILINEAR_CASES))
def test_bilinear_gradient_graph_is_pytorchs(case):
    build = BILINEAR_CASES[case]
    assert _scenario(gt, build) == _scenario(torch, build)
