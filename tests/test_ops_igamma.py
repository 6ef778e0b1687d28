"""torch.igamma / igammac (special.gammainc / gammaincc) compared with PyTorch: values,
the x-gradient, the NotImplementedError for a's gradient only when it is wanted,
forward AD's refusal, integer inputs, and the tensor-only signature."""

from __future__ import annotations

import pytest
from scenario_log import attempt, same

torch = pytest.importorskip("torch")


def rounded(t) -> list:
    return [round(v, 5) for v in t.detach().reshape(-1).tolist()]


@pytest.mark.parametrize("name", ["igamma", "igammac", "special.gammainc",
                                  "special.gammaincc"])
def test_values_gradients_and_refusals(name):
    def scenario(t, log):
        fn = t
        for part in name.split("."):
            fn = getattr(fn, part)
        a = t.tensor([0.5, 2.0, 3.0], requires_grad=True)
        x = t.tensor([1.0, 0.5, 4.0], requires_grad=True)
        y = fn(a, x)
        log.append((rounded(y), y.grad_fn.name()))
        log.append(rounded(t.autograd.grad(y.sum(), x, retain_graph=True)[0]))
        attempt(log, lambda: t.autograd.grad(y.sum(), a, retain_graph=True))
        attempt(log, lambda: y.sum().backward())
        fixed = fn(t.tensor([1.5, 2.5], dtype=t.float64), t.tensor([0.25, 3.0], requires_grad=True))
        fixed.sum().backward()
        log.append((rounded(fixed), str(fixed.dtype)))
        attempt(log, lambda: fn(t.tensor([1, 2]), t.tensor([1, 2])))
        attempt(log, lambda: fn(t.tensor([1.0, 2.0]), 2.0))
        log.append(rounded(fn(t.tensor([-1.0, 0.0, 0.0, 2.0]),
                              t.tensor([1.0, 0.0, 1.0, float("inf")]))))
        fwAD = t.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(t.tensor([1.0, 2.0]), t.tensor([1.0, 1.0]))
            attempt(log, lambda: fn(t.tensor([0.5, 1.5]), d))

    same(scenario)


def test_in_place_forms():
    def scenario(t, log):
        b = t.tensor([1.0, 2.0])
        b.igamma_(t.tensor([0.5, 0.5]))
        c = t.tensor([1.0, 2.0])
        c.igammac_(t.tensor([0.5, 0.5]))
        log.append((rounded(b), rounded(c)))

    same(scenario)
