"""Tensor._view_func / _view_func_unsafe compared with PyTorch: a view made again on a new
base (replaying its view ops with view replay on, as_strided otherwise), the integers a
symint visitor sees and changes, None for non-views and (checked form) for a base of
another geometry; and stride() of an as_strided view."""

from __future__ import annotations

import pytest
from scenario_log import attempt, same

torch = pytest.importorskip("torch")


def geometry(t):
    if t is None:
        return None
    return (tuple(t.shape), t.stride(), t._is_view(),
            None if t.grad_fn is None else t.grad_fn.name(), t.tolist())


CHAINS = {
    "select": lambda b: b.select(1, 2),
    "slices": lambda b: b[1:, ::2],
    "explicit slice": lambda b: b[:, 1:3, 0:4:2],
    "narrow expand": lambda b: b.narrow(2, 1, 3).unsqueeze(0).expand(2, 3, 4, 3),
    "view chain": lambda b: b[1:, ::2].transpose(0, 1).view(2, 2, 5),
    "squeeze permute diagonal": lambda b: b[:, :1].squeeze(1).t().unsqueeze(0).diagonal(0, 1, 2),
    "unfold": lambda b: b.unfold(2, 2, 2),
}


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_view_func_replays_the_chain_with_visited_symints(chain):
    def scenario(t, log):
        base = t.arange(60.0).reshape(3, 4, 5).clone()
        new_base = t.arange(60.0).reshape(3, 4, 5) * 2 - 7
        grad_base = new_base.clone().requires_grad_()
        with t.autograd._force_original_view_tracking(True):
            view = CHAINS[chain](base)
            log.append(geometry(view._view_func(new_base)))
            seen = []
            log.append(geometry(view._view_func(new_base,
                                                symint_visitor_fn=lambda s: seen.append(s) or s)))
            log.append(seen)
            log.append(geometry(view._view_func(grad_base)))
        # (a view made with replay off: as_strided on the new base)
        view = CHAINS[chain](base)
        log.append(geometry(view._view_func(new_base)))
        log.append(geometry(view._view_func(grad_base)))

    same(scenario)


def test_symint_visitor_changes_the_replayed_view_once():
    def scenario(t, log):
        with t.autograd._force_original_view_tracking(True):
            base = t.arange(60.0).reshape(3, 4, 5).clone()
            view = base.select(1, 2)
            new_base = base * 2
            shifted = view._view_func(new_base, symint_visitor_fn=lambda x: x + 1)
            log.append(t.equal(shifted, new_base.select(1, 3)))
            log.append(t.equal(view._view_func(new_base), new_base.select(1, 2)))
            sliced = base[:, 1:3]
            log.append(geometry(sliced._view_func(new_base, symint_visitor_fn=lambda x: x * 2)))
            log.append(geometry(view._view_func(new_base, tensor_visitor_fn=lambda x: 1 / 0)))
            attempt(log, lambda: view._view_func(new_base, symint_visitor_fn=lambda x: "two"))

    same(scenario)


def test_view_func_refusals_and_unsafe_form():
    def scenario(t, log):
        with t.autograd._force_original_view_tracking(True):
            base = t.randn(3, 4, 5)
            view = base.select(1, 2)
            log.append(geometry(view._view_func(t.ones(3, 4, 6))))
            log.append(geometry(view._view_func(t.ones(5, 4, 3).transpose(0, 2))))
            log.append(geometry(view._view_func_unsafe(t.ones(3, 4, 6))))
            log.append(geometry(view._view_func(t.ones(3, 4, 5, dtype=t.float64))))
            log.append(base._view_func(t.ones(3, 4, 5)))
            log.append(base.detach()._view_func(t.ones(3, 4, 5)))
            log.append((base * 1)[t.tensor([0])]._view_func(t.ones(3, 4, 5)))
            with t.no_grad():
                quiet = base[1]
            log.append(geometry(quiet._view_func(t.ones(3, 4, 5))))
            attempt(log, lambda: view._view_func(3))
            attempt(log, lambda: view._view_func())

    same(scenario)


def test_as_strided_view_strides():
    def scenario(t, log):
        x = t.arange(60.0).reshape(3, 4, 5).as_strided((2, 2), (3, 1), 4)
        log.append((x.stride(), x.t().stride(), x.is_contiguous(), x.tolist()))

    same(scenario)
