"""The lines tutorials open with, on a machine without GPUs, against a CPU-only PyTorch:
device queries and moves, keyword forms of the creation functions, the version string,
the profiler; and the views naming module parameters (`model.0.weight`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import gradcli.torch as G

torch = pytest.importorskip("torch")

CASES = [
    "T.cuda.is_available()", "T.backends.mps.is_available()", "T.cuda.device_count()",
    "T.device('cpu')", "T.device('cpu', 0)", "T.device('cuda:1')", "str(T.device('cuda:1'))",
    "T.device('cuda').index", "T.device('gpu')", "T.ones(2).to(T.device('cpu'))",
    "T.ones(2).to('cpu', T.float64)", "T.ones(2).to(device='cpu', dtype=T.float64)",
    "T.ones(2).cpu()", "T.ones(2).to('cuda')", "T.ones(2).to('mps')", "T.ones(2).to(0)",
    "T.ones(2).cuda()", "T.zeros(2, device='cuda')", "T.tensor([1.0], device='cuda')",
    "T.tensor([1.0], device=T.device('cpu'))", "T.randn(size=()).shape",
    "T.randn(size=(2, 3)).shape", "T.rand(size=(2,)).shape", "T.zeros(size=(2,))",
    "T.ones(size=(1, 2))", "T.empty(size=(2,)).shape", "T.zeros(2, size=(2,))",
    "T.get_default_device()", "T.set_default_device('cpu')",
    "T.__version__ >= '2.0'", "T.__version__ >= (2, 0)", "T.__version__ < '2.9'",
    "T.ones(1).device", "T.nn.Linear(2, 1).to('cpu').weight.shape",
    "T.nn.Linear(2, 1).cuda()",
]


def _run(expr, lib):
    try:
        return ("ok", repr(eval(expr, {"T": lib})))  # noqa: S307 - test expressions above
    except Exception as e:  # noqa: BLE001 - compare what each library raises
        return (type(e).__name__, str(e))
    finally:
        # (a default device set here must not outlive the case: PyTorch's is a global
        # torch-function mode, whose Python frames then take over warning locations
        # in every later test of the process)
        lib.set_default_device(None)


@pytest.mark.parametrize("expr", CASES)
def test_idiom_matches_cpu_only_pytorch(expr):
    assert _run(expr, G) == _run(expr, torch)


def test_profiler_records_and_the_block_still_works():
    with G.autograd.profiler.profile() as prof:
        x = G.ones(2, requires_grad=True)
        (x * 2).sum().backward()
    table = prof.key_averages().table(sort_by="self_cpu_time_total")
    assert "aten::mul" in table and table.splitlines()[-1].startswith("Self CPU time total:")
    assert x.grad.tolist() == [2.0, 2.0]


def test_views_name_module_parameters(tmp_path):
    prog = tmp_path / "views.grad"
    prog.write_text(
        "import torch\n"
        "model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh(), "
        "torch.nn.Linear(2, 1))\n"
        "loss = model(torch.ones(4, 3)).sum()\n"
        "explain(loss)\n"
        "graph(loss)\n"
        "loss.backward()\n"
        "grads()\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                          capture_output=True, text=True, timeout=120,
                          env={"NO_COLOR": "1", "PATH": "", "COLUMNS": "120"})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for name in ("model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"):
        assert out.count(name) >= 3, (name, out)
