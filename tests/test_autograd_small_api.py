"""Small autograd-adjacent API, against PyTorch 2.13: pickling tensors in memory,
Tensor.new, torch.inf/nan, detach_() of a saved tensor, .data type checks and
detect_anomaly's warning."""

from __future__ import annotations

import pickle
import warnings

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _run(t) -> list:
    log = []

    def attempt(f):
        try:
            log.append(str(f()))
        except Exception as e:  # noqa: BLE001 - the error is part of the behaviour
            log.append(f"{type(e).__name__}: {e}")

    x = t.tensor([1.0, 2.0], requires_grad=True)
    x.grad = t.ones(2)
    for value in (x, x * 2, x[0:1], t.tensor([1, 2]), t.tensor([1.0], dtype=t.float64)):
        back = pickle.loads(pickle.dumps(value))
        log.append(str((back, back.grad, back.is_leaf, back.dtype)))
    log.append(str((t.inf, t.nan)))
    base = t.ones(2)
    attempt(lambda: base.new(2, 3).shape)
    attempt(lambda: t.ones(2, dtype=t.float64).new([1, 2]))
    attempt(lambda: base.new())
    attempt(lambda: base.new(t.tensor([1, 2])))
    attempt(lambda: base.new(t.tensor([3.0])))
    y = x * 1
    z = y.sin()
    y.detach_()
    attempt(lambda: z.sum().backward())
    leaf = t.ones(2, requires_grad=True)

    def set_int_data():
        leaf.data = t.tensor([1, 2])

    attempt(set_int_data)
    plain = t.ones(2)
    plain.data = t.tensor([1, 2])
    log.append(str(plain))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with t.autograd.detect_anomaly():
            pass
    log.append(str([str(w.message) for w in caught]))
    return log


def test_small_api_matches_pytorch():
    mine = _run(gt)
    assert mine == _run(torch)
    assert any("detached in-place" in entry for entry in mine)


def test_detach_inplace_of_a_tensor_no_node_saved_is_fine():
    def run(t):
        mu = t.ones(1, requires_grad=True)
        x = t.zeros(1)
        loss = 0
        for i in range(3):
            x.detach_()  # a non-leaf again each time round; mul saves only the constant
            x.copy_(mu + i)
            loss = loss + (x * t.tensor([float(i)])).sum()
        loss.backward()
        return mu.grad.tolist()

    assert run(gt) == run(torch) == [3.0]


def test_detach_inplace_refuses_only_the_nodes_made_before_it():
    def run(t):
        log = []
        x = t.tensor([1.0, 2.0], requires_grad=True)
        w = x * 3
        before = (x * w).sum()   # saves w while it has history
        w.detach_()
        after = (x * w).sum()    # saves w as the leaf it now is
        for name, loss in (("after", after), ("before", before)):
            try:
                loss.backward()
                log.append(f"{name}: {x.grad.tolist()}")
            except RuntimeError as e:
                log.append(f"{name}: {e}")
        return log

    mine = run(gt)
    assert mine == run(torch)
    assert mine[0] == "after: [3.0, 6.0]" and "detached in-place" in mine[1]


def test_profiler_blocks_run_unchanged_and_record_the_ops():
    x = gt.ones(2, requires_grad=True)
    with gt.autograd.profiler.profile() as prof:
        with gt.autograd.profiler.record_function("forward"):
            y = (x * 3).sum()
        y.backward()
    assert x.grad.tolist() == [3.0, 3.0]
    keys = [a.key for a in prof.key_averages()]  # (tests/test_autograd_profiler.py: the rest)
    assert keys[:3] == ["forward", "aten::mul", "aten::sum"]


def test_volatile_is_gone_but_still_answers_with_its_warnings():
    def facts(t):
        v = t.ones(2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            read = v.volatile
            v.volatile = True
        return read, [(x.category.__name__, str(x.message)) for x in w]

    assert facts(gt) == facts(torch)
    assert gt.autograd.torch is gt


def test_is_view_says_whether_a_tensor_is_a_view():
    def facts(t):
        x = t.ones(2, 3, requires_grad=True)
        y = x * 1
        with t.no_grad():
            z = x.view_as(x)
        return [x._is_view(), y._is_view(), y[0]._is_view(), y.t()._is_view(), z._is_view(),
                y.unbind()[1]._is_view(), y.clone()._is_view()]

    assert facts(gt) == facts(torch)


def test_cached_tensor_bookkeeping_of_torch_C():
    def facts(t):
        log = []
        x, y = t.rand(4), t.rand(4)
        for step in (lambda: t._C._add_cached_tensor(x), lambda: t._C._remove_cached_tensor(x)):
            try:
                step()
            except RuntimeError as e:
                log.append(str(e))
        t._C._set_cached_tensors_enabled(True)
        try:
            t._C._add_cached_tensor(x)
            log.append((t._C._is_cached_tensor(x), t._C._is_cached_tensor(y)))
            t._C._add_cached_tensor(x)
            t._C._remove_cached_tensor(x)
            log.append(t._C._is_cached_tensor(x))
            t._C._add_cached_tensor(x)
            t._C._set_cached_tensors_enabled(False)
            log.append(t._C._is_cached_tensor(x))
            t._C._set_cached_tensors_enabled(True)
            log.append(t._C._is_cached_tensor(x))
            t._C._remove_cached_tensor(x)
        finally:
            t._C._set_cached_tensors_enabled(False)
        return log

    assert facts(gt) == facts(torch)
