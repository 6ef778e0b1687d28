"""fix, detach / detach_copy, adjoint, as_strided_, empty_permuted, native_dropout, smm,
native_norm, Tensor.resize_as, torch.cond / torch.while_loop against PyTorch."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402

DATA = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)


def _both(fn):
    out = []
    for lib in (gt, torch):
        try:
            out.append(fn(lib))
        except Exception as err:  # noqa: BLE001 - compared below
            out.append((type(err).__name__, str(err).splitlines()[0][:120]))
    return out


def _node(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


def test_fix_detach_adjoint():
    for name in ("fix", "detach", "detach_copy", "adjoint"):
        outs = []
        for lib in (gt, torch):
            x = lib.tensor(DATA * 3, requires_grad=True)
            y = getattr(lib, name)(x * 1)
            outs.append((y.detach().numpy(), _node(y), y.requires_grad, y.shape))
        assert np.array_equal(outs[0][0], outs[1][0])
        assert outs[0][1:] == outs[1][1:], name
    x = gt.tensor(DATA, requires_grad=True)
    assert x.adjoint().grad_fn is not None
    ours, theirs = _both(lambda lib: lib.adjoint(lib.ones(3)))
    assert ours == theirs and ours[0] == "RuntimeError"
    ours, theirs = _both(lambda lib: lib.detach_copy(lib.ones(2, requires_grad=True)).sum()
                         .backward())
    assert ours == theirs and "detach_copy is not implemented" in ours[1]


def test_as_strided_and_empty_permuted():
    for lib in (gt, torch):
        x = lib.arange(6.0)
        assert lib.as_strided_(x, (2, 2), (1, 2)) is x
        assert x.tolist() == [[0.0, 2.0], [1.0, 3.0]]
    for size, order in (((2, 3, 4), (0, 2, 1)), ((2, 3), (1, 0)), ((5,), (0,)), ((), ())):
        ours, theirs = (lib.empty_permuted(size, order) for lib in (gt, torch))
        assert ours.shape == theirs.shape and ours.stride() == theirs.stride()
        assert ours.dtype == gt.float32
    for args in (((2, 3), (0,)), ((2, 3), (0, 0))):
        ours, theirs = _both(lambda lib, a=args: lib.empty_permuted(*a))
        assert ours == theirs


@pytest.mark.parametrize("p, train", [(0.3, True), (0.5, None), (0.3, False), (1.0, True),
                                      (0.0, True)])
def test_native_dropout(p, train):
    outs = []
    for lib in (gt, torch):
        lib.manual_seed(5)
        x = lib.tensor(DATA, requires_grad=True)
        out, mask = lib.native_dropout(x, p, train)
        (out * lib.arange(12.0).reshape(3, 4)).sum().backward()
        outs.append((out, mask, x.grad))
    (o1, m1, g1), (o2, m2, g2) = outs
    assert _node(o1) == _node(o2)
    assert np.array_equal(m1.numpy(), m2.numpy()) and m1.dtype == gt.bool
    np.testing.assert_allclose(o1.detach().numpy(), o2.detach().numpy(), rtol=1.3e-6, atol=1e-5)
    np.testing.assert_allclose(g1.numpy(), g2.numpy(), rtol=1.3e-6, atol=1e-5)


def test_native_dropout_draws_as_dropout():
    gt.manual_seed(9)
    out, mask = gt.native_dropout(gt.ones(50), 0.4, True)
    gt.manual_seed(9)
    ref = gt.nn.functional.dropout(gt.ones(50), 0.4)
    assert np.array_equal(out.numpy(), ref.numpy())


def test_sparse_only_names_refuse_strided():
    for call in (lambda lib: lib.smm(lib.ones(2, 2), lib.ones(2, 2)),
                 lambda lib: lib.ones(2, 2).smm(lib.ones(2, 2)),
                 lambda lib: lib.native_norm(lib.ones(3))):
        ours, theirs = _both(call)
        assert ours == theirs


def test_resize_as():
    outs = []
    for lib in (gt, torch):
        x = lib.tensor(DATA, requires_grad=True)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            y = x.resize_as(lib.ones(2, 6))
        assert "non-inplace resize_as is deprecated" in str(seen[0].message)
        y.sum().backward()
        outs.append((y.shape, _node(y), x.grad.shape))
    assert outs[0] == outs[1]


def test_cond_and_while_loop():
    for lib in (gt, torch):
        ones = lib.ones(2)
        assert lib.cond(lib.tensor(True), lambda x: x * 2, lambda x: x - 1, (ones,)).tolist() \
            == [2.0, 2.0]
        assert lib.cond(False, lambda x: x * 2, lambda x: x - 1, [ones]).tolist() == [0.0, 0.0]
        assert lib.while_loop(lambda i: i < 0, lambda i: i + 1, (lib.tensor(0),)).item() == 0
    result = gt.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
                           (gt.tensor(0), gt.ones(2)))
    assert result[0].item() == 3 and result[1].tolist() == [8.0, 8.0]
    with pytest.raises(RuntimeError, match="single-element tensor"):
        gt.cond(gt.tensor([True, False]), lambda x: x, lambda x: x, (gt.ones(1),))
