"""hypot saves what PyTorch's HypotBackward0 saves: each input only when its own gradient
is needed (grad * self / result, grad * other / result), the result always. So writing an
input in place after hypot fails the backward exactly when PyTorch's does, and an
inference tensor not needing a gradient is accepted; compared with PyTorch over the four
needs (and through hypot_ and the out-of-place broadcast)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402

NEEDS = [(False, False), (True, False), (False, True), (True, True)]


def _after_writes(T, needs, write, shapes=((2,), (2,))):
    """hypot(w * a, b) with a, b requiring grad as `needs` says (w makes the sum need one
    even when neither does); then the inputs named in `write` are changed in place."""
    w = T.ones(shapes[0], requires_grad=True)
    a = T.tensor([3.0, 5.0][:shapes[0][0]], requires_grad=needs[0])
    b = T.tensor([4.0, 12.0][:shapes[1][0]], requires_grad=needs[1])
    x = a * 1 if needs[0] else a  # (a leaf written in place must not need grad)
    y = T.hypot(x, b) + w
    with T.no_grad():
        if "a" in write:
            x.add_(1)
        if "b" in write:
            b.mul_(2)
    try:
        y.sum().backward()
    except RuntimeError as e:
        return "error: " + str(e).split(";")[0]
    return [None if t.grad is None else t.grad.tolist() for t in (w, a, b)]


@pytest.mark.parametrize("write", ["a", "b", "ab"])
@pytest.mark.parametrize("needs", NEEDS)
def test_in_place_writes_after_hypot_as_pytorch(needs, write):
    assert _after_writes(gt, needs, write) == _after_writes(torch, needs, write)


@pytest.mark.parametrize("needs", NEEDS)
def test_broadcast_operand_writes_as_pytorch(needs):
    shapes = ((2,), (1,))
    assert (_after_writes(gt, needs, "b", shapes)
            == _after_writes(torch, needs, "b", shapes))


def _inference_operand(T, needs_a: bool, inference: str):
    """One operand made in inference mode: refused only where PyTorch must save it."""
    with T.inference_mode():
        frozen = T.tensor([4.0, 12.0])
    live = T.tensor([3.0, 5.0], requires_grad=needs_a)
    w = T.ones(2, requires_grad=True)
    try:
        y = (T.hypot(live, frozen) if inference == "b" else T.hypot(frozen, live)) + w
        y.sum().backward()
    except RuntimeError as e:
        return "error: " + str(e)
    return [None if t.grad is None else t.grad.tolist() for t in (w, live)]


@pytest.mark.parametrize("inference", ["a", "b"])
@pytest.mark.parametrize("needs", [False, True])
def test_inference_operand_as_pytorch(needs, inference):
    assert _inference_operand(gt, needs, inference) == _inference_operand(torch, needs,
                                                                           inference)


@pytest.mark.parametrize("needs", NEEDS)
def test_in_place_hypot_then_write_as_pytorch(needs):
    def run(T):
        a = T.tensor([3.0, 5.0], requires_grad=needs[0]) * 1
        b = T.tensor([4.0, 12.0], requires_grad=needs[1])
        w = T.ones(2, requires_grad=True)
        y = (a * w).hypot_(b) if True else None
        with T.no_grad():
            b.mul_(3)
        try:
            y.sum().backward()
        except RuntimeError as e:
            return "error: " + str(e).split(";")[0]
        return [None if t.grad is None else t.grad.tolist() for t in (w, b)]

    assert run(gt) == run(torch)


def test_saved_attributes_as_pytorch():
    for needs in NEEDS:
        res = []
        for T in (torch, gt):
            a = T.tensor([3.0], requires_grad=needs[0])
            b = T.tensor([4.0], requires_grad=needs[1])
            w = T.ones(1, requires_grad=True)
            node = T.hypot(a * w if needs[0] else a + w * 0, b).grad_fn
            res.append((type(node).__name__, node._saved_result.tolist()))
        assert res[0] == res[1]
