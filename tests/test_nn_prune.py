"""torch.nn.utils.prune and torch.nn.parallel against PyTorch: one program of our own run
by real PyTorch, by gradcli.torch in plain Python and by `gradcli run`, printing the same
(object addresses aside); plus the sandbox's refusals of what the prune module holds."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

PROGRAM = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.utils.prune as prune
    import torch.nn.parallel

    torch.manual_seed(3)
    lin = nn.Linear(5, 4)
    conv = nn.Conv2d(2, 6, 3)
    prune.random_unstructured(lin, name="weight", amount=0.25)
    print([n for n, _ in lin.named_parameters()], [n for n, _ in lin.named_buffers()])
    print(lin.weight_mask)
    print(lin.weight)
    prune.l1_unstructured(lin, "bias", amount=2)
    print(lin.bias_mask, lin.bias)
    prune.ln_structured(lin, "weight", amount=0.5, n=1, dim=0)
    print(lin.weight_mask)
    prune.random_structured(conv, "weight", amount=2, dim=0)
    print(conv.weight_mask.sum(dim=(1, 2, 3)))
    prune.l1_unstructured(conv, "weight", amount=0.1)
    print(int(conv.weight_mask.sum()))
    out = lin(torch.ones(3, 5)).sum()
    out.backward()
    print(lin.weight_orig.grad)
    print(lin.bias_orig.grad)
    print(prune.is_pruned(lin), prune.is_pruned(nn.Linear(2, 2)))
    prune.remove(lin, "weight")
    print([n for n, _ in lin.named_parameters()], [n for n, _ in lin.named_buffers()])
    print(lin.weight)
    try:
        prune.remove(lin, "weight")
    except ValueError as e:
        print("ValueError", str(e)[:40])
    try:
        prune.l1_unstructured(nn.Linear(2, 2), "weight", amount=1.5)
    except ValueError as e:
        print("ValueError", e)
    net = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
    prune.global_unstructured([(net[0], "weight"), (net[2], "weight")],
                              pruning_method=prune.L1Unstructured, amount=5)
    print(net[0].weight_mask, net[2].weight_mask)
    print(sorted(dict(net.named_buffers()).keys()))
    prune.custom_from_mask(net[2], "bias", mask=torch.tensor([0.0, 1.0]))
    print(net[2].bias)
    prune.identity(net[0], "bias")
    print(net[0].bias_mask)
    print(nn.parallel.DataParallel(nn.Linear(2, 1)))
    """)


def _normalize(text: str) -> str:
    return re.sub(r"0x[0-9a-f]+", "0x?", text)


def _python(code: str, facade: bool) -> str:
    prelude = ("import sys, importlib\n"
               "import gradcli.torch\n"
               "sys.modules['torch'] = gradcli.torch\n"
               "for sub in ('nn', 'nn.utils', 'nn.utils.prune', 'nn.parallel'):\n"
               "    sys.modules['torch.' + sub] = importlib.import_module('gradcli.torch.' + sub)\n"
               if facade else "")
    done = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return _normalize(done.stdout)


@pytest.fixture(scope="module")
def pytorch_output():
    return _python(PROGRAM, facade=False)


def test_prune_program_in_plain_python_matches_pytorch(pytorch_output):
    assert _python(PROGRAM, facade=True) == pytorch_output


def test_prune_program_under_gradcli_run_matches_pytorch(pytorch_output, tmp_path):
    prog = tmp_path / "prune_case.grad"
    prog.write_text(PROGRAM)
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert _normalize(done.stdout) == pytorch_output


ATTACKS = [
    "prune.numbers",                       # the module's own imports
    "prune.torch.ones(1)",
    "prune._count_to_prune(1, 2)",         # private helpers
    "getattr(prune, 'num' + 'bers')",      # a name built at run time
    "getattr(prune.RandomUnstructured(0.5), '_tensor' + '_name')",
    "prune.L1Unstructured.__mro__",
    "prune.BasePruningMethod.apply.__func__",
    "nn.Linear(2, 2)._forward_pre_hooks",
    "torch.nn.parallel.data_parallel",
    "torch.nn.parallel.DataParallel.__init__.__globals__",
]


@pytest.mark.parametrize("expr", ATTACKS)
def test_prune_and_parallel_internals_stay_out_of_reach(expr, tmp_path):
    prog = tmp_path / "attack.grad"
    prog.write_text("import torch\nimport torch.nn as nn\nimport torch.nn.utils.prune as prune\n"
                    "import torch.nn.parallel\n"
                    f"print({expr})\n")
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


HOOK_TABLES = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.utils.prune as prune

    lin = nn.Linear(3, 2)
    prune.l1_unstructured(lin, "weight", amount=0.5)
    print(lin._forward_pre_hooks)
    for name in ("_forward_hooks", "_backward_hooks", "_backward_pre_hooks",
                 "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs", "_modules"):
        print(name, getattr(lin, name))
    print(type(lin._parameters).__name__, type(lin._buffers).__name__, list(lin._buffers))
    handle = lin.register_forward_pre_hook(lambda m, args, kwargs: None, with_kwargs=True)
    print(lin._forward_pre_hooks_with_kwargs)
    handle.remove()
    print(lin._forward_pre_hooks_with_kwargs, len(lin._forward_pre_hooks))
    lin.register_full_backward_pre_hook(lambda m, grad_output: None)
    print(len(lin._backward_pre_hooks), len(lin._backward_hooks), lin._is_full_backward_hook)
    """)


def test_hook_tables_print_as_pytorchs():
    # a pruned module's hook tables are OrderedDicts (PyTorch's), the parameter, buffer
    # and module tables plain dicts; a with_kwargs hook's entry goes with its handle
    assert _python(HOOK_TABLES, facade=True) == _python(HOOK_TABLES, facade=False)
