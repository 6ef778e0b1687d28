"""Complex input to the reductions and functions that give a real result or that PyTorch
computes through its own complex kernel (std/var and their _mean forms, dist, logaddexp,
F.silu, F.normalize), forward-mode AD through the fft transforms that end in a conj, and
the complex-to-real casts' warning, against PyTorch: values, dtypes, grad_fn names,
gradients, tangents (conj bit included) and error texts."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402
import gradcli.torch.fft  # noqa: E402, F401
import gradcli.torch.nn.functional  # noqa: E402, F401

Z = "[[1+2j, -0.5+1j, 3-1j], [0.25-2j, 2+0.5j, -1-1j]]"
W = "[[0.5-1j, 1+1j, -2+0.5j], [1.5+0.25j, -0.5-2j, 1+3j]]"


def _run(mod, src: str) -> str:
    env = {"torch": mod, "F": mod.nn.functional}
    try:
        exec(src, env)  # noqa: S102 - test sources written here
        return repr(env["out"])
    except Exception as err:  # noqa: BLE001 - the error text is compared
        return f"{type(err).__name__}: {err}"


def same(src: str) -> None:
    expected = _run(torch, src)
    got = _run(gt, src)
    assert got == expected, f"\n{src}\n gradcli: {got}\n pytorch: {expected}"


CALLS = [
    "z.std()", "z.var()", "z.std(1)", "torch.var(z, 0, correction=0)",
    "torch.std(z, dim=1, keepdim=True, unbiased=False)", "torch.var_mean(z, 1)[0]",
    "torch.std_mean(z)[1]", "torch.std_mean(z, 0)[0]", "torch.logaddexp(z, w)",
    "F.normalize(z)", "F.normalize(z, p=1, dim=0)",
    "torch.dist(z, w)", "torch.dist(z, w, 1)", "torch.dist(z, w, float('inf'))",
    "torch.dist(z, w, 3)", "z.to(torch.complex128).var(1)",
]


@pytest.mark.parametrize("call", CALLS)
def test_value_and_gradients(call):
    """The result (value, dtype, grad_fn) and the gradients of both inputs for a complex
    cotangent (a real one for a real result)."""
    same(f"z = torch.tensor({Z}, requires_grad=True)\n"
         f"w = torch.tensor({W}, requires_grad=True)\n"
         f"y = {call}\n"
         "g = torch.ones_like(y) if not y.is_complex() else torch.full_like(y, 0.5 - 1j)\n"
         "out = (y, torch.autograd.grad(y, (z, w), g, allow_unused=True))")


@pytest.mark.parametrize("call", CALLS)
def test_forward_ad_tangent(call):
    same("fwAD = torch.autograd.forward_ad\n"
         f"z0 = torch.tensor({Z})\nw = torch.tensor({W}) * 0.3\n"
         "with fwAD.dual_level():\n"
         f"    z = fwAD.make_dual(z0, torch.tensor({W}))\n"
         f"    y = {call}\n"
         "    out = fwAD.unpack_dual(y).tangent")


REFUSALS = [
    # silu computes complex input, but refuses to record it
    "out = F.silu(torch.tensor([1+1j, -2j]))",
    "out = F.silu(torch.tensor([1+1j, -2j], requires_grad=True))",
    "out = torch.logaddexp2(torch.tensor([1+1j]), torch.tensor([1j]))",
    "out = torch.hypot(torch.tensor([1+1j]), torch.tensor([1j]))",
    "out = torch.logaddexp(torch.tensor([1]), torch.tensor([2]))",
    "out = torch.logaddexp(torch.tensor([1+1j]), 2.)",
    f"out = torch.logaddexp(torch.tensor({Z}), torch.tensor({W}).real)",
    "out = torch.logaddexp(torch.tensor([float('inf') + 0j, complex('nan'), -float('inf'), 1e30j]),"
    " torch.tensor([float('inf') + 0j, 1, -float('inf'), 2.]))",
    "out = torch.tensor([1+2j, 3j]).std(correction=2)",
    "out = torch.tensor([1+2j, 3j]).to(torch.complex64).var().dtype",
]


@pytest.mark.parametrize("src", REFUSALS)
def test_edges_and_refusals(src):
    same(src)


FFT_TANGENTS = [
    ("torch.fft.ihfft", "x", "tx"), ("torch.fft.ifft", "x", "tx"), ("torch.fft.ifft", "z", "t"),
    ("torch.fft.hfft", "z", "t"), ("torch.fft.irfft", "z", "t"), ("torch.fft.ihfft2", "x2", "tx2"),
    ("torch.conj", "z", "t"), ("torch.fft.fft", "x", "tx"),
]


@pytest.mark.parametrize(("fn", "p", "tan"), FFT_TANGENTS)
def test_fft_tangent_conj_bit(fn, p, tan):
    """A transform PyTorch ends with a conj (ihfft, ifft of real input) has a conj view as
    primal and tangent: is_conj() and the -0 imaginary parts match."""
    same("fwAD = torch.autograd.forward_ad\n"
         "z = torch.tensor([1+2j, -0.5+1j, 3-1j, 0.25-2j])\n"
         "t = torch.tensor([0.5-1j, 1+1j, -2+0.5j, 1.5+0.25j])\n"
         "x = torch.tensor([1., -2., 0.5, 3.])\ntx = torch.tensor([0.25, 1., -1., 2.])\n"
         "x2, tx2 = x.reshape(2, 2), tx.reshape(2, 2)\n"
         "with fwAD.dual_level():\n"
         f"    p, tan = fwAD.unpack_dual({fn}(fwAD.make_dual({p}, {tan})))\n"
         "    out = (p.is_conj(), tan.is_conj(), p, tan)")


CAST_PROGRAM = """
import warnings, sys
warnings.simplefilter("always")
if sys.argv[1] == "torch":
    import torch
else:
    import gradcli.torch as torch
x = torch.tensor([0.5j, 3 - 1j])
print(x.to(torch.bool))
caught = []
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    a = x.float()
    b = x.to(torch.int32)
    c = torch.zeros(2).copy_(x)
    d = x.double()
print(a, b, c, d)
print([(w.category.__name__, str(w.message), w.lineno) for w in caught])
"""


def test_complex_to_real_cast_warns_once_as_pytorch(tmp_path):
    """x.float() of a complex tensor: PyTorch's UserWarning (once per process, at the
    caller's line), never numpy's ComplexWarning; a cast to bool tests z != 0, silently."""
    script = tmp_path / "cast.py"
    script.write_text(CAST_PROGRAM)
    outs = [subprocess.run([sys.executable, str(script), which], capture_output=True,
                           text=True, timeout=120) for which in ("torch", "gradcli")]
    assert outs[0].returncode == 0, outs[0].stderr
    assert outs[1].stdout == outs[0].stdout
    assert outs[1].stderr == outs[0].stderr == ""
    assert "Casting complex values to real discards the imaginary part" in outs[0].stdout
