"""Inference tensors (made inside torch.inference_mode()) against PyTorch 2.13: which
tensors are ones (is_inference, torch.is_inference), and the errors a program meets
using one outside the mode (in-place writes, requires_grad, _version, saving one for
backward), with the values PyTorch leaves behind (its kernel has run when it refuses)."""

from __future__ import annotations

import pytest

import gradcli.torch as gtorch
from tests.process_helpers import assert_runs_as_python_does

torch = pytest.importorskip("torch")


def _outcome(module, body: str):
    """What `body` (statements over `torch`, `t` an inference tensor of [1, 2, 3], `n` a
    normal one, `w` a leaf requiring grad; `r =` its result) gives: the result's repr or
    the error's type and text, and `t` afterwards."""
    scope = {"torch": module}
    exec("with torch.inference_mode():\n    t = torch.tensor([1., 2., 3.])\n"  # noqa: S102
         "n = torch.tensor([2., 3., 4.])\nw = torch.ones(3, requires_grad=True)\n", scope)
    try:
        exec(body, scope)  # noqa: S102 - the test's own statements
        got = repr(scope.get("r"))
    except Exception as err:  # noqa: BLE001 - compared with PyTorch's
        got = f"{type(err).__name__}: {err}"
    return got, repr(scope["t"])


CASES = [
    # which tensors are inference tensors
    "r = (t.is_inference(), torch.is_inference(t), n.is_inference(), torch.is_inference(n))",
    "r = (t[1:].is_inference(), t[0].is_inference(), t.view(3, 1).is_inference(), "
    "t.detach().is_inference(), t.data.is_inference())",
    "r = (t.clone().is_inference(), (t * 2).is_inference(), (t + n).is_inference(), "
    "torch.ones_like(t).is_inference())",
    "with torch.inference_mode():\n    r = (n[1:].is_inference(), (n * 2).is_inference(), "
    "torch.zeros(2).is_inference(), n.detach().is_inference())",
    "with torch.inference_mode():\n    with torch.inference_mode(False):\n"
    "        r = (torch.zeros(2).is_inference(), (n * 2).is_inference(), (t * 2).is_inference())",
    "with torch.no_grad():\n    r = torch.zeros(2).is_inference()",
    "@torch.inference_mode()\ndef f(x):\n    return x * 2\nr = (f(n).is_inference(), f(n).requires_grad)",
    "with torch.inference_mode():\n    y = w * 2\nr = (y.is_inference(), y.requires_grad, y.grad_fn)",
    "r = (t.requires_grad, t.grad, t.is_leaf, t.numpy().tolist())",
    # in-place writes outside the mode (the values are written, then refused)
    "r = t.add_(1)",
    "r = t.mul_(n)",
    "r = t.zero_()",
    "r = t.fill_(7)",
    "t[0] = 5.",
    "r = t.copy_(n)",
    "r = torch.add(n, n, out=t)",
    "r = t[1:].add_(1)",
    "r = t.clamp_(max=2)",
    "r = t.exp_()",
    "r = t.unsqueeze_(0)",
    "r = n.copy_(t)",
    "with torch.inference_mode():\n    r = t.add_(1)",
    "with torch.inference_mode():\n    t[0] = 9.\n    r = t.mul_(2)",
    # requires_grad and the version counter
    "r = t.requires_grad_()",
    "t.requires_grad = True",
    "r = t.requires_grad_(False)",
    "t.requires_grad = False\nr = t.requires_grad",
    "r = t._version",
    "r = t[0]._version",
    "with torch.inference_mode():\n    r = t._version",
    "with torch.inference_mode():\n    r = t.requires_grad_()",
    "r = t.clone().requires_grad_()",
    "r = n._version",
    "r = torch.nn.Parameter(t)",
    "r = torch.nn.Parameter(t, requires_grad=False).is_inference()",
    "with torch.inference_mode():\n    r = torch.nn.Parameter(t).is_inference()",
    # what keeps the mark (views, same-dtype conversions) and what does not (copies)
    "r = (torch.as_tensor(t).is_inference(), torch.tensor(t.tolist()).is_inference(), "
    "t.to(torch.float64).is_inference(), t.to(torch.float32).is_inference(), "
    "t.float().is_inference(), t.contiguous().is_inference(), t.expand(2, 3).is_inference())",
    "r = ([x.is_inference() for x in t.unbind()], [x.is_inference() for x in t.split(2)])",
    "r = t.split(2)[0].add_(1)",
    "r = t.detach_().is_inference()",
    "r = t.retain_grad()",
    "r = t.sum().backward()",
    "with torch.inference_mode():\n    r = (torch.zeros_like(t).is_inference(), "
    "t.new_ones(2).is_inference(), torch.randn(2).is_inference())",
    "@torch.inference_mode()\ndef g():\n    yield torch.ones(1)\n    yield torch.ones(1)\n"
    "r = [x.is_inference() for x in g()] + [torch.ones(1).is_inference()]",
    # saved for backward by a recorded op
    "r = w * t",
    "r = t * w",
    "r = w + t",
    "r = (w * 2) * t",
    "r = torch.exp(t) * w",
    "r = t.sum() * w",
    "r = w @ t",
    "r = torch.nn.functional.linear(t, w.reshape(1, 3))",
    "r = torch.nn.functional.mse_loss(w, t)",
    "r = torch.nn.functional.l1_loss(w, t)",
    "r = w * t.clone()",
    "with torch.no_grad():\n    r = w * t",
    "with torch.inference_mode():\n    r = w * t",
    "r = w * t[:2]",  # (PyTorch saves before its kernel checks the shapes)
    "r = w[:2] * t",
    "r = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())(t)",
    "r = torch.nn.LayerNorm(3)(t)",
    "r = torch.nn.functional.conv1d(t.reshape(1, 1, 3), w.reshape(1, 1, 3))",
    "class Sq(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, y):\n"
    "        ctx.save_for_backward(x, y)\n        return x * y\n    @staticmethod\n"
    "    def backward(ctx, g):\n        x, y = ctx.saved_tensors\n        return g * y, g * x\n"
    "r = (Sq.apply(n, t), Sq.apply(t.clone(), w))\nr = Sq.apply(w, t)",
    "import copy\nr = (copy.deepcopy(t).is_inference(), copy.copy(t).is_inference(), "
    "t.cpu().is_inference(), t.to('cpu').is_inference(), (t == t).is_inference(), "
    "t.sum().is_inference(), [x.is_inference() for x in t.sort()])",
    "import io\nb = io.BytesIO()\ntorch.save(t, b)\nb.seek(0)\nr = torch.load(b).is_inference()",
    "with torch.no_grad():\n    r = t.add_(1)",
    # the function form
    "r = torch.is_inference(5)",
    "r = torch.is_inference()",
    "r = torch.is_inference(input=t)",
    "r = torch.is_inference(t, 1)",
    "r = torch.is_inference(t, foo=1)",
    "r = torch.is_inference(foo=1)",
    "r = t.is_inference(*[1])",
    "r = t.is_inference(*[1, 2])",
    "r = t.is_inference(**{'foo': 1})",
]


@pytest.mark.parametrize("body", CASES)
def test_as_pytorch(body):
    assert _outcome(gtorch, body) == _outcome(torch, body)


def test_tutorial_predictions_after_training():
    """The workflow notebook's pattern: train, predict inside inference_mode, then compare
    and plot the predictions outside it (no graph, so nothing is refused)."""
    body = ("model = torch.nn.Linear(1, 1)\n"
            "with torch.no_grad():\n    model.weight.fill_(0.5)\n    model.bias.fill_(0.25)\n"
            "x = torch.arange(0., 4.).unsqueeze(1)\n"
            "with torch.inference_mode():\n    p = model(x)\n"
            "loss = torch.nn.functional.l1_loss(p, x)\n"
            "r = (p.is_inference(), p.requires_grad, loss, loss.is_inference(), "
            "p.numpy().ravel().tolist())")
    assert _outcome(gtorch, body) == _outcome(torch, body)


def test_training_on_predictions_is_refused():
    """Feeding the predictions made in inference mode into a loss that needs the model's
    gradient: the model's ops save them, which PyTorch refuses."""
    body = ("model = torch.nn.Linear(1, 1)\nx = torch.ones(2, 1)\n"
            "with torch.inference_mode():\n    p = model(x)\n"
            "r = model(p)")
    got = _outcome(gtorch, body)
    assert got == _outcome(torch, body)
    assert got[0].startswith("RuntimeError: Inference tensors cannot be saved for backward.")


def test_threads_keep_their_own_mode():
    """inference_mode is per thread: a tensor made meanwhile in another thread is normal."""
    import threading

    made = {}
    inside, done = threading.Event(), threading.Event()

    def other():
        inside.wait()
        made["other"] = gtorch.ones(2)
        done.set()

    worker = threading.Thread(target=other)
    worker.start()
    with gtorch.inference_mode():
        inside.set()
        done.wait(timeout=30)
        made["here"] = gtorch.ones(2)
    worker.join()
    assert made["here"].is_inference() is True
    assert made["other"].is_inference() is False
    assert gtorch.ones(2).is_inference() is False


def test_is_inference_is_a_plain_bool_method():
    """What a .grad program reaches: a method returning a bool, nothing else."""
    t = gtorch.ones(2)
    assert t.is_inference() is False
    assert type(gtorch.Tensor.__dict__["is_inference"]).__name__ == "function"


def test_through_the_cli(tmp_path):
    program = ("import torch\n"
               "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
               "with torch.inference_mode():\n"
               "    t = torch.tensor([3.0, 4.0]) * 2\n"
               "print(t.is_inference(), t[1:].is_inference(), torch.is_inference(t), "
               "t.clone().is_inference(), w.is_inference())\n"
               "for f in (lambda: t.add_(1), lambda: t.requires_grad_(), lambda: t._version,\n"
               "          lambda: w * t):\n"
               "    try:\n"
               "        f()\n"
               "    except RuntimeError as e:\n"
               "        print(e)\n"
               "print(t, w + t)\n")
    assert_runs_as_python_does(tmp_path, program)


def test_cli_refusal_is_one_message(tmp_path):
    """An uncaught refusal in a .grad program: PyTorch's text, no Python traceback."""
    import subprocess
    import sys

    (tmp_path / "p.grad").write_text("import torch\nwith torch.inference_mode():\n"
                                     "    t = torch.ones(2)\nt.add_(1)\n")
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", "p.grad"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode != 0
    assert "Inplace update to inference tensor outside InferenceMode is not allowed." in got.stderr
    assert "Traceback" not in got.stderr


def test_the_thread_count_comes_back_to_zero():
    """make() asks the thread's mode only while some thread is inside inference_mode: the
    count must come back to 0 after nesting, inference_mode(False) inside and an error."""
    from gradcli.engine.grad_mode import INFERENCE_ACTIVE

    assert INFERENCE_ACTIVE[0] == 0
    with pytest.raises(ZeroDivisionError):
        with gtorch.inference_mode():
            assert INFERENCE_ACTIVE[0] == 1
            with gtorch.inference_mode(), gtorch.inference_mode(False):
                assert INFERENCE_ACTIVE[0] == 0
                assert gtorch.ones(1).is_inference() is False
            with gtorch.inference_mode(mode=True):
                assert INFERENCE_ACTIVE[0] == 1
            1 / 0  # noqa: B018
    assert INFERENCE_ACTIVE[0] == 0
    assert gtorch.ones(1).is_inference() is False
