"""The REPL (a real pseudo-terminal, tests/test_repl.py's driver) on the newer breadth:
complex and bfloat16 leaves, a custom autograd Function pasted at the prompt (its second
`@staticmethod` used to end the class block: a decorator line now continues it, as at
Python's prompt), an nn.Module's parameters in :grads, and :explain / :graph."""

from __future__ import annotations

import pytest
from test_repl import deadline, env, spawn  # noqa: F401  (fixtures used by name)

torch = pytest.importorskip("torch")


@deadline(180)
def test_complex_bfloat16_and_module_at_the_prompt(spawn):  # noqa: F811
    t = spawn("repl")
    t.run("z = torch.tensor([1+1j, 2-1j], requires_grad=True)")
    t.run("c = (z*z.sin()).abs().sum()")
    t.run("c.backward()")
    z = torch.tensor([1 + 1j, 2 - 1j], requires_grad=True)
    (z * z.sin()).abs().sum().backward()
    assert repr(z.grad) in t.run("z.grad")
    t.run("h = torch.tensor([0.5, 1.5], dtype=torch.bfloat16, requires_grad=True)")
    t.run("hb = (h.exp() * 3).sum()")
    h = torch.tensor([0.5, 1.5], dtype=torch.bfloat16, requires_grad=True)
    hb = (h.exp() * 3).sum()
    assert repr(hb) in t.run("hb")
    t.run("torch.manual_seed(0)")
    t.run("m = nn.Linear(2, 1)")
    t.run("m(torch.ones(1, 2)).sum().backward()")
    grads = t.run(":grads")
    for piece in ("z", "[2]", "h", "m.weight", "m.bias", "[1, 2]"):
        assert piece in grads, grads
    explained = t.run(":explain hb")
    assert "ExpBackward0" in explained and "AccumulateGrad h" in explained, explained
    graphed = t.run(":graph c")
    for piece in ("SumBackward0", "AbsBackward0", "MulBackward0", "SinBackward0", "AccumulateGrad z"):
        assert piece in graphed, graphed
    assert t.exit_status() == 0


@deadline(180)
def test_custom_function_typed_at_the_prompt(spawn):  # noqa: F811
    t = spawn("repl")
    # pasted in one write, as a person pastes it (explicit indentation, a blank line ends it)
    block = ("class Cube(torch.autograd.Function):\n"
             "    @staticmethod\n"
             "    def forward(ctx, a):\n"
             "        ctx.save_for_backward(a)\n"
             "        return a ** 3\n"
             "    @staticmethod\n"
             "    def backward(ctx, g):\n"
             "        (a,) = ctx.saved_tensors\n"
             "        return 3 * a * a * g\n\n")
    t.send(block.replace("\n", "\r"))
    t.ready()
    assert "Error" not in t.text, t.text
    t.run("w = torch.tensor([1.0, -2.0], requires_grad=True)")
    assert "tensor([ 1., -8.], grad_fn=<CubeBackward>)" in t.run("Cube.apply(w)")
    t.run("y = Cube.apply(w).sum()")
    t.run("y.backward()")
    assert "tensor([ 3., 12.])" in t.run("w.grad")
    assert t.exit_status() == 0
