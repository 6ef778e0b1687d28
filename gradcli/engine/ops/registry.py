"""The op table: every differentiable op is declared once, as an `Op`.

An `Op` names the PyTorch overload, its `grad_fn` class, a numpy forward, a
backward written with Tensor ops (so it is itself differentiable, which is what
makes `create_graph=True` work), and the one-line rule the explain view shows.
`run_op` is the single place where ops run and graph nodes are made: it is the
hot path, kept lean on purpose.
"""

from __future__ import annotations

import math

import numpy as np

from .. import node as node_module
from ..dtypes import float32, float64
from ..grad_mode import ANOMALY, GRAD_MODE, TRACE_PROVIDER
from ..inference import check_saved
from ..kernels.bfloat16 import kernel_for as _bf16_kernel_for
from ..limits import MAX_ELEMENTS, check_count
from ..node import next_sequence as _next_seq
from ..node import node_class
from ..tensor import Tensor, make, refresh_view

OPS: dict[str, Op] = {}

#: every public spelling of a function -> the function: "torch.atan", "Tensor.atan",
#: "Tensor.atan_", "torch.nn.functional.gelu", "torch.linalg.inv", "torch.special.expit".
#: The Tensor class and the facade modules (gradcli.torch and its submodules) install
#: their names from here, so a new function is exposed where its `public` line says.
PUBLIC: dict[str, object] = {}


def public(*names: str):
    """Decorator: expose the function under each fully qualified public name. A name
    is declared once: a second declaration (two modules each writing `Tensor.data_ptr`)
    would otherwise win silently by import order."""

    def register(fn):
        for name in names:
            if PUBLIC.get(name, fn) is not fn:
                raise ValueError(f"{name} is declared twice ({PUBLIC[name].__module__}, {fn.__module__})")
            PUBLIC[name] = fn
        return fn

    return register


def public_names(prefix: str) -> dict:
    """{short name: function} of the PUBLIC entries directly under `prefix` ("torch.",
    "Tensor.", "torch.linalg."): nested names (torch.linalg.inv under "torch.") excluded."""
    cut = len(prefix)
    return {name[cut:]: fn for name, fn in PUBLIC.items()
            if name.startswith(prefix) and "." not in name[cut:]}

#: forward-mode AD's hook, None unless a dual level is active (gradcli.engine.forward_ad
#: sets it): fn(op, inputs, meta, result) gives the result its tangent. The ops below read
#: this one global and nothing more when forward AD is off.
FORWARD_AD = None
#: the same for ops with several outputs (split, unbind, the linalg factorisations): an
#: object with pieces(x, outs) (views of x), copies(sources, outs) (copies of sources) and
#: multi(op, inputs, meta, outs) (one node's outputs)
FORWARD_AD_MULTI = None

_ndarray = np.ndarray
_new = object.__new__
_asarray = np.asarray


class Op:
    """One row of the op table.

    forward(*arrays, *meta) -> ndarray        (arrays: numpy arrays or Python scalars)
    backward(ctx, grad) -> tuple of grads      (one per input; None where not needed)
        ctx.saved  the inputs (Tensors or scalars) when save_inputs
        ctx.result the output Tensor when save_result
        ctx.meta   the non-tensor arguments the forward got (save="meta": they count as
                   saved tensors, so a second backward without retain_graph raises)
    `broadcast`: inputs may broadcast, so gradients are summed back to each
    input's shape (and cast to its dtype) centrally, by the engine.
    `examples`: argument builders the generic tests use (gradcheck, PyTorch).
    """

    __slots__ = ("name", "node", "forward", "backward", "rule", "save_inputs", "save_result",
                 "save_meta", "broadcast", "torch_call", "examples", "multi", "save_for",
                 "domain", "out_size", "check_order", "node_cls", "binary_ufunc", "bf16", "jvp")

    def __init__(self, name: str, node: str, forward, backward=None, rule: str = "",
                 save_inputs: bool = False, save_result: bool = False, save_meta: bool = False,
                 broadcast: bool = False, torch_call: str = "", examples: list | None = None,
                 multi: bool = False, save_for: tuple | None = None, domain: str = "real",
                 out_size=None, check_order: tuple | None = None, jvp=None):
        self.name = name
        self.node = node  # the grad_fn class name
        self.forward = forward
        self.backward = backward
        self.rule = rule
        self.save_inputs = save_inputs
        self.save_result = save_result
        # meta holds saved tensors (indices, masks, targets): freed after backward
        self.save_meta = save_meta
        self.broadcast = broadcast
        self.torch_call = torch_call
        self.examples = examples if examples is not None else []
        # several outputs (split, unbind): backward gets every output's gradient
        self.multi = multi
        # per input: the inputs whose gradient needs it saved (None: always)
        self.save_for = _compile_save_for(save_for) if save_for is not None else None
        # where the generic tests draw `a` from: real, positive or small
        self.domain = domain
        # (arrays, meta) -> element count of the result, for ops whose result can be larger
        # than every input (broadcasting, mm, cat...): checked against --max-elements before
        # the forward allocates. Broadcasting ops get `broadcast_count` by default.
        self.out_size = broadcast_count if out_size is None and broadcast else out_size
        # the order PyTorch checks saved tensors for in-place changes: its generated backward
        # unpacks the saved inputs sorted by argument name (mul: other before self), the
        # result last; positions are inputs, len(inputs) is the saved result. None: input order.
        self.check_order = check_order
        self.node_cls = None  # the grad_fn class, made on first use: see node_class()
        # forward is a two-input numpy ufunc: run_scalar may hand it a 0-d array for a scalar
        self.binary_ufunc = type(forward) is np.ufunc and forward.nin == 2
        # the forward for a bfloat16 first array, where PyTorch's kernel computes in float32
        # and rounds once (engine/kernels/bfloat16.py's table); None: forward serves it
        self.bf16 = _bf16_kernel_for(name, forward)
        # forward-mode AD's explicit formula (derivatives.yaml's `result:`), read only while
        # a dual level is active: jvp(inputs, meta, result, tangents) -> the result's
        # tangent, or NotImplemented for a case left to the generic double-vjp rule
        self.jvp = jvp

    def node_class(self) -> type:
        """The grad_fn class (`MulBackward0`), made when the op first records a node: making
        all 129 at import took ~2.5 ms of every start-up. The hot paths read the slot first:
        `op.node_cls or op.node_class()`."""
        cls = self.node_cls
        if cls is None:
            cls = self.node_cls = node_class(self.node)
        return cls

    def __repr__(self) -> str:
        return f"Op({self.name!r}, {self.node!r})"


def _compile_save_for(save_for: tuple):
    """(inputs, edges) -> the inputs to save, None where no gradient needs them (one call)."""
    parts = []
    for i, deps in enumerate(save_for):
        if deps:
            cond = " or ".join(f"e[{j}][0] is not None" for j in deps)
            parts.append(f"x[{i}] if ({cond}) else None")
        else:
            parts.append("None")
    return eval(f"lambda x, e: ({', '.join(parts)},)")  # noqa: S307 - built from ints only


def defop(name: str, node: str, forward, backward=None, rule: str = "", *, save: str = "",
          broadcast: bool = False, torch_call: str = "", examples=None, multi: bool = False,
          save_for: tuple = None, domain: str = "real", out_size=None,
          check_order: tuple = None, jvp=None) -> Op:
    """Declare an op: one entry in OPS (adding an op means adding one of these).

    `save_for[i]` lists the inputs whose gradient formula reads input i: as in PyTorch,
    input i is saved (and its in-place modification checked) only if one of them needs a
    gradient, so `b = a * 2; a.mul_(2); b.backward()` is fine.
    `torch_call` is an expression over `a` (and `b`) that reaches this op through the
    public torch API: the generic tests evaluate it with real PyTorch and with gradcli.
    `out_size(arrays, meta)` counts the result's elements before it is allocated (see Op).
    `jvp(inputs, meta, result, tangents)` is the forward-mode formula (see Op).
    """
    op = Op(name, node, forward, backward, rule, "inputs" in save, "result" in save,
            "meta" in save, broadcast, torch_call, examples or [], multi, save_for, domain,
            out_size, check_order, jvp)
    if name in OPS:  # two ops of one name: the table, explain and the tests would see one
        raise ValueError(f"an op named {name!r} is declared twice")
    OPS[name] = op
    return op


def edge_of(x):
    """The (node, output_nr) edge through which a gradient reaches `x`."""
    if not isinstance(x, Tensor):
        return (None, 0)
    if x._base is not None and x._attr_version != x._vc[0]:
        refresh_view(x)
    fn = x._grad_fn
    if fn is not None:
        return (fn, x._output_nr)
    if x._requires_grad:
        return (x._grad_accumulator(), 0)
    return (None, 0)


def run_op(op: Op, inputs: tuple, meta: tuple = (), arrays: tuple | None = None) -> Tensor:
    """Run `op` forward on `inputs` and, if grad mode needs it, record its node."""
    if arrays is None:
        if len(inputs) == 2:  # (most ops: without the comprehension's frame)
            a, b = inputs
            arrays = (a._data if isinstance(a, Tensor) else a, b._data if isinstance(b, Tensor) else b)
        else:
            arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
    limit = MAX_ELEMENTS[0]
    if limit is not None and op.out_size is not None:
        count = op.out_size(arrays, meta)
        if count > limit:  # (compared here: a call per op is most of the limit's cost)
            check_count(count)
    try:
        if op.bf16 is None or not _bf16_first(arrays):
            out = op.forward(*arrays, *meta)
        else:
            out = op.bf16(*arrays, *meta)
    except ValueError as err:
        if GRAD_MODE.enabled and op.save_inputs:
            _refuse_saving_first(op, inputs)
        raise _translate(err, arrays) from None
    if type(out) is not _ndarray:
        out = _asarray(out)
    if GRAD_MODE.enabled and op.backward is not None:
        for x in inputs:
            if isinstance(x, Tensor) and (x._requires_grad or (x._base is not None
                                                             and x._base._requires_grad)):
                # (a view made before its base required grad records too, with no edge)
                if out.dtype.kind not in "fV":
                    if out.dtype.kind == "c":  # (ops/complex.py: the complex twin's node)
                        res = COMPLEX_RECORD[0](op, inputs, meta, out)
                        if FORWARD_AD is not None:
                            FORWARD_AD(op, inputs, meta, res)
                        return res
                    break
                res = _result_of(op, _record(op, inputs, meta, out), out)
                if FORWARD_AD is not None:
                    FORWARD_AD(op, inputs, meta, res)
                return res
    res = make(out, False, None)
    if FORWARD_AD is not None:
        FORWARD_AD(op, inputs, meta, res)
    return res


def _bf16_first(arrays) -> bool:
    """Whether an op's first array is bfloat16 (asked only of ops with a bfloat16 kernel)."""
    for x in arrays:
        if type(x) is _ndarray:
            return x.dtype.kind == "V"
    return False


def forward_of(op: Op, first):
    """The function computing `op` on arrays led by `first` (its bfloat16 kernel or its
    forward), for callers that run a forward themselves."""
    if op.bf16 is not None and type(first) is _ndarray and first.dtype.kind == "V":
        return op.bf16
    return op.forward


#: [fn(op, inputs, meta, out) -> Tensor]: records an op whose result is complex (its
#: complex twin's node, or PyTorch's refusal), filled by ops/complex.py; real dtypes never
#: reach it
COMPLEX_RECORD: list = [None]


def broadcast_count(arrays, meta) -> int:
    """How many elements broadcasting the array inputs together gives (0 if they cannot)."""
    if len(arrays) == 2:  # (a binary op: most calls, answered without building a list)
        a, b = arrays
        if type(a) is not _ndarray or type(b) is not _ndarray or a.shape == b.shape:
            return 0
    shapes = [a.shape for a in arrays if type(a) is _ndarray]
    if len(shapes) < 2 or shapes.count(shapes[0]) == len(shapes):
        return 0  # no larger than an input, which was checked when it was made
    # (in Python: np.broadcast_shapes makes arrays, ~40,000 machine instructions a call,
    # once per op of a `gradcli run` program, where the limit is on)
    ndim = max(map(len, shapes))
    out = [1] * ndim
    for shape in shapes:
        lead = ndim - len(shape)
        for i, size in enumerate(shape):
            have = out[lead + i]
            if size != have:
                if have == 1:
                    out[lead + i] = size
                elif size != 1:
                    return 0  # the forward raises PyTorch's broadcasting error
    return math.prod(out)


def run_scalar(op: Op, a: Tensor, s) -> Tensor:
    """`run_op(op, (a, s))` for a float Tensor and a Python scalar: the hot path of loops.

    The result has a's shape and dtype, so nothing needs broadcasting, size checks or
    undoing; the node gets one edge. Same nodes, saved values and errors as run_op.
    """
    d = a._data
    if op.binary_ufunc:
        held = _OPERANDS.get(id(s))
        if held is not None and held[0] is s and held[1] is d.dtype:
            out = op.forward(d, held[2])
        else:
            out = op.forward(d, _scalar_operand(s, d.dtype))
    else:
        out = op.forward(d, s)
    if type(out) is not _ndarray:
        out = _asarray(out)
    base = a._base
    if not (GRAD_MODE.enabled and (a._requires_grad or (base is not None and base._requires_grad))) \
            or op.backward is None:
        res = make(out, False, None)
    else:
        res = _record_one(op, a, (a, s), (), out)
    if FORWARD_AD is not None:
        FORWARD_AD(op, (a, s), (), res)
    return res


# Python scalar (by identity) -> (it, dtype, 0-d array of it): a ufunc takes a 0-d array
# of the other operand's dtype in half the time of a Python float, whose weak promotion
# it resolves on every call (0.45 against 0.85 us for float32 * 2 on 3 elements). The
# loops' scalars are the code's constants, the same object each time round.
_OPERANDS: dict = {}
_F32, _F64 = float32.np, float64.np
_EXACT_INT = 1 << 24  # an int converts exactly to float32 (and float64) up to here


def _scalar_operand(s, dtype):
    """The operand a binary ufunc gets for Python scalar `s` beside an array of `dtype`:
    a read-only 0-d array of that dtype where that gives the weak scalar's values bit for
    bit (float32/float64, a float or an int converting exactly), else `s` itself."""
    if (dtype is not _F32 and dtype is not _F64) or (
            type(s) is int and not -_EXACT_INT <= s <= _EXACT_INT):
        if dtype.kind == "V" and type(s) is float:  # bfloat16: numpy would widen to float32
            return np.array(s, dtype)
        return s
    with np.errstate(over="ignore"):  # 1e308 as float32: inf, as PyTorch's weak scalar
        held = np.array(s, dtype)
    held.flags.writeable = False
    if len(_OPERANDS) >= 64:  # a loop over many scalars: start again, never grow
        _OPERANDS.clear()
    _OPERANDS[id(s)] = (s, dtype, held)  # holding `s` keeps its id from being reused
    return held


def run_unary(op: Op, a: Tensor, meta: tuple = (), array=None) -> Tensor:
    """`run_op(op, (a,), meta)` for ops with one Tensor input (unary math, reductions):
    the node is built inline, with no per-input loops. `array` replaces a's data for the
    forward (a dtype cast). Same nodes, saved values and errors as run_op."""
    try:
        d = a._data if array is None else array
    except AttributeError:  # torch.exp(1): PyTorch's TypeError, not an internal name
        raise TypeError(f"{op.name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(a).__name__}") from None
    if MAX_ELEMENTS[0] is not None and op.out_size is not None:
        check_count(op.out_size((d,), meta))
    try:
        if op.bf16 is None or d.dtype.kind != "V":
            out = op.forward(d, *meta)
        else:
            out = op.bf16(d, *meta)
    except ValueError as err:
        raise _translate(err, (d,)) from None
    if type(out) is not _ndarray:
        out = _asarray(out)
    base = a._base
    if not (GRAD_MODE.enabled and (a._requires_grad or (base is not None and base._requires_grad))) \
            or op.backward is None:
        res = make(out, False, None)
    elif out.dtype.kind not in "fV":  # (a complex result: its twin's node, ops/complex.py)
        res = COMPLEX_RECORD[0](op, (a,), meta, out) if out.dtype.kind == "c" else \
            make(out, False, None)
    elif op.broadcast:  # (input_meta bookkeeping lives in _record)
        res = _result_of(op, _record(op, (a,), meta, out), out)
    else:
        res = _record_one(op, a, (a,), meta, out)
    if FORWARD_AD is not None:
        FORWARD_AD(op, (a,), meta, res)
    return res


def set_recorders(record_one, result_of) -> tuple:
    """Swap the two functions every op's node is recorded through (saved_tensors_hooks
    wraps them to pack what the node saved) and return the pair they replace; None
    leaves a function as it is."""
    global _record_one, _result_of
    previous = _record_one, _result_of
    _record_one = record_one or _record_one
    _result_of = result_of or _result_of
    return previous


def _result_of(op: Op, node, out) -> Tensor:
    """The output Tensor of `node` (kept by the node too when the op saves its result)."""
    res = make(out, True, node)
    if op.save_result:
        node.saved_result = (out, res._vc)  # see Node.result
        node.versions = (node.versions or ()) + (0,)
    return res


def no_derivative(name: str, message: str | None = None):
    """The backward of an op PyTorch declares no derivative for: raises its text when a
    gradient reaches it ("derivative for aten::NAME is not implemented", or `message`)."""
    text = message or f"derivative for aten::{name} is not implemented"

    def backward(ctx, grads):
        raise RuntimeError(text)

    return backward


def _new_node(op: Op, edges: tuple, saved, versions, meta, input_meta):
    """A node of `op`'s class with Node.__init__'s fields set directly (one is made per op
    recorded: the class's __init__ would be one more frame on the hot path)."""
    node = _new(op.node_cls or op.node_class())
    node.op = op
    node.next_functions = edges
    node.saved = saved
    node.versions = versions
    node.saved_result = None
    node.meta = meta
    node.input_meta = input_meta
    node.seq = _next_seq()
    node.freed = False
    if ANOMALY[0] and TRACE_PROVIDER[0] is not None:
        node.trace = TRACE_PROVIDER[0]()
    return node


def _record_one(op: Op, a: Tensor, inputs: tuple, meta: tuple, out) -> Tensor:
    """The result and node of an op whose one Tensor input is `a` = inputs[0] (the others
    are Python scalars): run_scalar's and run_unary's recording, with Node.__init__ and
    edge_of inlined (a hot path: no per-input loop)."""
    if a._base is not None and a._attr_version != a._vc[0]:
        refresh_view(a)
    fn = a._grad_fn
    edge = ((fn, a._output_nr) if fn is not None else
            (a._grad_accumulator(), 0) if a._requires_grad else _NO_EDGE)
    edges = (edge,) if len(inputs) == 1 else (edge, _NO_EDGE)
    saved = versions = None
    if op.save_inputs:
        saved = inputs if op.save_for is None else op.save_for(inputs, edges)
        versions = ((a._vc[0] if a._vc.__class__ is list else _refuse_saved(a)),) \
            if saved[0] is a else ()
    node = _new_node(op, edges, saved, versions, meta, None)
    res = make(out, True, node)
    if op.save_result:
        node.saved_result = (out, res._vc)  # see Node.result
        node.versions = (versions or ()) + (0,)
    return res


def broadcast_error(a: tuple, b: tuple):
    """Raise PyTorch's message for shapes that do not broadcast."""
    a, b = tuple(a), tuple(b)
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + a
    pb = (1,) * (n - len(b)) + b
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            raise RuntimeError(
                f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) "
                f"at non-singleton dimension {i}")
    raise RuntimeError("shapes do not broadcast")


def _translate(err: ValueError, arrays) -> Exception:
    """numpy's broadcasting ValueError becomes PyTorch's RuntimeError text."""
    if "broadcast" in str(err):
        shapes = [np.shape(a) for a in arrays if isinstance(a, _ndarray)]
        if len(shapes) >= 2:
            try:
                broadcast_error(shapes[0], shapes[1])
            except RuntimeError as torch_err:
                return torch_err
    return err


_NO_EDGE = (None, 0)


def _refuse_saved(x):
    """An inference tensor may not be saved by a recorded node (engine/inference.py)."""
    check_saved((x,))
    return x._vc[0]


def _refuse_saving_first(op: Op, inputs) -> None:
    """A forward that failed (shapes that do not broadcast...) on inputs a recorded node
    would save: PyTorch saves before it runs the kernel, so an inference tensor among
    them is refused first (engine/inference.py)."""
    needs = [(x if isinstance(x, Tensor) and x.requires_grad else None, 0) for x in inputs]
    if any(e[0] is not None for e in needs):
        saved = inputs if op.save_for is None else op.save_for(inputs, needs)
        check_saved([x for x in saved if isinstance(x, Tensor)])


def _record(op: Op, inputs, meta, out):
    """Make the graph node for one op application (only when a gradient is needed)."""
    edges = []
    for x in inputs:  # edge_of, inlined: this runs for every recorded op
        if isinstance(x, Tensor):
            if x._base is not None and x._attr_version != x._vc[0]:
                refresh_view(x)
            fn = x._grad_fn
            if fn is not None:
                edges.append((fn, x._output_nr))
            elif x._requires_grad:
                edges.append((x._grad_accumulator(), 0))
            else:
                edges.append(_NO_EDGE)
        else:
            edges.append(_NO_EDGE)
    edges = tuple(edges)
    saved = versions = input_meta = None
    if op.save_inputs:
        saved = inputs if op.save_for is None else op.save_for(inputs, edges)
        versions = []  # (a loop: a comprehension's frame costs more for a few inputs)
        for x in saved:
            if isinstance(x, Tensor):
                versions.append(x._vc[0] if x._vc.__class__ is list else _refuse_saved(x))
        versions = tuple(versions)
    if op.broadcast:
        shape, dt = out.shape, out.dtype
        i = 0
        for x in inputs:
            if isinstance(x, Tensor):
                d = x._data
                ddt = d.dtype
                if d.shape != shape or (ddt is not dt and ddt != dt):  # identity first: cheap
                    if input_meta is None:
                        input_meta = [None] * len(inputs)
                    input_meta[i] = (d.shape, ddt)
            i += 1
    return _new_node(op, edges, saved, versions, meta, input_meta)


def reduce_to_inputs(node, grads):
    """Undo broadcasting: sum each input's gradient back to its shape and dtype."""
    per_input = node.input_meta
    out = list(grads)
    for i, spec in enumerate(per_input):
        g = out[i]
        if spec is None or g is None:
            continue
        shape, dt = spec
        if g._data.shape != shape:
            g = sum_to(g, shape)
        if g._data.dtype != dt:
            if g._data.dtype.kind == "c" and dt.kind != "c":  # a real input of a complex op
                g = g.real
            g = g.to(_dtype_of_np(dt))
        out[i] = g
    return out


def _dtype_of_np(npdt):
    from .. import dtypes

    return dtypes.FROM_NP[np.dtype(npdt)]


def sum_to(g: Tensor, shape: tuple) -> Tensor:
    """Sum `g` down to `shape` (the inverse of broadcasting), with Tensor ops."""
    gshape = g._data.shape
    if gshape == shape:
        return g
    if not shape:
        return g.sum()  # as PyTorch's sum_to: a 0-d target is one plain sum (SumBackward0)
    lead = len(gshape) - len(shape)
    dims = list(range(lead))
    for i, s in enumerate(shape):
        if s == 1 and gshape[lead + i] != 1:
            dims.append(lead + i)
    if dims:
        if not GRAD_MODE.enabled and FORWARD_AD is None and g._data.dtype.kind == "f":
            # (nothing records: sum_dim's forward alone, the values run_unary would give,
            # without its Tensor and checks: a backward's undoing of a broadcast, bench W7;
            # a sum is never larger than its input, so --max-elements has nothing to check)
            # (only leading dims summed, as a bias's gradient: the sum without keepdim
            # has the shape already, no reshape on the way in or out)
            leading = len(dims) == lead
            out = OPS["sum_dim"].forward(g._data, gshape, tuple(dims), not leading)
            if type(out) is not _ndarray:
                out = _asarray(out)
            return make(out.reshape(shape) if lead and not leading else out)
        if g._data.dtype.kind in "fV" and g._data.ndim:
            # (Tensor.sum's own work for these dims, which are already whole, sorted and
            # distinct: the same SumBackward1 node and values, without its parsing)
            g = run_unary(OPS["sum_dim"], g, (gshape, tuple(dims), True))
        else:
            g = g.sum(dims, keepdim=True)
    if lead:
        if not GRAD_MODE.enabled:  # (no graph: the values alone, without a view node)
            return make(g._data.reshape(shape))
        g = g.reshape(shape)
    return g


node_module.ABOVE.install(reduce_to_inputs=reduce_to_inputs)
