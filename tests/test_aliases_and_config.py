"""torch.* names added for pasted scripts (aliases, index helpers, predicates, gcd/lcm,
heaviside, windows, *_copy forms, deprecated norms, configuration calls) against PyTorch."""

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "public_names"


def _run(probe, which):
    done = subprocess.run([sys.executable, str(FIXTURES / probe), which], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("probe", ["torch_names_probe.py", "tensor_methods_probe.py",
                                   "schedulers_init_probe.py", "nn_utils_probe.py",
                                   "rnn_utils_probe.py", "swa_probe.py"])
def test_probe_prints_as_pytorch(probe):
    theirs, ours = _run(probe, "t"), _run(probe, "g")
    assert len(theirs) >= 13
    for number, (mine, expected) in enumerate(zip(ours, theirs, strict=True)):
        assert mine == expected, f"line {number}"


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window", "kaiser_window"])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_values(name, periodic, dtype):
    for length in (2, 3, 16, 33):
        ours = getattr(gt, name)(length, periodic, dtype=getattr(gt, dtype))
        theirs = getattr(torch, name)(length, periodic, dtype=getattr(torch, dtype))
        tol = dict(rtol=1.3e-6, atol=1e-5) if dtype == "float32" else dict(rtol=1e-7, atol=1e-7)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **tol)
        assert str(ours.dtype) == str(theirs.dtype)


def test_vander_backward_fails_as_pytorch():
    """PyTorch's vander saves a cumprod it then overwrites: its backward always raises."""
    for N in (2, 4):
        messages = []
        for T in (gt, torch):
            x = T.tensor([0.5, -1.5, 2.0], dtype=T.float64, requires_grad=True)
            v = T.vander(x, N=N)
            assert type(v.grad_fn).__name__ == "FlipBackward0"
            assert type(v.grad_fn.next_functions[0][0]).__name__ == "CopySlices"
            with pytest.raises(RuntimeError) as caught:
                v.sum().backward()
            messages.append(str(caught.value))
        assert messages[0] == messages[1]


def test_frobenius_norm_node_and_gradient():
    grads = []
    for T in (gt, torch):
        m = T.tensor([[1., -2., 3.], [0.5, 4., -1.]], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = T.frobenius_norm(m, (0, 1))
        assert type(r.grad_fn).__name__ == "NormBackward1"
        r.backward()
        grads.append(m.grad.tolist())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1.3e-6)


def test_inplace_forms_bump_version_and_refuse_leaves():
    for T in (gt, torch):
        y = T.tensor([12, 18])
        y.gcd_(T.tensor([8, 4]))
        assert y._version == 1 and y.tolist() == [4, 2]
        leaf = T.tensor([1., -1.], requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                               "an in-place operation."):
            leaf.heaviside_(T.tensor([0.5]))


def test_heaviside_out_of_graph_under_no_grad():
    x = gt.tensor([1., -1.], requires_grad=True)
    with gt.no_grad():
        assert gt.heaviside(x, gt.tensor([0.])).grad_fn is None


@pytest.fixture
def pytorch_dynamo_restored():
    """PyTorch's first torch.compile starts dynamo, which turns off distribution argument
    validation for the whole process (its TorchPatcher): put it back, so later tests in this
    worker that expect PyTorch's validation errors still see them."""
    before = torch.distributions.Distribution._validate_args
    yield
    torch.distributions.Distribution.set_default_validate_args(before)


@pytest.mark.usefixtures("pytorch_dynamo_restored")
def test_compile_module_wraps_as_pytorch():
    results = []
    for T in (gt, torch):
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(2, 3), T.nn.ReLU())
        compiled = T.compile(model)
        compiled.eval()
        results.append((type(compiled).__name__, repr(compiled), list(compiled.state_dict()),
                        [n for n, _ in compiled.named_parameters()], model.training,
                        compiled._orig_mod is model, len(compiled), str(compiled._orig_mod[0].weight)))
    assert results[0] == results[1]


@pytest.mark.usefixtures("pytorch_dynamo_restored")
def test_compile_function_and_decorator_forms():
    def square(x):
        return x * x

    for T in (gt, torch):
        assert T.compile(square).__name__ == "square"
        assert T.compile(square).__wrapped__ is square
        assert callable(T.compile(mode="max-autotune"))
        module = T.nn.Linear(1, 1)
        assert T.compile(module, disable=True) is module
    assert gt.compile(square)(gt.tensor([3.])).tolist() == [9.0]


@pytest.mark.parametrize("call", [
    lambda T: T.compile(3),
    lambda T: T.compile(T.nn.Linear(1, 1), mode="fast"),
    lambda T: T.compile(T.nn.Linear(1, 1), mode="default", options={}),
])
def test_compile_errors_as_pytorch(call):
    caught = []
    for T in (gt, torch):
        with pytest.raises(Exception) as error:
            call(T)
        caught.append((type(error.value).__name__, str(error.value)))
    assert caught[0] == caught[1]


def test_compiled_module_forwards_writes_and_len():
    results = []
    for T in (gt, torch):
        model = T.nn.Linear(2, 3)
        compiled = T.compile(model)
        compiled.note = 5
        compiled.train(False)
        with pytest.raises(TypeError) as error:
            len(compiled)
        results.append((model.note, model.training, compiled.training, str(error.value)))
    assert results[0] == results[1] == (5, False, False, "Linear does not support len()")
