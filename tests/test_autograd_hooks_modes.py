"""Hook calls, accumulation under create_graph, callable nodes and grad-mode decorators,
compared with PyTorch 2.13."""

from __future__ import annotations

import warnings

import pytest
from scenario_log import attempt as _attempt
from scenario_log import same_recording_warnings as _same

torch = pytest.importorskip("torch")


def test_hook_on_an_unbind_output_sees_none():
    def scenario(t, log):
        x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        parts = x.unbind()
        parts[0].register_hook(lambda g: log.append(("hook", g)))
        parts[0].backward()
        parts[1].backward()  # the hook on output 0 runs with None
        parts[2].backward()
        log.append(x.grad)

    log = _same(scenario)
    assert log.count("('hook', None)") == 2


def test_grad_accumulates_out_of_place_under_create_graph():
    def scenario(t, log):
        warnings.filterwarnings("ignore", "Using backward")  # (once per process: tested below)
        for create_graph in (False, True):
            x = t.tensor([1.0, 2.0], requires_grad=True)
            y = x * x
            y.sum().backward(retain_graph=True)
            first = x.grad
            y.sum().backward(create_graph=create_graph)
            log += [first, x.grad, first is x.grad, x.grad.grad_fn]

    log = _same(scenario)
    assert log[4] == "tensor([2., 4.])"  # the first .grad object kept its value


def test_nodes_are_callable():
    def scenario(t, log):
        x = t.ones(1, requires_grad=True)
        y = x ** 2
        _attempt(log, lambda: y.grad_fn(x.detach(), x.detach()))
        _attempt(log, lambda: y.grad_fn())
        log.append(y.grad_fn(x.detach()))
        log.append((x * 3).grad_fn(t.ones(1)))
        acc = y.grad_fn.next_functions[0][0]
        log += [acc(t.ones(1)), x.grad]
        log.append(y.grad_fn.metadata is y.grad_fn.metadata)
        y.grad_fn.metadata["k"] = 1
        log.append(y.grad_fn.metadata)

    _same(scenario)


def test_grad_mode_decorators_on_generators_and_classes():
    def scenario(t, log):
        @t.no_grad()
        def off():
            for i in range(2):
                log.append(("off", t.is_grad_enabled()))
                got = yield i
                log.append(("sent", got))

        @t.enable_grad()
        def on():
            yield t.is_grad_enabled()
            yield t.is_grad_enabled()

        with t.enable_grad():
            gen = off()
            log.append(next(gen))
            log.append(t.is_grad_enabled())
            log.append(gen.send("x"))
            log.append(t.is_grad_enabled())
            gen.close()
        with t.no_grad():
            log.append([v for v in on()])
            log.append(t.is_grad_enabled())

        @t.set_grad_enabled(False)
        def off2():
            yield t.is_grad_enabled()

        log.append((list(off2()), t.is_grad_enabled()))

        @t.no_grad()
        class Plain:
            def __init__(self):
                self.mode = t.is_grad_enabled()

        log.append(Plain().mode)

    log = _same(scenario)
    assert "('off', False)" in log and any("Decorating classes" in e for e in log)


def test_saved_variables_is_deprecated_and_backward_cls():
    def scenario(t, log):
        class Add(t.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a + b

            @staticmethod
            def backward(ctx, g):
                assert len(ctx.saved_variables) == 2
                return g, g

        x = t.ones(2, requires_grad=True)
        y = Add.apply(x, x)
        log.append(type(y.grad_fn) is Add._backward_cls)
        y.sum().backward()
        log.append(x.grad)

    log = _same(scenario)
    assert log[0] == "True" and any("saved_variables" in e for e in log)


def test_backward_create_graph_warns_once():
    import subprocess
    import sys

    code = (
        "import warnings, {m} as t\n"
        "warnings.simplefilter('always')\n"
        "x = t.ones(2, requires_grad=True)\n"
        "for _ in range(2):\n"
        "    (x * x).sum().backward(create_graph=True)\n"
        "t.autograd.grad((x * x).sum(), x, create_graph=True)\n")
    outs = []
    for m in ("gradcli.torch", "torch"):
        run = subprocess.run([sys.executable, "-c", code.format(m=m)], capture_output=True, text=True,
                             check=True)
        lines = [ln for ln in run.stderr.splitlines() if "UserWarning" in ln]
        outs.append([ln.split("UserWarning: ", 1)[1] for ln in lines])
    assert outs[0] == outs[1] and len(outs[0]) == 1
