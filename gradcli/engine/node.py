"""Graph nodes (`grad_fn`): one class per PyTorch backward name, plus AccumulateGrad.

A node is created by `ops.run_op` when an op's result needs a gradient. It keeps
the edges to its inputs' nodes (`next_functions`, exactly PyTorch's structure),
what its backward rule needs (saved inputs/result and their versions, plain
metadata), and the tensor hooks registered on the tensors it produced.
"""

from __future__ import annotations

import itertools
import threading
import weakref

from .grad_mode import GRAD_MODE
from .late import Slots
from .saved_names import SAVED_NAMES

#: what nodes use of the modules above: the tensor factory and class (tensor.py), a
#: saved tensor's `_saved_*` view (saved_tensor.py), the packed-result marker and the
#: unpacking backward (saved_hooks.py), the sum back to the inputs' shapes (the op
#: table) and leaf accumulation (autograd.py)
ABOVE = Slots("gradcli.engine.node", "make", "Tensor", "saved_attr", "PACKED", "run_unpacked",
              "reduce_to_inputs", "accumulate", "pack_pending", "pack_kept")


# Non-leaf tensors detach_()-ed in place: id -> (a weak reference to the tensor, the node
# sequence number at the detach). A node made before the detach that saved one refuses to
# run, as PyTorch's SavedVariable does (it saved a tensor with history, now without); a
# node made after it saved a leaf. Empty, it costs one test.
DETACHED_INPLACE: dict = {}


def mark_detached_in_place(t) -> None:
    key = id(t)
    DETACHED_INPLACE[key] = (weakref.ref(t, lambda _, key=key: DETACHED_INPLACE.pop(key, None)),
                             next_sequence())
DETACHED_MESSAGE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is "
    "not supported, please use out-of-place `.detach()` instead")

#: torch.func's wrapper for a hook registered inside a transform (tensor, node and node
#: pre-hooks), so that it fires at that transform's level only; None while no thread runs
#: a transform (torch/func_guards.py sets it)
TRANSFORM_HOOK = None

_sequence = itertools.count()
next_sequence = _sequence.__next__  # creation order: newer nodes run first in backward

SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class Node:
    """Base of every grad_fn. Subclasses exist only to carry PyTorch's class name."""

    # Hooks and anomaly traces are rare: they live in the instance dict when set, and
    # read as the class defaults below otherwise, so making a node stays cheap.
    __slots__ = (
        "op", "next_functions", "saved", "versions", "saved_result", "meta", "seq", "freed",
        "input_meta", "__dict__", "__weakref__",
    )
    pre_hooks = None  # {output_nr: [fn, ...]} from Tensor.register_hook; None: node pre-hooks
    retain_hooks = None  # {output_nr: weakref to tensor} from Tensor.retain_grad
    post_hooks = None  # [fn(grad_inputs, grad_outputs), ...] from Node.register_hook
    trace = None  # where the forward op ran, under detect_anomaly
    hooked = False  # set once any of the three hook tables above is (the engine's one test)
    custom = False  # a custom Function's node: its backward runs even with no gradient
    packed = False  # its saved tensors went through saved_tensors_hooks' pack hook
    # an in-place op on a view that saved its output: (weakref to the view's grad_fn after
    # the write, its output_nr); the saved output unpacks with that history, as PyTorch's
    # SavedVariable(is_inplace_on_view) does, falling back to this node once it is gone
    result_owner = None

    def __init__(self, op, next_functions, saved, versions, result, meta, input_meta):
        self.op = op
        self.next_functions = next_functions
        self.saved = saved
        self.versions = versions
        self.saved_result = result
        self.meta = meta
        self.input_meta = input_meta  # per input: its shape when broadcasting may need undoing
        self.seq = next_sequence()
        self.freed = False

    def name(self) -> str:
        return type(self).__name__

    def needs(self, i: int) -> bool:
        """Whether input i wants a gradient (backward rules skip the others)."""
        return self.next_functions[i][0] is not None

    def meta_tensor(self, i: int):
        return ABOVE.make(self.meta[i])

    def __repr__(self) -> str:
        cls = type(self)  # (a C node class has no module; a Python Function's node has one)
        where = "" if cls.__module__ == "builtins" else cls.__module__ + "."
        return f"<{where}{cls.__name__} object at {id(self):#x}>"

    @property
    def metadata(self) -> dict:
        """A dict for the user's own notes, the same one on every read (as PyTorch's)."""
        d = self.__dict__
        meta = d.get("_metadata")
        if meta is None:
            meta = d["_metadata"] = {}
        return meta

    def register_hook(self, fn):
        """A hook on the node: fn(grad_inputs, grad_outputs) after it runs."""
        if TRANSFORM_HOOK is not None:
            fn = TRANSFORM_HOOK(fn)
        if self.post_hooks is None:
            self.post_hooks = []
            self.hooked = True
        self.post_hooks.append(fn)
        return RemovableHandle(self.post_hooks, fn)

    def register_prehook(self, fn):
        """A hook on the node: fn(grad_outputs) before it runs; may return replacements."""
        if TRANSFORM_HOOK is not None:
            fn = TRANSFORM_HOOK(fn)
        hooks = self._hooks_for(None)
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def _hooks_for(self, output_nr: int) -> list:
        if self.pre_hooks is None:
            self.pre_hooks = {}
            self.hooked = True
        return self.pre_hooks.setdefault(output_nr, [])

    @property
    def result(self):
        """The saved output, as a backward formula reads it (PyTorch's SavedVariable::unpack).

        `saved_result` holds only the output's buffer and version counter: the output's
        grad_fn is this node, and holding the output itself would make every node that
        saves it a reference cycle (freed only by the cyclic garbage collector). Each read
        makes a tensor of them; while a graph is being recorded (create_graph) its grad_fn
        is this node (or, written in place through a view, the view's node after the
        write), so the double backward flows through it."""
        saved = self.saved_result
        if saved is None:
            return None
        if self.packed:  # (saved_tensors_hooks: unpacked on every read)
            if saved[0] is ABOVE.PACKED:
                t = saved[1].tensor()
                saved = (t._data, t._vc)
        if not GRAD_MODE.enabled:
            out = ABOVE.make(saved[0], True, None)
        elif self.result_owner is None:
            out = ABOVE.make(saved[0], True, self)
        else:
            owner = self.result_owner[0]()
            out = ABOVE.make(saved[0], True, self if owner is None else owner)
            if owner is not None:
                out._output_nr = self.result_owner[1]
        out._vc = saved[1]
        return out

    def release(self) -> None:
        """Free the saved tensors after backward (retain_graph=False)."""
        if self.saved is not None or self.saved_result is not None or (
                self.op is not None and self.op.save_meta):
            self.saved = None
            self.saved_result = None
            self.freed = True

    # backward of this node, given the incoming gradients (one per output)
    def apply(self, grads):
        op = self.op
        return op.backward(self, grads if op.multi else grads[0])

    def __call__(self, *grads):
        """Run this node's backward on the given gradients, in the current grad mode, as
        PyTorch's nodes are callable: one result alone, several as a tuple."""
        expected = self._output_count()
        if expected is not None and len(grads) != expected:
            raise TypeError(f"expected {expected} arguments, got {len(grads)} instead")
        if (self.freed or self.versions) and self.saved_tensors_check():
            out = ABOVE.run_unpacked(self, list(grads))
        else:
            out = self.apply(list(grads) if self.op.multi else grads)
        if self.input_meta is not None:
            out = ABOVE.reduce_to_inputs(self, out)
        out = tuple(out)
        return out[0] if len(out) == 1 else out

    def _output_count(self):
        """How many gradients this node takes (None: not known for a multi-output op)."""
        return None if self.op.multi else 1

    def saved_tensors_check(self) -> bool:
        """Raise PyTorch's errors for freed or modified saved tensors (the first modified
        one in the op's check_order names itself in the message). True when the saved
        tensors are packed (saved_tensors_hooks): the engine unpacks them around backward."""
        if self.freed:
            raise RuntimeError(SECOND_BACKWARD)
        if self.packed:
            return True
        if DETACHED_INPLACE:
            for t in self.saved or ():
                mark = DETACHED_INPLACE.get(id(t)) if t is not None else None
                if mark is not None and mark[0]() is t and mark[1] > self.seq:
                    raise RuntimeError(DETACHED_MESSAGE)
        versions = self.versions
        if versions:
            Tensor = ABOVE.Tensor
            saved = self.saved or ()
            # the common case first: every counter where it was (no table, no result tensor)
            k = 0
            unchanged = True
            for s in saved:
                if isinstance(s, Tensor):
                    if s._vc[0] != versions[k]:
                        unchanged = False
                        break
                    k += 1
            if unchanged and self.saved_result is not None and k < len(versions):
                unchanged = self.saved_result[1][0] == versions[k]
            if unchanged:
                return False
            entries, k = {}, 0  # position -> (tensor, version it had, is the output)
            for i, s in enumerate(saved):
                if isinstance(s, Tensor):
                    entries[i] = (s, versions[k], False)
                    k += 1
            if self.saved_result is not None and k < len(versions):
                entries[len(saved)] = (self.result, versions[k], True)
            order = self.op.check_order if self.op is not None else None
            # (an index kept by keep_index_inputs sits past the positions check_order names)
            for i in (*order, *sorted(entries)) if order else sorted(entries):
                if i in entries:
                    t, v, is_output = entries[i]
                    if t._vc[0] != v:
                        raise RuntimeError(modified_inplace_message(t, v, self, is_output))


#: the ops whose node PyTorch makes with the index (mask, condition) as its first saved
#: tensor: under saved_tensors_hooks their node is packed by keep_index_inputs, the kept
#: tensors first (see packs_index_first)
INDEX_FIRST: set = set()


class _PackPending(threading.local):
    """Per thread (as the hooks themselves), `waiting`: the node of an INDEX_FIRST op this
    thread just recorded under saved_tensors_hooks, with the hooks to pack it with, waiting
    for its keep_index_inputs: (node, pack, unpack) or None. Another thread's ops, under
    its own hooks, never see it."""

    waiting = None


PACK_PENDING = _PackPending()


def packs_index_first(*ops) -> None:
    """Declare ops whose kept index tensors PyTorch packs before the tensors the node saves
    itself (GatherBackward0 packs index, then self); the others pack them after (NllLoss:
    self, then target)."""
    INDEX_FIRST.update(ops)


def keep_index_inputs(result, *inputs):
    """Keep the tensors an op's backward reads without differentiating them (the indices
    of gather/scatter/index_*/advanced indexing, a mask, a where condition, a loss target;
    and the input or source an op saves only to read later, as take's and index_add's)
    with the node that made `result`, as PyTorch saves them: modifying one in place before
    the backward then raises PyTorch's "modified by an inplace operation" error (the
    formula reads a copy or a view of its values, which would otherwise go silently stale
    or wrong). Under saved_tensors_hooks they are packed with the node's own saved tensors,
    in PyTorch's order (see INDEX_FIRST). Returns `result`. Nothing is kept when no node
    was recorded."""
    node = getattr(result, "_grad_fn", None)
    if type(node) is CopySlices:  # (written through a view: the node that ran the op)
        node = node.meta[1]
    pending = PACK_PENDING.waiting
    if pending is not None:
        PACK_PENDING.waiting = None
        if pending[0] is not node:  # (another node's: pack it as it is)
            ABOVE.pack_pending(pending, 0)
            pending = None
    if node is None or node.freed:
        return result
    Tensor = ABOVE.Tensor
    kept = tuple(t for t in inputs if isinstance(t, Tensor) and t._vc.__class__ is list)
    if kept:
        saved = node.saved or ()
        versions = node.versions or ()
        k = sum(1 for s in saved if isinstance(s, Tensor))  # (a saved result's version is last)
        node.saved = (*saved, *kept)
        node.versions = (*versions[:k], *(t._vc[0] for t in kept), *versions[k:])
    if pending is not None:
        ABOVE.pack_pending(pending, len(kept))
    elif kept and node.packed:
        ABOVE.pack_kept(node, len(kept))
    return result


def keep_given(result, op, *given):
    """Keep the arguments a call gave `op` as the user wrote them (a negative dim, a dims
    tuple or an int scalar, before the op normalises them into its meta) with the node
    that made `result`: one reference, read only by `grad_fn._saved_<name>` (PyTorch's
    node shows what the call passed, e.g. dim=-1 as the unsigned 18446744073709551615).
    Returns `result`; nothing is kept when no node of `op` was recorded."""
    node = result._grad_fn
    if node is not None and node.op is op:
        node._given = given
    return result


def short_name(node) -> str:
    """How PyTorch names a node inside error messages: MulBackward0 -> Mul, MaxBackward1 -> Max1."""
    name = type(node).__name__
    if name.endswith("Backward0"):
        return name[:-9]
    return name.replace("Backward", "")


#: the scalar types whose name in PyTorch's messages is the legacy tensor class
#: (torch.LongTensor); the others print as their type (CPUBoolType, CPUComplexFloatType)
_LEGACY_CLASS_NAMED = frozenset(("Byte", "Char", "Short", "Int", "Long", "Half", "Float",
                                 "Double"))


def modified_inplace_message(t, expected: int, node, is_output: bool = False) -> str:
    scalar = t.dtype._legacy[:-len("Tensor")]
    kind = f"torch.{t.dtype._legacy}" if scalar in _LEGACY_CLASS_NAMED else f"CPU{scalar}Type"
    shape = ", ".join(str(s) for s in t._data.shape)
    # a saved output names the node that saved it; a saved input its current grad_fn
    fn = node if is_output else t.grad_fn
    who = f", which is output {t._output_nr} of {short_name(fn)}," if fn is not None else ""
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{kind} [{shape}]]{who} is at version {t._vc[0]}; expected "
        f"version {expected} instead. Hint: enable anomaly detection to find the operation "
        "that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, "
        "check_nan=False)."
    )


class SavedValue:
    """`grad_fn._saved_<x>` / `grad_fn._raw_saved_<x>`: one descriptor per name PyTorch's
    node class has (node_class installs them on each class), answered on read by
    `ABOVE.saved_attr` from what the node already keeps (its saved inputs, output, meta). Not a
    `Node.__getattr__`: any `__getattr__` on the class sends every attribute read of every
    node (`node.op`, `node.hooked`... in the backward loop) through CPython's slow lookup,
    ~30,000 machine instructions a step of bench W7. A non-data descriptor: a value the
    user stored on the node (a custom Function's ctx) still wins."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __get__(self, node, cls=None):
        if node is None:
            return self
        return ABOVE.saved_attr(node, self.name)


class AccumulateGrad(Node):
    """The leaf end of the graph: adds the incoming gradient into `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        # (Node.__init__'s fields, set here: one made per leaf per step)
        self.op = None
        self.next_functions = ()
        self.saved = None
        self.versions = None
        self.saved_result = None
        self.meta = None
        self.input_meta = None
        self.seq = next_sequence()
        self.freed = False
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __call__(self, *grads):
        if len(grads) != 1:
            raise TypeError(f"expected 1 arguments, got {len(grads)} instead")
        if grads[0] is not None:
            ABOVE.accumulate(self.variable, [grads[0]], GRAD_MODE.enabled)
        return ()


class CopySlices(Node):
    """An in-place write through a view, as seen from the view's base (meta holds the
    view's region and the node of the op that computed the written values)."""

    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def release(self) -> None:
        fn = self.meta[1]
        fn.release()
        self.freed = fn.freed


class RemovableHandle:
    """What register_hook returns: `.remove()` takes the hook out again."""

    __slots__ = ("_hooks", "_fn", "id")
    _ids = itertools.count()

    def __init__(self, hooks: list, fn):
        self._hooks = hooks
        self._fn = fn
        self.id = next(self._ids)

    def remove(self) -> None:
        for i, h in enumerate(self._hooks):
            if h is self._fn:
                del self._hooks[i]
                return

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False

    def __repr__(self) -> str:
        return f"<torch.utils.hooks.RemovableHandle object at {id(self):#x}>"


class CopyBackwards(Node):
    """copy_'s node: a hand-written node in PyTorch, so its name() is qualified."""

    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::CopyBackwards"


_node_classes: dict[str, type] = {"AccumulateGrad": AccumulateGrad, "CopySlices": CopySlices,
                                  "CopyBackwards": CopyBackwards}
AccumulateGrad.__module__ = CopySlices.__module__ = CopyBackwards.__module__ = "builtins"
RemovableHandle.__module__ = "torch.utils.hooks"


def node_class(name: str) -> type:
    """The Node subclass named `name` (e.g. MulBackward0), made once."""
    cls = _node_classes.get(name)
    if cls is None:
        # (PyTorch's node classes are C types without a module: <class 'MulBackward0'>)
        cls = type(name, (Node,), {"__slots__": (), "__module__": "builtins",
                                   **saved_descriptors(name)})
        _node_classes[name] = cls
    return cls


def saved_descriptors(name: str) -> dict:
    """The `_saved_<x>` / `_raw_saved_<x>` descriptors of node class `name`: exactly the
    names PyTorch's class has (saved_names.py), so dir() and AttributeError match it."""
    out = {}
    for entry in SAVED_NAMES.get(name, "").split():
        key = entry.rstrip("*")
        out[f"_saved_{key}"] = SavedValue(f"_saved_{key}")
        if entry.endswith("*"):
            out[f"_raw_saved_{key}"] = SavedValue(f"_raw_saved_{key}")
    return out


class _ReadOnlyMethod:
    """A node method that refuses assignment and deletion, as the methods of PyTorch's C
    node types do ("'MulBackward0' object attribute 'name' is read-only"); nodes keep an
    instance dict for their hooks, where an assignment would otherwise land silently.
    Only the rarely called public methods are wrapped (reading one costs a Python call)."""

    __slots__ = ("fn", "name")

    def __init__(self, fn, name: str):
        self.fn, self.name = fn, name

    def __get__(self, obj, cls=None):
        return self.fn if obj is None else self.fn.__get__(obj, cls)

    def __set__(self, obj, value):
        raise AttributeError(f"'{type(obj).__name__}' object attribute '{self.name}' is "
                             "read-only")

    def __delete__(self, obj):
        self.__set__(obj, None)


def _refuse_metadata(self, value=None):
    raise AttributeError(f"attribute 'metadata' of '{type(self).__name__}' objects is not "
                         "writable")


def _seal(cls) -> None:
    for name in ("name", "register_hook", "register_prehook"):
        fn = cls.__dict__.get(name)
        if fn is not None:
            setattr(cls, name, _ReadOnlyMethod(fn, name))
    meta = cls.__dict__.get("metadata")
    if meta is not None:
        cls.metadata = property(meta.fget, _refuse_metadata, _refuse_metadata, meta.__doc__)


for _cls in (Node, AccumulateGrad, CopySlices, CopyBackwards):
    _seal(_cls)
