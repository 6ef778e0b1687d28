"""Items of issue 23's curriculum that the item-by-item audit found differing from
PyTorch: each program prints the same under PyTorch, under `gradcli run` and in plain
Python on gradcli.torch (object addresses aside)."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

ADDRESS = re.compile(r"0x[0-9a-f]+")


def _exec_with(module, source: str) -> str:
    """What `source` prints with `torch` bound to `module` (its `import torch...` lines
    dropped: the names they bind are given)."""
    lines = [ln for ln in source.splitlines() if not ln.startswith(("import torch", "from torch"))]
    names = {"torch": module, "nn": module.nn, "F": module.nn.functional, "optim": module.optim}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile("\n".join(lines), "<probe>", "exec"), names)
    return ADDRESS.sub("0xADDR", out.getvalue())


def _run_cli(source: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", "-"], input=source,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return ADDRESS.sub("0xADDR", proc.stdout)


def _check(source: str, cli: bool = True) -> None:
    import gradcli.torch as gtorch

    source = textwrap.dedent(source)
    expected = _exec_with(torch, source)
    assert _exec_with(gtorch, source) == expected
    if cli:
        header = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" \
                 "import torch.optim as optim\n"
        assert _run_cli(header + source) == expected


def test_pack_hook_runs_with_grad_mode_off():
    # what a pack hook computes joins no graph: unpack sees a tensor without grad_fn
    _check("""
        def pack(t):
            print("pack", torch.is_grad_enabled())
            return t * 1
        def unpack(t):
            print("unpack", t, torch.is_grad_enabled())
            return t
        x = torch.tensor([1., 2.], requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.pow(2)
        y.sum().backward()
        print(x.grad)
    """)


def test_saved_operand_not_kept_reads_none():
    # x * 3 keeps the scalar (a wrapped 0-d tensor) but not x: _saved_self is None
    _check("""
        x = torch.tensor([1., 2.], requires_grad=True)
        for y in [x * 3, 3 * x, x / 2, x * torch.ones(2), torch.ones(2) * x, x * x]:
            print(y.grad_fn._saved_self, y.grad_fn._saved_other)
    """)


def test_full_backward_pre_hook_sees_and_replaces_output_grads():
    _check("""
        torch.manual_seed(0)
        lin = nn.Linear(2, 1)
        lin.register_full_backward_pre_hook(lambda m, go: print("pre", go))
        lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 3,))
        lin.register_full_backward_hook(lambda m, gi, go: print("full", gi, go))
        x = torch.ones(1, 2, requires_grad=True)
        lin(x).sum().backward()
        print(x.grad, lin.weight.grad)
    """)


def test_full_backward_pre_hook_wrong_count():
    _check("""
        lin = nn.Linear(2, 1)
        lin.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
        x = torch.ones(1, 2, requires_grad=True)
        try:
            lin(x).sum().backward()
        except RuntimeError as e:
            print(e)
    """)
