"""Freed tensor buffers stay in the process for reuse (gradcli/engine/memory.py).

Measured the way it matters: the page faults of a repeated step on 2 MB arrays, in a
fresh process that asks for the policy as the gradcli command does (a program that only
imports gradcli.torch keeps its malloc as it was: tests/test_no_side_effects.py).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap

import pytest

from gradcli.engine import memory

glibc_only = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                                reason="a glibc malloc policy")

STEPS = textwrap.dedent("""
    import resource
    import gradcli.torch as torch
    from gradcli.engine import memory

    assert not memory.tuned  # importing changes nothing
    memory.tune_malloc()
    x = torch.linspace(-1, 1, 512 * 512, dtype=torch.float64).reshape(512, 512)
    x.requires_grad_()

    def step():
        y = (x * 2 + 1).sin() * x
        y.sum().backward()
        x.grad = None

    for _ in range(3):
        step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        step()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    print(memory.tuned, faults / 20)
""")


def _run_steps(**env_extra) -> tuple[bool, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    env.update(env_extra)
    proc = subprocess.run([sys.executable, "-c", STEPS], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    tuned, faults = proc.stdout.split()
    return tuned == "True", float(faults)


@glibc_only
def test_a_repeated_step_faults_no_pages_in():
    tuned, faults = _run_steps()
    assert tuned
    assert faults < 20  # ~2,500 a step (ten 2 MB arrays) under glibc's default policy


@glibc_only
def test_the_users_own_malloc_settings_win():
    tuned, faults = _run_steps(MALLOC_TRIM_THRESHOLD_="0")
    assert not tuned
    assert faults > 500  # glibc trims at every free, as the user asked


@pytest.mark.parametrize("environ, chose", [
    ({}, False), ({"MALLOC_MMAP_THRESHOLD_": "65536"}, True), ({"MALLOC_TOP_PAD_": "0"}, True),
    ({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0"}, True),
    ({"GLIBC_TUNABLES": "glibc.pthread.rseq=0"}, False), ({"PYTHONMALLOC": "malloc"}, False)])
def test_which_settings_count_as_the_users_choice(environ, chose):
    assert memory.user_chose_malloc_policy(environ) is chose
