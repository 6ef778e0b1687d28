"""Saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks): pack each tensor a node
saves when the op runs, unpack it when backward (or the user) reads it.

Nothing of this is on the hot path while no hooks are active: entering the first
context swaps the op table's two node-recording functions (`registry._record_one`,
`registry._result_of`, through which every op's node is made) for versions that pack
after recording, and leaving the last context puts the originals back. A packed node
keeps `saved` as a tuple whose tensors are `_Packed` entries and `saved_result` as
`(PACKED, _Packed)`; `Node.saved_tensors_check` tells the engine to unpack them around
the backward formula (`run_unpacked`), so a retained graph unpacks again next time.
"""

from __future__ import annotations

import threading

from . import node as node_module
from .grad_mode import GRAD_MODE
from .tensor import Tensor, make


class _PerThread(threading.local):
    """A list of this thread's own: PyTorch keeps the saved-tensor hooks (and their
    disabling) per thread, so two threads under different hooks never pack each other's
    tensors, and a new thread starts with none. Reads as the list it holds (`STACK[-1]`,
    `STACK[:] = ...`, truth, iteration), so callers treat it as one."""

    def __init__(self, *initial):
        self.items = list(initial)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __setitem__(self, i, value) -> None:
        self.items[i] = value

    def append(self, value) -> None:
        self.items.append(value)

    def pop(self):
        return self.items.pop()


STACK = _PerThread()  # this thread's [(pack_hook, unpack_hook)], innermost last
DISABLED = _PerThread(None)  # this thread's error message while disable_saved_tensors_hooks is active
# how many threads have hooks: the packing recorders are installed while any has
_USERS = [0]
_USERS_LOCK = threading.Lock()
PACKED = object()  # marks a packed saved_result (its [1] is never a version counter)
# forward AD's (tangent_of, set_tangent, level token) while a dual level is active, else
# None (filled by forward_ad, which this module must not import): a packed tensor keeps
# its tangent and the unpacked one gets it back, as PyTorch's SavedVariable keeps fw_grad
FORWARD_AD = [None]
_originals: dict = {}


class _Packed:
    """One packed tensor, with what the unpacked tensor needs of the original: its
    place in the graph (grad_fn and output number, or the leaf's accumulator)."""

    __slots__ = ("value", "unpack", "grad_fn", "output_nr", "leaf", "tangent", "output")

    def __init__(self, t: Tensor, pack, unpack, output: bool = False):
        # an op's saved output: kept so an in-place op can make it share its target's storage
        self.output = t if output else None
        fwd = FORWARD_AD[0]
        self.tangent = None
        if fwd is not None:
            held = fwd[0](t)
            if held is not None:
                self.tangent = (fwd[2], held)
        version = t._vc[0]
        # PyTorch runs pack hooks with grad mode off: what they compute joins no graph
        enabled = GRAD_MODE.enabled
        GRAD_MODE.enabled = False
        try:
            self.value = pack(t)
        finally:
            GRAD_MODE.enabled = enabled
        if t._vc[0] != version:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as "
                "input to pack hook cannot be modified by in-place operations as this can lead "
                "to unexpected side-effects. Please open an issue if you need to perform in-place "
                "operations on the input to a pack hook.")
        self.unpack = unpack
        self.grad_fn = t._grad_fn
        self.output_nr = t._output_nr
        self.leaf = t if t._grad_fn is None and t._requires_grad else None

    def tensor(self) -> Tensor:
        out = self.unpack(self.value)
        if not isinstance(out, Tensor):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                f"type {type(out).__name__}")
        res = self._in_graph(out)
        fwd = FORWARD_AD[0]
        if self.tangent is not None and fwd is not None and self.tangent[0] is fwd[2] \
                and fwd[0](res) is None:
            fwd[1](res, self.tangent[1])
        return res

    def _in_graph(self, out: Tensor) -> Tensor:
        if self.leaf is not None:
            if out is self.leaf:
                return out
            # a new tensor whose gradient still reaches the original leaf
            res = make(out._data, True, None)
            res._accumulator = self.leaf._accumulator
            return res
        if self.grad_fn is None:
            return out if not out._requires_grad else out.detach()
        res = make(out._data, True, self.grad_fn)
        res._output_nr = self.output_nr
        res._vc = out._vc
        return res


def push(pack, unpack) -> None:
    if DISABLED[0] is not None:
        raise RuntimeError(DISABLED[0])
    if not STACK:
        _started()
    STACK.append((pack, unpack))


def pop() -> None:
    if not STACK:  # an extra __exit__ (e.g. from inside a hook): nothing to undo, as PyTorch
        return
    STACK.pop()
    if not STACK:
        _stopped()


def _started() -> None:
    """This thread's first hooks: the recorders pack from now on (if no thread had any)."""
    with _USERS_LOCK:
        _USERS[0] += 1
        if _USERS[0] == 1:
            _install()


def _stopped() -> None:
    """This thread's last hooks left: its waiting node is packed, and the recorders go back
    to the plain ones when no other thread has hooks."""
    _flush_pending()
    with _USERS_LOCK:
        _USERS[0] -= 1
        if _USERS[0] == 0:
            _uninstall()


def restore(snapshot: list) -> None:
    """Put the hook stack back as it was when a backward started: hooks entered or exited
    by code running inside backward do not outlive it (PyTorch's engine restores its
    thread-local state after each node)."""
    if len(STACK) == len(snapshot) and all(a is b for a, b in zip(STACK, snapshot, strict=True)):
        return
    had = bool(STACK)
    STACK[:] = snapshot
    if STACK and not had:
        _started()
    elif had and not STACK:
        _stopped()


def _saved_order(node, count: int, with_result: bool) -> list:
    """The order PyTorch's node packs and unpacks what it saved: its SavedVariable fields'
    order (the op's check_order: MulBackward0 holds other before self), the output last
    unless that order places it; position `count` stands for the output. The index
    tensors keep_index_inputs appended come first for an INDEX_FIRST op (`index_first`:
    how many), last otherwise."""
    op = node.op
    first = node.__dict__.get("index_first", 0)
    own = count - first
    order = list(range(own, count)) if first else []
    order += [i for i in (getattr(op, "check_order", None) or ())
              if i < own or (i == count and with_result)]
    rest = list(range(count)) + ([count] if with_result else [])
    return order + [i for i in rest if i not in order]


def pack_node(node) -> None:
    """Pack what `node` saved with the innermost hooks (called right after it is made); an
    INDEX_FIRST op's node waits for its keep_index_inputs (this thread's
    node_module.PACK_PENDING)."""
    _flush_pending()  # (an index op whose indices were not kept: pack it as it is)
    if node.op in node_module.INDEX_FIRST:
        node_module.PACK_PENDING.waiting = (node, *STACK[-1])
        return
    _pack(node, *STACK[-1])


def _flush_pending() -> None:
    """Pack the node still waiting on this thread for its keep_index_inputs, as it is."""
    pending = node_module.PACK_PENDING.waiting
    if pending is not None:
        node_module.PACK_PENDING.waiting = None
        pack_pending(pending, 0)


def pack_pending(pending, kept: int) -> None:
    """Pack the node keep_index_inputs was waited for, its `kept` last saved tensors (the
    indices it appended) first."""
    node, pack, unpack = pending
    if kept:
        node.index_first = kept
    _pack(node, pack, unpack)


def pack_kept(node, kept: int) -> None:
    """Pack the `kept` tensors keep_index_inputs appended to an already packed node (after
    the node's own, as NllLossBackward0 packs target after self)."""
    pack, unpack = STACK[-1] if STACK else (None, None)
    if pack is None:
        return
    items = list(node.saved)
    for i in range(len(items) - kept, len(items)):
        items[i] = _Packed(items[i], pack, unpack)
    node.saved = tuple(items)


def _pack(node, pack, unpack) -> None:
    saved = node.saved
    result = node.saved_result
    count = len(saved) if saved else 0
    with_result = result is not None and result[0] is not PACKED
    if not count and not with_result:
        return
    items = list(saved or ())
    for i in _saved_order(node, count, with_result):
        if i < count:
            if isinstance(items[i], Tensor):
                items[i] = _Packed(items[i], pack, unpack)
        else:
            t = make(result[0], True, node)
            t._vc = result[1]
            node.saved_result = (PACKED, _Packed(t, pack, unpack, output=True))
    if count:
        node.saved = tuple(items)
    node.packed = True


def unpack_saved(node) -> tuple:
    """(saved, saved_result) with every packed tensor unpacked, in the packing order."""
    saved = node.saved
    result = node.saved_result
    count = len(saved) if saved else 0
    packed_result = result is not None and result[0] is PACKED
    items = list(saved or ())
    for i in _saved_order(node, count, packed_result):
        if i < count:
            if type(items[i]) is _Packed:
                items[i] = items[i].tensor()
        else:
            t = result[1].tensor()
            result = (t._data, t._vc)
    return (tuple(items) if saved else saved), result


def run_unpacked(node, grads):
    """The node's backward formula, with its saved tensors unpacked while it runs."""
    packed = node.saved, node.saved_result
    node.saved, node.saved_result = unpack_saved(node)
    try:
        op = node.op
        return op.backward(node, grads if op.multi else grads[0])
    finally:
        if node.saved is not None or node.saved_result is not None:  # (not released meanwhile)
            node.saved, node.saved_result = packed


def _install() -> None:
    from .ops.registry import set_recorders

    record_one, result_of = set_recorders(None, None)
    _originals["recorders"] = (record_one, result_of)

    def record_one_packed(op, a, inputs, meta, out):
        res = record_one(op, a, inputs, meta, out)
        if STACK:
            pack_node(res._grad_fn)
        return res

    def result_of_packed(op, node, out):
        res = result_of(op, node, out)
        if STACK:
            pack_node(node)
        return res

    set_recorders(record_one_packed, result_of_packed)


def _uninstall() -> None:
    from .ops.registry import set_recorders

    set_recorders(*_originals.pop("recorders"))


node_module.ABOVE.install(PACKED=PACKED, run_unpacked=run_unpacked, pack_pending=pack_pending,
                         pack_kept=pack_kept)
