"""Views made inside torch.inference_mode() and written in place outside it: PyTorch's
own error (inference mode / normal mode, the inference_mode block hint) for the view and
for views of it, distinct from no_grad's; compared with PyTorch."""

from __future__ import annotations

import pytest
from scenario_log import attempt, same

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("mode", ["inference_mode", "no_grad"])
def test_view_of_a_view_written_in_place(mode):
    def scenario(t, log):
        x = t.zeros(2)
        with getattr(t, mode)():
            y = x.view(2)
        y.requires_grad_(True)
        z = y.view(2)
        attempt(log, lambda: z.div_(2))
        attempt(log, lambda: y.div_(2))
        log.append(x.tolist())

    log = same(scenario)
    assert "inside the inference_mode block" in log[0] or mode == "no_grad"


def test_view_of_a_tensor_with_history():
    def scenario(t, log):
        x = t.zeros(2, requires_grad=True).clone()
        with t.inference_mode():
            y = x.view(2)
            y.mul_(2)  # inside the block: allowed
        attempt(log, lambda: y.mul_(2))
        with t.inference_mode(False):
            v = x.view(2)
        v.mul_(2)
        log.append(type(v.grad_fn).__name__)

        @t.inference_mode()
        def make(a):
            return a.view(2)

        u = make(x)
        attempt(log, lambda: u.mul_(3))
        log.append(t.is_grad_enabled())

    same(scenario)


def test_inference_mode_does_not_leak_into_threads():
    import threading

    def scenario(t, log):
        x = t.zeros(2, requires_grad=True).clone()
        seen = []
        with t.inference_mode():
            worker = threading.Thread(target=lambda: seen.append(x.view(2)))
            worker.start()
            worker.join()
        view = seen[0]
        attempt(log, lambda: type(view.view(2).mul_(2).grad_fn).__name__)
        log.append(t.is_grad_enabled())

    same(scenario)


def test_is_inference_mode_enabled_follows_the_blocks_and_decorators():
    def scenario(t, log):
        log.append(t.is_inference_mode_enabled())
        with t.inference_mode():
            log.append(t.is_inference_mode_enabled())
            with t.inference_mode(False):
                log.append(t.is_inference_mode_enabled())
            with t.no_grad():
                log.append(t.is_inference_mode_enabled())
            log.append(t.is_inference_mode_enabled())
        log.append(t.is_inference_mode_enabled())

        def probe():
            return t.is_inference_mode_enabled()

        for mode in (True, False):
            log.append(t.inference_mode(mode)(probe)())
        log.append(t.inference_mode(probe)())
        log.append(t.is_inference_mode_enabled())

    log = same(scenario)
    assert log[:6] == ["False", "True", "False", "True", "True", "False"]
