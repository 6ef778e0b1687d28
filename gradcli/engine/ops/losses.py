"""Losses of torch.nn.functional beyond nn.py's: l1_loss, smooth_l1_loss, huber_loss, kl_div.

l1_loss and kl_div are composites in PyTorch 2.13 (their grad_fns are the Tensor ops they
are made of: MeanBackward0 over AbsBackward0...), so they are written with Tensor ops
here too. smooth_l1_loss and huber_loss are ops of their own (SmoothL1LossBackward0,
HuberLossBackward0) whose backwards are ops again, for create_graph.
"""

from __future__ import annotations

import numpy as np

from .. import autocast_state as _autocast
from ..tensor import Tensor, make
from ..warn_site import warn_at_caller
from .nn import _broadcast_pair, _reduce, _reduction_arg
from .registry import defop, public, run_op


def _size_warning(input: Tensor, target: Tensor, stacklevel: int = 3) -> None:
    if input._data.shape != target._data.shape:
        warn_at_caller(  # (at the program's line, past the public-boundary wrapper)
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.")


def _tensor_reduce(t: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return t.mean()
    if reduction == "sum":
        return t.sum()
    return t


@public("torch.nn.functional.l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(l1_loss, input, target, size_average, reduce, reduction, weight)
    _size_warning(input, target)
    reduction = _reduction_arg(size_average, reduce, reduction)
    diff = (input - target).abs()
    if weight is not None:
        diff = diff * weight
    return _tensor_reduce(diff, reduction)


# ------------------------------------------------------- smooth_l1 / huber
def _smooth_l1(x, t, reduction, beta):
    d = x - t
    a = np.abs(d)
    if beta == 0:
        out = a
    else:
        out = np.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)
    return _reduce(np.asarray(out, dtype=d.dtype), reduction)


def _smooth_l1_grad(g, x, t, reduction, beta):
    d = x - t
    n = d.size if reduction == "mean" else 1
    if beta == 0:
        local = np.sign(d)
    else:
        local = np.where(d < -beta, -1.0, np.where(d > beta, 1.0, d / beta))
    return np.asarray(local * g / n, dtype=d.dtype)


def _huber(x, t, reduction, delta):
    d = x - t
    a = np.abs(d)
    out = np.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))
    return _reduce(np.asarray(out, dtype=d.dtype), reduction)


def _huber_grad(g, x, t, reduction, delta):
    d = x - t
    n = d.size if reduction == "mean" else 1
    local = np.where(d < -delta, -delta, np.where(d > delta, delta, d))
    return np.asarray(local * g / n, dtype=d.dtype)


def _loss_pair(name: str, node: str, fwd, grad, second, torch_call: str, rule: str):
    """A loss op over (input, target) and its backward op over (g, input, target)."""

    def back_grads(c, gg):
        g, x, t = c.saved
        dg = dx = None
        if c.needs(0):
            local = make(grad(np.ones_like(x._data), x._data, t._data, "none", *c.meta[1:]))
            dg = (gg * local)
            if c.meta[0] != "none":
                dg = dg.sum() / (x._data.size if c.meta[0] == "mean" else 1)
        if c.needs(1) or c.needs(2):
            n = x._data.size if c.meta[0] == "mean" else 1
            dx = gg * g * make(second(x._data, t._data, *c.meta[1:]) / n)
        return dg, dx if c.needs(1) else None, -dx if c.needs(2) else None

    back = defop(name + "_backward", node.replace("Backward0", "BackwardBackward0"), grad,
                 back_grads, f"d {name}_backward/dg, /dx", save="inputs", broadcast=True,
                 torch_call=f"torch.enable_grad()(lambda a: torch.autograd.grad({torch_call}"
                            ", a, create_graph=True)[0])(a)")

    def grads(c, g):
        x, t = c.saved
        return (run_op(back, (g, x, t), c.meta) if c.needs(0) else None,
                run_op(back, (g, t, x), c.meta) if c.needs(1) else None)

    op = defop(name, node, fwd, grads, rule, save="inputs", broadcast=True,
               torch_call=torch_call)
    return op, back


SMOOTH_L1, SMOOTH_L1_BACKWARD = _loss_pair(
    "smooth_l1_loss", "SmoothL1LossBackward0", _smooth_l1, _smooth_l1_grad,
    lambda x, t, beta: np.where(np.abs(x - t) < beta, 1.0 / beta, 0.0) if beta else
    np.zeros_like(x),
    "torch.nn.functional.smooth_l1_loss(a, a * 0.5)",
    "d smooth_l1(a, t)/da = (a - t)/beta inside beta, sign(a - t) outside")
HUBER, HUBER_BACKWARD = _loss_pair(
    "huber_loss", "HuberLossBackward0", _huber, _huber_grad,
    lambda x, t, delta: np.where(np.abs(x - t) < delta, 1.0, 0.0),
    "torch.nn.functional.huber_loss(a, a * 0.5)",
    "d huber(a, t)/da = a - t inside delta, delta sign(a - t) outside")


@public("torch.nn.functional.smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",
                   beta: float = 1.0):
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(smooth_l1_loss, input, target, size_average, reduce, reduction, beta)
    _size_warning(input, target)
    reduction = _reduction_arg(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    input, target = _broadcast_pair(input, target)
    return run_op(SMOOTH_L1, (input, target), (reduction, float(beta)))


@public("torch.nn.functional.huber_loss")
def huber_loss(input, target, reduction="mean", delta: float = 1.0, weight=None):
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(huber_loss, input, target, reduction, delta, weight)
    _size_warning(input, target)
    reduction = _reduction_arg(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        loss = run_op(HUBER, (input, target), ("none", float(delta))) * weight
        return _tensor_reduce(loss, reduction)
    return run_op(HUBER, (input, target), (reduction, float(delta)))


# ------------------------------------------------------- kl_div
def _xlogy_self(t: Tensor) -> Tensor:
    """xlogy(t, t): t log t, 0 where t == 0."""
    from .elementwise import where

    if not t.requires_grad:
        d = t._data
        with np.errstate(all="ignore"):
            out = np.where(d == 0, 0.0, d * np.log(d)).astype(d.dtype)
        out = np.where(np.isnan(d), d, out)
        return make(out)
    return where(t == 0, 0.0, t * t.log())


@public("torch.nn.functional.kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean",
           log_target: bool = False):
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(kl_div, input, target, size_average, reduce, reduction, log_target)
    if size_average is not None or reduce is not None:
        reduction = _reduction_arg(size_average, reduce, "mean")
    elif reduction == "mean":
        warn_at_caller(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.")
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        pointwise = target.exp() * (target - input)
    else:
        pointwise = _xlogy_self(target) - target * input
    if reduction == "batchmean":
        total = pointwise.sum()
        if input.dim() != 0:
            return total / input.size()[0]
        return total
    return _tensor_reduce(pointwise, reduction)
