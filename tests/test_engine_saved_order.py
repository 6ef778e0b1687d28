"""Which saved tensor the 'modified by an inplace operation' error names (Op.check_order).

PyTorch's generated backward unpacks an op's saved inputs sorted by argument name
(mul: other before self; mm: mat2 before self; dot: self before tensor) and the saved
result last, so when several were modified the first in that order is named. Compared
with PyTorch for each op whose node saves more than one tensor, modifying every subset.
"""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

OPS = {
    "mul": lambda T, a, b: a * b,
    "div": lambda T, a, b: a / b,
    "pow": lambda T, a, b: a ** b,
    "rpow": lambda T, a, b: 2.0 ** a,
    "maximum": lambda T, a, b: T.maximum(a, b),
    "minimum": lambda T, a, b: T.minimum(a, b),
    "remainder": lambda T, a, b: T.remainder(a, b),
    "fmod": lambda T, a, b: T.fmod(a, b),
    "dot": lambda T, a, b: T.dot(a, b),
    "clamp_min": lambda T, a, b: T.clamp(a, min=b),
    "clamp_max": lambda T, a, b: T.clamp(a, max=b),
    "clamp_both": lambda T, a, b: T.clamp(a, min=b, max=b + 1),
    "mm": lambda T, a, b: a.reshape(3, 1) @ b.reshape(1, 3),
    "mv": lambda T, a, b: b.reshape(1, 3).mv(a),
    "mse_loss": lambda T, a, b: T.nn.functional.mse_loss(a, b),
    "binary_cross_entropy": lambda T, a, b: T.nn.functional.binary_cross_entropy(
        a.sigmoid(), b.sigmoid()),
}


def _outcome(T, name: str, modified: str) -> str:
    a = T.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
    b = T.tensor([2.0, 0.5, 4.0], requires_grad=True) * 2
    r = OPS[name](T, a, b)
    with T.no_grad():
        for which, t in (("a", a), ("b", b), ("r", r)):
            if which in modified:
                t.add_(1)
    try:
        r.sum().backward()
    except RuntimeError as err:
        return str(err)
    return "ok"


@pytest.mark.parametrize("modified", ["a", "b", "r", "ab", "ar", "br", "abr"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_first_modified_saved_tensor_named_as_pytorch(name, modified):
    assert _outcome(gt, name, modified) == _outcome(torch, name, modified)


def _addc_after_writes(T, fn: str, needs: tuple):
    """addcmul/addcdiv(w, t1, t2), then t1 and t2 written in place, then backward: which
    factors the node saved shows as the error or the gradients."""
    w = T.ones(2, requires_grad=True)
    t1 = T.tensor([1.0, 2.0], requires_grad=needs[0])
    t2 = T.tensor([3.0, 4.0], requires_grad=needs[1])
    y = getattr(T, fn)(w, t1, t2, value=0.5)
    with T.no_grad():
        t1.add_(1)
        t2.add_(1)
    try:
        y.sum().backward()
    except RuntimeError as e:
        return str(e).split(";")[0]
    return [None if t.grad is None else t.grad.tolist() for t in (w, t1, t2)]


@pytest.mark.parametrize("fn", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("needs", [(False, False), (True, False), (False, True), (True, True)])
def test_addc_saves_the_factors_pytorch_saves(fn, needs):
    """addcmul saves a factor only for the other's gradient (nothing when only the sum's
    first term needs one); addcdiv saves both whatever is needed, as PyTorch's nodes do."""
    assert _addc_after_writes(gt, fn, needs) == _addc_after_writes(torch, fn, needs)
