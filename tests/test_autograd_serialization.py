"""torch.save / torch.load: PyTorch's zip format both ways (a file gradcli writes loads in
PyTorch and the reverse), the weights-only refusal, saved-tensor hooks that park saved
tensors in files, and a .grad program reaching neither function by any spelling."""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
import uuid

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _objects(t):
    return {"view": t.arange(6.).reshape(2, 3)[:, 1:], "param": t.nn.Parameter(t.ones(2)),
            "long": t.arange(3), "bool": t.tensor([True, False]), "dtype": t.float64,
            "size": t.Size([2, 3]), "empty": t.ones(0, 3), "scalar": t.tensor(2.5),
            "double": t.tensor([[1.5, -2.0]], dtype=t.float64), "int": t.tensor([7], dtype=t.int32),
            "plain": [1, "x", (2.0, None)], "nonleaf": t.ones(2, requires_grad=True) * 3}


def _describe(obj):
    if hasattr(obj, "tolist") and hasattr(obj, "requires_grad"):
        return (type(obj).__name__, str(obj.dtype), tuple(obj.shape), obj.tolist(),
                obj.requires_grad, obj.grad_fn is None)
    if isinstance(obj, dict):
        return {k: _describe(v) for k, v in obj.items()}
    return repr(obj)


@pytest.mark.parametrize("writer,reader", [(gt, torch), (torch, gt), (gt, gt)])
def test_files_travel_between_gradcli_and_pytorch(writer, reader):
    buf = io.BytesIO()
    writer.save(_objects(writer), buf)
    buf.seek(0)
    assert _describe(reader.load(buf)) == _describe(torch.load(io.BytesIO(_saved(torch))))


def _saved(t) -> bytes:
    buf = io.BytesIO()
    t.save(_objects(t), buf)
    return buf.getvalue()


def test_a_path_works_like_a_file_object(tmp_path):
    path = tmp_path / "weights.pt"
    gt.save({"w": gt.ones(2, 2)}, path)
    assert torch.load(path)["w"].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    torch.save({"w": torch.zeros(3)}, str(path))
    assert gt.load(str(path))["w"].tolist() == [0.0, 0.0, 0.0]


def test_a_module_state_dict_round_trips():
    gt.manual_seed(0)
    net = gt.nn.Linear(3, 2)
    buf = io.BytesIO()
    gt.save(net.state_dict(), buf)
    buf.seek(0)
    theirs = torch.nn.Linear(3, 2)
    theirs.load_state_dict(torch.load(buf))
    assert theirs.weight.tolist() == net.weight.tolist()
    assert theirs.bias.tolist() == net.bias.tolist()


class Unlisted:
    pass


def test_weights_only_refuses_other_globals_with_pytorchs_message():
    buf = io.BytesIO()
    torch.save(Unlisted(), buf)

    def message(lib):
        try:
            lib.load(io.BytesIO(buf.getvalue()))
        except pickle.UnpicklingError as e:
            return str(e)
        return "loaded"

    assert message(gt) == message(torch)
    assert type(gt.load(io.BytesIO(buf.getvalue()), weights_only=False)).__name__ == "Unlisted"


def test_not_a_zip_file_says_so():
    with pytest.raises(RuntimeError, match="zip format"):
        gt.load(io.BytesIO(b"not a checkpoint"))


def test_saved_tensor_hooks_can_park_saved_tensors_in_files(tmp_path):
    def run(t):
        def pack(x):
            name = os.path.join(tmp_path, str(uuid.uuid4()))
            t.save(x, name)
            return name

        def unpack(name):
            return t.load(name)

        with t.autograd.graph.saved_tensors_hooks(pack, unpack):
            a = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
            y = a * a
            saved = y.grad_fn._saved_self.tolist()
            y.sum().backward()
        return saved, a.grad.tolist()

    assert run(gt) == run(torch)


@pytest.mark.parametrize("source", [
    "print(save)",
    "print(load)",
    "from torch import save",
    "from torch import load",
    "import torch\ntorch.save(torch.ones(1), 'x.pt')",
    "import torch\ntorch.load('x.pt')",
    "import torch\nf = getattr(torch, 'save')\nf(torch.ones(1), 'x.pt')",
    "import torch as t\nt.load('x.pt')",
])
def test_a_program_can_neither_save_nor_load(tmp_path, source):
    prog = tmp_path / "io.grad"
    prog.write_text(source + "\nprint('reached the end')\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode != 0
    assert "reached the end" not in proc.stdout
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "x.pt").exists()
