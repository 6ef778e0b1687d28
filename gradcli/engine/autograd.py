"""The backward engine: iterative, dependency-counted, in PyTorch's node order.

`backward` and `grad` both call `run_engine`. Nodes run when every gradient they
will receive has arrived (a Kahn walk, never recursion, so a 1,000,000-node chain
is fine); among ready nodes the most recently created runs first and
AccumulateGrad before all, as PyTorch's CPU engine does, so hooks fire in
PyTorch's order. Saved tensors are released as each node finishes unless
`retain_graph`.
"""

from __future__ import annotations

import heapq
import itertools
import weakref
from heapq import heappop, heappush, heappushpop
from typing import NamedTuple

import numpy as np

from . import grad_mode, saved_hooks
from . import node as node_module
from . import tensor as tensor_module
from .fpstate import run_quietly
from .grad_mode import GRAD_MODE
from .node import AccumulateGrad
from .ops.registry import edge_of, reduce_to_inputs
from .saved_hooks import run_unpacked
from .tensor import Tensor, make
from .warn_site import first_time


class GradientEdge(NamedTuple):
    """An edge of the graph: the node a gradient enters and which of its outputs
    (torch.autograd.graph.GradientEdge); autograd.grad takes it as an input."""

    node: object
    output_nr: int
    ownership_token: object = None  # (PyTorch's keeps a Python-made graph alive)


_LEAF_PRIORITY = float("-inf")
CREATE_GRAPH_CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak. "
    "(Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp:1307.)")
# (id, the nodes it will run, its `shared` Holders) of each backward running now, innermost last
TASKS: list = []
#: hook slot filled by engine/profiler.py while a profile records: NODE_HOOK[0](node)
#: is called as each node starts and returns an object whose close() ends its event
NODE_HOOK: list = [None]
_task_ids = itertools.count()
#: forward-mode AD's slot, None unless a dual level is active (gradcli.engine.forward_ad
#: fills it): fw(node, grads, run) runs a node's backward formula without create_graph so
#: that the gradients carry tangents, as PyTorch's do inside a dual level (`run`: the
#: formula's runner when not the op's own backward). The engine reads it once per pass.
FORWARD_AD_BACKWARD = None


def _as_tensor_list(x) -> list:
    if x is None:
        return []
    if isinstance(x, (Tensor, GradientEdge)):
        return [x]
    return list(x)


def _root_grads(outputs: list, grad_outputs: list | None, create_graph: bool) -> list:
    """The gradient to start each output with (ones for one-element outputs)."""
    if grad_outputs is not None and len(grad_outputs) != len(outputs):
        raise RuntimeError(
            "grad can be implicitly created only for scalar outputs"
            if not grad_outputs else
            f"Mismatch in number of grad_outputs: got {len(grad_outputs)} but expected {len(outputs)}")
    grads = []
    for i, out in enumerate(outputs):
        g = None if grad_outputs is None else grad_outputs[i]
        # (edge_of first: a view whose base was written in place since gets its history
        # now, as PyTorch's gradient_edge does; a no_grad view's edge is dead)
        if not edge_of(out)[0] or not out._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out._data.dtype.kind == "c":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {out.dtype}")
            ones = np.empty(out._data.shape, out._data.dtype)  # (np.ones_like: 3 Python calls)
            ones.fill(1)
            g = make(ones)
        elif not isinstance(g, Tensor):
            g = make(np.asarray(g, dtype=out._data.dtype))
        else:
            if g._data.shape != out._data.shape:
                from .size import Size

                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._data.shape)} "
                    f"and output[{i}] has a shape of {Size(out._data.shape)}.")
            if g._data.dtype != out._data.dtype:
                g = make(g._data.astype(out._data.dtype))
        grads.append(g)
    return grads


def _deprecated_argument(message: str) -> None:
    from .warn_site import warn_at_caller

    warn_at_caller(message, FutureWarning)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None) -> None:
    """torch.autograd.backward: accumulate gradients into the leaves' .grad."""
    outputs = tensors if type(tensors) is list else _as_tensor_list(tensors)  # (Tensor.backward's)
    if grad_variables is not None:  # (deprecated; rare)
        _deprecated_argument("`grad_variables` is deprecated. Use `grad_tensors` instead.")
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both "
                               "passed to `backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    grads = _root_grads(outputs, None if grad_tensors is None else _as_tensor_list(grad_tensors)
                        if not isinstance(grad_tensors, Tensor) else [grad_tensors], create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph and first_time("create_graph_cycle"):
        import warnings

        warnings.warn(CREATE_GRAPH_CYCLE_WARNING, stacklevel=1)  # (inside, as PyTorch's)
    if inputs is not None:
        targets = _as_tensor_list(inputs)
        if not targets:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        captured = run_engine(outputs, grads, retain_graph, create_graph, targets, accumulate=False)
        for t, g in zip(targets, captured, strict=False):
            if type(t) is GradientEdge:  # an edge: only a leaf's AccumulateGrad stores a .grad
                if g is not None and type(t.node) is AccumulateGrad:
                    _accumulate(t.node.variable, [g], create_graph)
                continue
            if g is not None and not (t._retains_grad and t._grad_fn is not None):
                _accumulate(t, [g], create_graph)  # (retain_grad already stored a non-leaf's)
                if t._grad_fn is None:  # a leaf's AccumulateGrad ran: its post-hooks too
                    acc = t._grad_accumulator()
                    if acc is not None and acc.hooked:
                        _after_accumulate(acc, [g])
        return
    run_engine(outputs, grads, retain_graph, create_graph, None, True)  # accumulate


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """torch.autograd.grad: the gradients of outputs w.r.t. inputs, without touching .grad."""
    if not only_inputs:  # (deprecated; rare)
        _deprecated_argument("only_inputs argument is deprecated and is ignored now (defaults to "
                             "True). To accumulate gradient for other parts of the graph, please "
                             "use torch.autograd.backward.")
    outs = _as_tensor_list(outputs)
    ins = _as_tensor_list(inputs)
    single = isinstance(inputs, Tensor)
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
            "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if is_grads_batched:
        return _batched_grad(outs, ins, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    for t in ins:
        if not isinstance(t, (Tensor, GradientEdge)):
            raise RuntimeError(
                f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")
    gos = None
    if grad_outputs is not None:
        gos = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
    grads = _root_grads(outs, gos, create_graph)
    for t in ins:
        if type(t) is not GradientEdge and not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    captured = run_engine(outs, grads, retain_graph, create_graph, ins, accumulate=False,
                          stop_at_targets=True)
    result = []
    for i, (t, g) in enumerate(zip(ins, captured, strict=False)):
        if g is None:
            if materialize_grads:
                if type(t) is GradientEdge:
                    raise RuntimeError(
                        "materialize_grads cannot be used when the given input is a GradientEdge")
                # (under create_graph PyTorch's zeros require grad: a higher-order grad works)
                g = make(np.zeros_like(t._data), bool(create_graph))
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior.")
        result.append(g)
    del single
    return tuple(result)


def _batched_grad(outs, ins, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads) -> tuple:
    """grad(is_grads_batched=True): one backward per slice of the grad_outputs' first
    dimension, stacked (PyTorch vectorizes it with vmap; the values are the same)."""
    from .ops.shape import stack
    from .size import Size

    gos = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs or ())
    if len(gos) != len(outs):
        raise RuntimeError(
            f"Mismatch in number of grad_outputs: got {len(gos)} but expected {len(outs)}")
    for i, (o, g) in enumerate(zip(outs, gos, strict=True)):
        if g._data.ndim == 0 or g._data.shape[1:] != o._data.shape:
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output "
                "as the batch dimension. The sizes of the remaining dimensions are expected to "
                "match the shape of corresponding output, but a mismatch was detected: "
                f"grad_output[{i}] has a shape of {Size(g._data.shape[2:])} and output[{i}] has a "
                f"shape of {Size(o._data.shape)}. If you only want some tensors in `grad_output` "
                "to be considered batched, consider using vmap.")
    batch = gos[0]._data.shape[0] if gos else 0
    per_input = [[] for _ in ins]
    for b in range(batch):
        keep = True if b < batch - 1 else retain_graph
        res = grad(outs, ins, [g[b] for g in gos], retain_graph=keep, create_graph=create_graph,
                   allow_unused=True)
        for k, r in enumerate(res):
            per_input[k].append(r)
    result = []
    for i, (t, rows) in enumerate(zip(ins, per_input, strict=True)):
        if not rows or all(r is None for r in rows):
            if materialize_grads:
                result.append(make(np.zeros((batch,) + t._data.shape, t._data.dtype)))
                continue
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior.")
            result.append(None)
            continue
        rows = [make(np.zeros_like(t._data)) if r is None else r for r in rows]
        result.append(stack(rows, 0))
    return tuple(result)


def _exclusive(t: Tensor, shared) -> bool:
    """Whether the engine alone holds gradient `t` and its buffer, so it may take the
    buffer over (AccumulateGrad) or add into it: `t` was made by a built-in backward
    formula (or by the engine's own sum) into a buffer of its own, and was never given to
    anyone else this pass. Everything that hands a gradient out records it in `shared`
    (run_engine's Holders, by id): the user's root gradients, tensor and node hooks, retained
    and captured gradients, custom Functions' results, and a tensor sent down two edges.
    It keeps the tensors (`Holders`), so no id in it is stale. `shared` None: never."""
    return shared is not None and id(t) not in shared and _own_buffer(t)


def _own_buffer(t: Tensor) -> bool:
    """Whether `t` is a whole tensor over a writable buffer of its own (no view, no
    history): the only kind of gradient AccumulateGrad may take over."""
    d = t._data
    return (d.base is None and d.flags.owndata and d.flags.writeable and t._base is None
            and t._grad_fn is None)


class Holders(dict):
    """run_engine's record of the gradients someone besides one buffer slot holds this
    pass (see _exclusive), by id. It keeps the tensors themselves, so that no id in it
    can be taken by a new tensor while the pass runs (a reused id would make a fresh
    gradient look held)."""

    __slots__ = ()

    def hold(self, tensors) -> None:
        for t in tensors:
            if t is not None:
                self[id(t)] = t


def _unheld(grads: list, shared=None) -> Tensor:
    """grads[0], taken over when no one but this list holds it, else a copy (grads[0]
    stays). Whether anyone holds it is asked of the language, not of reference counts:
    the list's reference is dropped and a weak reference says whether the tensor lived
    on (a hook kept it, another edge's buffer holds it, the user passed it in). On a
    runtime that frees objects late the tensor still looks held, which costs a copy,
    never a shared buffer. `shared`'s own reference is set aside for the question and
    put back if the tensor lives on. The taken tensor keeps its buffer and version counter; the
    list gets a second tensor over them for the node's post-hooks, as PyTorch's .grad
    is a detached alias of the gradient it stole."""
    ref = weakref.ref(grads[0])
    data, versions = grads[0]._data, grads[0]._vc
    recorded = shared is not None and shared.pop(id(grads[0]), None) is not None
    grads[0] = None
    held = ref()
    if held is not None:
        grads[0] = held
        if recorded:
            shared[id(held)] = held
        return make(np.array(data, copy=True))
    taken = make(data)
    taken._vc = versions
    alias = make(data)
    alias._vc = versions
    grads[0] = alias
    return taken


def _accumulate(var: Tensor, grads: list, create_graph: bool, shared=None) -> None:
    """AccumulateGrad: .grad = grads[0] the first time, .grad += it after.

    The first gradient is copied, unless nobody else can see it: the engine alone made
    and held it (`_exclusive`), or user code (a hook, a custom backward) returned it and
    kept no reference (`_unheld`). Then it becomes .grad as it is, PyTorch's "steal", and
    an in-place change to .grad shows in what the node's post-hooks receive."""
    g = grads[0]
    if g._data.dtype is not var._data.dtype and g._data.dtype != var._data.dtype:  # (identity first)
        g = make(g._data.astype(var._data.dtype), g._requires_grad, g._grad_fn)
    if g._data.shape != var._data.shape:
        g = make(np.broadcast_to(g._data, var._data.shape).copy())
    old = var._grad
    if old is None:
        if create_graph and g._requires_grad:
            from .ops.views import COPY, run_op

            var._grad = run_op(COPY, (make(np.zeros_like(var._data)), g))  # CopyBackwards
        elif not g._requires_grad and _own_buffer(g):  # (_exclusive, or else _unheld)
            if shared is not None and id(g) not in shared:
                var._grad = g
            elif g is grads[0]:
                g = None  # (_unheld must see the engine's last reference go)
                var._grad = _unheld(grads, shared)
            else:
                var._grad = make(np.array(g._data, copy=True))
        else:
            var._grad = make(np.array(g._data, copy=True))
        kept = var._grad._data
        if kept.ndim > 1 and not (kept.flags.c_contiguous and var._data.flags.c_contiguous) \
                and not var._grad._requires_grad:  # (ndim first: a flags read makes an object)
            _obey_layout(var)
    elif create_graph:  # recording: out of place, as PyTorch (the old .grad stays as it was)
        var._grad = old + g
    else:
        if old._data.flags.writeable:
            old._data += g._data
            old._vc[0] += 1
        else:
            var._grad = make(old._data + g._data)


def _obey_layout(var: Tensor) -> None:
    """PyTorch's layout contract for a first .grad: the leaf's strides when the leaf is
    dense (a channels_last leaf gets a channels_last grad), C order when it is not."""
    from .ops.memory_formats import obey_layout

    arr = obey_layout(var._grad._data, var._data)
    if arr is not var._grad._data:  # (PyTorch clones a gradient it cannot steal as it is)
        var._grad = make(arr)


def _collect(root_nodes: list):
    """Every node reachable from the roots, and how many edges point at each (no recursion)."""
    deps = dict.fromkeys(root_nodes, 0)
    order = list(root_nodes)
    stack = list(root_nodes)
    pop, push, add = stack.pop, stack.append, order.append
    while stack:
        for child, _ in pop().next_functions:
            if child is not None:
                n = deps.get(child)
                if n is None:
                    deps[child] = 1
                    add(child)
                    push(child)
                else:
                    deps[child] = n + 1
    return order, deps


def _needed(order: list, target_nodes: set) -> set:
    """Nodes on some path to a target node (the others need not run)."""
    parents: dict = {}
    for node in order:
        for child, _ in node.next_functions:
            if child is not None:
                parents.setdefault(child, []).append(node)
    needed = set(target_nodes)
    stack = list(target_nodes)
    while stack:
        node = stack.pop()
        for p in parents.get(node, ()):
            if p not in needed:
                needed.add(p)
                stack.append(p)
    return needed


def explain_steps(output: Tensor, gradient=None) -> list:
    """The backward pass of `output` as a list of steps, without side effects.

    Same order as a real backward, but no hooks fire, no `.grad` changes and the
    graph is kept. Each step is (node, incoming gradients, outgoing gradients).
    """
    grads = _root_grads([output], None if gradient is None else [gradient], False)
    steps: list = []
    run_engine([output], grads, True, False, None, accumulate=False,
               observe=lambda node, incoming, outgoing: steps.append((node, incoming, outgoing)))
    return steps


def run_engine(outputs, root_grads, retain_graph, create_graph, targets, accumulate, observe=None,
               stop_at_targets=False):
    """_run_engine with numpy's floating-point errors ignored (as PyTorch's backward gives
    inf and nan silently; fpstate.run_quietly: one Context.run a pass)."""
    return run_quietly(_run_engine, outputs, root_grads, retain_graph, create_graph, targets,
                       accumulate, observe, stop_at_targets)


def _run_engine(outputs, root_grads, retain_graph, create_graph, targets, accumulate, observe,
                stop_at_targets):
    """Run the backward pass; return the gradients captured for `targets` (if any).

    With `observe`, the pass is a dry run for the explain view: hooks are skipped,
    nothing is accumulated or released, and observe(node, grads_in, grads_out) sees
    every step.
    """
    root_nodes = []
    buffers: dict = {}
    shared = Holders()  # see _exclusive: the gradients others hold too
    for g in root_grads:  # (Holders.hold, inlined)
        if g is not None:
            shared[id(g)] = g
    for out, g in zip(outputs, root_grads):
        node, nr = edge_of(out)
        buf = buffers.get(node)
        if buf is None:  # (what _add_to makes of an empty buffer)
            buffers[node] = [None] * nr + [g]
            root_nodes.append(node)
        else:
            _add_to(buf, nr, g, shared)

    order, deps = _collect(root_nodes)
    capture = stop_at = None
    if targets is not None:
        capture = {}
        for i, t in enumerate(targets):
            node, nr = edge_of(t) if type(t) is not GradientEdge else t[:2]
            if node is None:
                continue
            capture.setdefault(node, []).append((nr, i))
        needed = _needed(order, set(capture))
        if stop_at_targets:
            # grad(): a target's own node runs only if another target lies below it (PyTorch
            # captures the gradient flowing into the tensor and stops: no node hook, no check
            # of its freed saved tensors)
            stop_at = {n for n in capture if not any(c in needed for c, _ in n.next_functions)}
        deps = dict.fromkeys(needed, 0)  # count only the edges between needed nodes
        for node in needed:
            for child, _ in node.next_functions:
                if child in needed:
                    deps[child] += 1
    else:
        needed = None

    captured = [None] * (len(targets) if targets is not None else 0)
    heap = []
    counter = 0
    ready = None
    if len(root_nodes) == 1 and needed is None:  # one output: it starts the hand-over chain
        if deps.get(root_nodes[0], 0) == 0:
            ready = root_nodes[0]
    else:
        for node in root_nodes:
            if deps.get(node, 0) == 0 and (needed is None or node in needed):
                heap.append((_priority(node), counter, node))
                counter += 1
        heapq.heapify(heap)

    TASKS.append((next(_task_ids), deps if needed is None else needed, shared, stop_at, [],
                  targets is None))
    hooks_before = list(saved_hooks.STACK) if saved_hooks.STACK else ()
    prev_mode = GRAD_MODE.enabled
    GRAD_MODE.enabled = bool(create_graph)
    fw_backward = None if create_graph else FORWARD_AD_BACKWARD
    anomaly = grad_mode.ANOMALY[0]
    special = capture is not None or observe is not None  # else: hooks are the only extras
    node = span = None
    try:
        # A chain hands over straight to its one newly ready child (`ready`); the heap
        # orders the rest (AccumulateGrad first, then the newest node first).
        while True:
            if ready is not None:
                if heap:
                    counter += 1  # (_priority inlined, here and below)
                    node = heappushpop(heap, (_LEAF_PRIORITY if type(ready) is AccumulateGrad
                                              else -ready.seq, counter, ready))[2]
                else:
                    node = ready
                ready = None
            elif heap:
                node = heappop(heap)[2]
            else:
                break
            if NODE_HOOK[0] is not None:
                if span is not None:
                    span.close()
                span = NODE_HOOK[0](node)
            grads = buffers.pop(node, None) or [None]
            if special or node.hooked:
                target = capture is not None and node in capture
                if target or node.hooked or observe is not None:
                    shared.hold(grads)  # (hooks, retained, captured grads see them)
                stop = target and stop_at is not None and node in stop_at
                if target and stop_at is not None and not stop:
                    _capture(capture[node], grads, captured)  # grad(): before any hook, as PyTorch
                if observe is None:
                    if node.pre_hooks:
                        _run_pre_hooks(node, grads)
                        shared.hold(grads)  # (a hook's replacement is the user's)
                    if node.retain_hooks:
                        _retain(node, grads, create_graph)
                if stop:  # a target of grad() with no other target below: after its tensor hooks
                    _capture(capture[node], grads, captured)
                    continue
                leaf = type(node) is AccumulateGrad
                if target and stop_at is None and not leaf:
                    # backward(inputs=) on a non-leaf: its .grad sees the tensor hooks'
                    # changes only, not the grad_fn pre-hooks' (PyTorch's retains_grad order)
                    _capture(capture[node], grads, captured)
                if observe is None and node.pre_hooks and None in node.pre_hooks:
                    for hook in list(node.pre_hooks[None]):
                        replaced = hook(tuple(grads))
                        if replaced is not None:
                            grads = list(replaced)
                            shared.hold(grads)
                        replaced = None  # (a later steal asks whether anyone else holds it)
                if target and stop_at is None and leaf:  # a leaf: what its AccumulateGrad gets
                    _capture(capture[node], grads, captured)
            if type(node) is AccumulateGrad:
                if observe is not None:
                    observe(node, grads, ())
                if accumulate and grads[0] is not None:
                    _accumulate(node.variable, grads, create_graph, shared)
                    if node.hooked:
                        _after_accumulate(node, grads)
                continue
            if grads[0] is None and all(g is None for g in grads) and not node.custom:
                # (list.count would call __eq__; a custom Function's backward still runs)
                out_grads = (None,) * len(node.next_functions)
            else:
                op = node.op
                if (node.freed or node.versions) and node.saved_tensors_check():
                    out_grads = (run_unpacked(node, grads) if fw_backward is None  # (saved_tensors_hooks)
                                 else fw_backward(node, grads, run_unpacked))
                elif fw_backward is not None:  # (a dual level: the gradients carry tangents)
                    out_grads = fw_backward(node, grads, None)
                else:
                    out_grads = op.backward(node, grads if op.multi else grads[0])
                if node.input_meta is not None:
                    out_grads = reduce_to_inputs(node, out_grads)
                if anomaly:
                    _check_nan(node, out_grads)
                if observe is not None:
                    observe(node, grads, out_grads)
                    shared.hold(out_grads)
                elif node.hooked and node.post_hooks:
                    shared.hold(out_grads)
                    out_grads = _run_post_hooks(node, out_grads, grads)
                    shared.hold(out_grads)
                if len(out_grads) > 2:  # (two edges: checked in the loop below)
                    _mark_repeats(out_grads, shared)
            if not retain_graph:
                node.release()
            prev = None
            for (child, nr), g in zip(node.next_functions, out_grads):
                if child is None or (needed is not None and child not in needed):
                    continue
                if g is prev and g is not None:  # one tensor down two edges: both hold it
                    shared[id(g)] = g
                prev = g
                buf = buffers.get(child)
                if buf is None:
                    if nr == 0:
                        buffers[child] = [g]
                    else:
                        buf = buffers[child] = []
                        if g is not None:
                            _add_to(buf, nr, g, shared)
                elif g is not None:
                    _add_to(buf, nr, g, shared)
                left = deps[child] - 1
                deps[child] = left
                if left == 0:
                    if ready is not None:
                        counter += 1
                        heappush(heap, (_LEAF_PRIORITY if type(ready) is AccumulateGrad
                                        else -ready.seq, counter, ready))
                    ready = child
            # Only the buffers hold the gradients now: a spent one is freed at once.
            out_grads = g = prev = None
        callbacks = TASKS[-1][4]
        while callbacks:  # queue_callback's, in order (one may queue another)
            callbacks.pop(0)()
    except Exception:
        if anomaly and node is not None:
            _warn_error_in(node)
        raise
    finally:
        if span is not None:
            span.close()
        GRAD_MODE.enabled = prev_mode
        TASKS.pop()
        if saved_hooks.STACK or hooks_before:
            saved_hooks.restore(hooks_before)
    return captured


def _after_accumulate(node, grads: list) -> None:
    """The leaf's post-accumulate-grad hooks (they see the tensor), then the node's own
    post-hooks (grad_inputs=(), grad_outputs=the gradient), as PyTorch runs them."""
    var = node.variable
    for hook in list(getattr(var, "_post_acc_hooks", None) or ()):
        if hook(var) is not None:
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")
    if node.post_hooks:
        for hook in list(node.post_hooks):
            hook((), tuple(grads))


def queue_callback(callback) -> None:
    """Run `callback` when the running backward has finished its graph (PyTorch's
    Variable._execution_engine.queue_callback)."""
    if not TASKS:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    TASKS[-1][4].append(callback)


def current_task_id() -> int:
    """The running backward's id (-1 outside backward), as torch._C._current_graph_task_id."""
    return TASKS[-1][0] if TASKS else -1


def is_checkpoint_valid() -> bool:
    """False while a backward that computes gradients for given inputs runs (autograd.grad,
    backward(inputs=...)): torch.autograd._is_checkpoint_valid, which the reentrant
    checkpoint reads because its inner backward could not reach those inputs."""
    return TASKS[-1][5] if TASKS else True


def will_engine_execute_node(node) -> bool:
    """Whether the running backward will run `node` (torch._C._will_engine_execute_node)."""
    if not TASKS:
        raise RuntimeError(
            "_get_should_execute_nodes should only be called during the backward pass")
    stop_at = TASKS[-1][3]
    if stop_at and node in stop_at and type(node) is AccumulateGrad:
        raise RuntimeError(
            "A leaf node was passed to _will_engine_execute_node but we are currently running "
            "autograd.grad(). This is currently not supported.")
    return node in TASKS[-1][1]


def _mark_repeats(out_grads, shared: Holders) -> None:
    """Record in `shared` a gradient tensor that a formula returned for two inputs."""
    seen = set()
    for g in out_grads:
        if g is not None:
            key = id(g)
            if key in seen:
                shared[key] = g
            seen.add(key)


def _capture(spots, grads: list, captured: list) -> None:
    """Keep the gradients arriving at a target of grad() (spots: (output_nr, index) pairs)."""
    for nr, i in spots:
        if nr < len(grads):
            captured[i] = grads[nr]


def _priority(node) -> float:
    return _LEAF_PRIORITY if type(node) is AccumulateGrad else -node.seq


def _add_to(buf: list, nr: int, g: Tensor, shared=None) -> None:
    """Add gradient g into slot nr of a node's input buffer: into the buffer already there
    when the engine alone holds it (`_exclusive`; no graph is being recorded, same shape
    and dtype), else as a new sum (which the engine alone holds)."""
    while len(buf) <= nr:
        buf.append(None)
    old = buf[nr]
    if old is None:
        buf[nr] = g
    elif (not GRAD_MODE.enabled and FORWARD_AD_BACKWARD is None  # (a sum of tangents too)
            and old._data.shape == g._data.shape
            and old._data.dtype == g._data.dtype and _exclusive(old, shared)):
        np.add(old._data, g._data, out=old._data)
    else:
        buf[nr] = old + g


def _run_pre_hooks(node, grads: list) -> None:
    """Tensor hooks, in registration order; a hook may return a replacement gradient."""
    for nr, hooks in node.pre_hooks.items():
        if nr is None or not hooks:
            continue
        while len(grads) <= nr:  # (an output no gradient reached: its hooks see None)
            grads.append(None)
        g = grads[nr]
        for hook in list(hooks):
            replaced = hook(g)
            if replaced is not None:
                if not isinstance(replaced, Tensor):
                    raise TypeError(
                        f"expected Variable, but hook returned '{type(replaced).__name__}'")
                if g is not None and replaced._data.shape != g._data.shape:
                    name = getattr(hook, "__name__", type(hook).__name__)
                    raise RuntimeError(f"hook '{name}' has changed the size of value")
                g = replaced
        grads[nr] = g


def _run_post_hooks(node, grad_inputs, grad_outputs):
    """A node's hooks (Node.register_hook), in registration order: each sees the
    gradients the node computed and may return a tuple that replaces them."""
    for hook in list(node.post_hooks):
        replaced = hook(tuple(grad_inputs), tuple(grad_outputs))
        if replaced is None:
            continue
        name = getattr(hook, "__name__", type(hook).__name__)
        if not isinstance(replaced, tuple):
            raise TypeError(f"expected tuple, but hook returned '{type(replaced).__name__}'")
        if len(replaced) != len(grad_inputs):
            raise RuntimeError(f"hook '{name}' has returned an incorrect number of values "
                               f"(got {len(replaced)}, but expected {len(grad_inputs)})")
        for old, new in zip(grad_inputs, replaced):
            if new is not None and old is not None and new._data.shape != old._data.shape:
                raise RuntimeError(f"hook '{name}' has changed the size of value")
        grad_inputs = replaced
    return grad_inputs


def _retain(node, grads: list, create_graph: bool) -> None:
    for nr, held in node.retain_hooks.items():
        t = held()
        if t is None or nr >= len(grads) or grads[nr] is None or not t._retains_grad:
            continue
        g = grads[nr]
        if t._grad is None:
            t._grad = g if create_graph else make(np.array(g._data, copy=True))
        else:
            t._grad = t._grad + g


def _warn_error_in(node) -> None:
    """detect_anomaly: name the node whose backward failed and where its forward ran, as a
    warning (printed to stderr if warnings are errors, so the original error still wins)."""
    import sys
    import warnings

    trace = node.trace
    msg = (f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
           f"{trace if isinstance(trace, str) else ''}")
    try:
        warnings.warn(msg, UserWarning, stacklevel=2)
    except Exception:  # noqa: BLE001 - a warnings filter set to "error"
        print(msg, file=sys.stderr)


def _check_nan(node, out_grads) -> None:
    if not grad_mode.ANOMALY_CHECK_NAN[0]:  # detect_anomaly(check_nan=False): traces only
        return
    for i, g in enumerate(out_grads):
        if g is not None and g._data.dtype.kind in "fVc" and np.isnan(g._data).any():
            err = RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
            err.gradcli_trace = node.trace
            raise err


node_module.ABOVE.install(accumulate=_accumulate)
tensor_module.ABOVE.install(backward=backward)
