"""torch.autograd._force_original_view_tracking: with view replay on, a view written in
place (or whose base was) gets the grad_fn of its own view ops replayed on the base's
new history (ViewBackward0, SelectBackward0, ...), not AsStridedBackward0; gradients
are the same either way. Compared with PyTorch, as a function and a context manager."""

from __future__ import annotations

import pytest
from scenario_log import same

torch = pytest.importorskip("torch")

CHAINS = {
    "view": lambda v: v.view(-1),
    "select": lambda v: v[1],
    "transpose_select": lambda v: v.t()[0],
    "slice": lambda v: v[:, 1:],
    "unsqueeze": lambda v: v.unsqueeze(0),
    "permute": lambda v: v.permute(1, 0),
}


@pytest.mark.parametrize("replay", [False, True])
@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_written_view_grad_fn_and_gradients(replay, chain):
    def scenario(t, log):
        x = t.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        with t.autograd._force_original_view_tracking(replay):
            log.append(t.autograd.is_view_replay_enabled())
            base = x * 1
            view = CHAINS[chain](base)
            view.mul_(2)
            log.append(type(view.grad_fn).__name__)
            other = CHAINS[chain](base)
            base.add_(1)  # the base written: a view made before it regenerates its grad_fn
            log.append(type(other.grad_fn).__name__)
            (view.sum() + other.sum() * 3 + base.sum()).backward()
        log.append(x.grad.tolist())
        log.append(t.autograd.is_view_replay_enabled())

    same(scenario)


def test_as_a_function_it_stays_set():
    def scenario(t, log):
        try:
            t.autograd._force_original_view_tracking(True)
            log.append(t.autograd.is_view_replay_enabled())
            with t.autograd._force_original_view_tracking(False):
                log.append(t.autograd.is_view_replay_enabled())
            log.append(t.autograd.is_view_replay_enabled())
        finally:
            t.autograd._force_original_view_tracking(False)
        log.append(t.autograd.is_view_replay_enabled())

    assert same(scenario) == ["True", "False", "True", "False"]
