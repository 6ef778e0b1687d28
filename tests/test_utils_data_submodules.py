"""torch.utils.data.dataset / .dataloader: the submodules tutorials import by name
(`from torch.utils.data import dataset`), same classes as the package, under `gradcli run`
and in plain Python, printing as PyTorch prints them."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

PROGRAM = (
    "import torch\n"
    "from torch.utils.data import dataset, dataloader\n"
    "from torch.utils.data.dataset import TensorDataset\n"
    "from torch.utils.data.dataloader import DataLoader, default_collate\n"
    "print(dataset.Dataset, dataset.TensorDataset, dataloader.DataLoader)\n"
    "print(TensorDataset is torch.utils.data.TensorDataset)\n"
    "ds = dataset.TensorDataset(torch.arange(6.0).view(3, 2), torch.tensor([0, 1, 0]))\n"
    "print(len(ds), ds[1])\n"
    "for xb, yb in DataLoader(ds, batch_size=2):\n"
    "    print(xb, yb)\n"
    "print(default_collate([torch.ones(2), torch.zeros(2)]))\n"
    "print(isinstance(ds, dataset.Dataset))\n"
)


def _out(args, stdin_code=None):
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, input=stdin_code)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_submodules_match_pytorch_in_both_modes(tmp_path):
    expected = _out([sys.executable, "-c", PROGRAM])
    prog = tmp_path / "subs.grad"
    prog.write_text(PROGRAM)
    assert _out([sys.executable, "-m", "gradcli", "run", str(prog)]) == expected
    facade = ("import sys, gradcli.torch, gradcli.torch.utils.data as d\n"
              "sys.modules['torch'] = gradcli.torch\n"
              "sys.modules['torch.utils'] = gradcli.torch.utils\n"
              "sys.modules['torch.utils.data'] = d\n"
              "sys.modules['torch.utils.data.dataset'] = d.dataset\n"
              "sys.modules['torch.utils.data.dataloader'] = d.dataloader\n")
    assert _out([sys.executable, "-c", facade + PROGRAM]) == expected


@pytest.mark.parametrize("expr", ["dataset.annotations", "dataset.ConcatDataset.__init__.__globals__",
                                  "getattr(dataloader, 'Data' + 'Loader').__dict__",
                                  "dataloader.math"])
def test_submodule_internals_refused(expr, tmp_path):
    prog = tmp_path / "attack.grad"
    prog.write_text(f"import torch\nfrom torch.utils.data import dataset, dataloader\n"
                    f"print({expr})\n")
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and done.stdout == ""
    assert "Traceback" not in done.stderr
