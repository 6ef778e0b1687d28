"""`explain(out)`: the backward pass of `out`, step by step — the chain rule made visible.

The steps come from the engine's `explain_steps`, a dry run of the real backward:
the same execution order (so hooks in a real `backward()` would fire in this
order), but no `.grad` changes, no hooks, and the graph is kept. For each step
the view shows the node (with the script's name for what it produced), the
gradient arriving at it, the rule applied — `node.op.rule`, the op table's own
text, never a second list — and the gradient sent to each input, naming the input
by its step or, for leaves, by its variable name. `AccumulateGrad` steps say what
a real backward would add to the leaf's `.grad`; a closing table sums that up.

A custom Function's backward is the program's own code: the dry run calls it (that is
how its step gets a gradient), with what it prints held back, so the only output is the
walkthrough; anything else it does (appending to a list) does happen.

A non-scalar `out` needs `gradient`, as `backward` does (PyTorch's "grad can be
implicitly created only for scalar outputs" error otherwise).
"""

from __future__ import annotations

from .common import NameIndex, emit, grad_of, held_output, shape_str, short
from .walk import display_name, is_leaf_node, output_count, rule_text

STYLE_STEP = "bold"
STYLE_NODE = "bold cyan"
STYLE_LEAF = "bold green"
STYLE_NAME = "bold yellow"
STYLE_KEY = "dim"
STYLE_RULE = "italic"


def explain_data(out, gradient=None, names=None) -> list[dict]:
    """The steps as plain data (what the renderable shows), in execution order.

    Each step: {"step": k, "node": node, "name": node name, "label": script name
    or None, "incoming": [tensor|None per output], "rule": str, "sends":
    [{"input": i, "node": child|None, "target": text, "grad": tensor|None}],
    "leaf": the leaf tensor for AccumulateGrad steps, else None}.
    """
    from gradcli.engine.autograd import explain_steps
    from gradcli.engine.tensor import Tensor

    if not isinstance(out, Tensor):  # (backward's own error would blame a grad_fn)
        raise TypeError(f"explain() expects a tensor, got {type(out).__name__}")
    index = NameIndex(names)
    with held_output():  # (a custom Function's backward is program code that may print)
        steps = explain_steps(out, gradient)
    step_of = {node: k for k, (node, _, _) in enumerate(steps, 1)}
    data = []
    for k, (node, incoming, outgoing) in enumerate(steps, 1):
        leaf = is_leaf_node(node)
        entry = {
            "step": k,
            "node": node,
            "name": display_name(node),
            "label": index.of_node(node),
            "incoming": list(incoming),
            "rule": _rule(node, index),
            "sends": [],
            "leaf": node.variable if leaf else None,
        }
        if not leaf:
            for i, (child, nr) in enumerate(node.next_functions):
                g = outgoing[i] if i < len(outgoing) else None
                entry["sends"].append({
                    "input": i,
                    "node": child,
                    "target": _target(child, nr, index, step_of),
                    "grad": g,
                })
        data.append(entry)
    return data


def _rule(node, index: NameIndex) -> str:
    if is_leaf_node(node):
        name = index.of_tensor(node.variable) or "leaf"
        return f"{name}.grad += incoming gradient (AccumulateGrad)"
    return rule_text(node)


def _target(child, output_nr: int, index: NameIndex, step_of: dict) -> str:
    if child is None:
        return "nothing (this input does not require grad)"
    step = step_of.get(child)
    where = f"step {step}" if step is not None else "not run"
    if is_leaf_node(child):
        name = index.of_tensor(child.variable)
        return f"{name} (AccumulateGrad, {where})" if name else f"a leaf (AccumulateGrad, {where})"
    multi = output_count(child) != 1 or output_nr > 0
    what = display_name(child) + (f" output {output_nr}" if multi else "")
    name = index.of_edge(child, output_nr)
    return f"{what} ({name}, {where})" if name else f"{what} ({where})"


def _grad_text(grads: list) -> str:
    if len(grads) == 1:
        return short(grads[0])
    return "; ".join(f"[{i}] {short(g)}" for i, g in enumerate(grads))


MAX_STEPS = 200


def explain_renderable(out, gradient=None, names=None, *, max_steps: int = MAX_STEPS):
    """The rich renderable `explain` prints (raises as `backward` would for a bad `out`).

    At most `max_steps` steps are drawn, then a `… N more steps` line; the closing
    table of leaf gradients always covers every step.
    """
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    data = explain_data(out, gradient, names)
    index = NameIndex(names)
    parts = []
    out_name = index.of_tensor(out)
    head = Text("Backward pass of ", style="bold")
    head.append(out_name or "the output", style=STYLE_NAME if out_name else "bold")
    head.append(f" (shape {shape_str(out.shape)}, seed gradient "
                f"{short(data[0]['incoming'][0]) if data else 'None'}): "
                f"{len(data)} step{'s' if len(data) != 1 else ''} in execution order. "
                "Nothing is changed: no .grad, no hooks, the graph is kept.")
    parts.append(head)
    leaf_rows = []
    max_steps = max(0, int(max_steps))
    for entry in data:
        if entry["step"] > max_steps:
            if entry["leaf"] is not None:
                leaf_rows.append((entry["label"] or "(unnamed leaf)", entry["leaf"],
                                  entry["incoming"][0]))
            continue
        parts.append(Text(""))
        title = Text(f"Step {entry['step']}  ", style=STYLE_STEP)
        leaf = entry["leaf"]
        if leaf is not None:
            title.append("AccumulateGrad", style=STYLE_LEAF)
            title.append(" ")
            title.append(entry["label"] or "(unnamed leaf)",
                         style=STYLE_NAME if entry["label"] else STYLE_KEY)
            title.append(" " + shape_str(leaf.shape), style=STYLE_KEY)
        else:
            title.append(entry["name"], style=STYLE_NODE)
            shapes = [None if g is None else g.shape for g in entry["incoming"]]
            title.append(" " + "; ".join(shape_str(s) for s in shapes), style=STYLE_KEY)
            if entry["label"]:
                title.append(" (")
                title.append(entry["label"], style=STYLE_NAME)
                title.append(")")
        parts.append(title)
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style=STYLE_KEY, no_wrap=True)
        grid.add_column()
        grid.add_row("  grad in", Text(_grad_text(entry["incoming"])))
        grid.add_row("  rule", Text(entry["rule"], style=STYLE_RULE))
        if leaf is not None:
            current = grad_of(leaf)
            name = entry["label"] or "the leaf"
            grid.add_row("  effect", Text(
                f"a real backward adds this to {name}.grad (now {short(current)}); "
                "explain does not"))
            leaf_rows.append((entry["label"] or "(unnamed leaf)", leaf, entry["incoming"][0]))
        else:
            for send in entry["sends"]:
                label = "  sends" if send is entry["sends"][0] else ""
                line = Text(f"input {send['input']} → {send['target']}")
                if send["node"] is not None:
                    line.append(": ")
                    line.append(short(send["grad"]))
                grid.add_row(label, line)
        parts.append(grid)
    hidden = len(data) - min(len(data), max_steps)
    if hidden:
        parts.append(Text(""))
        parts.append(Text(f"… {hidden} more step{'s' if hidden != 1 else ''} "
                          "(not shown; the table below includes them)", style=STYLE_KEY))
    if leaf_rows:
        parts.append(Text(""))
        parts.append(Text("Gradients this backward would accumulate", style="bold"))
        table = Table(box=box.SIMPLE_HEAD, header_style="bold")
        table.add_column("leaf", style=STYLE_NAME, no_wrap=True)
        table.add_column("shape", no_wrap=True)
        table.add_column("gradient")
        table.add_column(".grad now")
        for name, leaf, g in leaf_rows:
            table.add_row(name, shape_str(leaf.shape), short(g), short(grad_of(leaf)))
        parts.append(table)
    return Group(*parts)


def explain(out, gradient=None, names=None, *, max_steps: int = MAX_STEPS,
            color: bool | None = None, file=None, width: int | None = None) -> None:
    """Print `explain_renderable(out, gradient, names)` to the current stdout (or `file`)."""
    emit(explain_renderable(out, gradient, names, max_steps=max_steps),
         color=color, file=file, width=width)
