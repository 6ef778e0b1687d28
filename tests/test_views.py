"""The rich views (SPEC 2): show, graph, grads, explain — plain-text output and behaviour."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest
from views_helpers import all_nodes

import gradcli.torch as torch
from gradcli.engine.node import AccumulateGrad
from gradcli.engine.ops.registry import OPS
from gradcli.views import (
    explain,
    explain_renderable,
    grads,
    grads_table,
    graph,
    graph_tree,
    make_console,
    render_text,
    show,
    show_renderable,
)
from gradcli.views.common import short
from gradcli.views.walkthrough import explain_data

ANSI = re.compile(r"\x1b\[")


def text_of(renderable, width=80) -> str:
    return render_text(renderable, width=width)


def squash(text: str) -> str:
    """Whitespace-normalised text (rich wraps long lines at the console width)."""
    return " ".join(text.split())


# ------------------------------------------------------------------ graphs
def xy_sin():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.tensor(0.5, requires_grad=True)
    p = x * y
    s = x.sin()
    a = p + s
    z = a.sum()
    return dict(x=x, y=y, p=p, s=s, a=a, z=z)


def diamond():
    a = torch.tensor(1.0, requires_grad=True)
    b = a + a
    c = b + b
    return dict(a=a, b=b, c=c)


def shared():
    x = torch.tensor([0.5, -1.0], requires_grad=True)
    y = torch.tensor([2.0, 3.0], requires_grad=True)
    h = x * y
    e = h.exp()
    q = h.sin()
    r = q * h
    out = (e + r).sum()
    return dict(x=x, y=y, h=h, e=e, q=q, r=r, out=out)


def copy_slices():
    w = torch.ones(2, 3, requires_grad=True)
    v = torch.tensor([5.0, 6.0, 7.0], requires_grad=True)
    m = w * 2
    v3 = v * 3
    m[0] = v3
    left = m[:, 1:]
    mt = m.t()
    mts = mt[1:, :]
    right = mts.t()
    prod = left * right
    s = prod.sum()
    return dict(w=w, v=v, v3=v3, m=m, left=left, mt=mt, mts=mts, right=right, prod=prod, s=s)


# ------------------------------------------------------------------- graph
def test_graph_tree_x_times_y_plus_sin_x():
    g = xy_sin()
    text = text_of(graph_tree(g["z"], {k: g[k] for k in ("x", "y", "z")}))
    assert text.splitlines() == [
        "SumBackward0 [] (z)",
        "└── AddBackward0 [3]",
        "    ├── MulBackward0 [3]",
        "    │   ├── #1 AccumulateGrad x [3]  grad=None",
        "    │   └── AccumulateGrad y []  grad=None",
        "    └── SinBackward0 [3]",
        "        └── ↻ #1 AccumulateGrad x (see above)",
    ]
    # the names and shapes are those of the real tensors and nodes
    assert g["z"].grad_fn.name() == "SumBackward0"
    add = g["z"].grad_fn.next_functions[0][0]
    assert [c.name() for c, _ in add.next_functions] == ["MulBackward0", "SinBackward0"]


def test_graph_names_intermediates_and_shows_leaf_grads():
    g = xy_sin()
    g["z"].backward(retain_graph=True)
    text = text_of(graph_tree(g["z"], g))
    assert "MulBackward0 [3] (p)" in text
    assert "SinBackward0 [3] (s)" in text
    assert "AddBackward0 [3] (a)" in text
    assert f"AccumulateGrad x [3]  grad={short(g['x'].grad)}" in text
    assert f"AccumulateGrad y []  grad={short(g['y'].grad)}" in text


def test_graph_diamond_shows_each_node_once():
    g = diamond()
    text = text_of(graph_tree(g["c"], g))
    assert text.splitlines() == [
        "AddBackward0 [] (c)",
        "├── #1 AddBackward0 [] (b)",
        "│   ├── #2 AccumulateGrad a []  grad=None",
        "│   └── ↻ #2 AccumulateGrad a (see above)",
        "└── ↻ #1 AddBackward0 (see above)",
    ]


def test_graph_shared_subgraph_is_drawn_once_and_referenced():
    g = shared()
    text = text_of(graph_tree(g["out"], g))
    lines = text.splitlines()
    h_lines = [line for line in lines if "(h)" in line]
    assert len(h_lines) == 1 and "MulBackward0 [2]" in h_lines[0]
    tag = re.search(r"(#\d+) MulBackward0 \[2\] \(h\)", h_lines[0]).group(1)
    refs = [line for line in lines if f"↻ {tag} MulBackward0 (see above)" in line]
    # h feeds exp, sin and the product: drawn once, referenced twice
    assert len(refs) == 2
    assert lines.index(h_lines[0]) < min(lines.index(r) for r in refs)
    # the leaves under h are drawn once, not per reference
    assert sum("AccumulateGrad x [2]" in line for line in lines) == 1
    assert sum("AccumulateGrad y [2]" in line for line in lines) == 1


def test_graph_shapes_are_the_shapes_each_node_produced():
    x = torch.arange(6.0).reshape(2, 3).requires_grad_()
    a = x * 2
    b = a.sum(0)
    c = b.exp()
    d = c.unsqueeze(1) @ torch.ones(1, 4)
    out = d.mean()
    names = dict(x=x, a=a, b=b, c=c, d=d, out=out)
    text = text_of(graph_tree(out, names))
    for name in ("a", "b", "c", "d", "out"):
        t = names[name]
        shape = "[" + ", ".join(str(s) for s in t.shape) + "]"
        assert f"{t.grad_fn.name()} {shape} ({name})" in text
    assert "AccumulateGrad x [2, 3]" in text


def test_graph_copy_slices_and_views():
    g = copy_slices()
    text = text_of(graph_tree(g["s"], g))
    assert "CopySlices [2, 3] (m)" in text
    assert "SliceBackward0 [2, 2] (left)" in text
    assert "TBackward0 [3, 2] (mt)" in text
    assert "SliceBackward0 [2, 2] (mts)" in text
    assert "TBackward0 [2, 2] (right)" in text
    assert "MulBackward0 [3] (v3)" in text
    assert "AccumulateGrad w [2, 3]" in text and "AccumulateGrad v [3]" in text
    assert "↻ #1 CopySlices (see above)" in text
    assert g["m"].grad_fn.name().endswith("CopySlices")


def test_graph_of_a_leaf_and_of_a_constant():
    x = torch.ones(2, requires_grad=True)
    assert text_of(graph_tree(x, {"x": x})).strip() == "AccumulateGrad x [2]  grad=None"
    c = torch.ones(2)
    assert "no graph" in text_of(graph_tree(c))


def test_graph_multi_output_node():
    x = torch.arange(4.0, requires_grad=True)
    first, second = x.split(2)
    out = (first * second).sum()
    text = text_of(graph_tree(out, dict(x=x, out=out)))
    assert "SplitBackward0 [2]; [2]" in text
    assert "↻ #1 SplitBackward0 (see above)" in text


def test_graph_caps_count_every_hidden_node_once():
    x = torch.ones(3, requires_grad=True)
    y = x
    for _ in range(40):
        y = y * 2 + 1
    total = len(all_nodes(y))
    for kwargs in (dict(max_depth=5), dict(max_nodes=7), dict(max_depth=3, max_nodes=2)):
        text = text_of(graph_tree(y, {"x": x}, **kwargs))
        drawn = sum(1 for line in text.splitlines() if "Backward" in line or "Accumulate" in line)
        hidden = sum(int(n) for n in re.findall(r"… (\d+) more nodes?", text))
        assert drawn + hidden == total, kwargs


def test_graph_cap_with_branches_and_sharing():
    g = shared()
    total = len(all_nodes(g["out"]))
    for depth in range(0, 6):
        text = text_of(graph_tree(g["out"], g, max_depth=depth))
        drawn = {line.split("── ")[-1] for line in text.splitlines()
                 if "Backward" in line or "Accumulate" in line}
        drawn = {d for d in drawn if not d.startswith("↻")}
        hidden = sum(int(n) for n in re.findall(r"… (\d+) more nodes?", text))
        assert len(drawn) + hidden == total, (depth, text)


def test_deep_chain_renders_capped_quickly_without_recursion():
    x = torch.ones(2, requires_grad=True)
    y = x
    depth = 100_000
    for _ in range(depth):
        y = y + 1
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # any recursion over the graph would fail
    try:
        start = time.perf_counter()
        text = text_of(graph_tree(y, {"x": x, "y": y}))
        elapsed = time.perf_counter() - start
    finally:
        sys.setrecursionlimit(limit)
    assert elapsed < 20, elapsed
    lines = text.splitlines()
    assert lines[0] == "AddBackward0 [2] (y)"
    drawn = sum(1 for line in lines if "AddBackward0" in line)
    hidden = int(re.search(r"… (\d+) more nodes", text).group(1))
    assert drawn + hidden == depth + 1  # every AddBackward0 and the AccumulateGrad
    assert max(len(line) for line in lines) <= 80


# ---------------------------------------------------------------- explain
def _key(node_or_tensor):
    if isinstance(node_or_tensor, AccumulateGrad):
        return ("leaf", id(node_or_tensor.variable))
    return node_or_tensor


def tensor_hook_order(tensors, out, gradient=None):
    """The order nodes run in a real backward, recorded with tensor hooks.

    A tensor's hook fires when the node that produced it runs (for a leaf: its
    AccumulateGrad), so this is the execution order of the nodes behind `tensors`.
    """
    order = []
    for t in tensors:
        key = ("leaf", id(t)) if t.grad_fn is None else t.grad_fn
        t.register_hook(lambda g, key=key: order.append(key))
    out.backward(gradient)
    return order


def backward_order(out, gradient=None):
    """The order every node runs in a real backward: tensor hooks on the leaves and
    node hooks on the other nodes (some have no tensor left, e.g. the history an
    in-place write replaced)."""
    order = []
    for node in all_nodes(out):
        if isinstance(node, AccumulateGrad):
            key = ("leaf", id(node.variable))
            node.variable.register_hook(lambda g, key=key: order.append(key))
        else:
            node.register_hook(lambda gi, go, node=node: order.append(node))
    out.backward(gradient)
    return order


CASES = {
    "x*y+sin(x)": (xy_sin, "z", None),
    "diamond": (diamond, "c", None),
    "shared": (shared, "out", None),
    "copy_slices": (copy_slices, "s", None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_explain_order_is_the_real_backward_order(case):
    make, out_name, _ = CASES[case]
    g = make()
    steps = explain_data(g[out_name], names=g)
    explained = [_key(s["node"]) for s in steps]
    assert len(explained) == len(all_nodes(g[out_name]))
    assert explained == backward_order(g[out_name])


@pytest.mark.parametrize("make, out_name", [(xy_sin, "z"), (diamond, "c")])
def test_explain_order_equals_tensor_hook_order(make, out_name):
    g = make()  # every intermediate tensor is held, so tensor hooks see every node
    explained = [_key(s["node"]) for s in explain_data(g[out_name], names=g)]
    assert explained == tensor_hook_order(list(g.values()), g[out_name])


def test_explain_order_non_scalar_with_gradient():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * x
    b = a.exp()
    c = a + b
    seed = torch.tensor([1.0, 0.1, 0.01])
    steps = explain_data(c, seed, names=dict(x=x, a=a, b=b, c=c))
    text = squash(text_of(explain_renderable(c, seed, dict(x=x, a=a, b=b, c=c)), width=120))
    explained = [_key(s["node"]) for s in steps]
    assert explained == tensor_hook_order([x, a, b, c], c, seed)
    assert f"seed gradient {short(seed)}" in text
    assert f"x [3] {short(x.grad)} None" in text  # the closing table = what backward produced


def test_explain_rules_come_from_the_op_table():
    for make, out_name, _ in CASES.values():
        g = make()
        out = g[out_name]
        text = squash(text_of(explain_renderable(out, names=g)))
        for node in all_nodes(out):
            if isinstance(node, AccumulateGrad):
                continue
            assert node.op.rule, node.name()
            assert any(node.op is op for op in OPS.values()), node.name()
            assert squash(node.op.rule) in text, node.name()
    # and the op table is where they are: the x*y node's rule is the mul op's row
    g = xy_sin()
    assert g["p"].grad_fn.op is OPS["mul"]
    assert squash(OPS["mul"].rule) in squash(text_of(explain_renderable(g["z"], names=g)))


def test_explain_sends_name_inputs_and_match_backward():
    g = xy_sin()
    steps = explain_data(g["z"], names=g)
    mul = next(s for s in steps if s["name"] == "MulBackward0")
    assert [s["target"].split(" ")[0] for s in mul["sends"]] == ["x", "y"]
    leaf_grads = {s["label"]: s["incoming"][0] for s in steps if s["leaf"] is not None}
    g["z"].backward()
    np.testing.assert_allclose(leaf_grads["x"].tolist(), g["x"].grad.tolist())
    np.testing.assert_allclose(leaf_grads["y"].tolist(), g["y"].grad.tolist())
    # the gradient each node sends is what the next step receives
    sum_step = steps[0]
    assert sum_step["sends"][0]["grad"].tolist() == steps[1]["incoming"][0].tolist()


def test_explain_text_snapshot_diamond():
    g = diamond()
    text = text_of(explain_renderable(g["c"], names=g))
    add_rule = OPS["add"].rule
    assert g["b"].grad_fn.op.rule == add_rule
    assert text.splitlines() == [
        "Backward pass of c (shape [], seed gradient 1.): 3 steps in execution order.",
        "Nothing is changed: no .grad, no hooks, the graph is kept.",
        "",
        "Step 1  AddBackward0 [] (c)",
        "  grad in  1.",
        f"  rule     {add_rule}",
        "  sends    input 0 → AddBackward0 (b, step 2): 1.",
        "           input 1 → AddBackward0 (b, step 2): 1.",
        "",
        "Step 2  AddBackward0 [] (b)",
        "  grad in  2.",
        f"  rule     {add_rule}",
        "  sends    input 0 → a (AccumulateGrad, step 3): 2.",
        "           input 1 → a (AccumulateGrad, step 3): 2.",
        "",
        "Step 3  AccumulateGrad a []",
        "  grad in  4.",
        "  rule     a.grad += incoming gradient (AccumulateGrad)",
        "  effect   a real backward adds this to a.grad (now None); explain does not",
        "",
        "Gradients this backward would accumulate",
        "",
        "  leaf   shape   gradient   .grad now",
        " ─────────────────────────────────────",
        "  a      []      4.         None",
        "",
    ]


def test_explain_non_scalar_without_gradient_is_pytorchs_error():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        explain(y, file=io.StringIO())


def test_explain_has_no_side_effects():
    g = xy_sin()
    x, y, p, z = g["x"], g["y"], g["p"], g["z"]
    x.grad = torch.tensor([10.0, 20.0, 30.0])  # an earlier gradient must stay as it is
    p.retain_grad()
    fired = []
    x.register_hook(lambda gr: fired.append("x"))
    p.register_hook(lambda gr: fired.append("p"))
    z.grad_fn.register_hook(lambda gi, go: fired.append("node"))
    versions = (x._version, y._version)
    buf = io.StringIO()
    explain(z, names=g, file=buf)
    explain(z, names=g, file=buf)  # twice: the graph is kept
    assert "Step 1" in buf.getvalue()
    assert fired == []
    assert x.grad.tolist() == [10.0, 20.0, 30.0]
    assert y.grad is None
    assert p.grad is None
    assert (x._version, y._version) == versions
    z.backward()  # no retain_graph was needed by explain
    assert sorted(set(fired)) == ["node", "p", "x"]
    expected = (10 + 0.5 + np.cos(1.0), 20 + 0.5 + np.cos(2.0), 30 + 0.5 + np.cos(3.0))
    np.testing.assert_allclose(x.grad.tolist(), expected, rtol=1e-5)
    assert p.grad.tolist() == [1.0, 1.0, 1.0]


def test_explain_caps_steps_but_totals_every_leaf():
    x = torch.ones(2, requires_grad=True)
    y = x
    for _ in range(30):
        y = y * 1.5
    out = y.sum()
    text = text_of(explain_renderable(out, names={"x": x}, max_steps=5))
    assert text.count("Step ") == 5
    assert "… 27 more steps" in text
    out.backward()
    assert re.search(rf"x\s+\[2\]\s+{re.escape(short(x.grad))}", text)


# -------------------------------------------------------------------- show
def test_show_panel_fields_values_and_grad_beside():
    w = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]], requires_grad=True)
    (w * w).sum().backward()
    text = text_of(show_renderable(w, "w"))
    for key, value in [("name", "w"), ("shape", "[2, 3]"), ("dtype", "torch.float32"),
                       ("requires_grad", "True"), ("is_leaf", "True"), ("grad_fn", "None")]:
        assert re.search(rf"│ {key}\s+{re.escape(value)}\s", text), key
    # one line per matrix row: the value cells (PyTorch's formatting) then the grad cells
    row0 = next(line for line in text.splitlines() if "1.0000" in line)
    assert re.search(r"0\s+1\.0000\s+2\.0000\s+3\.0000\s+0\s+2\.\s+4\.\s+6\.", row0)
    row1 = next(line for line in text.splitlines() if "4.0000" in line)
    assert re.search(r"1\s+4\.0000\s+5\.0000\s+6\.5000\s+1\s+8\.\s+10\.\s+13\.", row1)
    assert "value" in text and "grad" in text


def test_show_non_leaf_and_other_ranks():
    x = torch.ones(2, 2, 2, requires_grad=True)
    y = x * 3
    text = text_of(show_renderable(y, "y"))
    assert re.search(r"grad_fn\s+<MulBackward0>", text)
    assert re.search(r"is_leaf\s+False", text)
    assert "retain_grad()" in text
    body = repr(y).split("(", 1)[1].split(", grad_fn")[0]
    for line in body.splitlines():
        assert line.strip() in text  # PyTorch's own indented rows
    scalar = torch.tensor(3.5, dtype=torch.float64)
    text = text_of(show_renderable(scalar))
    assert "3.5000" in text and "torch.float64" in text


def test_show_summarises_big_tensors_like_pytorch():
    big = torch.arange(2000.0).reshape(40, 50)
    text = text_of(show_renderable(big, "big"), width=200)
    assert "…" in text or "..." in text
    assert "1.9990e+03" in text and "1.0000e+03" not in text
    assert len(text.splitlines()) < 30


def test_show_rejects_non_tensors():
    with pytest.raises(TypeError, match="show\\(\\) expects a tensor"):
        show_renderable(3)


# ------------------------------------------------------------------- grads
def test_grads_table_lists_named_tensors_that_require_grad():
    g = xy_sin()
    g["z"].backward()
    names = dict(g, n=3, const=torch.ones(2), label="text")
    text = text_of(grads_table(names), width=120)
    rows = [line.split()[0] for line in text.splitlines()[4:] if line.strip()]
    assert rows == ["x", "y", "p", "s", "a", "z"]
    x_line = next(line for line in text.splitlines() if line.strip().startswith("x "))
    assert short(g["x"].grad) in x_line and "[3]" in x_line
    assert "None (non-leaf)" in text
    assert "no named tensor requires grad" in text_of(grads_table({"n": 1}))


# ------------------------------------------------------- output and colour
def _no_env(monkeypatch):
    for var in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "TERM", "TTY_COMPATIBLE"):
        monkeypatch.delenv(var, raising=False)


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_printing_goes_to_the_current_stdout_as_plain_text(monkeypatch, capsys):
    _no_env(monkeypatch)
    g = xy_sin()
    graph(g["z"], g)
    show(g["x"], "x")
    grads(g)
    explain(g["z"], names=g)
    out = capsys.readouterr().out
    assert "SumBackward0 [] (z)" in out and "Step 1" in out and "requires_grad" in out
    assert not ANSI.search(out)
    replaced = io.StringIO()
    monkeypatch.setattr(sys, "stdout", replaced)  # replaced after import: still followed
    graph(g["z"], g)
    assert "SumBackward0 [] (z)" in replaced.getvalue()


def test_terminal_output_is_styled_unless_no_color(monkeypatch):
    _no_env(monkeypatch)
    g = xy_sin()
    tty = FakeTTY()
    graph(g["z"], g, file=tty)
    assert ANSI.search(tty.getvalue())
    monkeypatch.setenv("NO_COLOR", "1")
    tty = FakeTTY()
    graph(g["z"], g, file=tty)
    assert not ANSI.search(tty.getvalue())
    assert "SumBackward0 [] (z)" in tty.getvalue()
    monkeypatch.delenv("NO_COLOR")
    tty = FakeTTY()
    explain(g["z"], names=g, file=tty, color=False)  # --no-color
    assert not ANSI.search(tty.getvalue()) and "Step 1" in tty.getvalue()


def test_forced_terminal_console_styles_and_plain_console_does_not(monkeypatch):
    _no_env(monkeypatch)
    g = xy_sin()
    forced = io.StringIO()
    graph(g["z"], g, file=forced, color=True)
    assert ANSI.search(forced.getvalue())
    plain = io.StringIO()
    graph(g["z"], g, file=plain)
    assert not ANSI.search(plain.getvalue())
    assert "SumBackward0 [] (z)" in plain.getvalue()


def test_width_is_80_when_not_a_terminal(monkeypatch):
    _no_env(monkeypatch)
    assert make_console(file=io.StringIO()).width == 80
    monkeypatch.setenv("COLUMNS", "100")
    assert make_console(file=io.StringIO()).width == 100
    assert make_console(file=io.StringIO(), width=60).width == 60


def test_views_import_is_light():
    code = (
        "import sys, gradcli.torch, gradcli.views, gradcli.views.exporters, gradcli.views.tree,"
        " gradcli.views.panel, gradcli.views.gradtable, gradcli.views.walkthrough;"
        "t = gradcli.torch.ones(2, requires_grad=True);"
        "gradcli.views.export(t * 2, 'json');"
        "print('rich' in sys.modules)"
    )
    env = dict(os.environ)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, check=True)
    assert result.stdout.strip() == "False"


def test_graph_after_backward_still_renders():
    g = xy_sin()
    g["z"].backward()  # frees the saved tensors: no dry walk possible now
    text = text_of(graph_tree(g["z"], g))
    lines = text.splitlines()
    assert lines[0] == "SumBackward0 [] (z)"
    assert f"AccumulateGrad x [3]  grad={short(g['x'].grad)}" in text
    assert f"AccumulateGrad y []  grad={short(g['y'].grad)}" in text
    assert [line.split("── ")[-1].split(" ")[0] for line in lines[1:]] == [
        "AddBackward0", "MulBackward0", "#1", "AccumulateGrad", "SinBackward0", "↻"]


def test_explain_after_a_freeing_backward_is_pytorchs_error():
    g = xy_sin()
    g["z"].backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        explain_data(g["z"], names=g)


def test_explain_multi_output_names_each_output():
    x = torch.arange(4.0, requires_grad=True)
    a, b = x.split(2)
    out = (a * b).sum()
    names = dict(x=x, a=a, b=b, out=out)
    text = text_of(explain_renderable(out, names=names))
    assert "input 0 → SplitBackward0 output 0 (a, step 3): [2., 3.]" in text
    assert "input 1 → SplitBackward0 output 1 (b, step 3): [0., 1.]" in text
    assert "grad in  [0] [2., 3.]; [1] [0., 1.]" in text
    out.backward()
    assert f"x [4] {short(x.grad)} None" in squash(text)
