"""`graph(t)`: the grad_fn chain from `t` down to the leaves, as a rich Tree.

Each line is a node: its PyTorch name and the shape it produced (see
`gradcli.views.walk` for how shapes are found; `?` when unknown), plus the
script's name of the tensor it made, if any. Leaves are `AccumulateGrad` lines
with the variable's name, shape and `.grad`. A node reached a second time
(shared subgraphs, `x*x`, diamonds) is tagged `#k` where it is first shown and
later appears as `↻ #k NameBackward0 (see above)`.

The walk is an explicit stack (graphs may be 1,000,000 nodes deep). At most
`max_depth` levels and `max_nodes` nodes are drawn; the rest is summarised by
`… N more nodes` lines, where the N of all such lines add up to the nodes not
drawn.
"""

from __future__ import annotations

from .common import NameIndex, emit, grad_of, shape_str, short
from .walk import collect, display_name, infer_shapes, is_leaf_node, node_shapes, root_edge

MAX_DEPTH = 12
MAX_NODES = 200

STYLE_NODE = "bold cyan"
STYLE_LEAF = "bold green"
STYLE_NAME = "bold yellow"
STYLE_DIM = "dim"
STYLE_REF = "magenta"


def shapes_text(shapes: dict, node) -> str:
    return "; ".join(shape_str(s) for s in node_shapes(shapes, node))


def _node_label(node, shapes, index: NameIndex, tag: str | None):
    from rich.text import Text

    label = Text()
    if tag:
        label.append(tag + " ", style=STYLE_REF)
    if is_leaf_node(node):
        label.append("AccumulateGrad", style=STYLE_LEAF)
        name = index.of_tensor(node.variable)
        label.append(" ")
        label.append(name if name else "(unnamed leaf)", style=STYLE_NAME if name else STYLE_DIM)
        label.append(" " + shapes_text(shapes, node), style=STYLE_DIM)
        label.append("  grad=" + short(grad_of(node.variable)))
        return label
    label.append(display_name(node), style=STYLE_NODE)
    label.append(" " + shapes_text(shapes, node), style=STYLE_DIM)
    name = index.of_node(node)
    if name:
        label.append(" (")
        label.append(name, style=STYLE_NAME)
        label.append(")")
    return label


def _more_label(count: int, elsewhere: bool = False):
    from rich.text import Text

    if count == 0 and elsewhere:
        return Text("… (continues at a node shown elsewhere in this tree)", style=STYLE_DIM)
    return Text(f"… {count} more node{'s' if count != 1 else ''}", style=STYLE_DIM)


def graph_tree(t, names=None, *, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES):
    """The rich Tree of `t`'s graph (see the module docstring); `names`: name -> object."""
    from rich.text import Text
    from rich.tree import Tree

    index = NameIndex(names)
    root, root_nr = root_edge(t)
    if root is None:
        return Tree(Text("no graph: the tensor does not require grad (grad_fn=None)",
                         style=STYLE_DIM))
    order, indegree = collect(root)
    shapes = infer_shapes(t, order)
    shared = {}
    for node in order:
        if indegree.get(node, 0) > 1:
            shared[node] = f"#{len(shared) + 1}"

    tree = Tree(_node_label(root, shapes, index, shared.get(root)), guide_style=STYLE_DIM)
    drawn = {root}
    cut: list = []  # (tree branch, [nodes not drawn under it]) for the "… N more" lines
    max_depth = max(0, int(max_depth))
    max_nodes = max(1, int(max_nodes))

    # Depth-first, children in next_functions order, with an explicit stack. A node's
    # line is added when it is popped, so the text reads in the order nodes are
    # drawn and "see above" is always true.
    stack = [(child, tree, 1) for child in reversed(_children(root))]
    if stack and max_depth == 0:
        cut.append((tree, [c for c, _, _ in stack]))
        stack = []
    while stack:
        node, branch, depth = stack.pop()
        if node in drawn:
            ref = Text("↻ ", style=STYLE_REF)
            ref.append(" ".join(p for p in (shared.get(node), _plain_name(node, index)) if p))
            ref.append(" (see above)", style=STYLE_DIM)
            branch.add(ref)
            continue
        if len(drawn) >= max_nodes:
            cut.append((branch, [node]))
            continue
        sub = branch.add(_node_label(node, shapes, index, shared.get(node)))
        drawn.add(node)
        kids = _children(node)
        if not kids:
            continue
        if depth >= max_depth:
            cut.append((sub, kids))
            continue
        stack.extend((child, sub, depth + 1) for child in reversed(kids))

    _add_more_lines(cut, drawn)
    return tree


def _children(node) -> list:
    return [c for c, _ in node.next_functions if c is not None]


def _plain_name(node, index: NameIndex) -> str:
    if is_leaf_node(node):
        name = index.of_tensor(node.variable)
        return f"AccumulateGrad {name}" if name else "AccumulateGrad"
    return display_name(node)


def _add_more_lines(cut: list, drawn: set) -> None:
    """One `… N more nodes` line per cut; each undrawn node is counted once."""
    counted = set(drawn)
    per_branch: dict = {}
    order = []
    for branch, starts in cut:
        count = 0
        stack = [c for c in starts if c not in counted]
        for c in stack:
            counted.add(c)
        count += len(stack)
        while stack:
            node = stack.pop()
            for child, _ in node.next_functions:
                if child is not None and child not in counted:
                    counted.add(child)
                    count += 1
                    stack.append(child)
        if id(branch) not in per_branch:
            per_branch[id(branch)] = [branch, 0, False]
            order.append(id(branch))
        entry = per_branch[id(branch)]
        entry[1] += count
        entry[2] = entry[2] or (count == 0 and bool(starts))
    for key in order:
        branch, count, elsewhere = per_branch[key]
        if count or elsewhere:
            branch.add(_more_label(count, elsewhere))


def graph(t, names=None, *, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES,
          color: bool | None = None, file=None, width: int | None = None) -> None:
    """Print `graph_tree(t, names)` to the current stdout (or `file`)."""
    emit(graph_tree(t, names, max_depth=max_depth, max_nodes=max_nodes),
         color=color, file=file, width=width)
