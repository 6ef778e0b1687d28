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


def root_edge(t: Tensor, who: str = "graph()"):
    """The (node, output_nr) a gradient of `t` enters the graph at, or (None, 0).
    `who` names the view in the error for a non-tensor."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{who} expects a tensor, got {type(t).__name__}")
    return edge_of(t)


def display_name(node) -> str:
    """The node's name as `grad_fn=<…>` shows it: PyTorch's `name()` without the
    `torch::autograd::` namespace (AccumulateGrad, CopySlices) it gives some nodes."""
    return node.name().rsplit("::", 1)[-1]


def is_leaf_node(node) -> bool:
    return type(node) is AccumulateGrad


def output_count(node) -> int | None:
    """How many outputs `node` has, when that is known: 1 for a single-output op, the
    forward's output count for a custom Function's node; None for a multi-output op
    (split, a layer's named backward) whose count the node does not keep."""
    if is_leaf_node(node):
        return 1
    counter = getattr(node, "_output_count", None)
    try:
        count = counter() if counter is not None else None
    except Exception:  # noqa: BLE001 - a node in an odd state: say "unknown"
        count = None
    if count:
        return count
    return None if getattr(node.op, "multi", False) else 1


#: rule texts of the autograd.Functions PyTorch itself defines (the engine's generic text
#: for a custom Function says "your own backward rule", true only of a program's class)
LIBRARY_FUNCTION_RULES = {
    "CheckpointFunctionBackward": "recompute the checkpointed function's forward with grad "
                                  "enabled, then backpropagate through it "
                                  "(torch.utils.checkpoint, use_reentrant=True)",
    "CrossMapLRN2dBackward": "d CrossMapLRN2d/dx: the local response normalisation's "
                             "gradient over neighbouring channels",
    "ResizeBackward": "d resize(a)/da: the gradient viewed back to a's size",
}


def rule_text(node) -> str:
    """The rule an explain step shows for `node`: the op table's text; for a custom
    Function's node, that of the Function (PyTorch's own Functions get their own text)."""
    op = node.op
    rule = getattr(op, "rule", "") or ""
    forward_cls = getattr(type(node), "_forward_cls", None)
    if forward_cls is not None and _is_library_class(forward_cls):
        known = LIBRARY_FUNCTION_RULES.get(display_name(node))
        if known is not None:
            return known
        return (f"{forward_cls.__name__}.backward(ctx, grad_outputs...): a backward rule "
                "torch defines (autograd.Function)")
    return rule or "(no rule text in the op table)"


def _is_library_class(cls) -> bool:
    module = getattr(cls, "__module__", "") or ""
    return module.startswith(("gradcli.", "torch."))


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
        custom_out = _custom_meta(node, "_out_meta")
        if custom_out is not None:  # a custom Function's node keeps its outputs' metadata
            for i, spec in enumerate(custom_out):
                if spec is not None:
                    known.setdefault(i, tuple(spec[0]))
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
        if metas is None:
            metas = _custom_input_shapes(node, len(edges))
        if metas is None:
            metas = _meta_input_shape(node, len(edges))
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
    for _ in range(3):  # (a freed graph: its saved tensors are gone)
        if not _missing(shapes, order):
            break
        _propagate(order, shapes)
        if not _matmul_shapes(order, shapes):
            break
    return shapes


#: nodes whose first input has the shape of their (first) output: elementwise functions of
#: one tensor (with Python-number arguments), activations, casts, softmax-like ops, the
#: norms. Once a backward freed the graph, a shape known on one side is known on the other.
SAME_SHAPE_NODES = frozenset(f"{name}Backward{k}" for name, k in (
    ("Abs", 0), ("Acos", 0), ("Acosh", 0), ("Add", 1), ("Alias", 0), ("Asin", 0),
    ("Asinh", 0), ("Atan", 0), ("Atanh", 0), ("Ceil", 0), ("Clamp", 1), ("ClampMax", 0),
    ("ClampMin", 0), ("Clone", 0), ("Conj", 0), ("Cos", 0), ("Cosh", 0), ("Cumprod", 0),
    ("Cumsum", 0), ("Deg2Rad", 0), ("Digamma", 0), ("Div", 1), ("Div", 3), ("Elu", 0),
    ("Erf", 0), ("Erfc", 0), ("Erfinv", 0), ("Exp", 0), ("Exp2", 0), ("Expm1", 0),
    ("Flip", 0), ("Floor", 0), ("Frac", 0), ("Gelu", 0), ("Hardshrink", 0),
    ("Hardsigmoid", 0), ("Hardswish", 0), ("Hardtanh", 0), ("I0", 0), ("LeakyRelu", 0),
    ("Lgamma", 0), ("Log", 0), ("Log10", 0), ("Log1p", 0), ("Log2", 0), ("LogSigmoid", 0),
    ("LogSoftmax", 0), ("Logcumsumexp", 0), ("Logit", 0), ("Mish", 0), ("Mul", 1),
    ("NanToNum", 0), ("Neg", 0), ("Polygamma", 0), ("Pow", 0), ("Rad2Deg", 0),
    ("Reciprocal", 0), ("Relu", 0), ("Roll", 0), ("Round", 0), ("Round", 1), ("Rrelu", 0),
    ("Rsqrt", 0), ("Rsub", 1), ("Sgn", 0), ("Sigmoid", 0), ("Sign", 0), ("Silu", 0),
    ("Sin", 0), ("Sinc", 0), ("Sinh", 0), ("Softmax", 0), ("Softplus", 0),
    ("Softshrink", 0), ("SpecialEntr", 0), ("Sqrt", 0), ("Sub", 1), ("Tan", 0), ("Tanh", 0),
    ("Threshold", 0), ("ToCopy", 0), ("Trunc", 0), ("Celu", 0), ("Selu", 0),
    ("NativeBatchNorm", 0), ("NativeLayerNorm", 0), ("NativeGroupNorm", 0),
    ("NativeBatchNormLegit", 0), ("NativeBatchNormLegit", 1), ("Prelu", 0),
    ("PreluKernel", 0),
)) | {"BackwardHookFunctionBackward"}


def _propagate(order: list, shapes: dict) -> None:
    """Carry known shapes across shape-keeping links, both ways: a SAME_SHAPE_NODES node
    and its input; a broadcasting op and each input it recorded no shape for (which
    therefore had the op's own shape). One pass over the links, then a worklist: linear
    in the graph's size (graphs may be 1,000,000 nodes deep)."""
    linked: dict = {}  # (node, output_nr) -> [(node, output_nr) of the same shape]
    for node in order:
        if is_leaf_node(node) or getattr(node.op, "multi", False):
            continue
        edges = node.next_functions
        broadcast = bool(getattr(node.op, "broadcast", False))
        if not (broadcast or display_name(node) in SAME_SHAPE_NODES):
            continue
        metas = node.input_meta if node.input_meta is not None and \
            len(node.input_meta) == len(edges) else None
        for i, (child, child_nr) in enumerate(edges):
            if child is None or (metas is not None and metas[i] is not None):
                continue
            if i > 0 and not broadcast:  # (a norm's weight and bias: other shapes)
                break
            linked.setdefault((node, 0), []).append((child, child_nr))
            linked.setdefault((child, child_nr), []).append((node, 0))
    work = [key for key in linked if key[1] in shapes.get(key[0], {})]
    while work:
        node, nr = work.pop()
        shape = shapes[node][nr]
        for other, other_nr in linked[(node, nr)]:
            known = shapes.setdefault(other, {})
            if other_nr not in known:
                known[other_nr] = shape
                work.append((other, other_nr))


#: matrix products: node name -> (positions of the two factors among the inputs, batched)
MATMUL_NODES = {"MmBackward0": (0, 1), "AddmmBackward0": (1, 2), "BmmBackward0": (0, 1),
                "BaddbmmBackward0": (1, 2)}


def _matmul_shapes(order: list, shapes: dict) -> bool:
    """The shape of each matrix product whose factors' shapes are known (recorded on the
    node, or known for the nodes feeding it): rows of the first, columns of the second.
    True when any shape was found."""
    found = False
    for node in order:
        factors = MATMUL_NODES.get(display_name(node)) if not is_leaf_node(node) else None
        if factors is None or 0 in shapes.get(node, {}):
            continue
        edges = node.next_functions
        metas = node.input_meta if node.input_meta is not None and \
            len(node.input_meta) == len(edges) else None
        dims = []
        for i in factors:
            shape = None
            if metas is not None and metas[i] is not None:
                shape = tuple(metas[i][0])
            elif i < len(edges) and edges[i][0] is not None:
                shape = shapes.get(edges[i][0], {}).get(edges[i][1])
            dims.append(shape)
        a, b = dims
        if a is None or b is None or len(a) < 2 or len(a) != len(b):
            continue
        shapes.setdefault(node, {})[0] = tuple(a[:-1]) + (b[-1],)
        found = True
    return found


#: where ops that keep their input's shape in their (never freed) meta keep it
INPUT_SHAPE_IN_META = {
    **dict.fromkeys(("SumBackward0", "MeanBackward0", "SumBackward1", "MeanBackward1"), 0),
    **dict.fromkeys(("ViewBackward0", "UnsafeViewBackward0", "ReshapeAliasBackward0",
                     "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2",
                     "UnsqueezeBackward0", "ExpandBackward0"), 1),
    **dict.fromkeys(("SelectBackward0", "SliceBackward0"), -1),
}


def _meta_input_shape(node, n_edges: int):
    """[(shape,)] for the one input of a reshaping or reducing op, from its meta."""
    where = INPUT_SHAPE_IN_META.get(display_name(node))
    meta = node.meta
    if where is None or n_edges != 1 or not meta or len(meta) <= abs(where) - (where < 0):
        return None
    shape = meta[where]
    if not isinstance(shape, tuple) or not all(isinstance(n, int) for n in shape):
        return None
    return [(shape,)]


def _custom_meta(node, key: str):
    """A custom Function node's recorded (shape, dtype) list, or None for other nodes."""
    if getattr(type(node), "_forward_cls", None) is None:
        return None
    try:
        return node.__dict__.get(key)
    except AttributeError:
        return None


def _custom_input_shapes(node, n_edges: int):
    """Per edge of a custom node: (shape,) of the tensor input it stands for, or None.
    The node records (shape, dtype) for every forward argument (None for non-tensors) and
    has one edge per tensor argument."""
    recorded = _custom_meta(node, "_in_meta")
    if recorded is None:
        return None
    tensors = [m for m in recorded if m is not None]
    if len(tensors) != n_edges:
        return None
    return [(tuple(m[0]),) for m in tensors]


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
    from .common import held_output

    try:
        with np.errstate(all="ignore"), held_output():
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
