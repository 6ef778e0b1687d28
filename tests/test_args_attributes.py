"""Assigning or deleting read-only attributes of tensors and graph nodes raises PyTorch's
AttributeError text (and the writable ones keep their rules), compared with real PyTorch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402


def outcome(action):
    try:
        action()
    except Exception as err:  # noqa: BLE001 - the exception is what is compared
        return type(err).__name__, str(err)
    return None


TENSORS = {
    "leaf": lambda T: T.ones(2, requires_grad=True),
    "non-leaf": lambda T: T.ones(2, requires_grad=True) * 2,
    "plain": lambda T: T.ones(2),
    "int64": lambda T: T.ones(2, dtype=T.int64),
}
READ_ONLY = ("grad_fn", "is_leaf", "shape", "dtype", "device", "_version", "ndim", "T", "mT",
             "H", "output_nr", "retains_grad", "is_cuda")
VALUES = {"None": lambda T: None, "int": lambda T: 3, "True": lambda T: True,
          "tensor": lambda T: T.ones(3)}


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("attr", READ_ONLY)
@pytest.mark.parametrize("kind", list(TENSORS))
def test_assigning_a_read_only_tensor_attribute(kind, attr, value):
    def act(T):
        t = TENSORS[kind](T)
        return lambda: setattr(t, attr, VALUES[value](T))

    expected = outcome(act(torch))
    assert expected is not None and expected[0] == "AttributeError"
    assert outcome(act(gt)) == expected


@pytest.mark.parametrize("attr", [a for a in READ_ONLY if a not in ("T", "mT", "H", "is_cuda")])
@pytest.mark.parametrize("kind", list(TENSORS))
def test_deleting_a_read_only_tensor_attribute(kind, attr):
    def act(T):
        t = TENSORS[kind](T)
        return lambda: delattr(t, attr)

    assert outcome(act(gt)) == outcome(act(torch))


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("kind", list(TENSORS))
def test_requires_grad_takes_a_bool_only(kind, value):
    def act(T):
        t = TENSORS[kind](T)
        return lambda: setattr(t, "requires_grad", VALUES[value](T))

    assert outcome(act(gt)) == outcome(act(torch))


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("kind", list(TENSORS))
def test_requires_grad_rules_for_bools(kind, flag):
    def act(T):
        t = TENSORS[kind](T)
        return lambda: setattr(t, "requires_grad", flag)

    assert outcome(act(gt)) == outcome(act(torch))


GRADS = {
    "wrong dtype and size": lambda T: T.ones(3, dtype=T.float64),
    "wrong size": lambda T: T.ones(3),
    "int": lambda T: 3,
}


@pytest.mark.parametrize("grad", list(GRADS))
@pytest.mark.parametrize("kind", ["leaf", "int64"])
def test_grad_assignment_checks_in_pytorchs_order(kind, grad):
    def act(T):
        t = TENSORS[kind](T)
        return lambda: setattr(t, "grad", GRADS[grad](T))

    assert outcome(act(gt)) == outcome(act(torch))


def test_read_only_attributes_still_read():
    t = gt.ones(2, 3, requires_grad=True)
    y = t * 2
    assert y.grad_fn.name() == "MulBackward0" and not y.is_leaf and t.is_leaf
    assert tuple(t.shape) == (2, 3) and t.ndim == 2 and t.dtype is gt.float32
    assert t.T.shape == (3, 2) and t.is_cuda is False and t._version == 0
    assert t.output_nr == 0 and t.retains_grad is False


NODE_ATTRIBUTES = ("metadata", "name", "register_hook", "register_prehook")


@pytest.mark.parametrize("delete", [False, True], ids=["set", "del"])
@pytest.mark.parametrize("attr", NODE_ATTRIBUTES)
def test_node_attributes_refuse_writes(attr, delete):
    def act(T):
        node = (T.ones(2, requires_grad=True) * 2).grad_fn
        if delete:
            return lambda: delattr(node, attr)
        return lambda: setattr(node, attr, None)

    expected = outcome(act(torch))
    assert expected is not None
    assert outcome(act(gt)) == expected


@pytest.mark.parametrize("attr", ("metadata", "name"))
def test_accumulate_grad_attributes_refuse_writes(attr):
    def act(T):
        acc = (T.ones(2, requires_grad=True) * 2).grad_fn.next_functions[0][0]
        return lambda: setattr(acc, attr, None)

    assert outcome(act(gt)) == outcome(act(torch))


def test_node_methods_still_work():
    x = gt.ones(2, requires_grad=True)
    y = x * 2
    node = y.grad_fn
    node.metadata["k"] = 1
    assert node.metadata == {"k": 1}
    seen = []
    handle = node.register_hook(lambda gi, go: seen.append("post"))
    node.register_prehook(lambda go: seen.append("pre"))
    y.sum().backward()
    assert seen == ["pre", "post"]
    handle.remove()
    assert node.name() == "MulBackward0"
    assert type(node).name(node) == "MulBackward0"
    assert node.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"


def _data_and_flag_cases(T):
    """(name, action) pairs over fresh tensors: .data, .grad and requires_grad rules."""
    a = T.ones(2, requires_grad=True)
    b = T.ones(2, requires_grad=True) * 2
    c = T.ones(2)
    x = T.ones(2, requires_grad=True)
    v = x[:1]
    return [
        ("data of another shape", lambda: setattr(a, "data", T.ones(3))),
        ("data of another float dtype", lambda: setattr(a, "data", T.ones(3, dtype=T.float64))),
        ("int data under requires_grad", lambda: setattr(a, "data", T.ones(3, dtype=T.int64))),
        ("data of a non-leaf", lambda: setattr(b, "data", T.ones(3))),
        ("int data, no grad", lambda: setattr(c, "data", T.ones(3, dtype=T.int64))),
        ("data = int", lambda: setattr(c, "data", 3)),
        ("data = None", lambda: setattr(c, "data", None)),
        ("del data", lambda: delattr(c, "data")),
        ("del grad", lambda: delattr(a, "grad")),
        ("del requires_grad", lambda: delattr(a, "requires_grad")),
        ("view of a leaf: requires_grad = False", lambda: setattr(v, "requires_grad", False)),
        ("view of a leaf: data", lambda: setattr(v, "data", T.zeros(1))),
    ]


@pytest.mark.parametrize("index", range(12))
def test_data_and_flag_rules(index):
    name, action = _data_and_flag_cases(torch)[index]
    mine = _data_and_flag_cases(gt)[index][1]
    assert outcome(mine) == outcome(action), name
