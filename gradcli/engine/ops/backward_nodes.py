"""A layer's backward as the one named node PyTorch records under create_graph.

Where derivatives.yaml gives an op's derivative as a named ATen function
(`native_batch_norm_backward`, `avg_pool2d_backward`, `elu_backward`...), PyTorch's
first-order gradients are that function's outputs, and under create_graph they hang off
one `<Name>BackwardBackward0` node whose inputs are the function's (grad_output, input,
weight...). So a gradient requires grad when any of those inputs does, even one it does
not depend on (an avg_pool2d gradient of a leaf x: the node takes x), its next_functions
are those inputs' edges, and differentiating it along an input it does not depend on gives
no gradient (allow_unused's None).

A `BackwardOp` declares such a function by its gradient formula written in Tensor ops
(`formula(inputs, meta, mask) -> gradients`, None where the mask says no). The first
order runs the formula under no_grad and wraps the arrays, so its values and cost are
those of the formula as before; only when a graph is being recorded does the node exist.
Its own backward (every higher order) is the vector-Jacobian product of the formula,
taken by running the formula again with a graph and asking the engine for the gradients
along the node's inputs (a reentrant backward, as PyTorch allows in a custom Function).
"""

from __future__ import annotations

import numpy as np

from ..grad_mode import GRAD_MODE, enable_grad, no_grad
from ..late import Slots
from ..tensor import Tensor, make
from .linalg_ext import _grads, _run_multi
from .registry import PUBLIC, defop

#: torch.autograd.grad (engine/autograd.py, above the op modules), for the reentrant vjp
ABOVE = Slots("gradcli.engine.ops.backward_nodes", "grad")

_NONE = np.empty(0)


class BackwardOp:
    """A named backward function: its op (the node's name and rule) and its formula."""

    def __init__(self, name: str, node: str, formula, n_outputs: int, rule: str,
                 torch_call: str = "", zeros_for: tuple = (), explicit=None):
        self.formula = formula
        # PyTorch's own double-backward formulas, `explicit(inputs, grads, meta) ->
        # gradients of the inputs`, where derivatives.yaml gives closed forms whose
        # non-finite values (inf * 0 of a mask, z / (z + 1)^2 at z = inf) or signed zeros
        # differ from the vjp of the formula
        self.explicit = explicit
        self.n_outputs = n_outputs
        # inputs whose gradient PyTorch's formula gives as zeros where the vjp has none
        # (a mask's `where` is constant in x, but prelu_double_backward returns zeros)
        self.zeros_for = zeros_for
        self.op = defop(name, node, None, self._backward, rule, save="inputs", multi=True,
                        torch_call=torch_call)

    def __call__(self, inputs: tuple, meta: tuple, mask: tuple) -> tuple:
        """The gradients `mask` asks for (None elsewhere), recorded as one node when a
        graph is being made (grad mode on and an input requiring grad)."""
        with no_grad():
            grads = self.formula(inputs, meta, mask)
        arrays = [g._data if (wanted and g is not None) else _NONE
                  for g, wanted in zip(grads, mask, strict=True)]
        present = tuple(bool(wanted and g is not None) for g, wanted in zip(grads, mask))
        outs = _run_multi(self.op, inputs, (meta, mask), arrays, present)
        return tuple(o if wanted else None for o, wanted in zip(outs, present, strict=True))

    def _backward(self, c, grads):
        """The vjp of the formula at the incoming gradients, along the inputs that want one
        (or PyTorch's own double-backward formula, where its zeros differ in sign)."""
        inputs = c.saved
        meta, mask = c.meta[0], c.meta[1]
        wanted = [i for i in range(len(inputs)) if c.needs(i)]
        incoming = _grads(grads, self.n_outputs)
        result = [None] * len(inputs)
        if not wanted:
            return tuple(result)
        explicit = self.explicit
        if explicit is not None:
            # (an output the mask did not ask for has no gradient: it was never made)
            incoming = [gg if wanted_out else None for gg, wanted_out in zip(incoming, mask)]
            if GRAD_MODE.enabled:
                got = explicit(inputs, incoming, meta)
            else:
                with no_grad():
                    got = explicit(inputs, incoming, meta)
            return tuple(g if c.needs(i) else None for i, g in enumerate(got))
        create = GRAD_MODE.enabled
        with enable_grad():
            # an alias per input wanted: the gradient along each slot alone (bilinear(x, x)
            # takes x twice) while a graph over it still reaches the original tensor
            aliases = list(inputs)
            for i in wanted:
                if inputs[i].requires_grad:
                    aliases[i] = inputs[i].view_as(inputs[i])
                else:  # (forward AD's transposed vjp asks along a constant)
                    aliases[i] = inputs[i].detach()._requires_grad_()
            outs = self.formula(tuple(aliases), meta, mask)
            pairs = [(o, gg) for o, gg in zip(outs, incoming)
                     if o is not None and gg is not None and isinstance(o, Tensor)
                     and o.requires_grad]
            if not pairs:
                return tuple(inputs[i].detach().new_zeros(inputs[i].shape)
                             if i in self.zeros_for and c.needs(i) else None
                             for i in range(len(inputs)))
            found = ABOVE.grad([o for o, _ in pairs], [aliases[i] for i in wanted],
                               [gg for _, gg in pairs], create_graph=create, allow_unused=True)
        for i, g in zip(wanted, found, strict=True):
            if g is None and i in self.zeros_for:
                g = inputs[i].detach().new_zeros(inputs[i].shape)
            result[i] = g
        return tuple(result)


# ------------------------------------------------------------------ explicit double backward


def prelu_kernel_double_backward(inputs, grads, meta):
    """derivatives.yaml's _prelu_kernel_backward entry: branches on self >= 0 (where the
    first order branched on self > 0), so at x = +-0 the gradients are where's exact
    zeros, not products with a signed zero. The weight's gradient (input-shaped) is summed
    to the weight, as PyTorch's engine sums an expandable gradient."""
    g, x, w = inputs
    gg_x, gg_w = grads
    where = PUBLIC["torch.where"]
    d = x._data
    if w._data.size == 1 or d.ndim < 2:
        ws = w.reshape(())
    else:
        ws = w.reshape((d.shape[1],) + (1,) * (d.ndim - 2))
    keep = x >= 0
    zero = make(np.zeros((), d.dtype))
    if gg_x is not None:
        d_g = where(keep, gg_x, gg_x * ws + gg_w * x) if gg_w is not None else \
            where(keep, gg_x, gg_x * ws)
    else:
        d_g = where(keep, zero, gg_w * x)
    d_x = where(keep, zero, g * gg_w) if gg_w is not None else PUBLIC["torch.zeros_like"](x)
    d_w = where(keep, zero, g * gg_x) if gg_x is not None else PUBLIC["torch.zeros_like"](x)
    if tuple(d_w.shape) != tuple(w.shape):
        if d_w.dim() < w.dim():  # (a 0-d input's one weight)
            d_w = d_w.reshape(tuple(w.shape))
        else:
            d_w = d_w.sum_to_size(tuple(w.shape)) if w.dim() else d_w.sum()
    return d_g, d_x, d_w

