"""The chunked path of F.linear_cross_entropy (PyTorch 2.13): with `options` (a
LinearCrossEntropyOptions) in the cases PyTorch's chunked custom ops take, one node named
as that op's generated backward, whose values and gradients are the composition's
(cross_entropy of linear(input, linear_weight, linear_bias)): the chunking only saves
memory. The reference path and the argument checks are breadth.linear_cross_entropy's."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from .nn import cross_entropy, linear
from .registry import defop, public, run_op

_CHUNKED = "GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_defaultBackward"
_CHUNKED_NONE = ("GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_"
                 "no_reduction_defaultBackward")


def _chunked_fwd(x, w, b, target, weight, reduction, ignore_index):
    from ..grad_mode import no_grad
    from ..tensor import make

    if x.dtype.kind == "V":
        # bfloat16: PyTorch's chunked kernel accumulates in float32 (its acc_dtype) and
        # rounds the loss once
        x, w = x.astype(np.float32), w.astype(np.float32)
        b = None if b is None else b.astype(np.float32)
        if weight is not None and weight._data.dtype.kind == "V":
            weight = weight.float()
        return _chunked_fwd(x, w, b, target, weight, reduction, ignore_index).astype(
            dtypes.bfloat16.np)  # (read here: ml_dtypes loads on first bfloat16 use)
    with no_grad():
        out = _chunked_loss(make(x), make(w), None if b is None else make(b), target, weight,
                            reduction, ignore_index)
    return out._data


def _chunked_loss(x, w, b, target, weight, reduction, ignore_index):
    return cross_entropy(linear(x, w, b), target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index)


def _chunked_backward(c, g):
    from ..autograd import grad as _grad
    from ..grad_mode import GRAD_MODE, enable_grad

    x, w, b = c.saved
    target, weight, reduction, ignore_index = c.meta
    graph = GRAD_MODE.enabled
    leaves = [None if t is None else (t if graph and c.needs(i) else t.detach()._requires_grad_())
              for i, t in enumerate((x, w, b))]
    with enable_grad():
        loss = _chunked_loss(*leaves, target, weight, reduction, ignore_index)
        wanted = [t for t in leaves if t is not None]
        grads = list(_grad(loss, wanted, g, create_graph=graph, allow_unused=True))
    out, k = [], 0
    for i, t in enumerate(leaves):
        if t is None:
            out.append(None)
            continue
        out.append(grads[k] if c.needs(i) else None)
        k += 1
    return tuple(out)


CHUNKED = {red: defop(f"linear_cross_entropy_chunked{'_none' if red else ''}",
                      _CHUNKED_NONE if red else _CHUNKED, _chunked_fwd, _chunked_backward,
                      "cross_entropy(x W^T + b): the composition's gradients", save="inputs")
           for red in (False, True)}


@public("internal.linear_cross_entropy_chunked")
def linear_cross_entropy_chunked(input: Tensor, linear_weight: Tensor, target: Tensor,
                                 linear_bias, weight, reduction: str,
                                 ignore_index: int) -> Tensor:
    """The chunked path of F.linear_cross_entropy (breadth.py checks the arguments and
    calls this, through PUBLIC, when `options` is given and PyTorch would chunk)."""
    batched = input.dim() == 2
    x, t = (input, target) if batched else (input.unsqueeze(0), target.unsqueeze(0))
    out = run_op(CHUNKED[reduction == "none"], (x, linear_weight, linear_bias),
                 (t, weight, reduction, ignore_index))
    return out if batched else out.squeeze(0)
