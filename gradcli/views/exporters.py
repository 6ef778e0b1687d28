"""`export(t, fmt, names=None)`: the grad_fn graph of `t` as Graphviz DOT, Mermaid or JSON.

No rich here. The whole reachable graph is exported (no depth cap), walked with
an explicit stack. Nodes are numbered ``n0, n1, …`` in depth-first pre-order
from `t`'s grad_fn (children in ``next_functions`` order), so ``n0`` is the root
and the numbering is stable for a given graph. Edges follow ``next_functions``:
from a node to the node it sends a gradient to (the backward direction, root at
the top, leaves at the bottom). Shapes are found as `gradcli.views.walk`
describes.

DOT (``"dot"``)
    ``digraph gradcli { … }``; function nodes are boxes labelled
    ``NameBackward0\\n[shape]``, leaves are ellipses labelled
    ``variable\\nAccumulateGrad\\n[shape]``; render with ``dot -Tsvg``.

Mermaid (``"mermaid"``)
    ``flowchart TB``, then one declaration per node (``n0["SumBackward0 []"]``,
    leaves as ``n3(["x: AccumulateGrad [3]"])``; labels are always quoted, ``"``
    written as ``#quot;``), then one ``nA --> nB`` line per edge, then a
    ``classDef``/``class`` pair styling the leaves.

JSON (``"json"``), schema ``gradcli.graph/1`` — stable: fields may be added,
never renamed or removed::

    {
      "schema": "gradcli.graph/1",
      "root": "n0" | null,               # null when t has no graph
      "output": {"name": str | null, "shape": [int], "dtype": "torch.float32",
                 "requires_grad": bool, "grad_fn": "SumBackward0" | null},
      "nodes": [{
          "id": "n0",
XX
          "kind": "function" | "leaf",
          "shape": [int] | null,         # shape of output 0 (null if unknown)
          "output_shapes": [[int] | null, ...],   # every output's shape
          "variable": str | null,        # the script's name: a leaf's variable, or the
                                         # named tensor a function node produced
          "rule": str | null             # the op table's rule text (null for leaves)
      }, ...],
      "edges": [{"source": "n0", "target": "n1",
                 "input": int,           # position in source's next_functions
                 "output_nr": int}]      # which output of target feeds it
    }
"""

from __future__ import annotations

import json

from .common import NameIndex, shape_str
from .walk import (
    collect,
    display_name,
    infer_shapes,
    is_leaf_node,
    node_shapes,
    root_edge,
    rule_text,
)

FORMATS = ("dot", "mermaid", "json")
SCHEMA = "gradcli.graph/1"


def graph_data(t, names=None) -> dict:
    """The JSON document of the module docstring, as a Python dict."""
    index = NameIndex(names)
    root, _ = root_edge(t, "export()")
    order, _ = collect(root)
    shapes = infer_shapes(t, order)
    ids = {node: f"n{i}" for i, node in enumerate(order)}
    nodes = []
    edges = []
    for node in order:
        leaf = is_leaf_node(node)
        outs = node_shapes(shapes, node)
        nodes.append({
            "id": ids[node],
            "name": display_name(node),
            "kind": "leaf" if leaf else "function",
            "shape": None if outs[0] is None else list(outs[0]),
            "output_shapes": [None if s is None else list(s) for s in outs],
            "variable": index.of_node(node),
            "rule": None if leaf else rule_text(node),
        })
        for i, (child, nr) in enumerate(node.next_functions):
            if child is not None:
                edges.append({"source": ids[node], "target": ids[child], "input": i,
                              "output_nr": nr})
    fn = t.grad_fn
    return {
        "schema": SCHEMA,
        "root": ids[root] if root is not None else None,
        "output": {
            "name": index.of_tensor(t),
            "shape": list(t.shape),
            "dtype": str(t.dtype),
            "requires_grad": bool(t.requires_grad),
            "grad_fn": None if fn is None else display_name(fn),
        },
        "nodes": nodes,
        "edges": edges,
    }


def _shape_label(node: dict) -> str:
    return "; ".join("?" if s is None else shape_str(s) for s in node["output_shapes"])


def to_json(data: dict) -> str:
    """Indented JSON with one node and one edge per line (fast and diff-friendly)."""
    def items(key):
        rows = [json.dumps(item, ensure_ascii=False) for item in data[key]]
        if not rows:
            return f'  "{key}": []'
        return f'  "{key}": [\n    ' + ",\n    ".join(rows) + "\n  ]"

    head = [f"  {json.dumps(key)}: {json.dumps(data[key], ensure_ascii=False)}"
            for key in data if key not in ("nodes", "edges")]
    return "{\n" + ",\n".join(head + [items("nodes"), items("edges")]) + "\n}\n"


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(data: dict) -> str:
    lines = [
        "digraph gradcli {",
        "  rankdir=TB;",
        '  node [shape=box, style="rounded,filled", fillcolor="#e0f2fe", fontname="Helvetica"];',
        '  edge [fontname="Helvetica", fontsize=10];',
    ]
    if not data["nodes"]:
        lines.append(f"  empty [shape=plaintext, style=\"\", label="
                     f"{_dot_quote('no graph: the tensor does not require grad')}];")
    for node in data["nodes"]:
        if node["kind"] == "leaf":
            label = f"{node['variable'] or '(unnamed leaf)'}\nAccumulateGrad\n{_shape_label(node)}"
            attrs = 'shape=ellipse, fillcolor="#dcfce7"'
        else:
            label = f"{node['name']}\n{_shape_label(node)}"
            if node["variable"]:
                label += f"\n({node['variable']})"
            attrs = None
        extra = f", {attrs}" if attrs else ""
        lines.append(f"  {node['id']} [label={_dot_quote(label)}{extra}];")
    for edge in data["edges"]:
        lines.append(f"  {edge['source']} -> {edge['target']};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _mermaid_quote(text: str) -> str:
    return '"' + text.replace('"', "#quot;").replace("\n", " ") + '"'


def to_mermaid(data: dict) -> str:
    lines = ["flowchart TB"]
    if not data["nodes"]:
        lines.append(f"    empty[{_mermaid_quote('no graph: the tensor does not require grad')}]")
    leaves = []
    for node in data["nodes"]:
        if node["kind"] == "leaf":
            label = f"{node['variable'] or '(unnamed leaf)'}: AccumulateGrad {_shape_label(node)}"
            lines.append(f"    {node['id']}([{_mermaid_quote(label)}])")
            leaves.append(node["id"])
        else:
            label = f"{node['name']} {_shape_label(node)}"
            if node["variable"]:
                label += f" ({node['variable']})"
            lines.append(f"    {node['id']}[{_mermaid_quote(label)}]")
    for edge in data["edges"]:
        lines.append(f"    {edge['source']} --> {edge['target']}")
    if leaves:
        lines.append("    classDef leaf fill:#dcfce7,stroke:#16a34a")
        lines.append(f"    class {','.join(leaves)} leaf")
    return "\n".join(lines) + "\n"


_WRITERS = {"dot": to_dot, "mermaid": to_mermaid, "json": to_json}


def export(t, fmt: str = "dot", names=None) -> str:
    """`t`'s graph as text in `fmt` ("dot", "mermaid" or "json")."""
    key = fmt.lower().strip() if isinstance(fmt, str) else None
    writer = _WRITERS.get(key)
    if writer is None:
        raise ValueError(
            f"unknown export format {fmt!r}: expected one of {', '.join(map(repr, FORMATS))}")
    return writer(graph_data(t, names))
