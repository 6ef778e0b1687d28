"""Grad mode belongs to the thread that sets it, as PyTorch's (thread-local GradMode):
a thread starts with it on whatever its creator's mode, and no_grad in one thread leaves
the others recording."""

from __future__ import annotations

import threading

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _scenario(T) -> list:
    log = []
    x = T.ones(2, requires_grad=True)

    def worker(name, enter_no_grad, started, release):
        if enter_no_grad:
            with T.no_grad():
                started.set()
                release.wait(10)
                log.append((name, "inside", T.is_grad_enabled(), (x * 2).requires_grad))
        else:
            started.set()
            release.wait(10)
            log.append((name, "plain", T.is_grad_enabled(), (x * 2).requires_grad))

    with T.no_grad():  # a thread started from inside no_grad still records
        started, release = threading.Event(), threading.Event()
        t = threading.Thread(target=worker, args=("child", False, started, release))
        t.start()
        started.wait(10)
        release.set()
        t.join(10)
        log.append(("main", "no_grad", T.is_grad_enabled(), (x * 2).requires_grad))

    started, release = threading.Event(), threading.Event()
    t = threading.Thread(target=worker, args=("child", True, started, release))
    t.start()
    started.wait(10)  # the child sits inside no_grad now: the main thread records
    log.append(("main", "while child in no_grad", T.is_grad_enabled(), (x * 2).requires_grad))
    release.set()
    t.join(10)
    log.append(("main", "after", T.is_grad_enabled(), (x * 2).requires_grad))
    return log


def test_grad_mode_is_per_thread_as_pytorchs():
    mine = _scenario(gt)
    assert mine == _scenario(torch)
    assert ("child", "plain", True, True) in mine
    assert ("main", "while child in no_grad", True, True) in mine
    assert ("child", "inside", False, False) in mine


def test_set_grad_enabled_in_a_thread_leaves_the_caller_alone():
    seen = []

    def worker():
        gt.set_grad_enabled(False)
        seen.append(gt.is_grad_enabled())

    t = threading.Thread(target=worker)
    t.start()
    t.join(10)
    assert seen == [False] and gt.is_grad_enabled() is True
