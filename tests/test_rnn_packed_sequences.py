"""RNN, LSTM and GRU given a PackedSequence, against PyTorch: the packed output (data,
batch sizes, indices), the final states in the caller's batch order, and gradients."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402

CASES = [(kind, layers, bidir, hx_given, batch_first)
         for kind in ("RNN", "LSTM", "GRU")
         for layers, bidir, hx_given, batch_first in ((1, False, False, False),
                                                      (2, True, False, False),
                                                      (1, True, True, True))]


def _run(T, kind, layers, bidir, hx_given, batch_first, enforce_sorted):
    T.manual_seed(0)
    model = getattr(T.nn, kind)(3, 4, num_layers=layers, bidirectional=bidir,
                                batch_first=batch_first)
    lengths = (4, 3, 2) if enforce_sorted else (2, 4, 3)
    seqs = [T.randn(n, 3) for n in lengths]
    packed = T.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=enforce_sorted)
    count = layers * (2 if bidir else 1)
    hx = None
    if hx_given:
        h0 = T.randn(count, 3, 4)
        hx = (h0, T.randn(count, 3, 4)) if kind == "LSTM" else h0
    out, hidden = model(packed, hx)
    states = hidden if kind == "LSTM" else (hidden,)
    (out.data.sum() + states[0].sum()).backward()
    indices = [None if i is None else i.tolist() for i in (out.sorted_indices,
                                                          out.unsorted_indices)]
    return (type(out).__name__, out.batch_sizes.tolist(), indices, out.data.detach().numpy(),
            [s.detach().numpy() for s in states], model.weight_ih_l0.grad.numpy(),
            model.weight_hh_l0.grad.numpy())


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}-{c[4]}" for c in CASES])
def test_packed_input_as_pytorch(case, enforce_sorted):
    ours = _run(gt, *case, enforce_sorted)
    theirs = _run(torch, *case, enforce_sorted)
    assert ours[:3] == theirs[:3]
    tol = dict(rtol=1.3e-6 * 10, atol=1e-5)
    np.testing.assert_allclose(ours[3], theirs[3], **tol)
    for mine, expected in zip(ours[4], theirs[4], strict=True):
        assert mine.shape == expected.shape
        np.testing.assert_allclose(mine, expected, **tol)
    np.testing.assert_allclose(ours[5], theirs[5], **tol)
    np.testing.assert_allclose(ours[6], theirs[6], **tol)


def test_batch_first_flag_survives_a_packed_call():
    model = gt.nn.GRU(2, 3, batch_first=True)
    packed = gt.nn.utils.rnn.pack_sequence([gt.ones(2, 2), gt.ones(1, 2)])
    model(packed)
    assert model.batch_first is True
    out, _ = model(gt.ones(1, 2, 2))
    assert tuple(out.shape) == (1, 2, 3)
