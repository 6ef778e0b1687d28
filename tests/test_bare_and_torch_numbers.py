"""`torch.exp(1)` keeps PyTorch's TypeError while the bare `exp(1)` is a gradcli
convenience; learning that a bare name works elementwise never moves the program's random
stream (real processes)."""

import subprocess
import sys

import pytest


def gradcli_eval(code):
    return subprocess.run([sys.executable, "-m", "gradcli", "eval", code], capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("call,kind", [("exp(1)", "int"), ("sin(2.0)", "float"),
                                       ("sqrt(4)", "int"), ("abs(1.5)", "float")])
def test_torch_functions_refuse_python_numbers_as_pytorch(call, kind):
    r = gradcli_eval(f"torch.{call}")
    name = call.split("(")[0]
    assert r.returncode == 1
    assert f"TypeError: {name}(): argument 'input' (position 1) must be Tensor, not {kind}" \
        in r.stderr
    assert "_data" not in r.stderr


def test_bare_names_take_numbers_and_leave_the_random_stream_alone():
    r = gradcli_eval("torch.manual_seed(0); a = exp(1); b = sin(2.0); torch.randn(3)")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "tensor([ 1.5410, -0.2934, -2.1788])\n"
    assert gradcli_eval("exp(1)").stdout == "2.718281828459045\n"
