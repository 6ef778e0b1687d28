"""The REPL's views over the newer breadth, in a real pseudo-terminal (pexpect): `:graph`,
`:grads`, `:explain` and `:show` name module parameters by their qualified names and show
custom Function and named backward nodes; errors raised inside nn modules, checkpoint,
torch.func and custom Functions are reported with place, caret and PyTorch's text, and
the session survives each one. (The terminal driver is tests/test_repl.py's.)
"""

from __future__ import annotations

import os
import re
import sys

import pytest

pexpect = pytest.importorskip("pexpect")
from test_repl import COLS, REPO, ROWS, Term, deadline  # noqa: E402

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


@pytest.fixture
def term(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GRADCLI_", "XDG_", "PROMPT_TOOLKIT_"))}
    env.update(TERM="xterm", NO_COLOR="1", COLUMNS=str(COLS), LINES=str(ROWS),
               HOME=str(tmp_path), GRADCLI_HISTORY=str(tmp_path / "history"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO),
                                                        os.environ.get("PYTHONPATH")])))
    t = Term(["repl"], env, tmp_path)
    t.ready()
    yield t
    if t.child.isalive():
        t.child.terminate(force=True)


def paste(t: Term, text: str) -> str:
    """Paste a block (bracketed paste, as a terminal does) and run it."""
    return t.run(PASTE_START + text + PASTE_END)


def alive(t: Term) -> None:
    assert re.search(r"^42$", t.run("6 * 7"), re.M)


@deadline(240)
def test_meta_commands_name_module_parameters_and_custom_nodes(term):
    t = term
    paste(t, "import torch.nn as nn\ntorch.manual_seed(0)\n"
             "model = nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1))\n"
             "loss = model(torch.ones(4, 3)).pow(2).mean()")
    out = t.run(":graph loss")
    assert re.search(r"AccumulateGrad model\.0\.weight \[2, 3\]", out), out
    assert "AccumulateGrad model.2.bias [1]" in out and "AddmmBackward0 [4, 1]" in out
    out = t.run(":explain loss")
    assert "Step 4  AccumulateGrad model.2.bias [1]" in out, out
    assert "model.0.weight.grad += incoming gradient" in out
    t.run("loss.backward()")
    out = t.run(":grads")
    assert re.search(r"^ +model\.0\.bias +\[2\]", out, re.M), out
    out = t.run(":show model[0].weight")
    assert re.search(r"name +model\.0\.weight", out), out
    out = t.run(":graph loss")  # after backward: the freed graph still has its shapes
    assert "TanhBackward0 [4, 2]" in out and " ?" not in out, out
    paste(t, "class Cube(torch.autograd.Function):\n"
             "    @staticmethod\n"
             "    def forward(ctx, a):\n"
             "        ctx.save_for_backward(a)\n"
             "        return a ** 3\n"
             "    @staticmethod\n"
             "    def backward(ctx, g):\n"
             "        a, = ctx.saved_tensors\n"
             "        return 3 * a * a * g\n")
    t.run("w = torch.tensor([1., 2.], requires_grad=True)")
    t.run("c = Cube.apply(w).sum()")
    out = t.run(":graph c")
    assert "└── CubeBackward [2]" in out and "AccumulateGrad w [2]" in out, out
    out = t.run(":explain c")
    assert "input 0 → CubeBackward (step 2)" in out, out
    assert "Cube.backward(ctx, grad_outputs...)" in out
    t.run("b = w.bfloat16() * 3")
    out = t.run(":show b")
    assert "torch.bfloat16" in out and "[3., 6.]" in out
    out = t.run("b")
    assert "tensor([3., 6.], dtype=torch.bfloat16, grad_fn=<MulBackward0>)" in out
    t.run("x4 = torch.ones(1, 1, 3, 3, requires_grad=True)")
    t.run("gx, = torch.autograd.grad(torch.nn.functional.conv2d(x4, torch.ones(1, 1, 2, 2))"
          ".pow(2).sum(), x4, create_graph=True)")
    out = t.run(":graph gx")
    assert "ConvolutionBackwardBackward0 [1, 1, 3, 3] (gx)" in out, out
    out = t.run(":explain gx.sum()")
    assert "ConvolutionBackwardBackward0 output 0 (gx, step 2)" in out, out
    assert t.exit_status() == 0


#: (program, the first line of its report, in the REPL's <input-N> file): pasted block by
#: block (a blank line ends a class, as at Python's prompt)
REPL_ERRORS = [
    ("conv = torch.nn.Conv2d(3, 4, 3)\nconv(torch.ones(1, 2, 5, 5))",
     r":2:1: RuntimeError: Given groups=1, weight of size \[4, 3, 3, 3\], expected "
     r"input\[1, 2, 5, 5\] to have 3 channels, but got 2 channels instead"),
    ("class Net(torch.nn.Module):\n"
     "    def forward(self, x):\n"
     "        return x.view(7, -1)\n"
     "\n"
     "Net()(torch.ones(2, 4))",
     r":3:16: RuntimeError: shape '\[7, -1\]' is invalid for input of size 8"),
    ("from torch.utils.checkpoint import checkpoint\n"
     "checkpoint(lambda a: a @ torch.ones(5), torch.ones(3, requires_grad=True), "
     "use_reentrant=False)",
     r":2:22: RuntimeError: inconsistent tensor size, expected tensor \[3\] and src \[5\]"),
    ("torch.func.grad(lambda t: t * 2)(torch.ones(3))",
     r":1:1: RuntimeError: grad_and_value\(f\)\(\*args\): Expected f\(\*args\) to return a "
     r"scalar Tensor, got tensor with 1 dims"),
    ("class Bad(torch.autograd.Function):\n"
     "    @staticmethod\n"
     "    def forward(ctx, x):\n"
     "        return x * 2\n"
     "    @staticmethod\n"
     "    def backward(ctx, g):\n"
     "        return g, g\n"
     "\n"
     "Bad.apply(torch.ones(2, requires_grad=True)).sum().backward()",
     r":1:1: RuntimeError: function BadBackward returned an incorrect number of gradients "
     r"\(expected 1, got 2\)"),
]


@deadline(240)
def test_errors_inside_layers_checkpoint_func_and_custom_functions_keep_the_session(term):
    t = term
    t.run("kept = torch.ones(2)")
    for program, first_line in REPL_ERRORS:
        *blocks, last = program.split("\n\n")
        for block in blocks:
            assert "Error" not in paste(t, block + "\n")
        out = paste(t, last)
        assert re.search(r"<input-\d+>" + first_line, out), out
        assert re.search(r"^ +\d+ \| ", out, re.M) and re.search(r"^ +\| *\^+", out, re.M), out
        assert "Traceback" not in out and "internal error" not in out, out
        alive(t)
    assert "tensor([1., 1.])" in t.run("kept")
    assert t.exit_status() == 0


def test_completion_walks_into_modules_without_running_code():
    """`net.fc1.` completes the Linear's names, `net.fc1.weight.gr` a tensor's; a
    parametrized weight (a property that runs the parametrization) is not evaluated."""
    from gradcli.cli.repl_core import completions
    from gradcli.lang.session import Session

    session = Session()
    session.run("import torch.nn as nn\n"
                "import torch.nn.utils.parametrize as P\n"
                "runs = []\n"
                "class Sym(nn.Module):\n"
                "    def forward(self, X):\n"
                "        runs.append(1)\n"
                "        return X.triu()\n"
                "class Net(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(2, 3)\n"
                "        self.scale = 2.0\n"
                "    def forward(self, x):\n"
                "        return self.fc1(x)\n"
                "net = Net()\n"
                "lin = nn.Linear(3, 3)\n"
                "P.register_parametrization(lin, 'weight', Sym())\n", "<test>")
    ran = len(session.globals["runs"])
    assert completions(session, "net.fc") == ("fc", ["fc1"])
    prefix, names = completions(session, "net.")
    assert {"fc1", "scale", "forward", "parameters", "named_parameters"} <= set(names)
    assert not any(n.startswith("_") for n in names)
    _, names = completions(session, "net.fc1.")
    assert {"weight", "bias", "in_features", "forward"} <= set(names)
    assert completions(session, "net.fc1.weight.gr")[1][:2] == ["grad", "grad_fn"]
    assert completions(session, "lin.parametrizations.weight.orig") == ("orig", ["original"])
    assert completions(session, "lin.weight.") == ("", [])
    assert len(session.globals["runs"]) == ran  # nothing was evaluated
