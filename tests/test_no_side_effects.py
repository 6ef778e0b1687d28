"""Importing and using gradcli.torch in someone's Python process leaves the process as it
was: numpy's error state, the CPU affinity, BLAS's thread count and malloc's policy. The
`gradcli` command, which owns its process, may tune it (gradcli.OWNS_PROCESS)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROGRAM = r"""
import json, os, sys
import numpy as np

def state():
    out = {"geterr": np.geterr()}
    if hasattr(os, "sched_getaffinity"):
        out["affinity"] = sorted(os.sched_getaffinity(0))
    try:
        from threadpoolctl import threadpool_info
        out["blas"] = sorted((i["internal_api"], i["num_threads"]) for i in threadpool_info()
                             if i["user_api"] == "blas")
    except ImportError:
        out["blas"] = None
    return out

np.seterr(divide="warn", over="raise", invalid="print", under="ignore")  # the user's own
before = state()
import gradcli.torch as torch
from gradcli.engine import memory, parallel

torch.set_num_threads(2)
a = torch.randn(640, 640, dtype=torch.float64, requires_grad=True)
b = torch.randn(640, 640, dtype=torch.float64, requires_grad=True)
y = (a @ b).tanh().exp()            # a product split by rows; kernels split over threads
z = (y / 0 + (a - 1e308 * 10).log()).sum() + torch.tensor([1e300]).float().sum()
y.sum().backward()
x = torch.linspace(-3, 3, 200000, dtype=torch.float64)
x.sin(); x.sigmoid(); x.log(); (x * 1e308 * 10).sum()
after = state()
print(json.dumps({"before": before, "after": after, "tuned": memory.tuned,
                  "split": parallel.BLAS_THREADS.usable}))
"""


def _run(env_extra=None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GRADCLI_"))}
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stderr and "warning" not in proc.stdout.lower(), proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_using_gradcli_torch_leaves_the_process_as_it_was():
    result = _run()
    assert result["after"] == result["before"]
    assert result["before"]["geterr"]["over"] == "raise"  # the user's, still
    assert result["tuned"] is False


def test_blas_threads_are_put_back_after_split_products():
    pytest.importorskip("threadpoolctl")
    result = _run({"OPENBLAS_NUM_THREADS": "2"})
    assert result["split"] is True  # the product did take threadpoolctl's road
    assert result["after"]["blas"] == result["before"]["blas"]


def test_the_command_gives_inf_and_nan_silently_as_pytorch_does(tmp_path):
    # the command's process ignores numpy's errors once, not per op: nothing may slip out
    src = ("import torch\n"
           "x = torch.tensor([1e38, 0.0, -1.0], requires_grad=True)\n"
           "y = (x * 100) + x.log() + x.sqrt() + x / 0 + (x - x.exp()).tanh()\n"
           "y.sum().backward()\n"
           "print(y, x.grad)\n")
    (tmp_path / "p.grad").write_text(src)
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", "p.grad"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "nan" in proc.stdout and "inf" in proc.stdout
