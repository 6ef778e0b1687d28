"""torch.convolution and torch.conv_tbc / F.conv_tbc against PyTorch: values, grad_fn names,
gradients (gradcheck too), errors."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402

RNG = np.random.default_rng(12)


@pytest.mark.parametrize("pad", [0, 1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv_tbc(pad, dtype):
    x = RNG.standard_normal((6, 2, 3)).astype(dtype)
    w = RNG.standard_normal((3, 3, 4)).astype(dtype)
    b = RNG.standard_normal(4).astype(dtype)
    g = RNG.standard_normal((6 + 2 * pad - 2, 2, 4)).astype(dtype)
    outs = []
    for lib, fn in ((gt, gt.conv_tbc), (torch, torch.conv_tbc), (gt, gt.nn.functional.conv_tbc)):
        xs = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = fn(*xs, pad)
        y.backward(lib.tensor(g))
        outs.append((y, [t.grad for t in xs]))
    tol = dict(rtol=1e-7, atol=1e-7) if dtype == "float64" else dict(rtol=1.3e-5, atol=1e-5)
    for mine in (outs[0], outs[2]):
        assert type(mine[0].grad_fn).__name__ == type(outs[1][0].grad_fn).__name__
        np.testing.assert_allclose(mine[0].detach().numpy(), outs[1][0].detach().numpy(), **tol)
        for a, c in zip(mine[1], outs[1][1]):
            np.testing.assert_allclose(a.numpy(), c.numpy(), **tol)


def test_conv_tbc_gradgradcheck():
    xs = [gt.tensor(RNG.standard_normal(s), requires_grad=True)
          for s in ((4, 1, 2), (2, 2, 3), (3,))]
    assert gt.autograd.gradcheck(lambda *a: gt.conv_tbc(*a, 1), xs)
    assert gt.autograd.gradgradcheck(lambda *a: gt.conv_tbc(*a, 1), xs)


@pytest.mark.parametrize("shapes", [((5, 3), (2, 3, 4), (4,)), ((5, 2, 3), (3, 4), (4,)),
                                    ((5, 2, 3), (2, 3, 4), (4, 1)), ((5, 2, 3), (2, 2, 4), (4,)),
                                    ((5, 2, 3), (2, 3, 4), (3,)), ((5, 2, 3), (9, 3, 4), (4,))])
def test_conv_tbc_errors(shapes):
    seen = []
    for lib in (gt, torch):
        with pytest.raises(RuntimeError) as info:
            lib.conv_tbc(*(lib.ones(s) for s in shapes))
        seen.append(str(info.value))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("case", [
    ((1, 2, 7), (3, 2, 2), True, [2], [1], [1], False, [0], 1),
    ((2, 4, 5, 5), (4, 2, 3, 3), False, [1, 1], [1, 0], [1, 1], False, [0, 0], 2),
    ((1, 2, 4, 4), (2, 3, 2, 2), True, [2, 2], [0, 0], [1, 1], True, [1, 1], 1),
    ((1, 1, 3, 3, 3), (2, 1, 2, 2, 2), False, [1, 1, 1], [0, 0, 0], [1, 1, 1], False,
     [0, 0, 0], 1),
])
def test_convolution(case):
    xs, ws, use_bias, stride, padding, dilation, transposed, output_padding, groups = case
    x = RNG.standard_normal(xs)
    w = RNG.standard_normal(ws)
    out_channels = ws[1] * groups if transposed else ws[0]
    b = RNG.standard_normal(out_channels)
    outs = []
    for lib in (gt, torch):
        tx, tw = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        tb = lib.tensor(b, requires_grad=True) if use_bias else None
        y = lib.convolution(tx, tw, tb, stride, padding, dilation, transposed, output_padding,
                            groups)
        y.sum().backward()
        outs.append((y, tx.grad, tw.grad))
    assert type(outs[0][0].grad_fn).__name__ == type(outs[1][0].grad_fn).__name__
    for a, c in zip(outs[0], outs[1]):
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-7, atol=1e-7)
