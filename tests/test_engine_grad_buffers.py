"""The backward engine reuses gradient buffers that nothing else holds.

Two things are tested: that the reuse happens (measured with tracemalloc, which numpy
reports its buffers to), and that it never changes a value someone else can see: a hook's
stored gradient, a retained .grad, the user's `gradient=` tensor, or two leaves that got
the same gradient tensor.
"""
import tracemalloc

import numpy as np
import pytest

import gradcli.torch as torch

N = 1_000_000
MB8 = N * 8


def _backward_peak(build):
    """Bytes traced above the end of the forward while `build()`'s output runs backward
    (traced from before the forward, so freeing its arrays counts too)."""
    tracemalloc.start()
    try:
        out = build()
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out.backward()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_leaf_takes_over_an_unshared_gradient():
    x = torch.ones(N, dtype=torch.float64, requires_grad=True)
    peak = _backward_peak(lambda: (x * 2).sum())
    assert peak < 1.5 * MB8  # the product becomes x.grad: no second 8 MB copy
    assert float(x.grad[0]) == 2.0 and x.grad.is_contiguous()


def test_gradients_add_into_an_unshared_buffer():
    x = torch.ones(N, dtype=torch.float64, requires_grad=True)
    peak = _backward_peak(lambda: (x * 2 + x * 3 + x * 4).sum())
    assert peak < 2.5 * MB8  # two buffers at a time, not three
    assert float(x.grad[0]) == 9.0


def test_spent_gradients_are_freed_as_the_chain_goes():
    x = torch.ones(N, dtype=torch.float64, requires_grad=True)
    peak = _backward_peak(lambda: (((x * 2) * 3) * 4).sum())
    assert peak < 2.5 * MB8
    assert float(x.grad[0]) == 24.0


def test_a_stored_leaf_hook_gradient_is_not_changed_by_later_accumulation():
    x = torch.ones(3, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g))
    (x * 2).sum().backward()
    (x * 5).sum().backward()
    assert seen[0].tolist() == [2.0, 2.0, 2.0]
    assert seen[1].tolist() == [5.0, 5.0, 5.0]
    assert x.grad.tolist() == [7.0, 7.0, 7.0]


def test_two_leaves_given_the_same_gradient_tensor_stay_independent():
    a = torch.ones(3, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    ((a + b) * 3).sum().backward()  # AddBackward hands one tensor to both leaves
    assert a.grad.tolist() == b.grad.tolist() == [3.0, 3.0, 3.0]
    (a * 10).sum().backward()
    assert a.grad.tolist() == [13.0, 13.0, 13.0]
    assert b.grad.tolist() == [3.0, 3.0, 3.0]
    a.grad.zero_()
    assert b.grad.tolist() == [3.0, 3.0, 3.0]


def test_the_users_gradient_argument_is_never_taken_over():
    x = torch.ones(3, requires_grad=True)
    v = torch.tensor([1.0, 2.0, 3.0])
    x.backward(v)
    x.backward(v)
    assert v.tolist() == [1.0, 2.0, 3.0]
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    y = x * 1
    y.backward(v)  # MulBackward0's result, not v, reaches the leaf
    assert v.tolist() == [1.0, 2.0, 3.0]


def test_a_retained_grad_and_the_leaf_grad_do_not_share_memory():
    x = torch.ones(3, requires_grad=True)
    y = x.clone()
    y.retain_grad()
    (y * 3).sum().backward()
    (x * 4).sum().backward()
    assert y.grad.tolist() == [3.0, 3.0, 3.0]
    assert x.grad.tolist() == [7.0, 7.0, 7.0]


def test_node_hooks_see_each_gradient_before_any_sum():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    p, q = y * 3, y * 4
    stored = []
    p.grad_fn.register_hook(lambda gi, go: stored.append(("p", gi[0])))
    q.grad_fn.register_hook(lambda gi, go: stored.append(("q", gi[0])))
    (p + q).sum().backward()
    got = {name: g.tolist() for name, g in stored}
    assert got == {"p": [3.0, 3.0, 3.0], "q": [4.0, 4.0, 4.0]}
    assert x.grad.tolist() == [14.0, 14.0, 14.0]


def test_a_tensor_hook_result_kept_by_the_user_is_not_added_into():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    kept = []

    def keep(g):
        r = g * 1
        kept.append(r)
        return r

    a = y * 3
    a.register_hook(keep)
    (a + y * 5).sum().backward()
    assert kept[0].tolist() == [1.0, 1.0, 1.0]
    assert x.grad.tolist() == [16.0, 16.0, 16.0]


def test_create_graph_keeps_every_gradient_differentiable():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    ((x * x) * 3 + x * x).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    (gx,) = torch.autograd.grad(x.grad.sum(), x)
    assert gx.tolist() == [8.0, 8.0]


@pytest.mark.parametrize("retain", [False, True])
def test_matches_pytorch_across_repeated_backward_with_hooks(retain):
    t = pytest.importorskip("torch")

    def program(T):
        x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
        w = T.tensor([1.5, 0.25, -2.0], requires_grad=True)
        seen = []
        x.register_hook(lambda g: seen.append(g))
        y = x * w
        z = (y * 3 + y.sin() * x + w * 2).sum()
        z.backward(retain_graph=True)
        if retain:
            z.backward(retain_graph=True)
        (x * w).sum().backward()
        return [x.grad.tolist(), w.grad.tolist()] + [s.tolist() for s in seen]

    ours = program(torch)
    theirs = program(t)
    assert np.allclose(np.array(ours[0] + ours[1]), np.array(theirs[0] + theirs[1]), rtol=1e-6)
    assert len(ours) == len(theirs)
    for a, b in zip(ours[2:], theirs[2:]):
        assert np.allclose(a, b, rtol=1e-6)


def test_a_chain_of_sin_needs_one_extra_buffer_in_backward():
    x = torch.linspace(-1, 1, N, dtype=torch.float64, requires_grad=True)

    def build():
        y = x
        for _ in range(5):
            y = torch.sin(y)
        return y.sum()

    peak = _backward_peak(build)
    # each SinBackward0 writes g * cos(a) into the cos buffer it made; spent inputs are freed
    assert peak < 1.5 * MB8
    expected = np.ones(5)
    v = np.linspace(-1, 1, 5)
    for _ in range(5):
        expected = expected * np.cos(v)
        v = np.sin(v)
    assert np.allclose([float(x.grad[0]), float(x.grad[-1])], [expected[0], expected[-1]])


@pytest.mark.parametrize("fn", ["sin", "cos"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sin_and_cos_backward_are_the_plain_product(fn, dtype):
    """The in-buffer product gives the same bits as g * cos(a) (or -g * sin(a)) op by op."""
    values = np.random.default_rng(3).standard_normal(257).tolist()
    weights = values[::-1]
    dt = getattr(torch, dtype)
    x = torch.tensor(values, dtype=dt, requires_grad=True)
    w = torch.tensor(weights, dtype=dt)
    (getattr(x, fn)() * w).sum().backward()
    a = torch.tensor(values, dtype=dt)
    expected = w * a.cos() if fn == "sin" else -w * a.sin()
    assert x.grad.tolist() == expected.tolist()
