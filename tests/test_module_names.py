"""Issue #23's module-level names against PyTorch: nn.utils.clip_grad / convert_parameters /
memory_format / init, autograd.grad_mode / anomaly_mode / variable and the
multithreading flag, func.functionalize and func.replace_all_batch_norm_modules_."""

import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402


@pytest.mark.parametrize("path", [
    "nn.utils.clip_grad.clip_grad_norm_", "nn.utils.clip_grad.clip_grad_value_",
    "nn.utils.clip_grad.clip_grad_norm", "nn.utils.convert_parameters.parameters_to_vector",
    "nn.utils.convert_parameters.vector_to_parameters",
    "nn.utils.convert_conv2d_weight_memory_format",
    "nn.utils.convert_conv3d_weight_memory_format", "nn.utils.init.skip_init",
    "autograd.grad_mode.no_grad", "autograd.grad_mode.enable_grad",
    "autograd.grad_mode.set_grad_enabled", "autograd.grad_mode.inference_mode",
    "autograd.grad_mode.set_multithreading_enabled",
    "autograd.grad_mode.enforce_grad_layout_policy",
    "autograd.anomaly_mode.detect_anomaly", "autograd.anomaly_mode.set_detect_anomaly",
    "autograd.variable.Variable", "autograd.is_multithreading_enabled",
    "autograd.set_multithreading_enabled", "func.functionalize",
    "func.replace_all_batch_norm_modules_",
])
def test_names_exist(path):
    for lib in (gt, torch):
        obj = lib
        for part in path.split("."):
            obj = getattr(obj, part)
        assert callable(obj)


@pytest.mark.parametrize("dims", [2, 3])
def test_convert_conv_weight_memory_format(dims):
    strides = []
    for lib in (gt, torch):
        lib.manual_seed(0)
        conv = getattr(lib.nn, f"Conv{dims}d")(2, 3, 2)
        convt = getattr(lib.nn, f"ConvTranspose{dims}d")(3, 4, 2)
        model = lib.nn.Sequential(conv, lib.nn.ReLU(), lib.nn.Sequential(convt))
        weight = conv.weight
        fmt = lib.channels_last if dims == 2 else lib.channels_last_3d
        convert = getattr(lib.nn.utils, f"convert_conv{dims}d_weight_memory_format")
        assert convert(model, fmt) is model
        assert conv.weight is weight and conv.weight.is_contiguous(memory_format=fmt)
        strides.append((conv.weight.stride(), convt.weight.stride()))
    assert strides[0] == strides[1]


def test_skip_init():
    for lib in (gt, torch):
        layer = lib.nn.utils.init.skip_init(lib.nn.Linear, 2, 3)
        assert tuple(layer.weight.shape) == (3, 2)
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
            lib.nn.utils.init.skip_init(lib.nn.ReLU)


def test_clip_grad_module_clips_as_pytorch():
    grads = []
    for lib in (gt, torch):
        p = lib.tensor([3.0, 4.0], requires_grad=True)
        (p * p).sum().backward()
        total = lib.nn.utils.clip_grad.clip_grad_norm_([p], 1.0)
        grads.append((total.item(), p.grad.numpy().copy()))
    assert grads[0][0] == pytest.approx(grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-6)


@pytest.mark.parametrize("lib", [gt, torch], ids=["gradcli", "torch"])
def test_multithreading_flag_is_per_thread_and_restored(lib):
    autograd = lib.autograd
    assert autograd.is_multithreading_enabled()
    with autograd.set_multithreading_enabled(False):
        assert not autograd.is_multithreading_enabled()
        seen = []
        worker = threading.Thread(target=lambda: seen.append(
            autograd.is_multithreading_enabled()))
        worker.start()
        worker.join()
        assert seen == [True]
    assert autograd.is_multithreading_enabled()

    @autograd.set_multithreading_enabled(False)
    def inside():
        return autograd.is_multithreading_enabled()

    # (decorating sets the flag for good, as PyTorch's does; calling keeps it)
    assert not autograd.is_multithreading_enabled() and inside() is False
    assert not autograd.is_multithreading_enabled()
    autograd.set_multithreading_enabled(True)


def test_functionalize():
    for lib in (gt, torch):
        def f(x):
            return x.add_(1) * 2

        x = lib.ones(2)
        assert lib.func.functionalize(f)(x).tolist() == [4.0, 4.0]
        assert x.tolist() == [2.0, 2.0]
        assert lib.func.functionalize(f, remove="mutations_and_views").__name__ == "f"
        with pytest.raises(RuntimeError, match="received invalid argument for remove=x"):
            lib.func.functionalize(f, remove="x")


def test_replace_all_batch_norm_modules_():
    reprs = []
    for lib in (gt, torch):
        model = lib.nn.Sequential(lib.nn.BatchNorm1d(3), lib.nn.Sequential(lib.nn.BatchNorm2d(2)))
        assert lib.func.replace_all_batch_norm_modules_(model) is model
        for bn in (model[0], model[1][0]):
            assert bn.running_mean is None and bn.running_var is None
            assert bn.num_batches_tracked is None and not bn.track_running_stats
        model.eval()
        out = model[0](lib.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]))
        reprs.append((repr(model), out.detach().numpy()))
    assert reprs[0][0] == reprs[1][0]
    np.testing.assert_allclose(reprs[0][1], reprs[1][1], rtol=1e-6, atol=1e-6)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_nested_io_function_fails_as_pytorch():
    seen = []
    for lib in (gt, torch):
        class Doubler(lib.autograd.NestedIOFunction):
            def forward_extended(self, x):
                return x * 2

            def backward_extended(self, g):
                return g * 2

        x = lib.ones(2, requires_grad=True)
        for call in (lambda c=Doubler, v=x: c()(v), lambda c=Doubler, v=x: c.apply(v)):
            with pytest.raises(AttributeError) as info:
                call()
            seen.append(str(info.value))
        assert issubclass(Doubler, lib.autograd.Function)
    assert seen[:2] == seen[2:]


def test_programs_reach_the_autograd_names(tmp_path):
    import subprocess
    import sys

    program = tmp_path / "a.grad"
    program.write_text("import torch\nprint(torch.autograd.is_multithreading_enabled())\n"
                       "with torch.autograd.set_multithreading_enabled(False):\n"
                       "    print(torch.autograd.is_multithreading_enabled())\n"
                       "print(torch.autograd.grad_mode.no_grad)\n")
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", str(program)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True", "False",
                                        "<class 'torch.autograd.grad_mode.no_grad'>"]
