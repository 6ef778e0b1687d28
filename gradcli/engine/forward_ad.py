"""Forward-mode AD: dual tensors (a primal with a tangent) and their propagation.

PyTorch keeps a tangent on a tensor for one "dual level" (only one may be active); every
op a dual tensor goes through gives its result a tangent, the Jacobian-vector product.
Here the tangents live beside the tensors, in a table keyed by identity that is emptied
when the level ends (so tangents die with it, as PyTorch's do), and the engine's hot
paths pay one global read while no level is active: this module fills the hook slots of
`ops.registry` (every op), `tensor` (in-place writes and printing) and `custom_function`
(a Function's `jvp`) on entering a level and empties them on leaving.

The tangent of an op needs no per-op formula: an op's backward gives the vector-Jacobian
product g(u) = J^T u, which is linear in u, so J t = d<g(u), t>/du (the "double vjp").
Views instead take the same view of the input's tangent (so the tangent of a view shares
memory with its base's, as PyTorch's does), and an in-place op writes the new tangent
into the old one.
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np

from . import custom_function as _custom
from . import tensor as _tensor_mod
from .grad_mode import GRAD_MODE
from .node import Node
from .ops import inplace_views as _inplace_views
from .ops import registry as _registry
from .tensor import Tensor, make

NO_LEVEL = ("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first.")
BAD_LEVEL = ("Trying to access a forward AD level with an invalid index. This index was either "
             "not created or is already deleted.")
NESTED = "Nested forward mode AD is not supported at the moment"

# the active level: -1 when none (PyTorch's torch.autograd.forward_ad._current_level)
_LEVEL = [-1]
# id(tensor) -> (weak reference to it, its tangent), for the active level only
_TANGENTS: dict = {}
# id(ndarray of an op's saved output) -> (weak reference to it, its version counter, the
# output's tangent): a backward formula reads a saved output as a new tensor over the same
# buffer and counter (Node.result), which must carry the output's tangent (forward over
# reverse: hessian = jacfwd(jacrev(f)))
_SAVED_RESULTS: dict = {}
# > 0 while tangents are not propagated (inside a tangent's own computation, a custom
# Function's forward)
_SUSPENDED = [0]


class UnpackedDualTensor(NamedTuple):
    """What unpack_dual returns: the primal and its tangent (None when it has none)."""

    primal: object
    tangent: object


UnpackedDualTensor.__module__ = "torch.autograd.forward_ad"


# ------------------------------------------------------------------ the tangent table

def tangent_of(t) -> Tensor | None:
    """The tangent of tensor `t` at the active level (None: it has none)."""
    if _SUSPENDED[0]:
        return None
    entry = _TANGENTS.get(id(t))
    if entry is not None and entry[0]() is t:
        return entry[1]
    if _SAVED_RESULTS and type(t) is Tensor and t._requires_grad:
        held = _SAVED_RESULTS.get(id(t._data))
        if held is not None and held[0]() is t._data and held[1] is t._vc:
            return held[2]
    return None


def set_tangent(t: Tensor, tangent: Tensor) -> None:
    key = id(t)

    def forget(ref, key=key):
        entry = _TANGENTS.get(key)
        if entry is not None and entry[0] is ref:
            del _TANGENTS[key]

    _TANGENTS[key] = (weakref.ref(t, forget), tangent)


def _remember_saved_result(res: Tensor, tangent: Tensor) -> None:
    data = res._data
    key = id(data)

    def forget(ref, key=key):
        entry = _SAVED_RESULTS.get(key)
        if entry is not None and entry[0] is ref:
            del _SAVED_RESULTS[key]

    _SAVED_RESULTS[key] = (weakref.ref(data, forget), res._vc, tangent)


class _Suspended:
    """Within: no tangents are read or made (the tangent computations themselves)."""

    def __enter__(self):
        _SUSPENDED[0] += 1
        _registry.FORWARD_AD = None
        _registry.FORWARD_AD_MULTI = None
        _tensor_mod.FORWARD_AD_INPLACE = None

    def __exit__(self, *exc):
        _SUSPENDED[0] -= 1
        if not _SUSPENDED[0] and _LEVEL[0] >= 0:
            _registry.FORWARD_AD = _on_op
            _registry.FORWARD_AD_MULTI = _MULTI_HOOK
            _tensor_mod.FORWARD_AD_INPLACE = _on_inplace


_suspended = _Suspended()

# forward grad mode (torch._C._set_fwd_grad_enabled): off, tangents are neither read nor
# made, as inside a tangent's own computation
_FWD_GRAD_OFF = [False]


def is_fwd_grad_enabled() -> bool:
    return not _FWD_GRAD_OFF[0]


def set_fwd_grad_enabled(mode) -> None:
    off = not mode
    if off == _FWD_GRAD_OFF[0]:
        return
    _FWD_GRAD_OFF[0] = off
    if off:
        _suspended.__enter__()
    else:
        _suspended.__exit__(None, None, None)


class _set_fwd_grad_enabled:  # noqa: N801 - PyTorch's name
    """Forward grad mode set now; put back on exit (also a decorator, as PyTorch's)."""

    def __init__(self, mode: bool) -> None:
        self.prev = is_fwd_grad_enabled()
        set_fwd_grad_enabled(mode)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        set_fwd_grad_enabled(self.prev)

    def __call__(self, fn):
        import functools

        mode = is_fwd_grad_enabled()
        set_fwd_grad_enabled(self.prev)  # (a decorator changes nothing until it runs)

        @functools.wraps(fn)
        def run(*args, **kwargs):
            with _set_fwd_grad_enabled(mode):
                return fn(*args, **kwargs)

        return run


# ------------------------------------------------------------------ levels

def enter_dual_level() -> int:
    if _LEVEL[0] >= 0:
        raise RuntimeError(NESTED)
    _LEVEL[0] = 0
    _install()
    return 0


def exit_dual_level(*, level=None) -> None:
    current = _LEVEL[0]
    if level is None:
        level = current
    if level != current:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was "
                           "created. This is not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    _LEVEL[0] = level - 1
    _TANGENTS.clear()
    _SAVED_RESULTS.clear()
    _uninstall()


def _install() -> None:
    _registry.FORWARD_AD = _on_op
    _registry.FORWARD_AD_MULTI = _MULTI_HOOK
    _tensor_mod.FORWARD_AD_INPLACE = _on_inplace
    _tensor_mod.FORWARD_AD_TANGENT = tangent_of
    _inplace_views.FORWARD_AD_GEOMETRY = _on_geometry
    _custom.FORWARD_AD = _CUSTOM_HOOK


def _uninstall() -> None:
    _registry.FORWARD_AD = None
    _registry.FORWARD_AD_MULTI = None
    _tensor_mod.FORWARD_AD_INPLACE = None
    _tensor_mod.FORWARD_AD_TANGENT = None
    _inplace_views.FORWARD_AD_GEOMETRY = None
    _custom.FORWARD_AD = None


class dual_level:  # noqa: N801 - PyTorch's name
    """Context manager (and decorator) for forward AD: a dual level for the block."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        exit_dual_level()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def run(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)

        return run


def _check_level(level) -> int:
    if level is None:
        level = _LEVEL[0]
    return level


# ------------------------------------------------------------------ make / unpack

def _size_text(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def make_dual(tensor, tangent, *, level=None) -> Tensor:
    """A view of `tensor` whose tangent is `tangent` (as-is when it has tensor's layout,
    else a copy in that layout)."""
    level = _check_level(level)
    if level < 0:
        raise RuntimeError(NO_LEVEL)
    if tensor._data.dtype.kind not in "fc":
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if tangent._data.dtype.kind not in "fc":
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if level != _LEVEL[0]:
        raise RuntimeError(BAD_LEVEL if _LEVEL[0] < 0 else "Invalid level given to _make_dual")
    if tangent_of(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    if tangent_of(tangent) is not None:
        raise RuntimeError(f"Setting a forward grad that itself has a forward gradient at the "
                           f"same level{level} is not supported.")
    shape = tensor._data.shape
    if tangent._data.shape != shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {_size_text(shape)} while "
            f"the given forward gradient is of size {_size_text(tangent._data.shape)}.")
    from .ops.views import VIEW, view_op

    with _suspended:
        dual = view_op(VIEW, tensor, (shape, shape))
        if tangent.stride() != tensor.stride():
            tangent = tangent.contiguous() if tangent.requires_grad else \
                make(np.ascontiguousarray(tangent._data).copy())
    set_tangent(dual, tangent)
    return dual


_FW_PRIMAL = None


def _fw_primal_op():
    """The op of unpack_dual's primal: an alias whose node PyTorch names Identity."""
    global _FW_PRIMAL
    if _FW_PRIMAL is None:
        from .ops.views import ALIAS

        _FW_PRIMAL = _registry.Op("_fw_primal", "Identity", ALIAS.forward, ALIAS.backward,
                                  "d primal(a)/da = 1")
    return _FW_PRIMAL


def unpack_dual(tensor, *, level=None) -> UnpackedDualTensor:
    level = _check_level(level)
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = tangent_of(tensor) if level == _LEVEL[0] else None  # (another level: none)
    from .ops.views import view_op

    with _suspended:
        primal = view_op(_fw_primal_op(), tensor, ())
    return UnpackedDualTensor(primal, tangent)


# ------------------------------------------------------------------ propagation

class _Sentinel(Node):
    """The edge a tangent computation's node gives the inputs with a tangent (so that its
    backward formula computes their vector-Jacobian products); never run."""

    __slots__ = ()


_SENTINEL_EDGE = None


def _sentinel_edge():
    global _SENTINEL_EDGE
    if _SENTINEL_EDGE is None:
        _SENTINEL_EDGE = (_Sentinel(None, (), None, None, None, (), None), 0)
    return _SENTINEL_EDGE


def _on_op(op, inputs, meta, res) -> None:
    """registry's hook: give `res` (op applied to inputs) its tangent, if an input has one."""
    tangents = None
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            t = tangent_of(x)
            if t is not None:
                if tangents is None:
                    tangents = [None] * len(inputs)
                tangents[i] = t
    if tangents is None or res._data.dtype.kind not in "fc":
        return
    if op.name in _NO_FORWARD:
        raise NotImplementedError(
            f"Trying to use forward AD with {op.name} that does not support it because it has "
            "not been implemented yet.\nPlease file an issue to PyTorch at https://github.com/"
            "pytorch/pytorch/issues/new?template=feature-request.yml so that we can prioritize "
            "its implementation or submit a PR adding the implementation to derivatives.yaml")
    with _suspended:
        from .ops.views import is_view_forward, view_op

        if is_view_forward(op.forward) and tangents[0] is not None:
            tangent = view_op(op, tangents[0], meta)
            if tangent._data.dtype != res._data.dtype:
                tangent = tangent.to(res.dtype)
        else:
            full = _FULL_VARIANT.get(op.name)
            if full is not None:
                op = _registry.OPS[full]
            if op.name in _CONSTANT_RESULT:
                tangent = make(np.zeros_like(res._data))
            else:
                tangent = jvp_of_op(op, inputs, meta, res._data, tangents)
    if tangent is None:
        return
    set_tangent(res, tangent)
    if op.save_result and res._grad_fn is not None:
        _remember_saved_result(res, tangent)


# ops PyTorch has no forward-mode formula for (it raises NotImplementedError)
_NO_FORWARD = frozenset(("igamma", "igammac"))
# ops dispatched by whether an input requires grad, whose variant without it has no
# derivative for that input (it saves nothing): a tangent there needs the full op's rule
_FULL_VARIANT = {"fmod_self": "fmod", "remainder_self": "remainder"}
# ops whose result does not depend on the input's values: a zero tangent, +0 everywhere
# (the rule would give 0 * t, negative zeros where t < 0; PyTorch zeroes the tangent)
_CONSTANT_RESULT = {"zero", "fill", "fill_scalar"}


def jvp_of_op(op, inputs, meta, out, tangents: list):
    """J t for one op application, from its backward: d<vjp(u), t>/du at u = 0.

    `out` is the output array (a list of them for an op with several outputs: then a list
    of tangents comes back, None for the outputs that take none).
    When grad mode is on and an input requires grad, the tangent is computed with a graph
    (it depends on the primals, as PyTorch's does: a reverse pass through a jvp works): the
    node evaluated has the inputs' real edges, so a saved output read by the formula
    differentiates back to them; inputs with only a tangent get a sentinel edge."""
    multi = isinstance(out, list)
    if op.backward is None or op.multi != multi:
        return None
    keep = GRAD_MODE.enabled and any(isinstance(x, Tensor) and x.requires_grad for x in inputs)
    sentinel = _sentinel_edge()
    if keep:
        from .ops.registry import edge_of

        edges = tuple(edge_of(x) if isinstance(x, Tensor) and x.requires_grad
                      else sentinel if t is not None else (None, 0)
                      for x, t in zip(inputs, tangents, strict=True))
        primals = tuple(inputs)
    else:
        edges = tuple(sentinel if t is not None else (None, 0) for t in tangents)
        primals = tuple(make(x._data) if isinstance(x, Tensor) else x for x in inputs)
    input_meta = None
    first = out[0] if multi else out
    if op.broadcast:
        for i, x in enumerate(inputs):
            if isinstance(x, Tensor) and (x._data.shape != first.shape
                                          or x._data.dtype != first.dtype):
                if input_meta is None:
                    input_meta = [None] * len(inputs)
                input_meta[i] = (x._data.shape, x._data.dtype)
    node = op.node_class()(op, edges, primals if op.save_inputs else None, None,
                           (out, [0]) if op.save_result and not multi else None, meta,
                           input_meta)
    create_graph = keep or any(t is not None and t.requires_grad for t in tangents)
    prev = GRAD_MODE.enabled
    GRAD_MODE.enabled = True
    try:
        arrays = out if multi else [out]
        us = [make(np.zeros_like(a), True, None) if a.dtype.kind in "fc" else None
              for a in arrays]
        grads = op.backward(node, us if multi else us[0])
        if input_meta is not None:
            grads = _registry.reduce_to_inputs(node, grads)
        total = None
        for g, t in zip(grads, tangents, strict=False):
            if g is None or t is None:
                continue
            term = (g * t).sum()
            total = term if total is None else total + term
        wanted = [u for u in us if u is not None]
        if total is None or not total.requires_grad:
            jvps = [None] * len(wanted)
        else:
            from .autograd import grad

            jvps = list(grad(total, wanted, create_graph=create_graph, allow_unused=True))
    finally:
        GRAD_MODE.enabled = prev
    results = []
    for a, u in zip(arrays, us, strict=True):
        if u is None:
            results.append(None)
            continue
        jvp = jvps.pop(0)
        if jvp is None:
            jvp = make(np.zeros_like(a))
        elif not create_graph and jvp._grad_fn is not None:
            jvp = jvp.detach()
        if keep and not multi and (op.name in _PRODUCTS or not jvp.requires_grad):
            jvp = _product_rule_graph(op, inputs, jvp)
        results.append(jvp)
    return results if multi else results[0]


# ops whose PyTorch tangent is a product rule's sum, AddBackward0 on top whenever a primal
# requires grad (derivatives.yaml: mul, mm, addmm, bmm, mv, dot, ...)
_PRODUCTS = frozenset({"mul", "mm", "addmm", "bmm", "mv", "dot", "addmv", "baddbmm", "addbmm",
                       "addr", "outer", "vdot"})


def _product_rule_graph(op, inputs, jvp: Tensor) -> Tensor:
    """PyTorch's tangent of a product of two tensors (mul, mm, addmm, linear: a_t * b_p +
    a_p * b_t) is a sum that reads the primals, so it requires grad when a primal does,
    with AddBackward0 on top, even where the primal's term is zero (only one input has a
    tangent). The same here: + (|sum(primal)| * -0.0), which changes no value (not even a
    zero's sign) and adds the primal's (zero) derivative."""
    if not (op.save_inputs or op.save_result):
        return jvp  # a linear op (add, sum, cat, views): its tangent reads no primal
    held = [x for x in inputs if isinstance(x, Tensor)]
    if len(held) < 2 and op.name not in _PRODUCTS:  # (mul by a number is a product too)
        return jvp
    primal = next((x for x in held if x.requires_grad), None)
    if primal is None:
        return jvp
    prev = GRAD_MODE.enabled
    GRAD_MODE.enabled = True
    try:
        with np.errstate(all="ignore"):
            return jvp + primal.sum().abs() * -0.0
    finally:
        GRAD_MODE.enabled = prev


class _MultiHook:
    """registry's hook for ops with several outputs."""

    @staticmethod
    def pieces(x, outs) -> None:
        """split/chunk/unbind: each piece's tangent is the same view of x's tangent."""
        t = tangent_of(x)
        if t is None or x._data.dtype.kind not in "fc":
            return
        for o in outs:
            fwd, meta = o._view_fn[-1]
            piece = make(fwd(t._data, *meta))
            piece._vc = t._vc
            set_tangent(o, piece)

    @staticmethod
    def copies(sources, outs) -> None:
        for src, o in zip(sources, outs, strict=True):
            t = tangent_of(src)
            if t is not None:
                set_tangent(o, make(np.array(t._data, copy=True)))

    @staticmethod
    def multi(op, inputs, meta, outs) -> None:
        tangents = [tangent_of(x) if isinstance(x, Tensor) else None for x in inputs]
        if all(t is None for t in tangents):
            return
        with _suspended:
            got = jvp_of_op(op, inputs, meta, [o._data for o in outs], tangents)
        if got is None:
            return
        for o, t in zip(outs, got, strict=True):
            if t is not None:
                set_tangent(o, t)


_MULTI_HOOK = _MultiHook()


def _zeros_like(t: Tensor) -> Tensor:
    return make(np.zeros_like(t._data))


def _on_inplace(target: Tensor, compute):
    """tensor's hook: `compute` (the out-of-place form of an in-place op on `target`)
    wrapped so that target's tangent becomes the result's, written into the old tangent
    when there was one (its identity and the views of it stay)."""

    def with_tangent(old, *others):
        mine = tangent_of(target)
        if old is not target and mine is not None:
            with _suspended:
                held = make(mine._data.copy()) if not mine.requires_grad else mine.clone()
            set_tangent(old, held)
        result = compute(old, *others)
        new = tangent_of(result)
        if new is None and mine is None:
            return result
        with _suspended:
            if new is None:
                new = _zeros_like(target)
            if mine is not None:
                _write(mine, new)
            else:
                set_tangent(target, _fresh_tangent(target, new))
        return result

    return with_tangent


def _on_geometry(target: Tensor, view: Tensor) -> None:
    """An in-place view op (t_, transpose_, squeeze_, as_strided_...): `target` takes the
    geometry of `view`, and its tangent becomes the view's (the same view of the old
    tangent), as PyTorch changes the tangent's geometry with the primal's."""
    new = tangent_of(view)
    if new is not None:
        set_tangent(target, new)


def _write(into: Tensor, values: Tensor) -> None:
    np.copyto(into._data, np.broadcast_to(values._data, into._data.shape), casting="unsafe")
    into._vc[0] += 1


def _fresh_tangent(target: Tensor, new: Tensor) -> Tensor:
    """The first tangent of `target`, written in place: a view of a zero tangent given to
    its base when target is a view (the base's other elements have no tangent)."""
    base = target._base
    if base is None:
        if new._data.shape == target._data.shape and new._data.dtype == target._data.dtype:
            return new  # (as computed: with its graph when it depends on a primal)
        data = np.array(np.broadcast_to(new._data, target._data.shape), dtype=target._data.dtype)
        return make(data)
    from .ops.views import replay

    base_t = tangent_of(base)
    if base_t is None:
        base_t = _zeros_like(base)
        set_tangent(base, base_t)
    region = replay(target._view_fn, base_t._data)
    np.copyto(region, np.broadcast_to(new._data, region.shape), casting="unsafe")
    view = make(region)
    view._vc = base_t._vc
    return view


# ------------------------------------------------------------------ custom Function

class _CustomHook:
    """custom_function's hook: the forward runs on plain inputs, then jvp gives the
    outputs their tangents."""

    @staticmethod
    def enter(args):
        tangents = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
        _suspended.__enter__()
        if all(t is None for t in tangents):
            return None
        return tangents

    @staticmethod
    def leave():
        _suspended.__exit__(None, None, None)

    @staticmethod
    def run_jvp(cls, ctx, args, outputs, tangents):
        d = ctx.__dict__
        with _suspended:
            given = tuple(  # (an input of a dtype without gradients gets None)
                (t if t is not None else _zeros_like(a))
                if isinstance(a, Tensor) and a._data.dtype.kind in "fc" else None
                for a, t in zip(args, tangents, strict=True))
        held = [(t, t._vc[0]) if isinstance(t, Tensor) else None for t in tangents]
        saved = d.get("_saved", None), d.get("_to_save", None)
        d["_saved"] = None
        d["_to_save"] = d.get("_to_save_forward") or ()
        try:
            with _suspended:  # (the jvp sees primals: its own ops make no tangents)
                result = cls.jvp(ctx, *given)
        finally:
            d["_saved"], d["_to_save"] = saved
            if saved[1] is None:
                d.pop("_to_save", None)
            if saved[0] is None:
                d.pop("_saved", None)
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        results = result if isinstance(result, tuple) else (result,)
        if len(results) != len(outs):
            raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                               f"(expected {len(outs)} but got {len(results)})")
        non_diff = {id(t) for t in d.get("_non_differentiable", ())}
        for i, (o, t) in enumerate(zip(outs, results, strict=True)):
            if not isinstance(o, Tensor) or id(o) in non_diff or o._data.dtype.kind not in "fc":
                if t is not None:
                    raise RuntimeError(
                        f"Function's jvp returned a gradient at position {i}, but  the "
                        "corresponding forward output is not a differentiable Tensor.You should "
                        "return None at that position instead.")
                continue
            if t is None:
                continue
            _check_jvp_alias(o, t, args, held, d)
            if t._data.shape != o._data.shape:
                raise RuntimeError(
                    "Trying to set a forward gradient that has a different size than that of "
                    f"the original Tensor, this is not supported. Tensor is of size "
                    f"{_size_text(o._data.shape)} while the given forward gradient is of size "
                    f"{_size_text(t._data.shape)}.")
            set_tangent(o, t)
            if o._grad_fn is ctx:
                _remember_saved_result(o, t)
        return outputs


def _check_jvp_alias(out: Tensor, tangent: Tensor, args, held, d) -> None:
    """PyTorch's rules for a custom Function's output that aliases an input: an input
    modified in place (mark_dirty) must have its tangent modified in place and returned
    as-is; a view of an input (an input returned as-is is one) needs a view of the
    input's tangent."""
    if any(out is t for t in d.get("_dirty", ())):
        for a, h in zip(args, held):
            if a is out and h is not None:
                if tangent._vc[0] == h[1]:
                    raise RuntimeError(
                        "An inplace custom Function is not modifying the forward mode gradients "
                        "inplace. If the forward is modifying an input inplace, then the jvp "
                        "function must modify the corresponding gradient inplace.")
                if tangent is not h[0]:
                    raise RuntimeError(
                        "An inplace custom Function is not returning the forward mode gradients "
                        "as-is. If the forward is modifying an input inplace, then the jvp "
                        "function must modify the gradient inplace and return it as-is.")
        return
    base = out._base
    if base is None:
        return
    match = None
    for a, h in zip(args, held):
        if isinstance(a, Tensor) and (a if a._base is None else a._base) is base:
            match = h
    if match is None:
        return
    if tangent._base is None:
        raise RuntimeError("A custom Function's forward is returning a view (or an input as-is) "
                           "but the jvp is not returning a view.")
    given = match[0]
    if given._base is not None:
        if given._base is not tangent._base:
            raise RuntimeError("A custom Function is returning a view but the jvp is not "
                               "returning a view of the same base as the given grad input.")
    elif given is not tangent._base:
        raise RuntimeError("A custom Function is returning a view but the jvp is not returning a "
                           "view of the given grad input.")


_CUSTOM_HOOK = _CustomHook()
