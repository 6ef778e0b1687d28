"""The in-place view ops (t_, transpose_, swapdims_, swapaxes_, squeeze_, unsqueeze_,
as_strided_): the tensor takes the new geometry, the in-place variant's node
(TBackward1, TransposeBackward1, SqueezeBackward3/4/5, UnsqueezeBackward1,
AsStridedBackward1), gradients, versions, and the refusals for views made in no_grad
mode, by multi-view ops and in custom Functions; compared with PyTorch."""

from __future__ import annotations

import pytest
from scenario_log import attempt, same

torch = pytest.importorskip("torch")

OPS = {
    "transpose_": lambda v: v.transpose_(0, 1), "squeeze_": lambda v: v.squeeze_(),
    "squeeze_dim": lambda v: v.squeeze_(1), "squeeze_dims": lambda v: v.squeeze_((1,)),
    "unsqueeze_": lambda v: v.unsqueeze_(0), "swapdims_": lambda v: v.swapdims_(0, 2),
    "swapaxes_": lambda v: v.swapaxes_(2, 0), "as_strided_empty": lambda v: v.as_strided_((1, 0), (2, 2)),
    "as_strided_": lambda v: v.as_strided_((3,), (2,)),
}


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("on_view", [False, True])
def test_node_shape_version_and_gradient(name, on_view):
    def scenario(t, log):
        b = t.tensor([[[1.0, 2.0, 3.0]], [[4.0, 5.0, 6.0]]], requires_grad=True)
        v = b * 1
        if on_view:
            v = v.view_as(b)
        OPS[name](v)
        log.append((v.grad_fn.name(), tuple(v.shape), v._version, v.is_contiguous(),
                    v.grad_fn.next_functions[0][0].name(), v._is_view()))
        weights = t.arange(1.0, v.numel() + 1.0).reshape(v.shape)
        (v * weights).sum().backward()
        log.append(b.grad.tolist())

    same(scenario)


def test_t_and_writes_through_the_new_geometry():
    def scenario(t, log):
        x = t.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = x * 1
        y.t_()
        log.append((y.grad_fn.name(), tuple(y.shape), y._version))
        (y * t.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
        log.append(x.grad.tolist())
        z = x * 1
        w = z[0]
        w.unsqueeze_(0)
        w.mul_(2)
        log.append((w.grad_fn.name(), z.grad_fn.name(), z.tolist()))
        q = t.ones(2, 3)
        q.t_()
        log.append((tuple(q.shape), q.is_contiguous(), q._version))
        attempt(log, lambda: t.ones(2, 3, 4).t_())
        attempt(log, lambda: x.t_())

    same(scenario)


class _Identity:
    @staticmethod
    def make(t):
        class ViewFn(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.view_as(x)

            @staticmethod
            def backward(ctx, g):
                return g

        return ViewFn


@pytest.mark.parametrize("kind", ["normal", "multi_view", "custom"])
@pytest.mark.parametrize("grad_view", [True, False])
@pytest.mark.parametrize("grad_iview", [True, False])
def test_views_that_may_not_change_in_place(kind, grad_view, grad_iview):
    def scenario(t, log):
        base = t.rand(2, 3, requires_grad=True).clone()
        with t.set_grad_enabled(grad_view):
            if kind == "multi_view":
                inp = base.unbind()[0]
            elif kind == "custom":
                inp = _Identity.make(t).apply(base)
            else:
                inp = base.view_as(base)
        for op in (lambda v: v.t_(), lambda v: v.unsqueeze_(0), lambda v: v.squeeze_(0)):
            with t.set_grad_enabled(grad_iview):
                attempt(log, lambda op=op: tuple(op(inp).shape))
        attempt(log, lambda: inp.add_(1) is inp)

    same(scenario)
