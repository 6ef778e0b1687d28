"""saved_tensors_hooks belong to the thread that entered them, as PyTorch's: two threads
recording ops under different hooks at the same time each pack exactly their own saved
tensors, in PyTorch's order (the index-first ops too, whose node waits for its index
tensors before it is packed), and a new thread starts with no hooks and no disabling."""

from __future__ import annotations

import sys
import threading

import pytest

import gradcli.torch as G

torch = pytest.importorskip("torch")

ROUNDS = 30


def _ops(T, k: int) -> None:
    """One round of index-first ops (their nodes save the index, mask or condition first)
    and plain ones, on tensors whose first size is this thread's own (k + 2)."""
    x = T.ones(k + 2, k + 3, requires_grad=True)
    idx = T.zeros(k + 2, 2, dtype=T.int64)
    mask = T.ones(k + 2, k + 3, dtype=T.bool)
    rows = T.zeros(k + 2, dtype=T.int64)
    x.gather(1, idx)
    T.where(mask, x, x * x)
    x[rows].exp()
    x.masked_fill(mask, 0.0)
    x.index_select(0, rows)


def _record(T, k: int, log: list, start: threading.Barrier | None):
    """Run ROUNDS rounds under this thread's own hooks; `log` gets each packed tensor's
    dtype and shape."""

    def pack(t):
        log.append((str(t.dtype).split(".")[-1], tuple(t.shape)))
        return t

    with T.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if start is not None:
            start.wait()
        for _ in range(ROUNDS):
            _ops(T, k)
        if start is not None:
            start.wait()  # (both threads leave their hooks only when both are done)


def _in_two_threads(T) -> list:
    logs = [[], []]
    start = threading.Barrier(2)
    errors = []

    def work(k):
        try:
            _record(T, k, logs[k], start)
        except BaseException as err:  # noqa: BLE001 - reported by the test below
            errors.append(err)
            start.abort()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(2e-5)  # (switch threads often, so their ops interleave)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors
    return logs


def test_two_threads_under_their_own_hooks_pack_only_their_own_tensors():
    expected = []
    for k in (0, 1):  # PyTorch, one thread after the other
        log: list = []
        _record(torch, k, log, None)
        expected.append(log)
    assert all(shape[0] == k + 2 for k in (0, 1) for _, shape in expected[k])
    assert expected == _in_two_threads(torch)  # (PyTorch's hooks are per thread)
    assert _in_two_threads(G) == expected


def test_a_new_thread_starts_without_the_hooks_of_the_thread_that_started_it():
    def run(T):
        packed, inner = [], []

        def work():
            x = T.ones(3, requires_grad=True)
            x.gather(0, T.zeros(2, dtype=T.int64)).exp()
            with T.autograd.graph.saved_tensors_hooks(lambda t: inner.append(t.shape) or t,
                                                      lambda t: t):
                (x * x).sum()

        with T.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t.shape) or t,
                                                  lambda t: t):
            th = threading.Thread(target=work)
            th.start()
            th.join()
            y = T.ones(2, requires_grad=True).exp()
        y.sum().backward()
        return [tuple(s) for s in packed], [tuple(s) for s in inner]

    assert run(G) == run(torch) == ([(2,)], [(3,), (3,)])


def test_disabling_hooks_holds_for_the_disabling_thread_only():
    def run(T):
        out = []

        def work():
            with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                out.append("entered")

        with T.autograd.graph.disable_saved_tensors_hooks("not here"):
            th = threading.Thread(target=work)
            th.start()
            th.join()
            try:
                with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    out.append("entered here")
            except RuntimeError as err:
                out.append(str(err))
        return out

    assert run(G) == run(torch) == ["entered", "not here"]
