"""Tensor.resize_, Tensor.set_, the _backward_hooks attribute and the attributes `del`
refuses, compared with PyTorch (values, shapes, versions, graph effects, error texts).
(`del t._grad_fn` is not refused: see engine/ops/tensor_internals.py.)"""

from __future__ import annotations

from collections import OrderedDict

import pytest
from scenario_log import attempt, same

torch = pytest.importorskip("torch")


def test_resize_keeps_the_leading_elements_and_bumps_the_version():
    def scenario(t, log):
        x = t.arange(6.).reshape(2, 3)
        log.append((x.resize_(4).tolist(), x._version))
        log.append((x.resize_(2, 2).shape, x.resize_([1, 2]).tolist(), x._version))
        log.append(x.resize_(t.Size([3])).shape)
        y = t.ones(2, 2).t()
        log.append(y.resize_(4).shape)
        attempt(log, lambda: t.ones(2, requires_grad=True).resize_(3))
        attempt(log, lambda: t.ones(2).resize_(-1))

    same(scenario)


def test_resize_to_more_elements_keeps_the_old_ones_first():
    def scenario(t, log):
        x = t.arange(3.)
        x.resize_(2, 3)
        log.append((x.shape, x[0].tolist()))

    same(scenario)


def test_set_shares_the_source_data():
    def scenario(t, log):
        y = t.rand(3)
        z = t.arange(6.)
        y.set_(z)
        log.append((y.tolist(), y._version, z._version))
        z.add_(1)
        log.append(y.tolist())
        log.append(y.set_().shape)
        attempt(log, lambda: t.rand(2).set_(t.arange(3)))
        attempt(log, lambda: t.rand(2, requires_grad=True).set_(t.rand(2)))

    same(scenario)


def test_set_under_no_grad_gives_the_leaf_a_new_accumulator():
    def scenario(t, log):
        x = t.rand(2, requires_grad=True)
        edge = t.autograd.graph.get_gradient_edge(x)
        out = x * 3
        with t.no_grad():
            x.set_(t.ones(2))
        attempt(log, lambda: t.autograd.grad(out.sum(), x))
        log.append(t.autograd.grad(out.sum(), edge)[0].tolist())
        (x * 2).sum().backward()
        log.append(x.grad.tolist())

    log = same(scenario)
    assert "to not have been used in the graph" in log[0]


def test_backward_hooks_set_on_tensors_without_grad_never_run():
    def scenario(t, log):
        x, y = t.ones(2, 2), t.ones(2, 2)
        z = t.ones(2, 2, requires_grad=True)
        a = x + y
        log.append(a._backward_hooks)

        def error(grad):
            raise RuntimeError("hook ran")

        for v in (a, x, y):
            v._backward_hooks = OrderedDict()
            v._backward_hooks["test"] = error
        (a + z).backward(t.ones(2, 2))
        log.append(z.grad.tolist())
        log.append(list(x._backward_hooks))

    same(scenario)


def test_backward_hooks_set_on_a_leaf_that_requires_grad_see_its_gradient():
    def scenario(t, log):
        z = t.ones(2, requires_grad=True)
        seen = []
        z._backward_hooks = OrderedDict([("a", lambda g: seen.append(g.tolist()))])
        (z * 3).sum().backward()
        log.append(seen)
        log.append(z.grad.tolist())

    assert same(scenario)[0] == "[[3.0, 3.0]]"


@pytest.mark.parametrize("name", ["data", "requires_grad", "_backward_hooks", "grad"])
def test_deleting_attributes(name):
    def scenario(t, log):
        x = t.ones(2, requires_grad=True)
        x.sum().backward()
        try:
            delattr(x, name)
            log.append("deleted")
        except Exception as e:  # noqa: BLE001 - compare what each library raises
            log.append(f"{type(e).__name__}: {e}")
        log.append(x.grad)
        attempt(log, lambda: setattr(x, "data", None))

    same(scenario)


def test_a_program_cannot_resize_past_its_element_limit(tmp_path):
    import subprocess
    import sys

    prog = tmp_path / "big.grad"
    prog.write_text("import torch\nx = torch.ones(2)\nx.resize_(10 ** 12)\nprint('after')\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "after" not in proc.stdout
    assert "exceeds the limit" in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr
