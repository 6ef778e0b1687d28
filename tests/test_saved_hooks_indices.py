"""saved_tensors_hooks see the index, mask, condition and target tensors an op's node saves
(gather, scatter*, index_*, masked_*, where, take, put, x[i], nll_loss...), in PyTorch's
order and count, and the input or source such nodes save; modifying one of those in place
before backward raises PyTorch's error. Compared live against torch."""

from __future__ import annotations

import pytest

import gradcli.torch as G

torch = pytest.importorskip("torch")


def _cases(T):
    def x():
        return T.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)

    def ones(*shape):
        return T.ones(*shape, requires_grad=True)

    idx = T.tensor([[0, 1], [2, 0]])
    i1 = T.tensor([2, 0])
    m = T.tensor([[True, False, True], [False, True, False]])
    F = T.nn.functional
    return {
        "gather": lambda: x().gather(1, idx),
        "take_along_dim": lambda: T.take_along_dim(x(), idx, 1),
        "index_select": lambda: x().index_select(1, i1),
        "scatter_src": lambda: x().scatter(1, idx, ones(2, 2)),
        "scatter_value": lambda: x().scatter(1, idx, 2.0),
        "scatter_add": lambda: x().scatter_add(1, idx, ones(2, 2)),
        "scatter_add_no_src_grad": lambda: x().scatter_add(1, idx, T.ones(2, 2)),
        "scatter_reduce": lambda: x().scatter_reduce(1, idx, ones(2, 2), "amax"),
        "masked_fill": lambda: x().masked_fill(m, 0.0),
        "masked_fill_tensor": lambda: x().masked_fill(m, T.tensor(3., requires_grad=True)),
        "masked_fill_inplace": lambda: (x() * 1).masked_fill_(m, 0.0),
        "masked_select": lambda: x().masked_select(m),
        "masked_scatter": lambda: x().masked_scatter(m, ones(2, 3)),
        "where": lambda: T.where(m, x(), T.zeros(2, 3, requires_grad=True)),
        "where_products": lambda: T.where(m, x() * 2, x() * 3),
        "embedding": lambda: F.embedding(i1 % 2, x()),
        "nll_loss": lambda: F.nll_loss(x(), T.tensor([0, 2])),
        "nll_loss_weight_sum": lambda: F.nll_loss(x(), T.tensor([0, 2]),
                                                  weight=T.tensor([1., 2., 3.]), reduction="sum"),
        "nll_loss_none_ignore": lambda: F.nll_loss(x(), T.tensor([0, 2]), reduction="none",
                                                   ignore_index=2),
        "cross_entropy": lambda: F.cross_entropy(x(), T.tensor([0, 2])),
        "index_ints": lambda: x()[i1 % 2],
        "index_mask": lambda: x()[m],
        "index_two": lambda: x()[i1 % 2, i1],
        "index_add": lambda: x().index_add(1, i1, ones(2, 2)),
        "index_add_no_source_grad": lambda: x().index_add(1, i1, T.ones(2, 2)),
        "index_copy": lambda: x().index_copy(1, i1, ones(2, 2)),
        "index_fill": lambda: x().index_fill(1, i1, 1.0),
        "index_put": lambda: x().index_put((i1 % 2,), ones(2, 3)),
        "setitem": lambda: (lambda t: (t.__setitem__(i1 % 2, ones(3)), t)[1])(x() * 1),
        "take": lambda: x().take(i1),
        "index_reduce": lambda: x().index_reduce(1, i1, ones(2, 2), "prod"),
        "put": lambda: x().put(i1, ones(2)),
    }


def _log_of(T, name):
    """What the pack and unpack hooks saw, in order: each packed tensor's dtype, shape and
    values (and how many packs had happened when the op returned), then the unpacks."""
    log = []

    def pack(t):
        log.append(("pack", str(t.dtype).split(".")[-1], tuple(t.shape), t.detach().tolist()))
        return (len(log), t)

    def unpack(p):
        log.append(("unpack", p[0]))
        return p[1]

    with T.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = _cases(T)[name]()
        log.append(("op returned", len(log)))
    y.sum().backward(retain_graph=True)
    y.sum().backward()  # (a retained graph unpacks again)
    return log


@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("name", sorted(_cases(torch)))
def test_pack_hooks_see_what_pytorch_packs(name):
    assert _log_of(G, name) == _log_of(torch, name)


@pytest.mark.parametrize("name", ["index_add", "index_copy", "take", "masked_select", "put",
                                  "nll_weight"])
def test_saved_input_modified_in_place_raises_as_pytorch(name):
    def run(T):
        x = T.ones(2, 3, requires_grad=True) * 1
        s = T.ones(2, 2, requires_grad=True) * 1
        i = T.tensor([2, 0])
        if name == "index_add":
            y, victim = x.index_add(1, i, s), s
        elif name == "index_copy":
            y, victim = x.index_copy(1, i, s), s
        elif name == "take":
            y, victim = x.take(i), x
        elif name == "masked_select":
            y, victim = x.masked_select(T.tensor([True, False, True])), x
        elif name == "put":
            s1 = T.ones(2, requires_grad=True) * 1
            y, victim = x.put(i, s1), s1
        else:
            w = T.tensor([1., 2., 3.])
            y, victim = T.nn.functional.nll_loss(x, T.tensor([0, 2]), weight=w), w
        victim.mul_(2)
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        return str(e.value)

    assert run(G) == run(torch)
