"""Custom autograd functions: `torch.autograd.Function`, its ctx and its graph node.

As in PyTorch, the ctx a forward receives IS the graph node its outputs get as
grad_fn (an instance of `<Name>Backward`, a subclass of BackwardCFunction made once
per Function class), so `y.grad_fn.saved_tensors` and attributes set on ctx are the
same thing. Function is a plain base class with static methods and no metaclass: a
class made by the .grad language's class statement subclasses it the same way.

The engine runs such a node like any other: `node.op.backward(node, grads)` is
`_run_backward` here, which materializes missing gradients, calls the user's
backward and checks what it returned (count, types, shapes) with PyTorch's errors.
"""

from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np

from . import saved_hooks
from .grad_mode import GRAD_MODE
from .inference import check_saved
from .node import SECOND_BACKWARD, Node, SavedValue, modified_inplace_message
from .tensor import VIEW_CUSTOM, VIEW_MULTI, Tensor, make

_MISSING = object()


class _CustomOp:
    """What node.op is for a custom node (the engine reads backward and multi; the
    explain view reads rule)."""

    __slots__ = ("name", "rule", "backward")
    multi = True
    save_meta = False
    check_order = None

    def __init__(self, name: str, rule: str, backward):
        self.name = name
        self.rule = rule
        self.backward = backward

    def __repr__(self) -> str:
        return f"<custom op {self.name}>"


class FunctionCtx:
    """The type of ctx objects, for isinstance checks and annotations (a custom node is
    the ctx itself: see BackwardCFunction)."""

    __slots__ = ()


class BackwardCFunction(Node, FunctionCtx):
    """The ctx of a custom Function's forward and the grad_fn of its outputs."""

    __slots__ = ()
    custom = True  # the engine calls its backward even when every incoming grad is None
    _raw_saved_tensors = SavedValue("_raw_saved_tensors")  # (PyTorch's node has no _saved_tensors)

    def __repr__(self) -> str:
        return f"<torch.autograd.function.{type(self).__name__} object at {id(self):#x}>"

    # `ctx.result = ...` is the user's own attribute (the forward-AD tutorial keeps its
    # output there): Node.result, an op's saved output, means nothing for a custom node
    @property
    def result(self):
        try:
            return self.__dict__["result"]
        except KeyError:
            raise AttributeError(
                f"'{type(self).__name__}' object has no attribute 'result'") from None

    @result.setter
    def result(self, value) -> None:
        self.__dict__["result"] = value

    @result.deleter
    def result(self) -> None:
        if self.__dict__.pop("result", _MISSING) is _MISSING:
            raise AttributeError("result")

    # ----------------------------------------------------------- ctx API
    def save_for_backward(self, *tensors) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type "
                    f"{type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        self._to_save_forward = tensors

    def mark_dirty(self, *args) -> None:
        self._dirty = args

    def mark_non_differentiable(self, *args) -> None:
        self._non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to save_for_backward, checked against in-place changes."""
        d = self.__dict__
        entries = d.get("_saved")
        if entries is None:
            if d.get("_released"):
                raise RuntimeError(SECOND_BACKWARD)
            return tuple(d.get("_to_save") or ())  # (read inside forward, before wrapping)
        out = []
        for entry in entries:
            if entry is None:
                out.append(None)
                continue
            t, version, output_nr = entry
            if version is None:  # packed by saved_tensors_hooks: unpacked on each read
                out.append(t.tensor())
                continue
            if output_nr is not None:  # an output of this node: rebuilt, no cycle held
                data, vc = t
                t = make(data, True, self if GRAD_MODE.enabled else None)
                t._vc = vc
                t._output_nr = output_nr
            if t._vc[0] != version:
                raise RuntimeError(modified_inplace_message(t, version, self, output_nr is not None))
            out.append(t)
        return tuple(out)

    @property
    def saved_variables(self) -> tuple:
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                      stacklevel=2)
        return self.saved_tensors

    @property
    def needs_input_grad(self) -> tuple:
        return self.__dict__.get("_needs_input_grad", ())

    # ----------------------------------------------------------- node
    def release(self) -> None:
        d = self.__dict__
        if d.get("_saved") is not None:
            d["_saved"] = None
            d["_released"] = True

    def saved_tensors_check(self) -> bool:
        """Nothing up front: PyTorch checks a custom node's saved tensors when its
        backward reads ctx.saved_tensors."""
        return False

    def apply(self, *grads):
        return tuple(_call_user_backward(self, list(grads)))

    def __call__(self, *grads):
        out = _call_user_backward(self, list(grads))
        return out[0] if len(out) == 1 else tuple(out)

    def _output_count(self):
        return len(self.__dict__.get("_out_meta") or ())


def _backward_class(cls) -> type:
    """`<Name>Backward`, made once per Function class and kept on it (`_backward_cls`)."""
    node_cls = cls.__dict__.get("_backward_cls")
    if node_cls is None:
        name = f"{cls.__name__}Backward"
        node_cls = type(name, (BackwardCFunction,), {"__slots__": (), "_forward_cls": cls})
        node_cls.__module__ = "torch.autograd.function"
        node_cls._op = _CustomOp(name, f"{cls.__name__}.backward(ctx, grad_outputs...): your own "
                                 "backward rule (custom autograd.Function)", _run_backward)
        cls._backward_cls = node_cls
    return node_cls


# ------------------------------------------------------------------ apply

def apply_function(cls, args: tuple, kwargs: dict):
    """Function.apply: run forward without recording, then wire the outputs to a node."""
    setup_style = getattr(cls.setup_context, "__func__", cls.setup_context) is not _BASE_SETUP
    if FUNC_TRANSFORMS is not None:  # (inside torch.func's transforms: their requirements)
        FUNC_TRANSFORMS(cls, setup_style)
    if setup_style:  # (setup_context sees forward's defaults too, as PyTorch's)
        bound = inspect.signature(cls.forward).bind(*args, **kwargs)
        bound.apply_defaults()
        args = tuple(bound.args)
    elif kwargs:
        args = _keywords_as_positional(cls.forward, args, kwargs)
    node_cls = _backward_class(cls)
    ctx = node_cls.__new__(node_cls)
    Node.__init__(ctx, node_cls._op, (), None, None, None, None, None)
    grad_on = GRAD_MODE.enabled
    needs = tuple(grad_on and isinstance(a, Tensor) and a.requires_grad for a in args)
    d = ctx.__dict__
    d["_needs_input_grad"] = needs
    is_executable = any(needs)
    forward_ad = FORWARD_AD  # (a dual level: the forward sees plain inputs, jvp runs after)
    tangents = None if forward_ad is None else forward_ad.enter(args)
    GRAD_MODE.enabled = False
    try:
        if setup_style:
            output = cls.forward(*args)
            cls.setup_context(ctx, args, output)
        else:
            output = cls.forward(ctx, *args)
    finally:
        GRAD_MODE.enabled = grad_on
        if forward_ad is not None:
            forward_ad.leave()
    wrapped = _wrap_outputs(ctx, args, output, is_executable)
    if tangents is None:
        return wrapped
    return forward_ad.run_jvp(cls, ctx, args, wrapped, tangents)


def _keywords_as_positional(forward, args: tuple, kwargs: dict) -> tuple:
    """forward(ctx, ...)'s keyword arguments as PyTorch's apply takes them: each fills the
    positional slot of its name (defaults are not filled in, so needs_input_grad and the
    gradients backward returns count only what was passed), the slots must end up
    contiguous, and keyword-only or unknown names are refused."""
    names = [p.name for p in list(inspect.signature(forward).parameters.values())[1:]
             if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                           inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    slots = list(args) + [_UNSET] * (len(names) - len(args))
    for name, value in kwargs.items():
        if name not in names:
            raise TypeError(f"forward() got an unexpected keyword argument '{name}'")
        i = names.index(name)
        if slots[i] is not _UNSET:
            raise TypeError(f"forward() got multiple values for argument '{name}'")
        slots[i] = value
    last = max(i for i, v in enumerate(slots) if v is not _UNSET)
    for i in range(len(args), last):
        if slots[i] is _UNSET:
            raise TypeError(f"forward() missing required argument: '{names[i]}' (position {i})")
    return tuple(slots[:last + 1])


_UNSET = object()


#: forward-mode AD's hook, None unless a dual level is active: an object whose
#: enter(args) suspends tangents around the user's forward (returning the inputs'
#: tangents, None when no input has one), leave() resumes them, and run_jvp(cls, ctx,
#: args, outputs, tangents) calls the Function's jvp and gives the outputs its results.
FORWARD_AD = None
#: torch.func's slot, None unless one of its transforms is running (gradcli.torch.func
#: fills it): fn(cls, setup_style) raises PyTorch's error for a Function the transform
#: cannot run (no setup_context; under vmap, no vmap rule)
FUNC_TRANSFORMS = None


def _view_of_self(t: Tensor) -> Tensor:
    """A new tensor object over the same storage and version counter (an input returned
    as it is becomes a view of itself, as PyTorch's view_as)."""
    prev = GRAD_MODE.enabled
    GRAD_MODE.enabled = False
    try:
        return t.view_as(t)
    finally:
        GRAD_MODE.enabled = prev


def _wrap_outputs(ctx, args: tuple, output, is_executable: bool):
    d = ctx.__dict__
    is_tuple = isinstance(output, tuple)
    outs = output if is_tuple else (output,)
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    dirty = {id(t) for t in d.get("_dirty", ())}
    non_diff = {id(t) for t in d.get("_non_differentiable", ())}
    if dirty and not dirty <= {id(o) for o in outs}:
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned as "
            "output. The inputs that are modified inplace must all be outputs of the Function.")
    n_tensor_outs = sum(isinstance(o, Tensor) for o in outs)
    if is_executable:  # the edges first: a dirty input is about to get this node as grad_fn
        from .ops.registry import edge_of

        edges, in_meta = [], []
        for a in args:
            if isinstance(a, Tensor):
                edges.append(edge_of(a) if a.requires_grad else (None, 0))
                in_meta.append((a._data.shape, a._data.dtype))
            else:
                in_meta.append(None)
    wrapped, out_meta, replaced, non_diff_outputs = [], [], {}, []
    views, n_differentiable = [], 0
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            wrapped.append(o)
            out_meta.append(None)
            continue
        out_meta.append((o._data.shape, o._data.dtype))
        is_input = id(o) in input_ids
        is_modified = id(o) in dirty
        differentiable = (is_executable and id(o) not in non_diff
                          and o._data.dtype.kind in "fcV")
        new = o
        if not differentiable:
            non_diff_outputs.append(i)
            if not o.requires_grad:
                if is_input and not is_modified:
                    new = _view_of_self(o)
            elif is_input:
                new = o.detach()
            elif o._base is None:
                o.detach_()
        elif is_modified:
            if o._grad_fn is None and o.requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            if not is_input:
                warnings.warn(
                    "Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not an "
                    "input, there is no need to pass it to mark_dirty().", UserWarning, stacklevel=3)
            if o._base is not None and n_tensor_outs > 1:
                raise RuntimeError(
                    "If your Function modifies inplace an input that is a view of another Tensor, "
                    "your Function cannot return more than one Tensor. This is not supported by the "
                    "current autograd engine. You should either make sure the input is not a view "
                    "(using .clone() for example) or make your Function only return one Tensor "
                    "(potentially splitting it into two Functions: one doing the inplace that "
                    "returns a single Tensor and a second one that does the other operations). You "
                    "can ask on the forum https://discuss.pytorch.org/ if you need help to do this "
                    "change.")
            o._vc[0] += 1  # (PyTorch's rebase_history bumps the version once more)
            _set_history(o, ctx, i)
            if o._base is not None:
                # a view written in place: its base's history goes through CopySlices
                # over this node (whose first input is taken to be the view, as PyTorch)
                from .ops.views import rewrite_base_history

                ctx.next_functions = tuple(edges)
                rewrite_base_history(o, o)
        else:
            if is_input:
                new = _view_of_self(o)
            _set_history(new, ctx, i)
        if new._base is not None and not (is_input and is_modified):
            # written in place later, PyTorch refuses rather than replay the view over the
            # custom backward (CreationMeta IN_CUSTOM_FUNCTION; MULTI_OUTPUT_NODE below)
            new._creation = VIEW_CUSTOM
            views.append(new)
        if differentiable:
            n_differentiable += 1
        if new is not o:
            replaced[id(o)] = new
        wrapped.append(new)
    if n_differentiable > 1:
        for v in views:
            if v._grad_fn is ctx:
                v._creation = VIEW_MULTI
    if is_executable:
        ctx.next_functions = tuple(edges)
        d["_in_meta"] = in_meta
        d["_out_meta"] = out_meta
        if non_diff_outputs:
            d["_non_diff_outputs"] = non_diff_outputs
        _save(ctx, replaced)
    else:
        d.pop("_to_save", None)
    return tuple(wrapped) if is_tuple else wrapped[0]


def _set_history(t: Tensor, node, output_nr: int) -> None:
    t._grad_fn = node
    t._output_nr = output_nr
    t._requires_grad = True
    if t._base is not None:  # its history is this node now, whatever forward wrote into it
        t._attr_version = t._vc[0]


def _save(ctx, replaced: dict) -> None:
    """Turn ctx.save_for_backward's tensors into entries with the versions they have now
    (after forward); an output of this node is held by its storage, not by the tensor,
    so the node and its output do not form a cycle."""
    d = ctx.__dict__
    to_save = d.pop("_to_save", None)
    if to_save is None:
        return
    check_saved(to_save)  # (inference tensors: engine/inference.py)
    entries = []
    for t in to_save:
        if t is None:
            entries.append(None)
            continue
        t = replaced.get(id(t), t)
        if saved_hooks.STACK:
            pack, unpack = saved_hooks.STACK[-1]
            entries.append((saved_hooks._Packed(t, pack, unpack), None, None))
        elif t._grad_fn is ctx:
            entries.append(((t._data, t._vc), t._vc[0], t._output_nr))
        else:
            entries.append((t, t._vc[0], None))
    d["_saved"] = entries


# ------------------------------------------------------------------ backward

def _run_backward(node, grads):
    """The engine's call: (gradients per output) -> gradients per tensor input. The
    user's backward may keep what it returns: the engine must not write into it."""
    out = _call_user_backward(node, list(grads))
    from .autograd import TASKS

    if TASKS:
        TASKS[-1][2].hold(out)
    return out


def _call_user_backward(node, grads: list):
    d = node.__dict__
    out_meta = d.get("_out_meta") or ()
    while len(grads) < len(out_meta):
        grads.append(None)
    if d.get("_materialize", True):
        # ctx._materialize_non_diff_grads = False: non-differentiable outputs' stay None
        skip = () if d.get("_materialize_non_diff_grads", True) else d.get("_non_diff_outputs", ())
        for i, spec in enumerate(out_meta):
            if grads[i] is None and spec is not None and i not in skip:
                grads[i] = make(np.zeros(spec[0], spec[1]))
    cls = type(node)._forward_cls
    backward_fn = cls.backward
    vjp_fn = cls.vjp
    if backward_fn is not _BASE_BACKWARD and vjp_fn is not _BASE_BACKWARD and vjp_fn is not backward_fn:
        raise RuntimeError(
            "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
            "should only implement one of them.")
    user_fn = vjp_fn if vjp_fn is not _BASE_BACKWARD else backward_fn
    result = user_fn(node, *grads)
    if not isinstance(result, tuple):
        result = (result,)
    in_meta = d.get("_in_meta") or ()
    n_in = len(in_meta)
    name = type(node).__name__
    if len(result) > n_in and all(r is None for r in result[n_in:]):
        result = result[:n_in]
    if len(result) != n_in:
        raise RuntimeError(
            f"function {name} returned an incorrect number of gradients (expected {n_in}, "
            f"got {len(result)})")
    out = []
    k = 0
    for i, (g, spec) in enumerate(zip(result, in_meta, strict=True)):
        if spec is None:
            if g is not None:
                raise RuntimeError(
                    f"function {name} returned a gradient different than None at position {i + 1}, "
                    "but the corresponding forward input was not a Variable")
            continue
        if g is not None:
            if not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if node.next_functions[k][0] is None:
                g = None  # the input needs no gradient: PyTorch drops it unchecked
            else:
                g = _fit(g, spec, name, k)
        out.append(g)
        k += 1
    return out


def _fit(g: Tensor, spec, name: str, index: int) -> Tensor:
    """A returned gradient made to its input's shape (summing a broadcast one) and dtype."""
    shape, dtype = spec
    gshape = g._data.shape
    if gshape != shape:
        if not _expandable(shape, gshape):
            raise RuntimeError(
                f"Function {name} returned an invalid gradient at index {index} - got "
                f"[{', '.join(map(str, gshape))}] but expected shape compatible with "
                f"[{', '.join(map(str, shape))}]")
        from .ops.registry import sum_to

        g = sum_to(g, shape)
    if g._data.dtype != dtype:
        from .dtypes import FROM_NP

        g = g.to(FROM_NP[np.dtype(dtype)])
    return g


def _expandable(shape: tuple, target: tuple) -> bool:
    """Whether a tensor of `shape` broadcasts to `target`."""
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target), strict=False):
        if s != t and s != 1:
            return False
    return True


# ------------------------------------------------------------------ once_differentiable

_ONCE_MESSAGE = "trying to differentiate twice a function that was marked with @once_differentiable"


class _DelayedErrorOp:
    __slots__ = ()
    multi = True
    save_meta = False
    check_order = None
    rule = "raises: the backward it stands for was marked @once_differentiable"

    def backward(self, node, grads):
        raise RuntimeError(_ONCE_MESSAGE)


class Error(Node):
    """Stands in for the graph of a @once_differentiable backward: differentiating it raises."""

    __slots__ = ()
    custom = True

    def name(self) -> str:
        return "torch::autograd::Error"


def once_differentiable(fn):
    """Run a custom backward without recording; a second differentiation raises."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = GRAD_MODE.enabled
        GRAD_MODE.enabled = False
        try:
            outputs = fn(ctx, *args)
        finally:
            GRAD_MODE.enabled = prev
        if not prev:
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        edges = []  # as PyTorch: each output stands on a detached leaf of its own
        for o in outs:
            if isinstance(o, Tensor):
                leaf = make(o._data, True, None)
                leaf._vc = o._vc
                edges.append((leaf._grad_accumulator(), 0))
            else:
                edges.append((None, 0))
        node = Error(_DelayedErrorOp(), tuple(edges), None, None, None, None, None)
        wrapped = []
        for i, o in enumerate(outs):
            if isinstance(o, Tensor):
                t = make(o._data, True, node)
                t._vc = o._vc
                t._output_nr = i
                o = t
            wrapped.append(o)
        return wrapped[0] if single else tuple(wrapped)

    return wrapper


# ------------------------------------------------------------------ Function

class Function:
    """Base class of custom autograd functions: subclass it with static `forward(ctx,
    *args)` (or `forward(*args)` plus `setup_context(ctx, inputs, output)`) and
    `backward(ctx, *grad_outputs)`, then call `YourFunction.apply(...)`."""

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{type(self)} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    is_traceable = False
    generate_vmap_rule = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _backward_class(cls)  # cls._backward_cls, as PyTorch's FunctionMeta sets it

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        return apply_function(cls, args, kwargs)


class InplaceFunction(Function):
    """A Function with an `inplace` flag (legacy helper kept by PyTorch)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


for _cls in (BackwardCFunction, FunctionCtx, Function, InplaceFunction):
    _cls.__module__ = "torch.autograd.function"

_BASE_SETUP = Function.__dict__["setup_context"].__func__
_BASE_BACKWARD = Function.__dict__["backward"].__func__
