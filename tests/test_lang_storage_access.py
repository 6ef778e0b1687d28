"""A program may look at a tensor's storage (karpathy's makemore lecture prints
`torch.arange(18).storage()` to show that `view` only changes how the same memory is
read): `storage()` and `untyped_storage()` are reachable and print as PyTorch's. The
storage objects are read-only and their `data_ptr` stays out of reach."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from gradcli.lang.session import run_source

PROGRAM = """\
import torch
a = torch.arange(18)
print(a.storage())
v = a.view(3, 6)[1:, 2:]
print(v.storage().size(), v.storage_offset(), len(v.untyped_storage()))
print(v.storage().tolist()[:4], v.storage()[5], v.storage().dtype)
print(torch.tensor([1.5, 2.0]).untyped_storage())
print(a.view(2, 9).storage().size() == a.storage().size())
"""


def _run(src):
    out, err = io.StringIO(), io.StringIO()
    code = run_source(src, "storage.grad", stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_storage_prints_as_pytorch_under_gradcli_run(tmp_path):
    torch = pytest.importorskip("torch")
    prog = tmp_path / "storage.grad"
    prog.write_text(PROGRAM)
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                         capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    ref = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True,
                         timeout=300)
    assert ref.returncode == 0 and torch is not None, ref.stderr
    assert got.stdout == ref.stdout
    assert "TypedStorage is deprecated" in got.stderr


@pytest.mark.parametrize("stmt,fragment", [
    ("t.storage().data_ptr()", "data_ptr is not supported by gradcli"),
    ("t.untyped_storage().data_ptr()", "data_ptr is not supported by gradcli"),
    ("t.storage()._array", "not allowed"),
    ("getattr(t.storage(), '_array')", "not allowed"),
    ("t.storage()[0] = 5.0", "does not support item assignment"),
    ("t.untyped_storage()[0] = 1", "does not support item assignment"),
    ("t.storage().resize_(100)", "resizing a storage is not supported by gradcli"),
])
def test_storage_is_read_only_and_keeps_its_pointer(stmt, fragment):
    code, out, err = _run(f"import torch\nt = torch.ones(2)\n{stmt}\nprint(t)\n")
    assert code in (1, 2), (out, err)
    assert fragment in err, err
    assert "Traceback" not in err
    assert out == ""


def test_reading_the_storage_leaves_the_tensor_and_its_version_alone():
    code, out, err = _run("import torch\nt = torch.ones(3, requires_grad=True)\ny = t * 2\n"
                          "s = y.storage()\nprint(s.tolist(), y._version, y.grad_fn.name())\n")
    assert code == 0, err
    assert out == "[2.0, 2.0, 2.0] 0 MulBackward0\n"
