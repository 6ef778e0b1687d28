"""The language with the real facade on what the tutorials rely on: torch.autograd.Function
as a base class, its ctx (the API and the program's own attributes, nothing of the node's
internals), a Module's state_dict (an OrderedDict without `import collections`) and
torch.__version__ (read-only). Compared with PyTorch where PyTorch has an answer."""
from __future__ import annotations

import io

import pytest
from comparison_helpers import printed_by_gradcli  # noqa: E402, I001

run = printed_by_gradcli


FUNCTION = """\
import torch
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x * k
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * ctx.k, None
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = Scale.apply(x, 3.0)
y.sum().backward()
print(x.grad, y.grad_fn.name(), issubclass(Scale, torch.autograd.Function))
"""


def test_autograd_function_subclass_and_ctx_attributes_match_pytorch():
    torch = pytest.importorskip("torch")
    import contextlib
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(FUNCTION.replace("import torch\n", ""), {"torch": torch})  # noqa: S102
    assert run(FUNCTION) == buf.getvalue()


@pytest.mark.parametrize("attack", [
    "ctx.saved = None", "ctx.op = None", "ctx.next_functions = ()", "ctx.apply = print",
    "ctx.save_for_backward = print", "ctx._saved = None", "ctx.numpy = 1",
])
def test_ctx_refuses_to_overwrite_the_nodes_own_names(attack):
    src = FUNCTION.replace("        ctx.k = k\n", f"        ctx.k = k\n        {attack}\n")
    out = run(src)
    assert out.startswith("!"), out


@pytest.mark.parametrize("name", ["op", "saved", "packed", "meta", "trace", "custom"])
def test_ctx_hides_the_nodes_internals(name):
    src = FUNCTION.replace("        x, = ctx.saved_tensors\n",
                           f"        x, = ctx.saved_tensors\n        print(ctx.{name})\n")
    out = run(src)
    assert "is not supported by gradcli" in out, out


def test_ctx_result_is_the_programs_own_attribute():
    """`ctx.result` is not the node's: a program may keep its output there (the forward-AD
    tutorial does); unset, reading it fails as in PyTorch."""
    src = FUNCTION.replace("        x, = ctx.saved_tensors\n",
                           "        x, = ctx.saved_tensors\n        print(ctx.result)\n")
    out = run(src)
    assert "object has no attribute 'result'" in out and "ScaleBackward" in out, out


def test_state_dict_without_importing_collections():
    out = run("import torch\ntorch.manual_seed(0)\nm = torch.nn.Linear(2, 1)\n"
              "sd = m.state_dict()\nprint(list(sd.keys()), len(sd.items()), sd.get('bias').shape)\n")
    assert out == "['weight', 'bias'] 2 torch.Size([1])\n"


def test_version_is_read_only_and_only_on_the_facade():
    assert run("import torch\nprint(torch.__version__ >= '2.0', torch.__version__ < (3, 0))\n") \
        == "True True\n"
    assert run("import torch\ntorch.__version__ = '9'\n").startswith("!")
    assert "not supported" in run("import math\nprint(math.__version__)\n")
    assert run("import torch\nprint(torch.__version__.__class__)\n").startswith("!")


def test_host_classes_print_as_pytorchs():
    out = run("import torch\nprint(torch.autograd.Function)\n"
              "from torch.autograd.function import FunctionCtx\nprint(FunctionCtx)\n")
    assert out == ("<class 'torch.autograd.function.Function'>\n"
                   "<class 'torch.autograd.function.FunctionCtx'>\n")
