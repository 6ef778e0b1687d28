"""Complex literals in `.grad` programs (`1j`, `2+3j`, `1_0.5J`), the `complex` builtin and
the Python complex's `.real`/`.imag`/`.conjugate`: a program prints what PyTorch prints
for the same code, run through the real CLI; the sandbox still refuses `_` attributes."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

PROGRAM = """\
z = torch.tensor([1+2j, 3j, -0.5 - 1_0.5J], requires_grad=True)
print(z)
w = z * (2 - 1j) + 4j
print(w, w.dtype)
l = (w.abs() ** 2).sum() + torch.view_as_real(z.conj() * z).sum()
l.backward()
print(z.grad)
print(1j * 1j, (1+2j).real, (1+2j).imag, (3-4j).conjugate(), abs(3+4j), complex(1, 2))
print(z.real, z.imag, z.angle())
torch.manual_seed(3)
print(torch.randn(2, 2, dtype=torch.cfloat))
print(torch.polar(torch.tensor([1., 2.]), torch.tensor([0., 1.5])))
"""


def _gradcli(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)],
                          capture_output=True, text=True, timeout=120)


def test_program_prints_what_pytorch_prints(tmp_path):
    path = tmp_path / "complex.grad"
    path.write_text(PROGRAM)
    ours = _gradcli(path)
    assert ours.returncode == 0, ours.stderr
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(PROGRAM, {"torch": torch})  # noqa: S102 - the program above
    assert ours.stdout == buffer.getvalue()


@pytest.mark.parametrize(("source", "word"), [
    ("print((1j).__class__)\n", "__class__"),
    ("f = (1j).conjugate\nprint(f.__self__)\n", "__self__"),
    ("print(complex.__subclasses__())\n", "__subclasses__"),
    ("print(getattr(2j, '__reduce_ex__'))\n", "__reduce_ex__"),
])
def test_complex_values_keep_the_sandbox(tmp_path, source, word):
    path = tmp_path / "attack.grad"
    path.write_text(source)
    result = _gradcli(path)
    assert result.returncode != 0
    assert f"attribute '{word}' is not allowed" in result.stderr
    assert "Traceback" not in result.stderr


def test_json_record_holds_complex_values_as_pairs(tmp_path):
    import json

    path = tmp_path / "c.grad"
    path.write_text("z = tensor([1+2j, 3-4j], requires_grad=True)\n(z * z).abs().sum().backward()\n")
    result = subprocess.run([sys.executable, "-m", "gradcli", "run", "--json", str(path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    z = json.loads(result.stdout)["runs"][0]["tensors"]["z"]
    expected = torch.tensor([1 + 2j, 3 - 4j], requires_grad=True)
    (expected * expected).abs().sum().backward()
    assert z["dtype"] == "complex64"
    assert z["value"] == [[1.0, 2.0], [3.0, -4.0]]
    assert z["grad"] == [[v.real, v.imag] for v in expected.grad.tolist()]
