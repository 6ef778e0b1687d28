"""In plain Python (`import gradcli.torch as torch`), the classes of the objects a program
meets name themselves as PyTorch's do: `type(t)` prints <class 'torch.Tensor'>, a grad_fn's
class is <class 'MulBackward0'>, and so on, so that a tutorial printing `type(x)` or
`type(x).__name__` prints PyTorch's text. Each case is built from both libraries and its
class compared: repr, __name__, __module__, __qualname__."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402


def _tensor(lib):
    return lib.tensor([1.0, 2.0, 3.0], requires_grad=True)


def _grad_fn(lib):
    return (_tensor(lib) * 2).sum().grad_fn


#: name -> how to make the object from a torch-like module
CASES = {
    "tensor": _tensor,
    "int tensor": lambda lib: lib.arange(3),
    "parameter": lambda lib: lib.nn.Parameter(lib.ones(2)),
    "size": lambda lib: lib.ones(2, 3).shape,
    "size from size()": lambda lib: lib.ones(2, 3).size(),
    "dtype": lambda lib: lib.float64,
    "device": lambda lib: lib.ones(1).device,
    "device made": lambda lib: lib.device("cpu"),
    "generator": lambda lib: lib.Generator().manual_seed(0),
    "default generator": lambda lib: lib.default_generator,
    "return_types.max": lambda lib: lib.max(lib.ones(2, 2), 0),
    "return_types.sort": lambda lib: lib.sort(lib.ones(3)),
    "return_types.topk": lambda lib: lib.topk(lib.ones(3), 2),
    "sum node": _grad_fn,
    "mul node": lambda lib: (_tensor(lib) * 2).grad_fn,
    "accumulate grad": lambda lib: _grad_fn(lib).next_functions[0][0].next_functions[0][0],
    "no_grad": lambda lib: lib.no_grad(),
    "enable_grad": lambda lib: lib.enable_grad(),
    "set_grad_enabled": lambda lib: lib.set_grad_enabled(True),
    "inference_mode": lambda lib: lib.inference_mode(),
    "detect_anomaly": lambda lib: lib.autograd.detect_anomaly(),
    "tensor hook handle": lambda lib: _tensor(lib).register_hook(lambda g: g),
    "module hook handle": lambda lib: lib.nn.Linear(1, 1).register_forward_hook(
        lambda *a: None),
    "saved_tensors_hooks": lambda lib: lib.autograd.graph.saved_tensors_hooks(
        lambda t: t, lambda t: t),
    "save_on_cpu": lambda lib: lib.autograd.graph.save_on_cpu(),
    "version": lambda lib: lib.__version__,
    "linear": lambda lib: lib.nn.Linear(2, 2),
    "sequential": lambda lib: lib.nn.Sequential(lib.nn.ReLU()),
    "mse": lambda lib: lib.nn.MSELoss(),
    "sgd": lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1),
    "adam": lambda lib: lib.optim.Adam([lib.nn.Parameter(lib.ones(1))]),
}


def _describe(cls) -> tuple:
    return repr(cls), str(cls), cls.__name__, cls.__module__, cls.__qualname__


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
@pytest.mark.parametrize("name", sorted(CASES))
def test_type_of_object_names_pytorchs_class(name):
    make = CASES[name]
    assert _describe(type(make(gt))) == _describe(type(make(torch)))


@pytest.mark.parametrize("name", ["Tensor", "Size", "dtype", "device", "Generator",
                                  "no_grad", "enable_grad", "set_grad_enabled",
                                  "inference_mode"])
def test_facade_class_prints_as_pytorchs(name):
    assert _describe(getattr(gt, name)) == _describe(getattr(torch, name))


def test_isinstance_answers_as_pytorch():
    for lib in (torch, gt):
        t, p = lib.ones(2), lib.nn.Parameter(lib.ones(2))
        answers = (isinstance(t, lib.Tensor), isinstance(p, lib.Tensor),
                   isinstance(p, lib.nn.Parameter), isinstance(t, lib.nn.Parameter),
                   isinstance(t.shape, tuple), isinstance(t.shape, lib.Size),
                   isinstance(t.dtype, lib.dtype), isinstance(t.device, lib.device),
                   isinstance(lib.max(t, 0), tuple), type(t) is lib.Tensor,
                   type(p) is lib.nn.Parameter, issubclass(lib.nn.Parameter, lib.Tensor))
        if lib is torch:
            expected = answers
    assert answers == expected == (True, True, True, False, True, True, True, True, True,
                                   True, True, True)


PROGRAM = """\
import torch
x = torch.ones(2, requires_grad=True)
y = (x * 3).sum()
print(type(x), type(y.grad_fn), type(x.shape), type(x.dtype), type(x.device))
print(type(torch.Generator()), type(torch.no_grad()), type(x.grad_fn))
print(torch.Tensor, torch.Size, torch.dtype, torch.device, torch.Generator)
print(type(torch.nn.Parameter(x)), type(torch.nn.Linear(1, 1)))
"""


def test_plain_python_and_gradcli_run_print_pytorchs_types(tmp_path):
    """The same program through real PyTorch, plain Python over the facade, and the CLI."""
    prog = tmp_path / "class_names.py"  # (not types.py: it would shadow the stdlib module)
    prog.write_text(PROGRAM)
    plain = tmp_path / "class_names_plain.py"
    plain.write_text(PROGRAM.replace("import torch\n", "import gradcli.torch as torch\n"))
    outs = [subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout
            for cmd in ([sys.executable, str(prog)], [sys.executable, str(plain)],
                        [sys.executable, "-m", "gradcli", "run", str(prog)])]
    assert "<class 'torch.Tensor'> <class 'SumBackward0'>" in outs[0]
    assert outs[1] == outs[0]
    assert outs[2] == outs[0]


def test_numpy_interop_still_knows_tensors():
    """pynumpy recognises gradcli's Tensor by its class name and module (now PyTorch's)."""
    from gradcli.lang import pynumpy

    t = gt.ones(2)
    assert pynumpy._is_tensor(t)
    assert not pynumpy._is_tensor(torch.ones(2).numpy())
    assert pynumpy._tensor_data(t).tolist() == [1.0, 1.0]


def test_argument_errors_keep_pytorchs_type_names():
    """arg_checks names an argument's type as PyTorch does (torch.Size, torch.dtype...)."""
    from gradcli.engine.ops.arg_checks import _typename

    for obj in (gt.ones(2).shape, gt.float32, gt.device("cpu"), gt.Generator(), gt.ones(1)):
        ref = {gt.Size: torch.Size([2]), gt.dtype: torch.float32, gt.device: torch.device("cpu"),
               gt.Generator: torch.Generator(), gt.Tensor: torch.ones(1)}[type(obj)]
        expected = {"Size": "torch.Size", "dtype": "torch.dtype", "device": "torch.device",
                    "Generator": "torch._C.Generator", "Tensor": "Tensor"}[type(ref).__name__]
        assert _typename(obj) == expected
