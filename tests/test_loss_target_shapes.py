"""Every F.*loss given a target of another shape does what PyTorch does: broadcasts with
its warning, or raises its error (soft_margin_loss writes into an output of the input's
shape, so a target that would enlarge it is refused; huber/smooth_l1 give PyTorch's
broadcast error text). Compared live against torch."""

from __future__ import annotations

import warnings

import pytest

import gradcli.torch as G

torch = pytest.importorskip("torch")

_PAIRWISE = sorted(n for n in dir(torch.nn.functional) if n.endswith("loss")
                   and not n.startswith("_") and n not in (
                       "nll_loss", "cross_entropy", "multi_margin_loss",
                       "multilabel_margin_loss", "ctc_loss"))
# losses whose graph under a broadcast target still differs from PyTorch's in node names
# (values and gradients agree): PyTorch composes them of other ops
_OTHER_GRAPHS = {"l1_loss", "soft_margin_loss", "margin_ranking_loss", "triplet_margin_loss"}
_SHAPES = [((2, 3), (3,)), ((2, 3), (2, 1)), ((2, 3), (6,)), ((3,), (2, 3)), ((2, 3), (4,)),
           ((2, 1), (2, 3)), ((2, 3), ()), ((), (2,))]


def _values(T, shape, lo, hi):
    n = 1
    for s in shape:
        n *= s
    return T.linspace(lo, hi, n).reshape(shape)


def _graph(node, depth=3):
    """The node names under `node` (where an input was broadcast: ExpandBackward0)."""
    if node is None or not depth:
        return None
    return (type(node).__name__,
            [_graph(n, depth - 1) for n, _ in getattr(node, "next_functions", ())])


def _outcome(T, name, si, st, reduction):
    x = _values(T, si, 0.1, 0.9).requires_grad_()
    t = _values(T, st, 0.2, 0.8)
    f = getattr(T.nn.functional, name)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            if name in ("margin_ranking_loss", "cosine_embedding_loss", "triplet_margin_loss",
                        "triplet_margin_with_distance_loss"):
                r = f(x, x.detach() * 0.5, t, reduction=reduction)
            elif name == "gaussian_nll_loss":
                r = f(x, t, T.ones(si), reduction=reduction)
            else:
                r = f(x, t, reduction=reduction)
            r.sum().backward()
            got = ("ok", tuple(r.shape), r.detach().reshape(-1).tolist(),
                   x.grad.reshape(-1).tolist(), _graph(r.grad_fn))
        except Exception as e:
            got = (type(e).__name__, str(e))
    return got, [(w.category.__name__, str(w.message)) for w in seen]


@pytest.mark.parametrize("name", _PAIRWISE)
@pytest.mark.parametrize("si, st", _SHAPES)
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_loss_of_a_target_of_another_shape_as_pytorch(name, si, st, reduction):
    (ours, our_warnings), (theirs, their_warnings) = (
        _outcome(G, name, si, st, reduction), _outcome(torch, name, si, st, reduction))
    assert our_warnings == their_warnings
    if ours[0] == "ok" and theirs[0] == "ok":
        assert ours[1] == theirs[1]
        if name not in _OTHER_GRAPHS:
            assert ours[4] == theirs[4]
        torch.testing.assert_close(torch.tensor(ours[2]), torch.tensor(theirs[2]))
        torch.testing.assert_close(torch.tensor(ours[3]), torch.tensor(theirs[3]))
    else:
        assert ours == theirs


@pytest.mark.parametrize("name, si, target", [
    ("nll_loss", (2, 3), [0, 1, 2]), ("nll_loss", (2, 3), [[0], [1]]),
    ("cross_entropy", (2, 3), [0, 1, 2]), ("cross_entropy", (2, 3, 4), [[0, 1, 2, 0]]),
    ("multi_margin_loss", (2, 3), [0, 1, 2]), ("multilabel_margin_loss", (2, 3), [[0, 1]]),
])
def test_class_index_losses_with_a_target_of_another_shape(name, si, target):
    def run(T):
        x = _values(T, si, 0.1, 0.9)
        try:
            return ("ok", getattr(T.nn.functional, name)(x, T.tensor(target)).tolist())
        except Exception as e:
            return type(e).__name__, str(e)

    assert run(G) == run(torch)
