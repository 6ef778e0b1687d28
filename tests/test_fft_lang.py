"""torch.fft in the language: the import forms (import torch.fft, from torch.fft import
...), printed results as PyTorch's, and attack tests for the module's reachable names
(its helpers and imports stay out of reach, its sizes obey --max-elements)."""

import io
import subprocess
import sys

import pytest

from gradcli.lang import Limits
from gradcli.lang.session import run_source

torch = pytest.importorskip("torch")

BUDGET = dict(max_steps=20_000, max_depth=60, max_elements=1_000_000, max_length=100_000)


def run(src: str):
    out, err = io.StringIO(), io.StringIO()
    code = run_source("import torch\n" + src, "attack.grad", limits=Limits(**BUDGET), stdout=out,
                      stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_import_forms_and_printing_match_pytorch():
    body = ("x = torch.arange(4.0, requires_grad=True)\n"
            "y = torch.fft.fft(x)\n"
            "print(y)\n"
            "print(rfft(x), fftfreq(4), F.irfft(F.rfft(x)))\n"
            "torch.view_as_real(y).sum().backward()\n"
            "print(x.grad, y.grad_fn.name())\n"
            "print(torch.fft.fftshift(torch.arange(5)), ihfft(x))\n")
    head = "import torch.fft\nimport torch.fft as F\nfrom torch.fft import rfft, fftfreq, ihfft\n"
    code, out, err = run(head + body)
    assert code == 0, err
    want = subprocess.run(
        [sys.executable, "-c", "import torch\n" + head + body], capture_output=True, text=True,
        check=True).stdout
    assert out == want


def test_star_import():
    code, out, err = run("from torch.fft import *\nprint(hfft(torch.ones(3)), rfftfreq(4))\n")
    assert code == 0, err
    assert out == "tensor([4., 0., 0., 0.]) tensor([0.0000, 0.2500, 0.5000])\n"


def test_check_accepts_the_module(tmp_path):
    prog = tmp_path / "p.grad"
    prog.write_text("import torch\nfrom torch.fft import rfft\nx = torch.ones(4)\n"
                    "print(torch.fft.fft2(x.reshape(2, 2)), rfft(x))\ny = torch.fft.nope(x)\n")
    r = subprocess.run([sys.executable, "-m", "gradcli", "check", str(prog)],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.count("NotSupported") == 1
    assert "p.grad:5:5: NotSupported: torch.fft.nope is not supported by gradcli" in r.stderr


ATTACKS = [
    ("print(torch.fft.annotations)", "AttributeError"),
    ("print(torch.fft._ops)", "ForbiddenError"),
    ("print(torch.fft._fill)", "ForbiddenError"),
    ("print(torch.fft.fft.__globals__)", "ForbiddenError"),
    ("print(torch.fft.fftn.__closure__)", "ForbiddenError"),
    ("print(torch.fft.fft2.__wrapped__)", "ForbiddenError"),
    ("print(torch.fft.fft.__module__)", "ForbiddenError"),
    ("print(torch.fft.fftn(torch.ones(2), _run=print))", "TypeError"),
    ("from torch.fft import _sp", "ForbiddenError"),
    ("from torch.fft import annotations", "ForbiddenError"),
    ("from torch.fft import fft, PUBLIC", "ForbiddenError"),
    ("import torch.fft.nope", "ForbiddenError"),
    ("print(getattr(torch.fft, '_sp'))", "AttributeError"),
    ("print(vars(torch.fft))", "ForbiddenError"),
    ("print(torch.fft.scipy)", "AttributeError"),
    ("print(torch.fft.np)", "AttributeError"),
    ("print(torch.fft.PUBLIC)", "AttributeError"),
    ("print(torch.fft.rfft(torch.ones(2)).grad_fn.__class__)", "ForbiddenError"),
    ("print(torch.fft.fft(torch.ones(4), n=10**8))", "LimitError"),
    ("print(torch.fft.rfft(torch.ones(4), n=10**8))", "LimitError"),
    ("print(torch.fft.hfft(torch.ones(4), n=10**8))", "LimitError"),
    ("print(torch.fft.fftn(torch.ones(2, 2), s=(10**4, 10**4)))", "LimitError"),
    ("print(torch.fft.irfftn(torch.ones(3, 3), s=[10**5, 10**5]))", "LimitError"),
    ("print(torch.fft.fftfreq(10**8))", "LimitError"),
    ("print(torch.fft.rfftfreq(10**8))", "LimitError"),
    ("print(torch.fft.fft(torch.ones(3), dim=[0, 1]))", "TypeError"),
    ("print(torch.fft.fft(torch.ones(3), norm='x'))", "RuntimeError"),
    ("print(torch.fft.fftshift(torch.ones(3), dim=5))", "IndexError"),
    ("w = torch.hann_window(8)\nS = torch.stft(torch.ones(16), 8, window=w, return_complex=True)"
     "\nprint(torch.istft(S, 8, window=w, length=10**8).shape)", "LimitError"),
    ("print(torch.stft(torch.ones(16), 10**8, pad_mode='constant', return_complex=True))",
     "LimitError"),
    ("print(torch.stft(torch.ones(16), 8, window=print, return_complex=True))", "TypeError"),
    ("print(torch.istft(torch.ones(5, 3, dtype=torch.complex64), 8, window=[1.0]))", "TypeError"),
    ("print(torch.istft(torch.ones(5, 3, dtype=torch.complex64), 8, length=2.5))", "TypeError"),
    ("print(torch.ones(16).stft(8, window=torch.ones(8), return_complex=True).__class__)",
     "ForbiddenError"),
]


@pytest.mark.parametrize("src,kind", ATTACKS)
def test_attack_is_refused(src, kind):
    code, out, err = run(src)
    assert code in (1, 2), (src, code, out, err)
    assert "Traceback" not in err and "Traceback" not in out, err
    assert err.startswith("attack.grad:"), err
    assert f": {kind}: " in err.splitlines()[0], err
