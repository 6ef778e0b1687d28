"""RNNCell, LSTMCell and GRUCell against PyTorch: after the same seed the same parameters
(names, shapes, initial values), the same outputs step by step and gradients, the same
nodes, reprs, unbatched inputs and error messages."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu", "bias": False}),
         ("LSTMCell", {}), ("LSTMCell", {"bias": False}), ("GRUCell", {})]


def _both(name, kw, seed=0):
    torch.manual_seed(seed)
    gt.manual_seed(seed)
    return getattr(torch.nn, name)(3, 4, **kw), getattr(gt.nn, name)(3, 4, **kw)


def _close(ours, ref):
    torch.testing.assert_close(torch.from_numpy(np.array(ours.detach().numpy())), ref.detach())


@pytest.mark.parametrize("name,kw", CELLS, ids=lambda v: str(v))
def test_cell_matches_pytorch(name, kw):
    ref, ours = _both(name, kw)
    assert repr(ours) == repr(ref)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in ref.named_parameters()]
    for (_, a), (_, b) in zip(ours.named_parameters(), ref.named_parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    x = torch.randn(5, 2, 3, generator=torch.Generator().manual_seed(1))
    gx = gt.tensor(x.numpy().copy())
    h_ref = h_ours = None
    outs_ref, outs_ours = [], []
    for t in range(5):
        h_ref, h_ours = ref(x[t], h_ref), ours(gx[t], h_ours)
        first_ref = h_ref[0] if isinstance(h_ref, tuple) else h_ref
        first_ours = h_ours[0] if isinstance(h_ours, tuple) else h_ours
        _close(first_ours, first_ref)
        assert first_ours.grad_fn.name() == first_ref.grad_fn.name()
        outs_ref.append(first_ref)
        outs_ours.append(first_ours)
    torch.stack(outs_ref).sum().backward()
    gt.stack(outs_ours).sum().backward()
    for (_, a), (_, b) in zip(ours.named_parameters(), ref.named_parameters()):
        _close(a.grad, b.grad)
    one_ref, one_ours = ref(x[0, 0]), ours(gx[0, 0])
    if isinstance(one_ref, tuple):
        one_ref, one_ours = one_ref[1], one_ours[1]
    assert tuple(one_ours.shape) == tuple(one_ref.shape) == (4,)
    _close(one_ours, one_ref)


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_errors_match_pytorch(name):
    ref, ours = _both(name, {})
    lstm = name == "LSTMCell"
    cases = [
        lambda lib: lib.randn(2, 2, 3),
        lambda lib: lib.randn(2, 5),
    ]
    for make in cases:
        with pytest.raises((ValueError, RuntimeError)) as r:
            ref(make(torch))
        with pytest.raises(type(r.value)) as o:
            ours(make(gt))
        assert str(o.value) == str(r.value)
    def hidden(lib, *shape):
        return (lib.zeros(*shape), lib.zeros(*shape)) if lstm else lib.zeros(*shape)

    for shape in ((3, 4), (2, 5), (2, 2, 4)):
        with pytest.raises((ValueError, RuntimeError)) as r:
            ref(torch.zeros(2, 3), hidden(torch, *shape))
        with pytest.raises(type(r.value)) as o:
            ours(gt.zeros(2, 3), hidden(gt, *shape))
        assert str(o.value) == str(r.value)
