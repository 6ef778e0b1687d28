"""A custom Function's jvp under forward AD, compared with PyTorch: None (not zeros) for
an input of a dtype without gradients, the refusal of a gradient for a non-differentiable
output, an input modified in place (mark_dirty) whose tangent must be modified in place
and returned as-is, and an output aliasing an input (returned as-is, or a view) whose
tangent must be a view of the input's tangent."""

from __future__ import annotations

import pytest
from scenario_log import attempt, same

torch = pytest.importorskip("torch")


def test_non_differentiable_inputs_and_outputs():
    def scenario(t, log):
        fwAD = t.autograd.forward_ad
        seen = []

        class Split(t.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                out = y.clone()
                ctx.mark_non_differentiable(out)
                return x.clone(), out

            @staticmethod
            def jvp(ctx, x_t, y_t):
                seen.append(None if y_t is None else y_t.tolist())
                return x_t * 2, None

        class Wrong(Split):
            @staticmethod
            def jvp(ctx, x_t, y_t):
                return x_t, x_t.clone()

        with fwAD.dual_level():
            x = fwAD.make_dual(t.tensor([2.0, 3.0]), t.tensor([1.0, -1.0]))
            for y in (t.tensor([3.0, 4.0]), t.tensor([3, 4])):
                a, b = Split.apply(x, y)
                log.append((fwAD.unpack_dual(a).tangent.tolist(), fwAD.unpack_dual(b).tangent))
            log.append(seen)
            attempt(log, lambda: Wrong.apply(x, t.tensor([1.0, 1.0])))

    same(scenario)


@pytest.mark.parametrize("mode", ["in place", "untouched", "new tensor"])
def test_mark_dirty_needs_the_tangent_modified_in_place(mode):
    def scenario(t, log):
        fwAD = t.autograd.forward_ad

        class Double(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x.mul_(2)

            @staticmethod
            def backward(ctx, g):
                return g * 2

            @staticmethod
            def jvp(ctx, x_t):
                if mode == "in place":
                    return x_t.mul_(2)
                if mode == "untouched":
                    return x_t
                return x_t * 2

        with fwAD.dual_level():
            tangent = t.tensor([1.0, 0.5])
            x = fwAD.make_dual(t.tensor([1.0, 2.0]), tangent)

            def run():
                y = Double.apply(x)
                out = fwAD.unpack_dual(y)
                return (y is x, out.tangent is tangent, out.primal.tolist(), out.tangent.tolist())

            attempt(log, run)

    same(scenario)


@pytest.mark.parametrize("returned", ["view_as", "self", "times two", "view of other"])
def test_input_returned_as_is_needs_a_view_of_its_tangent(returned):
    def scenario(t, log):
        fwAD = t.autograd.forward_ad
        other = t.tensor([7.0])

        class Pass(t.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y, x

            @staticmethod
            def vjp(ctx, g1, g2):
                return g1 + g2, g1

            @staticmethod
            def jvp(ctx, x_t, y_t):
                second = {"view_as": lambda: x_t.view_as(x_t), "self": lambda: x_t,
                          "times two": lambda: x_t * 2,
                          "view of other": lambda: other.view_as(other)}[returned]()
                return x_t + y_t, second

        with fwAD.dual_level():
            for leaf in (True, False):
                tangent = t.tensor([1.0])
                a = fwAD.make_dual(t.tensor([1.0], requires_grad=leaf), tangent)

                def run(a=a, tangent=tangent):
                    _, out = Pass.apply(a, t.tensor([1.0], requires_grad=True))
                    return fwAD.unpack_dual(out).tangent._base is tangent

                attempt(log, run)

    same(scenario)
