"""export(t, "dot" | "mermaid" | "json"): real Graphviz, Mermaid structure, JSON schema."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest
from views_helpers import all_nodes

import gradcli.torch as torch
from gradcli.engine.node import AccumulateGrad
from gradcli.views import FORMATS, export

DOT = shutil.which("dot")


def xy_sin():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.tensor(0.5, requires_grad=True)
    p = x * y
    z = (p + x.sin()).sum()
    return z, dict(x=x, y=y, p=p, z=z)


def diamond():
    a = torch.tensor(1.0, requires_grad=True)
    b = a + a
    c = b + b
    return c, dict(a=a, b=b, c=c)


def shared():
    x = torch.tensor([0.5, -1.0], requires_grad=True)
    h = x * x
    out = (h.exp() + h.sin() * h).sum()
    return out, dict(x=x, h=h, out=out)


def views_and_copy_slices():
    w = torch.ones(2, 3, requires_grad=True)
    v = torch.tensor([5.0, 6.0, 7.0], requires_grad=True)
    m = w * 2
    m[0] = v * 3
    s = (m[:, 1:] * m.t()[1:, :].t()).sum()
    return s, dict(w=w, v=v, m=m, s=s)


def non_scalar():
    x = torch.arange(6.0).reshape(2, 3).requires_grad_()
    y = (x @ torch.ones(3, 4)).relu()
    return y, dict(x=x, y=y)


def odd_names():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    return y, {'quote"and\\slash': x, "y": y}


def leaf_only():
    x = torch.ones(2, requires_grad=True)
    return x, {"x": x}


def constant():
    c = torch.ones(2)
    return c, {"c": c}


GRAPHS = {f.__name__: f for f in (xy_sin, diamond, shared, views_and_copy_slices, non_scalar,
                                  odd_names, leaf_only, constant)}


# --------------------------------------------------------------------- DOT
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_dot_renders_with_graphviz(name, tmp_path):
    if DOT is None:
        pytest.skip("Graphviz `dot` is not installed (apt-get install graphviz)")
    t, names = GRAPHS[name]()
    source = export(t, "dot", names)
    assert source.startswith("digraph gradcli {")
    result = subprocess.run([DOT, "-Tsvg"], input=source, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert "<svg" in result.stdout
    (tmp_path / f"{name}.svg").write_text(result.stdout)


def test_dot_content_matches_the_graph():
    t, names = xy_sin()
    source = export(t, "dot", names)
    node_lines = re.findall(r"^  (n\d+) \[label=\"(.*?)\"", source, re.M)
    edges = re.findall(r"^  (n\d+) -> (n\d+);$", source, re.M)
    assert len(node_lines) == len(all_nodes(t)) == 6
    labels = dict(node_lines)
    assert labels["n0"] == "SumBackward0\\n[]\\n(z)"
    assert "x\\nAccumulateGrad\\n[3]" in labels.values()
    assert "y\\nAccumulateGrad\\n[]" in labels.values()
    assert "MulBackward0\\n[3]\\n(p)" in labels.values()
    assert len(edges) == sum(1 for n in all_nodes(t) for c, _ in n.next_functions if c)


def test_dot_escapes_labels():
    t, names = odd_names()
    source = export(t, "dot", names)
    assert 'label="quote\\"and\\\\slash\\nAccumulateGrad\\n[2]"' in source


# ----------------------------------------------------------------- Mermaid
NODE_DECL = re.compile(r'^    (n\d+|empty)(\[|\(\[)"([^"]*)"(\]|\]\))$')
EDGE = re.compile(r"^    (\w+) --> (\w+)$")


def parse_mermaid(text: str):
    lines = text.rstrip("\n").split("\n")
    assert re.fullmatch(r"flowchart (TB|TD|BT|LR|RL)", lines[0])
    declared, edges = [], []
    for line in lines[1:]:
        if m := NODE_DECL.match(line):
            opening, closing = m.group(2), m.group(4)
            assert (opening, closing) in (("[", "]"), ("([", "])")), line
            declared.append(m.group(1))
        elif m := EDGE.match(line):
            edges.append((m.group(1), m.group(2)))
        elif line.startswith("    classDef ") or line.startswith("    class "):
            continue
        else:
            raise AssertionError(f"unexpected Mermaid line: {line!r}")
    return declared, edges


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_mermaid_structure(name):
    t, names = GRAPHS[name]()
    text = export(t, "mermaid", names)
    declared, edges = parse_mermaid(text)
    assert len(declared) == len(set(declared)), "every node id is declared once"
    for a, b in edges:
        assert a in declared and b in declared
    class_lines = [line for line in text.splitlines() if line.startswith("    class ")]
    for line in class_lines:
        for node_id in line.split()[1].split(","):
            assert node_id in declared
    if t.grad_fn is not None:
        assert len(declared) == len(all_nodes(t))
        assert len(edges) == sum(1 for n in all_nodes(t) for c, _ in n.next_functions if c)


def test_mermaid_labels():
    t, names = xy_sin()
    text = export(t, "mermaid", names)
    assert '    n0["SumBackward0 [] (z)"]' in text
    assert '(["x: AccumulateGrad [3]"])' in text
    t, names = odd_names()
    assert "quote#quot;and" in export(t, "mermaid", names)


# -------------------------------------------------------------------- JSON
NODE_KEYS = {"id", "name", "kind", "shape", "output_shapes", "variable", "rule"}


def check_schema(doc: dict) -> None:
    assert set(doc) == {"schema", "root", "output", "nodes", "edges"}
    assert doc["schema"] == "gradcli.graph/1"
    assert set(doc["output"]) == {"name", "shape", "dtype", "requires_grad", "grad_fn"}
    ids = [n["id"] for n in doc["nodes"]]
    assert len(ids) == len(set(ids))
    assert ids == [f"n{i}" for i in range(len(ids))]
    assert doc["root"] == (ids[0] if ids else None)
    for node in doc["nodes"]:
        assert set(node) == NODE_KEYS
        assert node["kind"] in ("function", "leaf")
        assert isinstance(node["name"], str) and node["name"]
        assert node["shape"] is None or all(isinstance(s, int) for s in node["shape"])
        assert node["output_shapes"][0] == node["shape"]
        assert node["variable"] is None or isinstance(node["variable"], str)
        if node["kind"] == "leaf":
            assert node["name"] == "AccumulateGrad" and node["rule"] is None
        else:
            assert isinstance(node["rule"], str) and node["rule"]
    for edge in doc["edges"]:
        assert set(edge) == {"source", "target", "input", "output_nr"}
        assert edge["source"] in ids and edge["target"] in ids
        assert isinstance(edge["input"], int) and isinstance(edge["output_nr"], int)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_json_schema(name):
    t, names = GRAPHS[name]()
    doc = json.loads(export(t, "json", names))
    check_schema(doc)
    assert doc["output"]["shape"] == list(t.shape)


def test_json_content_matches_the_graph():
    t, names = views_and_copy_slices()
    doc = json.loads(export(t, "json", names))
    by_id = {n["id"]: n for n in doc["nodes"]}
    nodes = all_nodes(t)
    assert len(doc["nodes"]) == len(nodes)
    # the rules are the op table's, shapes are the tensors'
    rules = {n.op.rule for n in nodes if not isinstance(n, AccumulateGrad)}
    assert {n["rule"] for n in doc["nodes"] if n["kind"] == "function"} == rules
    named = {n["variable"]: n for n in doc["nodes"] if n["variable"]}
    assert named["m"]["name"] == "CopySlices" and named["m"]["shape"] == [2, 3]
    assert named["w"]["kind"] == "leaf" and named["w"]["shape"] == [2, 3]
    assert named["v"]["kind"] == "leaf" and named["v"]["shape"] == [3]
    assert named["s"]["id"] == doc["root"] == "n0" and named["s"]["shape"] == []
    # each edge is one next_functions entry, in order
    root_edges = [e for e in doc["edges"] if e["source"] == "n0"]
    assert [by_id[e["target"]]["name"] for e in root_edges] == ["MulBackward0"]


def test_json_multi_output_node():
    x = torch.arange(4.0, requires_grad=True)
    a, b = x.split(2)
    out = (a * b).sum()
    doc = json.loads(export(out, "json", {"x": x, "out": out}))
    split = next(n for n in doc["nodes"] if n["name"] == "SplitBackward0")
    assert split["output_shapes"] == [[2], [2]]
    into_split = [e for e in doc["edges"] if e["target"] == split["id"]]
    assert sorted(e["output_nr"] for e in into_split) == [0, 1]


# ---------------------------------------------------------------- formats
def test_unknown_format_is_a_clear_value_error():
    t, names = xy_sin()
    with pytest.raises(ValueError) as info:
        export(t, "png", names)
    message = str(info.value)
    assert "'png'" in message
    for fmt in FORMATS:
        assert fmt in message
    with pytest.raises(ValueError):
        export(t, None)
    assert export(t, "DOT", names) == export(t, "dot", names)


def test_export_deep_chain_without_recursion():
    x = torch.ones(2, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        doc = json.loads(export(y, "json", {"x": x}))
        mermaid = export(y, "mermaid", {"x": x})
    finally:
        sys.setrecursionlimit(limit)
    assert len(doc["nodes"]) == 100_001
    assert doc["nodes"][-1]["variable"] == "x"
    assert all(n["shape"] == [2] for n in doc["nodes"])
    assert mermaid.count(" --> ") == 100_000
