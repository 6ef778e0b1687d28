"""Walking a `grad_fn` graph (never recursively) and the shape each node produced.

A node's output shape is not stored on the node, so the views find it like this
(cheapest first; the first answer wins):

0. if the engine records it on the node (`node.output_shapes`, one shape per
   forward output, as PyTorch's nodes keep `input_metadata`), that;
1. record-free inference from what the graph already holds: the root produced
   `t.shape`; an `AccumulateGrad` "produces" its variable's shape; a node that
   saved its result knows its shape; a parent that saved its inputs, or recorded
   an input's shape because it broadcast, knows the shape of the child feeding that
   input; and a broadcasting (elementwise) op's unbroadcast inputs have its own
   output shape;
2. for shapes still unknown, in graphs of at most `DRY_WALK_LIMIT` nodes: a dry
   backward walk (`explain_steps`, seeded with ones) — the gradient a node receives
   has exactly the shape it produced. The walk has no side effects; when it cannot
   run (the graph was freed by a backward, or a saved tensor was modified in place)
   the remaining shapes are shown as `?`.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine.node import AccumulateGrad
from gradcli.engine.ops.registry import edge_of
from gradcli.engine.tensor import Tensor

DRY_WALK_LIMIT = 20_000


def root_edge(t: Tensor):
    """The (node, output_nr) a gradient of `t` enters the graph at, or (None, 0)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a tensor, got {type(t).__name__}")
    return edge_of(t)


def display_name(node) -> str:
    """The node's name as `grad_fn=<…>` shows it: PyTorch's `name()` without the
    `torch::autograd::` namespace (AccumulateGrad, CopySlices) it gives some nodes."""
    return node.name().rsplit("::", 1)[-1]


def is_leaf_node(node) -> bool:
    return type(node) is AccumulateGrad


def collect(root) -> tuple[list, dict]:
    """Every node reachable from `root` in depth-first pre-order, and each one's in-degree.

    Children are visited in `next_functions` order, so the order matches the tree view.
    """
    if root is None:
        return [], {}
    order: list = []
    seen: set = set()
    indegree: dict = {root: 0}
    stack = [root]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        children = [c for c, _ in node.next_functions if c is not None]
        for child in children:
            indegree[child] = indegree.get(child, 0) + 1
        stack.extend(reversed(children))
    return order, indegree


def infer_shapes(t: Tensor, order: list, dry_walk: bool = True) -> dict:
    """node -> {output_nr: shape tuple} for the nodes whose output shape can be found."""
    shapes: dict = {}
    if not order:
        return shapes
    root, nr = root_edge(t)
    shapes.setdefault(root, {})[nr] = tuple(t.shape)
    for node in order:
        known = shapes.setdefault(node, {})
        recorded = getattr(node, "output_shapes", None)
        if recorded:
            for i, shape in enumerate(recorded):
                if shape is not None:
                    known.setdefault(i, tuple(shape))
        if is_leaf_node(node):
            known.setdefault(0, tuple(node.variable.shape))
            continue
        op = node.op
        multi = bool(getattr(op, "multi", False))
        if not multi and node.saved_result is not None:
            known.setdefault(0, tuple(node.saved_result[0].shape))
        own = None if multi else known.get(0)
        edges = node.next_functions
        saved = node.saved if getattr(op, "save_inputs", False) else None
        if saved is not None and len(saved) != len(edges):
            saved = None
        metas = node.input_meta if node.input_meta is not None and \
            len(node.input_meta) == len(edges) else None
        for i, (child, child_nr) in enumerate(edges):
            if child is None:
                continue
            shape = None
            if saved is not None and isinstance(saved[i], Tensor):
                shape = tuple(saved[i].shape)
            elif metas is not None and metas[i] is not None:
                shape = tuple(metas[i][0])
            elif getattr(op, "broadcast", False) and own is not None:
                shape = own
            if shape is not None:
                shapes.setdefault(child, {}).setdefault(child_nr, shape)
    if dry_walk and len(order) <= DRY_WALK_LIMIT and _missing(shapes, order):
        _fill_from_dry_walk(t, shapes)
    return shapes


def _missing(shapes: dict, order: list) -> bool:
    for node in order:
        known = shapes.get(node)
        if not known:
            return True
        if len(known) < _outputs_seen(node, known):
            return True
    return False


def _outputs_seen(node, known: dict) -> int:
    return max(known) + 1 if known else 1


def _fill_from_dry_walk(t: Tensor, shapes: dict) -> None:
    from gradcli.engine.autograd import explain_steps

    seed = None if t.numel() == 1 else np.ones(tuple(t.shape))
    try:
        with np.errstate(all="ignore"):
            steps = explain_steps(t, seed)
    except Exception:  # a freed or modified graph: keep what we inferred
        return
    for node, incoming, _ in steps:
        known = shapes.setdefault(node, {})
        for nr, g in enumerate(incoming):
            if g is not None:
                known.setdefault(nr, tuple(g.shape))


def node_shapes(shapes: dict, node) -> list:
    """The known output shapes of `node`, in output order (None where unknown)."""
    known = shapes.get(node) or {}
    if not known:
        return [None]
    return [known.get(i) for i in range(max(known) + 1)]
