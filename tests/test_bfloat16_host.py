"""Importing gradcli.torch and using bfloat16 or autocast leave the host process as they
found it: numpy's finfo still refuses ml_dtypes' bfloat16 (its private cache holds no
ml_dtypes key), the op table's objects are not changed when bfloat16 first loads, and an
autocast region changes no function's code. Each check runs in a fresh interpreter, so
what was true before gradcli loaded is observed, not assumed."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("ml_dtypes")


def _run(src: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(src)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


FINFO = """
import ml_dtypes
import numpy as np

def refusal():
    try:
        np.finfo(ml_dtypes.bfloat16)
    except Exception as err:
        return f"{type(err).__name__}: {err}"
    return "no error"

before = refusal()
import gradcli.torch as torch
x = torch.tensor([1.0, 2.5, -3.0], dtype=torch.bfloat16, requires_grad=True)
y = torch.nn.functional.softshrink(x, 0.5).nan_to_num().sum()  # (engine finfo call sites)
y.backward()
print(torch.finfo(torch.bfloat16).eps, x.grad.tolist())
cache = getattr(np.finfo, "_finfo_cache", {})
print([k for k in cache if "ml_dtypes" in repr(k) or "bfloat16" in repr(k)])
print(before == refusal(), before != "no error")
"""


def test_numpy_finfo_untouched_by_bfloat16():
    lines = _run(FINFO).splitlines()
    assert lines[0] == "0.0078125 [1.0, 1.0, 1.0]"
    assert lines[1] == "[]"  # numpy's private cache holds no ml_dtypes key
    assert lines[2] == "True True"  # np.finfo(ml_dtypes.bfloat16) refuses as before


def test_engine_finfo_answers_for_every_floating_dtype():
    import ml_dtypes
    import numpy as np

    from gradcli.engine import dtypes

    assert dtypes.finfo(ml_dtypes.bfloat16).eps == ml_dtypes.finfo(ml_dtypes.bfloat16).eps
    assert dtypes.finfo(np.dtype(ml_dtypes.bfloat16)).nmant == 7
    for npdt in (np.float16, np.float32, np.float64):
        assert dtypes.finfo(npdt) is np.finfo(npdt) or dtypes.finfo(npdt) == np.finfo(npdt)


OP_TABLE = """
import gradcli.torch as torch
from gradcli.engine.ops.registry import OPS

def snapshot():
    return {name: (id(op), op.forward, op.bf16, op.node_cls is None) for name, op in OPS.items()}

before = snapshot()
torch.softmax(torch.ones(3), 0)
x = torch.tensor([0.5, 1.0, 3.0], dtype=torch.bfloat16, requires_grad=True)
y = (torch.softmax(x, 0) * 3 + 1).sigmoid().sum()
y.backward()
after = snapshot()
changed = [name for name in before if before[name][:3] != after[name][:3]]
print(len(before) == len(after), changed)
print(sum(op.bf16 is not None for op in OPS.values()) > 100)
print(y.item(), x.grad.tolist())
"""


def test_loading_bfloat16_changes_no_op_object():
    """The bfloat16 kernels are declared with their ops (Op.bf16), not installed when
    bfloat16 loads: every op object, forward and kernel is the same before and after."""
    lines = _run(OP_TABLE).splitlines()
    assert lines[0] == "True []"
    assert lines[1] == "True"
    torch = pytest.importorskip("torch")
    x = torch.tensor([0.5, 1.0, 3.0], dtype=torch.bfloat16, requires_grad=True)
    y = (torch.softmax(x, 0) * 3 + 1).sigmoid().sum()
    y.backward()
    assert lines[2] == f"{y.item()} {x.grad.tolist()}"


def test_bfloat16_kernel_runs_only_for_a_bfloat16_first_array():
    import numpy as np

    import gradcli.torch as G
    from gradcli.engine.ops.registry import OPS

    softmax = OPS["softmax"]
    calls = []
    kernel = softmax.bf16
    try:
        softmax.bf16 = lambda *args: calls.append(args) or kernel(*args)
        G.softmax(G.ones(3), 0)
        G.softmax(G.ones(3, dtype=G.float64), 0)
        assert calls == []
        G.softmax(G.ones(3, dtype=G.bfloat16), 0)
        assert len(calls) == 1 and calls[0][0].dtype.kind == "V"
        assert np.dtype(calls[0][0].dtype).itemsize == 2
    finally:
        softmax.bf16 = kernel
