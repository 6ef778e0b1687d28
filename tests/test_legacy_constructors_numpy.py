"""The legacy constructors (torch.LongTensor(...), FloatTensor, ...) given a numpy array
take its values, as PyTorch does (seq2seq tutorials build index batches in numpy arrays
and wrap them with torch.LongTensor)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import gradcli.torch as G

torch = pytest.importorskip("torch")

ARRAYS = [np.arange(6, dtype=np.int32).reshape(2, 3), np.array([1.5, -2.5, 0.25]),
          np.zeros((0, 2)), np.array([[True, False]]), np.arange(4, dtype=np.int64)]
KINDS = ["LongTensor", "FloatTensor", "DoubleTensor", "IntTensor", "BoolTensor"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("index", range(len(ARRAYS)))
def test_legacy_constructor_of_numpy_array_matches_pytorch(kind, index):
    arr = ARRAYS[index]
    ours = getattr(G, kind)(arr)
    ref = getattr(torch, kind)(arr)
    assert repr(ours) == repr(ref)
    assert str(ours.dtype) == str(ref.dtype)


def test_legacy_constructor_of_numpy_array_under_gradcli_run(tmp_path):
    code = ("import torch\nimport numpy as np\n"
            "ids = np.zeros((2, 4), dtype=np.int32)\n"
            "ids[0, :3] = [3, 1, 2]\n"
            "t = torch.LongTensor(ids)\n"
            "print(t, t.dtype)\n"
            "print(torch.FloatTensor(np.array([0.5, 1.5])))\n")
    prog = tmp_path / "legacy.grad"
    prog.write_text(code)
    ours = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                          capture_output=True, text=True, timeout=120)
    ref = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == ref.stdout
