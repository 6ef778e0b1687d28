"""autograd.grad's is_grads_batched / materialize_grads, tensor attribute deletion and
Variable, compared with PyTorch 2.13."""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _run(t) -> list:
    log = []

    def attempt(f):
        try:
            log.append(str(f()))
        except Exception as e:  # noqa: BLE001 - the error is part of the behaviour
            log.append(f"{type(e).__name__}: {e}")

    x = t.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = x.clone()
    batched = t.arange(3).expand(2, 2, 3).transpose(0, 2)
    attempt(lambda: t.autograd.grad(out, (x,), (batched,), is_grads_batched=True))
    attempt(lambda: t.autograd.grad(out, (x,), (t.ones(2, 2),), is_grads_batched=True))
    s = (x * x).sum()
    attempt(lambda: t.autograd.grad(s, (x,), (t.arange(3.0),), is_grads_batched=True,
                                    retain_graph=True))
    attempt(lambda: t.autograd.grad(s, (x,), (t.ones(2).unsqueeze(1),), is_grads_batched=True))
    attempt(lambda: t.autograd.grad(s, [x, t.ones(1, requires_grad=True)], materialize_grads=True,
                                    retain_graph=True))
    attempt(lambda: t.autograd.grad(s, [x], materialize_grads=True, allow_unused=False))

    def delete_data():
        del x.data

    def set_none():
        x.data = None

    def delete_requires_grad():
        del x.requires_grad

    for f in (delete_data, set_none, delete_requires_grad):
        attempt(f)
    x.grad = t.ones(2, 2)
    del x.grad
    log.append(str(x.grad))
    v = t.ones(3)
    w = t.autograd.Variable(v, requires_grad=True)
    log.append(str((w is v, v.requires_grad, w.requires_grad, w.is_leaf)))
    return log


def test_grad_api_edges_match_pytorch():
    mine = _run(gt)
    assert mine == _run(torch)
    assert mine[0].startswith("(tensor([[[0., 0.],")
    assert mine[-1] == "(False, False, True, True)"  # Variable leaves its argument alone
