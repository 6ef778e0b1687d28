"""What pasted tutorials reach that the rest of the suite does not: each program here runs
under gradcli (a .grad program, and plain Python on gradcli.torch) and under PyTorch, and
the printed output must be the same. The sandbox cases check that a name added for the
tutorials reaches nothing beyond what it stands for."""
from __future__ import annotations

import io

import pytest
from comparison_helpers import printed_by_gradcli, printed_by_python  # noqa: E402, I001


def run_grad(src: str) -> str:
    return printed_by_gradcli(src, max_steps=500_000)


run_python = printed_by_python


def run_on_gradcli_torch(src: str) -> str:
    return run_python(src.replace("import torch.functional as F", "import gradcli.torch.functional as F")
                         .replace("import torch\n", "import gradcli.torch as torch\n"))


# ------------------------------------------------------------------ torch.functional
FUNCTIONAL = """\
import torch
import torch.functional as F
a = torch.arange(6.0).reshape(2, 3).requires_grad_()
b = torch.ones(3, 2)
y = F.einsum("ij,jk->ik", a, b)
print(y, y.grad_fn.name())
print(F.norm(a), F.tensordot(a, b, dims=1))
print(F.split(torch.arange(5), 2))
print(F.broadcast_tensors(torch.ones(2, 1), torch.zeros(3)))
print(F.atleast_2d(torch.tensor(1.5)), F.meshgrid(torch.arange(2), torch.arange(3), indexing="ij"))
print(F.einsum is torch.einsum, F.norm is torch.norm)
try:
    F.relu
except AttributeError as e:
    print("AttributeError:", e)
"""


def test_torch_functional_holds_torch_functions_as_pytorch_does():
    pytest.importorskip("torch")
    expected = run_python(FUNCTIONAL)
    assert "AttributeError: module 'torch.functional' has no attribute 'relu'" in expected
    assert run_grad(FUNCTIONAL) == expected
    assert run_on_gradcli_torch(FUNCTIONAL) == expected


@pytest.mark.parametrize("path", ["torch.nn.modules.module", "torch.utils.data",
                                  "torch.distributions.normal", "torch.autograd.graph"])
def test_a_name_missing_from_a_submodule_is_named_as_pytorch_names_it(path):
    """A name neither library has reads as Python's error about PyTorch's module (never
    gradcli's own module path)."""
    pytest.importorskip("torch")
    src = f"import torch\nimport {path}\ntry:\n    {path}.no_such_name\n" \
          "except AttributeError as e:\n    print(e)\n"
    expected = run_python(src)
    assert expected == f"module '{path}' has no attribute 'no_such_name'\n"
    assert run_grad(src) == expected


def test_torch_functional_names_gradcli_lacks_say_so():
    out = run_grad("import torch.functional as F\nF.align_tensors\n")
    assert out.startswith("!") and \
        "torch.functional.align_tensors is not supported by gradcli" in out, out


@pytest.mark.parametrize("attack", [
    "F.__dict__", "F._importlib", "F.__getattr__('einsum')", "F._PUBLIC_NAMES",
    "F.__builtins__", "F.__loader__", "F.__spec__", "getattr(F, '_importlib')",
    "getattr(F, '__' + 'dict__')", "F.einsum.__globals__", "vars(F)",
    "type(F)('x')",
])
def test_torch_functional_reaches_nothing_private(attack):
    out = run_grad(f"import torch.functional as F\nprint({attack})\n")
    assert out.startswith("!"), out


# ------------------------------------------------------------------ torch.accelerator
ACCELERATOR = """\
import torch
import torch.accelerator as acc
device = acc.current_accelerator().type if acc.is_available() else "cpu"
print(f"Using {device} device", acc.device_count(), acc.current_accelerator(check_available=True))
for name in ("synchronize", "current_device_index", "set_device_index"):
    try:
        getattr(acc, name)() if name != "set_device_index" else acc.set_device_index(0)
    except RuntimeError as e:
        print(name, "RuntimeError:", e)
print(torch.zeros(2, device=device))
"""


def test_torch_accelerator_answers_as_a_cpu_only_pytorch():
    pytest.importorskip("torch")
    expected = run_python(ACCELERATOR)
    assert "Using cpu device 0 None" in expected
    assert run_grad(ACCELERATOR) == expected
    assert run_on_gradcli_torch(ACCELERATOR.replace("import torch.accelerator as acc",
                                                    "import gradcli.torch.accelerator as acc")) \
        == expected


@pytest.mark.parametrize("attack", [
    "acc.__dict__", "acc._needs_a_device", "acc.NONE_AVAILABLE", "acc.synchronize.__globals__",
    "acc.__getattr__('x')", "vars(acc)", "getattr(acc, '_' + 'needs_a_device')",
    "acc.is_available.__code__", "acc.__builtins__",
])
def test_torch_accelerator_reaches_nothing_private(attack):
    out = run_grad(f"import torch.accelerator as acc\nprint({attack})\n")
    assert out.startswith("!"), out


# ------------------------------------------------------------------ nn.Dropout1d/2d/3d
CHANNEL_DROPOUT = """\
import torch
import torch.nn as nn
torch.manual_seed(0)
layers = nn.ModuleList([nn.Dropout1d(), nn.Dropout2d(0.25), nn.Dropout3d(p=0.4, inplace=True)])
print(layers)
x1 = torch.ones(2, 4, 3, requires_grad=True)
y1 = layers[0](x1)
print(y1)
y1.sum().backward()
print(x1.grad)
print(layers[1](torch.arange(24.0).reshape(1, 4, 2, 3)))
x3 = torch.ones(1, 3, 2, 1, 2)
print(layers[2](x3), x3)
layers.eval()
x = torch.ones(2, 3, 2)
print(layers[1](torch.ones(1, 2, 2, 2)), layers[0](x) is x)
try:
    nn.Dropout2d(1.5)
except ValueError as e:
    print("ValueError:", e)
"""


def test_channel_dropout_modules_draw_and_print_as_pytorch():
    pytest.importorskip("torch")
    expected = run_python(CHANNEL_DROPOUT)
    assert "Dropout2d(p=0.25, inplace=False)" in expected
    assert run_grad(CHANNEL_DROPOUT) == expected
    assert run_on_gradcli_torch(CHANNEL_DROPOUT.replace("import torch.nn as nn",
                                                        "import gradcli.torch.nn as nn")) == expected


# ------------------------------------------------------------------ the crawler, on these names
def test_nothing_reachable_from_the_added_names_leaves_the_sandbox():
    """test_security_sandbox's breadth-first crawl, rooted at what this file adds."""
    import types

    from test_security_sandbox import BUDGET, crawl

    from gradcli.lang import Limits, Session

    s = Session(stdout=io.StringIO(), limits=Limits(**BUDGET))
    s.run("import torch\nimport torch.functional as tfn\nimport torch.accelerator as tacc\n"
          "import torch.nn as nn\nd2 = nn.Dropout2d(0.3)\nd1 = nn.Dropout1d()\n"
          "d3 = nn.Dropout3d(inplace=True)\nein = tfn.einsum\nnone = tacc.current_accelerator()\n",
          "attack.grad")
    roots = [(k, v) for k, v in s.globals.items() if k in ("tfn", "tacc", "d1", "d2", "d3", "ein")]
    # (the facade itself: test_security_sandbox crawls it)
    kept, bad = crawl(roots, stop=lambda obj: isinstance(obj, types.ModuleType)
                      and obj.__name__ == "gradcli.torch")
    assert len(kept) > 40
    assert not bad, bad[:20]


# ------------------------------------------------------------------ Module.register_backward_hook
BACKWARD_HOOK = """\
import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
def show(module, grad_input, grad_output):
    print("hook", len(grad_input), [None if g is None else g.shape for g in grad_input])
    print(grad_output[0])
    if grad_input[0] is not None:
        print(grad_input[0])
handle = net[2].register_backward_hook(show)
x = torch.randn(5, 3, requires_grad=True)
net(x).pow(2).sum().backward()
net[0].register_backward_hook(show)
x.grad = None
net(x).sum().backward()
print(x.grad)
handle.remove()
net(x).sum().backward()
try:
    net[0].register_full_backward_hook(show)
except RuntimeError as e:
    print("RuntimeError:", e)
"""


def test_deprecated_module_backward_hook_sees_the_last_node_as_pytorch():
    pytest.importorskip("torch")
    with pytest.warns(FutureWarning, match="contains multiple autograd Nodes"):
        expected = run_python(BACKWARD_HOOK)
    assert expected.count("hook 3") == 4 and "Cannot use both" in expected
    assert run_grad(BACKWARD_HOOK) == expected
    with pytest.warns(FutureWarning, match="contains multiple autograd Nodes"):
        assert run_on_gradcli_torch(BACKWARD_HOOK.replace(
            "import torch.nn as nn", "import gradcli.torch.nn as nn")) == expected
