"""The views and commands over the engine's newer breadth (issue #23 "Views"; SPEC 2-3).

Programs that exercise nn layers (a CNN with BatchNorm, an LSTM, a Transformer encoder),
a parametrized Linear, checkpoint, custom and named backward nodes, create_graph,
bfloat16/autocast, torch.func and distributions go through every view and command:
the view builtins inside each program (graph, explain, grads, show, export), `gradcli run
--graph --grads --json`, `gradcli check`, `gradcli test` (each program asserts what it
computes) and the conformance corpus's nn/autograd programs. To stay fast, one process
runs every program of a command (the JSON record keeps each program's own stdout, exit
code and error), and the assertions are parametrized over programs from it.

Anything that prints a Python traceback or an internal error, crashes, hangs (timeouts)
or names something wrongly fails here. The REPL side is tests/test_views_sweep_repl.py;
error reports are tests/test_views_sweep_errors.py.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80"}
TIMEOUT = 300

PROGRAMS = {
    "cnn_batchnorm": """\
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(),
                      nn.Linear(8, 1))
x = torch.randn(2, 1, 4, 4)
out = model(x).sum()
assert out.grad_fn.next_functions[0][0].name() == "AddmmBackward0"
graph(out)
explain(out)
out.backward()
grads()
show(model[0].bias)
""",
    "lstm": """\
import torch
import torch.nn as nn
torch.manual_seed(0)
lstm = nn.LSTM(3, 4, batch_first=True)
x = torch.randn(2, 3, 3)
y, (h, c) = lstm(x)
loss = y.pow(2).mean()
graph(loss)
explain(loss)
loss.backward()
grads()
""",
    "transformer": """\
import torch
import torch.nn as nn
torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=4, nhead=2, dim_feedforward=8, dropout=0.0,
                                   batch_first=True)
encoder = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
del layer
x = torch.randn(1, 3, 4)
loss = encoder(x).sum()
graph(loss)
explain(loss)
loss.backward()
grads()
print(export(loss, "json"))
""",
    "parametrized": """\
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize
torch.manual_seed(0)
class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)
lin = nn.Linear(3, 3)
parametrize.register_parametrization(lin, "weight", Symmetric())
loss = lin(torch.ones(2, 3)).sum()
graph(loss)
explain(loss)
loss.backward()
grads()
""",
    "checkpointed": """\
import torch
from torch.utils.checkpoint import checkpoint
def block(a):
    return (a * a).sin()
x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
y = checkpoint(block, x, use_reentrant=False)
z = y.sum()
graph(z)
explain(z)
y2 = checkpoint(block, x, use_reentrant=True)
z2 = y2.sum()
assert z2.grad_fn.next_functions[0][0].name() == "CheckpointFunctionBackward"
graph(z2)
explain(z2)
z2.backward()
grads()
""",
    "custom_function": """\
import torch
class MyCube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x ** 2
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = MyCube.apply(x)
z = y.sum()
assert y.grad_fn.name() == "MyCubeBackward"
graph(z)
explain(z)
z.backward()
assert x.grad.tolist() == [3.0, 12.0]
grads()
print(export(z, "mermaid"))
print(export(z, "json"))
""",
    "create_graph": """\
import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(1, 1, 4, 4, requires_grad=True)
w = torch.randn(1, 1, 3, 3, requires_grad=True)
gx, = torch.autograd.grad(F.conv2d(x, w).pow(2).sum(), x, create_graph=True)
assert gx.grad_fn.name() == "ConvolutionBackwardBackward0"
s = gx.sum()
graph(s)
explain(s)
s.backward()
grads()
bn = torch.nn.BatchNorm1d(3)
u = torch.randn(4, 3, requires_grad=True)
gu, = torch.autograd.grad(bn(u).pow(3).sum(), u, create_graph=True)
assert gu.grad_fn.name() == "NativeBatchNormBackwardBackward0"
graph(gu)
explain(gu.sum())
""",
    "bfloat16_autocast": """\
import torch
a = torch.tensor([0.1, 1 / 3, 100.7], requires_grad=True)
b = a.bfloat16()
b.retain_grad()
c = (b * b).sum()
show(b)
graph(c)
explain(c)
c.backward()
grads()
show(b)
with torch.autocast("cpu", dtype=torch.bfloat16):
    m = torch.ones(2, 3, requires_grad=True)
    p = m @ torch.ones(3, 2)
assert p.dtype == torch.bfloat16
q = p.float().sum()
graph(q)
explain(q)
show(p)
""",
    "torch_func": """\
import torch
from torch.func import grad, vmap, jacrev
def f(x):
    return (x.sin() * x).sum()
x = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
g = grad(f)(x)
print(vmap(torch.sin)(torch.ones(2, 3)))
print(jacrev(torch.sin)(torch.tensor([0.0, 1.0])))
s = g.sum()
graph(s)
explain(s)
s.backward()
grads()
""",
    "distributions": """\
import torch
from torch.distributions import Normal
torch.manual_seed(0)
mu = torch.tensor([0.0, 1.0], requires_grad=True)
sigma = torch.tensor([1.0, 2.0], requires_grad=True)
d = Normal(mu, sigma)
s = d.rsample()
lp = d.log_prob(s).sum()
graph(lp)
explain(lp)
lp.backward()
grads()
""",
    "attention": """\
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
attn = nn.MultiheadAttention(4, 2, batch_first=True)
q = torch.randn(1, 3, 4, requires_grad=True)
o, w = attn(q, q, q)
loss = o.sum()
explain(loss)
loss.backward()
grads()
a = F.scaled_dot_product_attention(q, q, q).sum()
graph(a)
""",
    "loud_backward": """\
import torch
calls = []
class Loud(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        print("backward ran")
        calls.append(1)
        return g * 2
x = torch.ones(2, requires_grad=True)
y = Loud.apply(x).sum()
print("start")
explain(y)
graph(y)
e = export(y, "dot")
print("explained")
y.backward()
assert x.grad.tolist() == [2.0, 2.0]
""",
    "module_hooks_and_misuse": """\
import torch
import torch.nn as nn
torch.manual_seed(0)
lin = nn.Linear(2, 1)
lin.register_full_backward_hook(lambda m, gi, go: print("hook fired"))
x = torch.ones(3, 2, requires_grad=True)
y = lin(x).sum()
explain(y)
print("before backward")
y.backward()
for thing in [lin, (1, 2), None]:
    for view in [graph, show, explain]:
        try:
            view(thing)
        except TypeError as e:
            print("TypeError:", e)
""",
}

#: what each program's stdout must show (qualified names, node names, bfloat16 values)
EXPECTED = {
    "cnn_batchnorm": ["NativeBatchNormBackward0 [2, 2, 2, 2]", "ConvolutionBackward0",
                      "AccumulateGrad model.0.weight [2, 1, 3, 3]", "model.1.bias",
                      "model.4.weight", "name           model.0.bias"],
    "lstm": ["lstm.weight_ih_l0", "lstm.bias_hh_l0", "MkldnnRnnLayerBackward0"],
    "transformer": ["encoder.layers.0.self_attn.out_proj.weight", "encoder.layers.0.norm1.bias",
                    "ScaledDotProductFlashAttentionForCpuBackward0", "NativeLayerNormBackward0",
                    '"variable": "encoder.layers.0.linear2.weight"'],
    "parametrized": ["lin.parametrizations.weight.original", "TriuBackward0", "lin.bias"],
    "checkpointed": ["CheckpointFunctionBackward [3] (y2)", "SinBackward0 [3] (y)",
                     "recompute the checkpointed function's forward"],
    "custom_function": ["MyCubeBackward [2] (y)", "input 0 → MyCubeBackward (y, step 2)",
                        "MyCube.backward(ctx, grad_outputs...): your own backward rule",
                        'n1["MyCubeBackward [2] (y)"]', '"name": "MyCubeBackward"'],
    "create_graph": ["ConvolutionBackwardBackward0 [1, 1, 4, 4] (gx)",
                     "d/dg = conv(ggI, w) + conv(x, ggW) + ggb",
                     "NativeBatchNormBackwardBackward0 [4, 3] (gu)", "AccumulateGrad bn.weight"],
    "bfloat16_autocast": ["dtype          torch.bfloat16",
                          "[1.0010e-01, 3.3398e-01, 1.0050e+02]",
                          "[2.0020e-01, 6.6797e-01, 2.0100e+02]", "ToCopyBackward0 [3] (b)",
                          "MmBackward0 [2, 2] (p)"],
    "torch_func": ["AddBackward0 [3] (g)", "AccumulateGrad x [3]"],
    "distributions": ["AccumulateGrad mu [2]", "AccumulateGrad sigma [2]", "AddBackward0 [2] (s)"],
    "attention": ["attn.in_proj_weight", "attn.out_proj.bias", "AccumulateGrad q [1, 3, 4]"],
    # explain runs a custom backward (program code) for its step, holding back its prints
    "loud_backward": ["start\nBackward pass of y", "LoudBackward [2]",
                      "AccumulateGrad x [2]  grad=None\nexplained\nbackward ran\n"],
    "module_hooks_and_misuse": ["BackwardHookFunctionBackward", "identity (module backward hooks",
                                "before backward\nhook fired",
                                "TypeError: graph() expects a tensor, got Linear",
                                "TypeError: explain() expects a tensor, got tuple",
                                "TypeError: show() expects a tensor, got NoneType"],
}

#: what must not show anywhere in an output
FORBIDDEN = ("Traceback", "internal error", "(no rule text", "object at 0x")

#: conformance and example programs with nn layers, custom Functions and graphs
CORPUS = sorted(
    [p for p in (REPO / "tests" / "conformance" / "cases").glob("*.grad")
     if p.stem.startswith(("nn_", "tutorial_custom", "tutorial_double", "tutorial_module",
                           "tutorial_function", "tutorial_functional", "tutorial_forward",
                           "autograd_grad_fn", "autograd_shared", "autograd_higher",
                           "inplace_copyslices", "tutorial2_cs231n"))]
    + list((REPO / "examples").glob("*.grad")))


def gradcli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True,
                          text=True, env=ENV, timeout=TIMEOUT, cwd=cwd)


@pytest.fixture(scope="module")
def program_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweep")
    for name, source in PROGRAMS.items():
        (folder / f"test_{name}.grad").write_text(source)
    return folder


@pytest.fixture(scope="module")
def run_record(program_dir):
    """One `gradcli run --json --graph --grads` over every program: {name: RUN}."""
    files = [f"test_{name}.grad" for name in PROGRAMS]
    proc = gradcli("run", "--json", "--graph", "--grads", *files, cwd=program_dir)
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "gradcli.run/1"
    runs = {Path(r["file"]).stem[len("test_"):]: r for r in doc["runs"]}
    return proc, runs


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_runs_every_view(run_record, name):
    proc, runs = run_record
    run = runs[name]
    assert run["exit_code"] == 0 and run["error"] is None, run["error"]
    for bad in FORBIDDEN:
        assert bad not in run["stdout"], (bad, run["stdout"])
    for text in EXPECTED[name]:
        assert text in run["stdout"], (text, run["stdout"][-3000:])
    # the views fit the width they were given (export's JSON lines are the program's)
    widest = max(len(line) for line in run["stdout"].splitlines()
                 if not line.lstrip().startswith(("{", '"')))
    assert widest <= 80, widest


def test_run_json_records_module_parameters_by_qualified_name(run_record):
    _, runs = run_record
    tensors = runs["cnn_batchnorm"]["tensors"]
    assert tensors["model.0.weight"]["shape"] == [2, 1, 3, 3]
    assert tensors["model.4.bias"]["grad"] == [2.0]
    assert tensors["model.1.running_var"]["requires_grad"] is False
    lstm = runs["lstm"]["tensors"]
    assert lstm["lstm.weight_hh_l0"]["grad"] is not None
    bf = runs["bfloat16_autocast"]["tensors"]["b"]
    assert bf["dtype"] == "bfloat16" and bf["value"] == [0.10009765625, 0.333984375, 100.5]


def test_freed_graphs_still_show_shapes(run_record):
    """--graph draws after the program, when backward has freed the saved tensors: the
    shapes come from the graph's own metadata, not from a dry walk."""
    _, runs = run_record
    out = runs["cnn_batchnorm"]["stdout"]
    after = out[out.rindex("SumBackward0 [] (out)"):]
    assert "AddmmBackward0 [2, 1]" in after and "ReluBackward0 [2, 2, 2, 2]" in after
    custom = runs["custom_function"]["stdout"]
    assert '"name": "MyCubeBackward", "kind": "function", "shape": [2]' in custom


def test_no_program_writes_a_traceback_to_stderr(run_record):
    proc, _ = run_record
    assert proc.returncode == 0, proc.stderr[-2000:]
    for bad in FORBIDDEN:
        assert bad not in proc.stderr, proc.stderr[-2000:]


def test_gradcli_test_and_check_over_the_programs(program_dir):
    """`gradcli test` (the programs' asserts) and `gradcli check` (no unsupported names)."""
    proc = gradcli("test", "-n", "1", "-q", ".", cwd=program_dir)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(rf"\b{len(PROGRAMS)} passed\b", proc.stdout), proc.stdout[-500:]
    proc = gradcli("check", *sorted(p.name for p in program_dir.glob("*.grad")),
                   cwd=program_dir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(": ok") == len(PROGRAMS), proc.stdout


@pytest.fixture(scope="module")
def corpus_record():
    proc = gradcli("run", "--json", "--graph", "--grads", *map(str, CORPUS))
    doc = json.loads(proc.stdout)
    return proc, {Path(r["file"]).stem: r for r in doc["runs"]}


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_corpus_program_through_graph_and_grads(corpus_record, path):
    proc, runs = corpus_record
    run = runs[path.stem]
    assert run["exit_code"] == 0 and run["error"] is None, run["error"]
    for bad in ("Traceback", "internal error", "(no rule text"):
        assert bad not in run["stdout"], run["stdout"][-2000:]
    assert "Traceback (most recent" not in proc.stderr


# ------------------------------------------------------------------ one-shot commands
GRAD_CASES = {
    "layer_norm_hessian": (
        ["torch.nn.functional.layer_norm(x, (3,)).pow(2).sum()", "--at", "x=[1,2,4]",
         "--hessian", "--check", "--graph"],
        ["NativeLayerNormBackward0"]),
    "conv_double_backward": (
        ["(torch.nn.functional.conv2d(x, w) ** 2).sum()", "--at", "x=ones(1,1,3,3)",
         "--at", "w=ones(1,1,2,2)", "--hessian", "--graph"],
        ["ConvolutionBackward0", "AccumulateGrad"]),
    "checkpoint_and_func": (
        ["torch.utils.checkpoint.checkpoint(torch.sin, x, use_reentrant=False).sum()"
         " + torch.func.grad(lambda t: t.cos().sum())(x).sum()", "--at", "x=[1.,2.]",
         "--check", "--graph"],
        ["SinBackward0", "AccumulateGrad"]),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_grad_json_over_new_layers(case):
    """`gradcli grad --json` with --hessian/--check/--graph against PyTorch's gradient."""
    torch = pytest.importorskip("torch")
    importlib.import_module("torch.utils.checkpoint")
    args, names = GRAD_CASES[case]
    proc = gradcli("grad", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    if "--check" in args:
        assert doc["check"]["ok"] is True and "note" not in doc["check"], doc["check"]
    nodes = [n["name"] for n in doc["graph"]["nodes"]]
    for name in names:
        assert name in nodes, nodes
    assert all(n["shape"] is not None for n in doc["graph"]["nodes"]), doc["graph"]["nodes"]
    # the gradient is PyTorch's
    bindings = {}
    for flag, value in zip(args[1::2], args[2::2], strict=False):
        if flag == "--at":
            key, expr = value.split("=", 1)
            bindings[key] = (torch.ones(*eval(expr[4:])) if expr.startswith("ones")
                             else torch.tensor(eval(expr))).float().requires_grad_()
    out = eval(args[0], {"torch": torch}, dict(bindings))
    expected = torch.autograd.grad(out, list(bindings.values()))
    for key, g in zip(bindings, expected, strict=True):
        got = torch.tensor(doc["gradients"][key]["data"])
        torch.testing.assert_close(got, g, rtol=1e-4, atol=1e-5)


def test_grad_check_of_a_bfloat16_expression_says_why_it_fails():
    proc = gradcli("grad", "(x.bfloat16() * 3).sum()", "--at", "x=[0.1,0.2]", "--check")
    assert proc.returncode == 1
    assert "FAIL" in proc.stdout
    assert "note: EXPR's value is torch.bfloat16, not torch.float64" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_graph_command_names_a_named_backward_node():
    proc = gradcli("graph", "torch.autograd.grad((torch.nn.functional.conv2d(x, w) ** 2)"
                   ".sum(), x, create_graph=True)[0]", "--at", "x=ones(1,1,3,3)",
                   "--at", "w=ones(1,1,2,2)", "--format", "mermaid")
    assert proc.returncode == 0, proc.stderr
    assert 'n0["ConvolutionBackwardBackward0 [1, 1, 3, 3]"]' in proc.stdout
    assert '"x: AccumulateGrad [1, 1, 3, 3]"' in proc.stdout


def test_views_name_tensors_and_modules_inside_lists_and_dicts():
    """`ws[0]`, `layers[1].weight`, `heads['a'].bias`; a parameter shared by two modules
    keeps its first name; a Module subclass's own named_parameters is never called."""
    import gradcli.torch as gtorch
    from gradcli.views import grads_table, graph_tree, render_text

    nn = gtorch.nn
    gtorch.manual_seed(0)

    class Sneaky(nn.Linear):
        def named_parameters(self, *args, **kwargs):
            raise AssertionError("the views called a program's named_parameters")

    ws = [gtorch.randn(2, requires_grad=True) for _ in range(2)]
    layers = [nn.Linear(2, 2), Sneaky(2, 1)]
    heads = {"a": nn.Linear(1, 1)}
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    y = heads["a"](layers[1](layers[0](ws[0] * ws[1]))).sum() + seq(ws[0]).sum()
    names = {"ws": ws, "layers": layers, "heads": heads, "shared": shared, "seq": seq, "y": y}
    text = render_text(graph_tree(y, names), width=100)
    for name in ("ws[0]", "ws[1]", "layers[0].weight", "layers[1].bias", "heads['a'].weight",
                 "shared.bias"):
        assert f"AccumulateGrad {name} [" in text, text
    assert "seq.0.weight" not in text and "(unnamed leaf)" not in text
    y.backward()
    table = render_text(grads_table(names), width=100)
    assert re.search(r"^ +layers\[1\]\.weight +\[1, 2\]", table, re.M), table
