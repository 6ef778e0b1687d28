"""``gradcli check`` names every torch function a file uses that gradcli lacks, with its
line and column, before anything runs (the names are looked up in the facade, so a
function gradcli gains stops being reported without a list to update)."""

from __future__ import annotations

import os
import subprocess
import sys

import gradcli.torch as gtorch


def check(tmp_path, text):
    (tmp_path / "prog.grad").write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return subprocess.run([sys.executable, "-m", "gradcli", "check", "prog.grad"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)


def test_unsupported_torch_names_are_listed_with_their_place(tmp_path):
    r = check(tmp_path, "import torch\nimport torch.nn.functional as F\n"
                        "from torch import nn as tnn\nx = torch.ones(2)\n"
                        "y = torch.no_such_fn(x) + F.relu(x)\n"
                        "z = F.no_such_activation(x)\nm = tnn.NoSuchLayer(2)\n"
                        "w = torch.ones(1).no_such_method()\n")
    assert r.returncode == 2
    out = r.stdout + r.stderr
    assert "prog.grad:5:5: NotSupported: torch.no_such_fn is not supported by gradcli" in out
    assert ("prog.grad:6:5: NotSupported: torch.nn.functional.no_such_activation is not "
            "supported by gradcli") in out
    assert "prog.grad:7:5: NotSupported: torch.nn.NoSuchLayer is not supported by gradcli" \
        in out
    # F.relu and torch.ones exist; a value's methods are known only at run time
    assert out.count(": NotSupported: ") == 3


def test_a_supported_file_is_ok(tmp_path):
    r = check(tmp_path, "import torch\nx = torch.ones(2, requires_grad=True)\n"
                        "torch.exp(x).sum().backward()\nprint(x.grad)\n")
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_same_name_at_run_time_says_the_same(tmp_path):
    r = check(tmp_path, "import torch\ntorch.no_such_fn(1)\n")
    assert "torch.no_such_fn is not supported by gradcli" in r.stdout + r.stderr
    run = subprocess.run([sys.executable, "-m", "gradcli", "run", "prog.grad"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "torch.no_such_fn is not supported by gradcli" in run.stderr


def test_names_gradcli_has_are_not_reported():
    from gradcli.lang.check import check_source

    names = [n for n in sorted(gtorch.__all__) if callable(getattr(gtorch, n))][:200]
    source = "import torch\n" + "".join(f"f{i} = torch.{n}\n" for i, n in enumerate(names))
    assert [e.render() for e in check_source(source, "p.grad")] == []


def test_every_spelling_of_a_torch_module_is_followed(tmp_path):
    r = check(tmp_path, "import torch as t\nfrom torch import nn\n"
                        "from torch.nn import functional as Fn\nimport torch.special as sp\n"
                        "a = t.nope1(1)\nb = nn.functional.nope2(a)\nc = Fn.nope3(a)\n"
                        "d = t.nn.functional.nope4(a)\ne = nn.init.nope5\n"
                        "def inner():\n    return sp.nope6(t.linalg.nope7(1))\n"
                        "from torch.nn.functional import nope8\n")
    assert r.returncode == 2
    found = [line.split(": NotSupported: ")[0].split(": ForbiddenError: ")[0]
             for line in r.stderr.splitlines() if line.startswith("prog.grad:")]
    assert found == ["prog.grad:5:5", "prog.grad:6:5", "prog.grad:7:5", "prog.grad:8:5",
                     "prog.grad:9:5", "prog.grad:11:12", "prog.grad:11:21", "prog.grad:12:33"]
    for name in ("torch.nope1", "torch.nn.functional.nope2", "torch.nn.functional.nope3",
                 "torch.nn.functional.nope4", "torch.nn.init.nope5", "torch.special.nope6",
                 "torch.linalg.nope7", "torch.nn.functional.nope8"):
        assert f"{name} is not supported by gradcli" in r.stderr


def test_the_helpers_a_file_imports_are_checked_too(tmp_path):
    (tmp_path / "helpers.grad").write_text(
        "import torch\nfrom more import g\ndef f(x):\n    return torch.nope_h(x)\n")
    (tmp_path / "more.grad").write_text(
        "import torch.nn.functional as F\ndef g(x):\n    return F.nope_m(x)\n")
    r = check(tmp_path, "from helpers import f\nimport torch\nprint(torch.nope_p(1))\n")
    assert r.returncode == 2
    heads = [line for line in r.stderr.splitlines() if ": NotSupported: " in line]
    assert heads == [
        "prog.grad:3:7: NotSupported: torch.nope_p is not supported by gradcli",
        "helpers.grad:4:12: NotSupported: torch.nope_h is not supported by gradcli",
        "more.grad:3:12: NotSupported: torch.nn.functional.nope_m is not supported by gradcli"]
    assert "    4 |     return torch.nope_h(x)" in r.stderr  # the helper's own line


def test_names_under_a_torch_module_gradcli_lacks_are_listed(tmp_path):
    r = check(tmp_path, "import torch\nx = torch.ones(4)\ny = torch.fft.nope_rfft(x)\n")
    assert r.returncode == 2
    assert "prog.grad:3:5: NotSupported: torch.fft.nope_rfft is not supported by gradcli" in r.stderr


def test_a_folder_is_every_grad_file_below_it(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / ".cache").mkdir()
    (tmp_path / "empty").mkdir()
    (tmp_path / "helpers.grad").write_text("import torch\ndef f(x):\n    return x * 2\n")
    (tmp_path / "sub" / "test_a.grad").write_text("import torch\ntorch.no_such_fn(1)\n")
    (tmp_path / ".cache" / "test_b.grad").write_text("import os\n")  # skipped as pytest skips it
    r = subprocess.run([sys.executable, "-m", "gradcli", "check", "."], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "./helpers.grad: ok" in r.stdout
    assert "sub/test_a.grad:2:1: NotSupported: torch.no_such_fn" in r.stderr
    assert "test_b" not in r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "gradcli", "check", "empty"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "empty: no .grad files below it" in r.stderr
