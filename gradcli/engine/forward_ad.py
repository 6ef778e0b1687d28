"""Forward-mode AD: dual tensors (a primal with a tangent) and their propagation.

PyTorch keeps a tangent on a tensor for one "dual level" (only one may be active); every
op a dual tensor goes through gives its result a tangent, the Jacobian-vector product.
Here the tangents live beside the tensors, in a table keyed by identity that is emptied
when the level ends (so tangents die with it, as PyTorch's do), and the engine's hot
paths pay one global read while no level is active: this module fills the hook slots of
`ops.registry` (every op), `tensor` (in-place writes and printing) and `custom_function`
(a Function's `jvp`) on entering a level and empties them on leaving.

The tangent of an op follows the kind of PyTorch's forward derivative (derivatives.yaml),
because the tangent's own graph (and the sign of its zeros) comes from it: an elementwise
op runs its backward formula on the tangent, a linear op runs itself on the tangents, a
few ops have their explicit formula written out (_FORMULAS), and every other op uses the
"double vjp": an op's backward gives the vector-Jacobian product g(u) = J^T u, which is
linear in u, so J t = d<g(u), t>/du (the right values, its own last op). Views take the
same view of the input's tangent (so the tangent of a view shares memory with its
base's, as PyTorch's does), and an in-place op writes the new tangent into the old one.

A backward pass inside a level differentiates dual tensors too (autograd's slot
FORWARD_AD_BACKWARD runs the formulas on their recorded path), and AccumulateGrad and
retain_grad are wrapped while a level is active so .grad takes PyTorch's tangent.
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np

from . import custom_function as _custom
from . import forward_ad_formulas as _more_formulas
from . import forward_ad_nn as _nn_formulas
from . import saved_hooks as _saved_hooks
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


# the op hook's two users: forward AD's tangents (TANGENT_HOOK[0], None when no dual level
# is active or tangents are suspended) and vmap's batched marks (OP_WATCHER[0], set while a
# vmap runs), which calls the tangent hook itself when there is one
TANGENT_HOOK = [None]
OP_WATCHER = [None]


def set_op_hook(fn) -> None:
    """The tangent hook is `fn`; the registry calls the watcher first if one is set."""
    TANGENT_HOOK[0] = fn
    watcher = OP_WATCHER[0]
    _registry.FORWARD_AD = fn if watcher is None else watcher


def set_op_watcher(watcher) -> None:
    OP_WATCHER[0] = watcher
    _registry.FORWARD_AD = TANGENT_HOOK[0] if watcher is None else watcher


# the same pair for tensor.py's in-place hook (target, compute) -> compute
INPLACE_TANGENT_HOOK = [None]
INPLACE_WATCHER = [None]


def set_inplace_hook(fn) -> None:
    INPLACE_TANGENT_HOOK[0] = fn
    watcher = INPLACE_WATCHER[0]
    _tensor_mod.FORWARD_AD_INPLACE = fn if watcher is None else watcher


def set_inplace_watcher(watcher) -> None:
    INPLACE_WATCHER[0] = watcher
    _tensor_mod.FORWARD_AD_INPLACE = INPLACE_TANGENT_HOOK[0] if watcher is None else watcher


#: > 0 while torch.func runs a reverse pass inside a jvp whose gradients (and their
#: tangents) are detached as soon as it ends (hessian's inner jacrev): the tangent
#: computations then record no graph, which nobody would differentiate
TANGENT_GRAPHS_UNUSED = [0]
_GRAPH_MODES: list = []  # grad mode outside each such tangent computation


class _Suspended:
    """Within: no tangents are read or made (the tangent computations themselves)."""

    def __enter__(self):
        _SUSPENDED[0] += 1
        if TANGENT_GRAPHS_UNUSED[0]:
            _GRAPH_MODES.append(GRAD_MODE.enabled)
            GRAD_MODE.enabled = False
        set_op_hook(None)
        _registry.FORWARD_AD_MULTI = None
        set_inplace_hook(None)

    def __exit__(self, *exc):
        _SUSPENDED[0] -= 1
        if TANGENT_GRAPHS_UNUSED[0] and _GRAPH_MODES:
            GRAD_MODE.enabled = _GRAPH_MODES.pop()
        if not _SUSPENDED[0] and _LEVEL[0] >= 0:
            set_op_hook(_on_op)
            _registry.FORWARD_AD_MULTI = _MULTI_HOOK
            set_inplace_hook(_on_inplace)


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
    _LAST_IN_PLACE[0] = None
    _uninstall()


def _install() -> None:
    from . import autograd as _autograd

    _autograd.FORWARD_AD_BACKWARD = _engine_backward
    _ENGINE_ORIGINALS.update(accumulate=_autograd._accumulate, retain=_autograd._retain)
    _autograd._accumulate = _accumulate_with_tangent
    _autograd._retain = _retain_with_tangent
    set_op_hook(_on_op)
    _registry.FORWARD_AD_MULTI = _MULTI_HOOK
    set_inplace_hook(_on_inplace)
    _tensor_mod.FORWARD_AD_TANGENT = tangent_of
    _inplace_views.FORWARD_AD_GEOMETRY = _on_geometry
    _custom.FORWARD_AD = _CUSTOM_HOOK
    _saved_hooks.FORWARD_AD[0] = (tangent_of, set_tangent, object())  # (a token per level)


def _uninstall() -> None:
    from . import autograd as _autograd

    _autograd.FORWARD_AD_BACKWARD = None
    if _ENGINE_ORIGINALS:
        _autograd._accumulate = _ENGINE_ORIGINALS.pop("accumulate")
        _autograd._retain = _ENGINE_ORIGINALS.pop("retain")
    set_op_hook(None)
    _registry.FORWARD_AD_MULTI = None
    set_inplace_hook(None)
    _tensor_mod.FORWARD_AD_TANGENT = None
    _inplace_views.FORWARD_AD_GEOMETRY = None
    _custom.FORWARD_AD = None
    _saved_hooks.FORWARD_AD[0] = None


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
    if tensor._data.dtype.kind not in "fcV":
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if tangent._data.dtype.kind not in "fcV":
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

    if GRAD_MODE.inference:
        # (inference tensors track neither views nor forward grads: PyTorch's dual is a
        # plain alias of the primal's storage, without a tangent)
        alias = make(tensor._data)
        alias._vc = tensor._vc
        return alias
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
    if tensor.__class__ is Tensor and tensor._data.dtype.kind == "c":
        from .ops import complex as _complex_ops

        if tensor in _complex_ops._CONJ:  # (a view of a conj tensor has the bit too)
            _complex_ops._CONJ.add(primal)
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
    if tangents is None or res._data.dtype.kind not in "fcV":
        return
    if op.name in _NO_FORWARD:
        raise NotImplementedError(
            f"Trying to use forward AD with {op.name} that does not support it because it has "
            "not been implemented yet.\nPlease file an issue to PyTorch at https://github.com/"
            "pytorch/pytorch/issues/new?template=feature-request.yml so that we can prioritize "
            "its implementation or submit a PR adding the implementation to derivatives.yaml")
    _RESULT_VC[0] = (res._data, res._vc)
    with _suspended:
        from .ops.views import is_view_forward, view_op

        if op.name in _IDENTITY_TANGENT and tangents[0] is not None and \
                tangents[0]._data.dtype == res._data.dtype:
            tangent = tangents[0]  # (the input's tangent object itself, as PyTorch's)
        elif op.name == "angle" and inputs[0]._data.dtype.kind in "fV":
            tangent = make(np.zeros_like(res._data))  # (a real number's angle is constant)
        elif is_view_forward(op.forward) and tangents[0] is not None:
            tangent = view_op(op, tangents[0], meta)
            if tangent._data.dtype != res._data.dtype:
                tangent = tangent.to(res.dtype)
        else:
            full = _FULL_VARIANT.get(op.name)
            if full is not None:
                op = _registry.OPS[full]
            if op.name in _IN_PLACE_FORMULAS:  # (how the old tangent is then written)
                _LAST_IN_PLACE[0] = (weakref.ref(res), op.name, inputs, meta, tangents)
            if op.name in _CONSTANT_RESULT:
                tangent = make(np.zeros_like(res._data))
            elif op.name in _FORMULAS:
                tangent = _FORMULAS[op.name](inputs, meta, res, tangents)
                if tangent is NotImplemented:  # (a case the formula leaves to the rule)
                    tangent = jvp_of_op(op, inputs, meta, res._data, tangents)
            elif op.jvp is not None:  # (the op table's formula: the matrix products)
                tangent = op.jvp(inputs, meta, res, tangents)
                if tangent is NotImplemented:
                    tangent = jvp_of_op(op, inputs, meta, res._data, tangents)
                elif op.name in _PRODUCTS and _keeps_graph(inputs) and any(
                        t is None and isinstance(x, Tensor)
                        for x, t in zip(inputs, tangents, strict=True)):
                    tangent = _product_rule_graph(op, inputs, tangent)
            elif op.name in ELEMENTWISE and len(inputs) == 1 and not op.multi:
                tangent = _elementwise_jvp(op, inputs, meta, res._data, tangents[0])
            elif op.name in LINEAR and not op.multi:
                tangent = _linear_jvp(op, inputs, meta, res._data, tangents)
            else:
                tangent = jvp_of_op(op, inputs, meta, res._data, tangents)
    _RESULT_VC[0] = None
    if tangent is None:
        return
    if (op.name in _COPIED_VIEWS or op.name in _more_formulas.COPIED_OUTPUTS
            or op.name in _more_formulas.COPIED_REDUCTIONS and meta[0] != "none") \
            and tangent._requires_grad and GRAD_MODE.enabled:
        with _suspended:  # (PyTorch copies the view of the tangent into a new tensor)
            tangent = _copied_into(res, tangent)
    set_tangent(res, tangent)
    if op.save_result and res._grad_fn is not None:
        _remember_saved_result(res, tangent)


def _copied_into(res: Tensor, tangent: Tensor) -> Tensor:
    """PyTorch's forward grad that does not have its primal's layout (strides, storage) is
    copied into a new tensor that has it: CopyBackwards on top of the tangent's graph."""
    return make(np.empty_like(res._data)).copy_(tangent)


# ops whose PyTorch tangent is the input's tangent itself (self_t: frac, x % number, x - number, alias)
_IDENTITY_TANGENT = frozenset({"frac", "fmod_scalar", "remainder_scalar", "sub_scalar", "alias",
                               "alias_copy"})
# view copies whose PyTorch tangent is the view of the tangent copied into a new tensor
# (CopyBackwards on top when it has a graph)
_COPIED_VIEWS = frozenset({"as_strided_copy", "diag_copy", "expand_copy", "permute_copy",
                           "transpose_copy", "select_copy", "slice_copy"})
# ops PyTorch has no forward-mode formula for (it raises NotImplementedError)
_NO_FORWARD = frozenset(("igamma", "igammac"))
# ops dispatched by whether an input requires grad, whose variant without it has no
# derivative for that input (it saves nothing): a tangent there needs the full op's rule
_FULL_VARIANT = {"fmod_self": "fmod", "remainder_self": "remainder"}
# ops whose result does not depend on the input's values: a zero tangent, +0 everywhere
# (the rule would give 0 * t, negative zeros where t < 0; PyTorch zeroes the tangent)
# the in-place comparisons (eq_, lt_, ...): a 0/1 result, zero derivative
_COMPARED_IN_PLACE = frozenset(f"{cmp}_{kind}_" for cmp in ("eq", "ne", "lt", "le", "gt", "ge")
                               for kind in ("scalar", "tensor"))
_CONSTANT_RESULT = _COMPARED_IN_PLACE | {"zero", "fill",
                    # draws: zero derivative in PyTorch (a tangent of zeros, no graph)
                    "bernoulli", "normal_mean", "normal_std", "normal_mean_std", "uniform_",
                    "normal_", "bernoulli_", "poisson"}


def _fill_with_tangent(mine, inputs, meta, tangents):
    value_t = tangents[1]
    return mine.fill_(0 if value_t is None else value_t)


def _index_put_tangent(mine, inputs, meta, tangents):
    """PyTorch's self_t.index_put_(indices, values_t): the tangent written in place by the
    op itself (IndexPutBackward0 on it), zeros for a value without a tangent."""
    values_t = tangents[1] if tangents[1] is not None else _zeros_like(inputs[1])

    def compute(old, val):
        return _registry.run_op(_registry.OPS["index_put"], (old, val), meta)

    return mine._apply_inplace(compute, values_t, overlap_ok=True)


# in-place ops whose PyTorch formula updates the old tangent in place by an op of its own
# (derivatives.yaml: zero_ and the draws self_t.zero_(), fill_ self_t.fill_(0 or value_t),
# index_put_ self_t.index_put_(indices, values_t)), when that write is recorded
_IN_PLACE_FORMULAS = {
    **{name: (lambda mine, inputs, meta, tangents: mine.zero_())
       for name in ("zero", "uniform_", "normal_", "bernoulli_", *_COMPARED_IN_PLACE)},
    "fill": lambda mine, inputs, meta, tangents: mine.fill_(0),
    "fill_tensor": _fill_with_tangent,
    "index_put": _index_put_tangent,
}
# the last application of such an op (its result weakly, and what the formula reads), for
# the in-place hook that runs right after
_LAST_IN_PLACE: list = [None]


# PyTorch's forward derivatives (derivatives.yaml) come in three kinds, and the tangent's
# own graph (its grad_fn when a primal or a tangent requires grad) follows the kind:
# "auto_element_wise": the backward formula with the tangent as the incoming gradient
# (for an elementwise op J is diagonal: J t = J^T t);
ELEMENTWISE = frozenset({
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "celu", "cos", "cosh",
    "deg2rad", "digamma", "elu", "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "floor",
    "gelu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "i0", "leaky_relu",
    "lgamma", "log", "log10", "log1p", "log2", "logit", "mish", "mvlgamma", "nan_to_num",
    "neg", "polygamma", "rad2deg", "reciprocal", "relu", "round", "rsqrt", "sigmoid", "sign",
    "silu", "sin", "sinc", "sinh", "softplus", "softshrink", "special_entr", "special_erfcx",
    "special_i0e", "special_i1", "special_i1e", "special_log_ndtr", "special_ndtri", "sqrt",
    "tan", "tanh", "threshold", "trunc", "selu", "rrelu"})
# "auto_linear": the op itself applied to the tangents (zeros for inputs without one);
# the views among them take the view path
LINEAR = frozenset({
    "affine_grid_generator", "as_strided_scatter", "avg_pool2d", "avg_pool3d",
    "channel_shuffle", "clone", "col2im", "cumsum", "diag_embed", "diagonal_backward",
    "diagonal_scatter", "embedding", "flip", "gather", "im2col", "index", "index_select",
    "masked_select", "max_unpool2d", "max_unpool3d", "narrow_copy", "pixel_shuffle",
    "pixel_unshuffle", "repeat", "roll", "rot90", "select_backward", "select_scatter",
    "slice_backward", "slice_scatter", "take", "trace", "tril", "triu", "unfold_backward",
    "upsample_bicubic2d", "upsample_bilinear2d", "upsample_linear1d", "upsample_nearest1d",
    "upsample_nearest2d", "upsample_nearest3d", "upsample_trilinear3d",
    "upsample_nearest-exact1d", "upsample_nearest-exact2d", "upsample_nearest-exact3d",
    "upsample_bilinear2d_aa", "max_pool2d_with_indices_backward",
    "adaptive_avg_pool3d", "scatter_src", "scatter_add", "masked_scatter",
    # ... and the explicit formulas that are the op on the tangents (sub: self_t - other_t,
    # cat_jvp, stack_jvp, where(condition, self_t, other_t), index_add(self_t, .., source_t),
    # lerp(self_t, end_t, weight), the deduced sum/mean of the tangent ...)
    "sub", "sub_alpha", "cat", "stack", "where", "index_add", "index_copy",
    "put", "masked_fill_tensor", "index_fill_tensor", "block_diag", "lerp", "sum", "sum_dim",
    "mean", "mean_dim", "squeeze0", "squeeze1", "squeeze2", "to_copy",
    # as_strided_ writes the view into the tangent's geometry: AsStridedBackward1 on it
    "as_strided_",
    # quantile's last step (ATen's squeeze_/movedim of its result) is taken by the tangent
    "quantile_out"})
# linear ops whose number operands are terms, not factors
_ADDITIVE = frozenset({"sub", "sub_alpha"})
# otherwise an explicit formula, which the double-vjp rule below stands in for


_zero_term = _more_formulas.zero_term
_missing = _more_formulas.missing_zero
_valued = _more_formulas.valued


def _mul_jvp(inputs, meta, res, tangents):
    """x * y with one tangent missing (a wrapped number, a tensor without one): PyTorch's
    mul.Tensor formula other_t * self_p + self_t * other_p with the missing one zero, so
    AddBackward0 on top whenever anything requires grad (the zero term recorded when its
    primal does). Both tangents there: the product rule of jvp_of_op."""
    a, b = inputs
    at, bt = tangents
    if at is not None and bt is not None:
        return NotImplemented
    first = bt * a if bt is not None else _zero_term(a)  # other_t * self_p
    second = at * b if at is not None else _zero_term(b)  # self_t * other_p
    present = first if bt is not None else second  # (the other term is a zero)
    if not (GRAD_MODE.enabled and (present._requires_grad
                                   or any(x is not None for x in (first, second)
                                          if x is not present))):
        return present if present._data.dtype == res._data.dtype else present.to(res.dtype)
    if first is None:
        first = _missing(b, present)
    elif second is None:
        second = _missing(a, present)
    out = _valued(first + second, present._data)
    return out if out._data.dtype == res._data.dtype else out.to(res.dtype)


def _add_jvp(inputs, meta, res, tangents):
    """add.Tensor's self_t + alpha * other_t (alpha: add_alpha's meta), a missing tangent
    a zero: AddBackward0 when a tangent requires grad."""
    a, b = inputs
    at, bt = tangents
    like = at if at is not None else bt
    alpha = meta[0] if meta else 1
    if bt is not None and alpha != 1:
        bt = _registry.run_op(_registry.OPS["mul_scalar"], (bt,), (alpha,))
    present = at if bt is None else bt if at is None else None
    out = (at if at is not None else _missing(a, like)) + \
        (bt if bt is not None else _missing(b, like))
    if present is not None:
        out = _valued(out, present._data)
    return out if out._data.dtype == res._data.dtype else out.to(res.dtype)


def _where_jvp(inputs, meta, res, tangents):
    """where(c, self_t, other_t): a number operand's tangent is a zero (the linear rule
    would hand the op no operand there)."""
    if all(isinstance(x, Tensor) for x in inputs):
        return _linear_jvp(_registry.OPS["where"], inputs, meta, res._data, tangents)
    args = [t if t is not None else 0.0 if not isinstance(x, Tensor) else _zeros_like(x)
            for x, t in zip(inputs, tangents, strict=True)]
    out = _registry.PUBLIC["torch.where"](make(meta[0]), *args)
    return out if out._data.dtype == res._data.dtype else out.to(res.dtype)


def _div_jvp(inputs, meta, res, tangents):
    """div's explicit formula, (self_t - other_t * result) / other_p: DivBackward0 on top."""
    a, b = inputs
    at, bt = tangents
    # (a missing tangent is a zero that PyTorch still computes with: other_t * result is
    # recorded when the result requires grad, the subtraction when either side does)
    product = _zero_term(res) if bt is None else bt * _plain_result(res)
    recorded = GRAD_MODE.enabled and any(
        x is not None and x._requires_grad for x in (at, product))
    if bt is None:
        if product is None:
            product = _missing(res, at)
        numerator = _valued(at - product, at._data) if recorded else at
    elif at is None:
        numerator = -product
        if recorded:
            numerator = _valued(_missing(a, product) - product, numerator._data)
    else:
        numerator = at - product
    out = numerator / b
    if out._data.dtype != res._data.dtype:
        out = out.to(res.dtype)
    return out


def _fill_scalar_jvp(inputs, meta, res, tangents):
    """torch.fill(x, v)'s tangent is torch.fill(x_t, 0): FillBackward0 on the tangent."""
    return _registry.run_op(_registry.OPS["fill_scalar"], (tangents[0],), (0,))


def _plain_result(res: Tensor) -> Tensor:
    """The op's result as a formula reads it: itself when a graph is being recorded (the
    tangent then differentiates through it), its values otherwise."""
    return res if GRAD_MODE.enabled and res._requires_grad else make(res._data)


_zeros_for = _more_formulas._zeros_for


def _tanh_backward_jvp(inputs, meta, res, tangents):
    """tanh_backward(g, y)'s formula: tanh_backward(g_t, y) + y_t * (-2 * y * g); the
    zeros of a missing tangent are real zeros there (+0 * (1 - y^2) stays +0)."""
    g, y = inputs
    g_t, y_t = (_zeros_for(x, t) for x, t in zip(inputs, tangents, strict=True))
    return _registry.run_op(_registry.OPS["tanh_backward"], (g_t, y)) + y_t * ((y * -2) * g)


def _sigmoid_backward_jvp(inputs, meta, res, tangents):
    """sigmoid_backward(g, y)'s formula: sigmoid_backward(g_t, y) + y_t * g * (-2 y + 1)."""
    g, y = inputs
    g_t, y_t = (_zeros_for(x, t) for x, t in zip(inputs, tangents, strict=True))
    return (_registry.run_op(_registry.OPS["sigmoid_backward"], (g_t, y))
            + y_t * g * (y * -2 + 1))


def _mse_loss_jvp(inputs, meta, res, tangents):
    """mse_loss's formula: the reduction of mse_loss_backward(x_t, x, t) +
    mse_loss_backward(t_t, t, x), unreduced (2 (x - t) x_t + 2 (t - x) t_t: where x_t is
    zero, the other term's +0 settles the sign)."""
    x, t = inputs
    if not isinstance(t, Tensor):
        return NotImplemented
    x_t, t_t = (_zeros_for(a, b) for a, b in zip(inputs, tangents, strict=True))
    backward = _registry.OPS["mse_loss_backward"]
    total = _registry.run_op(backward, (x_t, x, t), ("none",)) + _registry.run_op(
        backward, (t_t, t, x), ("none",))
    if total._data.dtype != res._data.dtype:
        total = total.to(res.dtype)
    return _more_formulas.reduced(total, meta[0])


def _copysign_jvp(inputs, meta, res, tangents):
    """copysign(a, b)'s formula reads a's tangent only: a_t * (result / a, 0 where a == 0)
    (b's derivative is zero and adds no term, so no +0 covers a -0 of a_t * -1)."""
    a, _b = inputs
    ratio = (_plain_result(res) / a).masked_fill(a == 0, 0.0)
    return _zeros_for(a, tangents[0]) * ratio


def _logsumexp_tangent(x, t, dims, keepdim: bool):
    """The tangent of logsumexp(x) over dims: a softmax-weighted sum of t, its weights
    exp(x - max) over their sum (DivBackward0 on top, as PyTorch's logsumexp_jvp)."""
    shifted = (x - x.amax(dims, keepdim=True)).exp() if x._data.size else x.exp()
    return (shifted * t).sum(dims, keepdim=keepdim) / shifted.sum(dims, keepdim=keepdim)


def _logsumexp_jvp(inputs, meta, res, tangents):
    dims, keepdim = meta
    return _logsumexp_tangent(inputs[0], tangents[0], tuple(dims), keepdim)


def _softmax_jvp(inputs, meta, res, tangents):
    """softmax's formula: result * (t - the logsumexp tangent), MulBackward0 on top."""
    dim = meta[0]
    t = tangents[0]
    return _plain_result(res) * (t - _logsumexp_tangent(inputs[0], t, (dim,), True))


def _var_tangent(x, t, meta):
    """The tangent of x.var(dims, correction, keepdim): the variance's backward formula on
    the tangent (2 / dof * t * (x - mean)), summed over dims (SumBackward1 on top)."""
    dims, correction, keepdim, whole = meta[:4]
    shape = x._data.shape
    count = 1
    for d in (range(len(shape)) if whole else dims):
        count *= shape[d]
    dof = count - correction
    centred = x - (x.mean() if whole else x.mean(tuple(dims), keepdim=True))
    spread = (t * float("nan")) if dof <= 0 else (2.0 / dof) * t * centred
    return spread.sum(tuple(range(len(shape))) if whole else tuple(dims), keepdim=keepdim)


def _var_jvp(inputs, meta, res, tangents):
    if inputs[0]._data.dtype.kind == "c":  # (a real result of complex input: the rule's
        return NotImplemented              # Re<vjp(u), t> is its formula's value)
    return _var_tangent(inputs[0], tangents[0], meta)


def _std_jvp(inputs, meta, res, tangents):
    """std's formula: the variance's tangent over 2 std, 0 where std is 0."""
    if inputs[0]._data.dtype.kind == "c":
        return NotImplemented
    std = _plain_result(res)
    return (_var_tangent(inputs[0], tangents[0], meta) / (2.0 * std)).masked_fill(std == 0, 0)


def _norm_jvp(inputs, meta, res, tangents):
    """A p-norm's formula for p other than 0, 1 and infinity: sum(|x|^(p-2) x t) over
    norm^(p-1) (for p = 2: sum(x t) / norm), 0 where the norm is 0 (MaskedFillBackward0
    on top, as PyTorch's)."""
    p, dims, keepdim = meta[0], tuple(meta[1]), meta[2]
    if not isinstance(p, (int, float)) or p == 0 or p != p:
        return NotImplemented
    x, t = inputs[0], tangents[0]
    if not dims:
        dims = tuple(range(x._data.ndim))
    if p == 1:  # sum(sign(x) t)
        return (x.sign() * t).sum(dims, keepdim=keepdim)
    if abs(p) == float("inf"):  # the extreme elements' tangents, shared evenly
        extreme = x.abs() == x.abs().amax(dims, keepdim=True) if p > 0 else \
            x.abs() == x.abs().amin(dims, keepdim=True)
        share = extreme / extreme.sum(dims, keepdim=True)
        return (x.sign() * t * share).sum(dims, keepdim=keepdim)
    norm = _plain_result(res)
    if p == 2:
        out = (x * t).sum(dims, keepdim=keepdim) / norm
    else:
        out = (x.abs().pow(p - 2) * (x * t)).sum(dims, keepdim=keepdim) / norm.pow(p - 1)
    if out._data.dtype != t._data.dtype:  # (vector_norm(dtype=...): PyTorch's tangent
        out = out.to(t.dtype)             # keeps the input's dtype)
    return out.masked_fill(norm == 0, 0)


def _frobenius_jvp(inputs, meta, res, tangents):
    """frobenius_norm(x, dims, keepdim) is ATen's norm(x, 2, dims, keepdim): its formula
    (MaskedFillBackward0 on top)."""
    return _norm_jvp(inputs, (2.0, meta[0], meta[1]), res, tangents)


def _renorm_jvp(inputs, meta, res, tangents):
    """PyTorch's renorm_jvp: the slices over maxnorm take factor * (t - x / norm * the
    norm's tangent), the others t itself (a where on top: WhereBackward0)."""
    p, dim, maxnorm = meta
    x, t = inputs[0], tangents[0]
    dims = tuple(d for d in range(x._data.ndim) if d != dim)
    norm = _registry.PUBLIC["torch.linalg.vector_norm"](x, p, dims, keepdim=True)
    norm_t = _norm_jvp((x,), (p, dims, True), norm, [t])
    if norm_t is NotImplemented:
        return NotImplemented
    invnorm = (norm + 1e-7).reciprocal()
    factor = invnorm * maxnorm
    return _where(norm > maxnorm, factor * (t - x * invnorm * norm_t), t)


def _rounded_quotient_jvp(mode: str):
    """fmod (mode "trunc") and remainder ("floor"): a_t - b_t * (a / b rounded), SubBackward0
    on top; a missing tangent is a zero term (no quotient read, so b = 0 gives no nan)."""

    def formula(inputs, meta, res, tangents):
        a, b = inputs
        if not isinstance(b, Tensor) or not isinstance(a, Tensor):
            return NotImplemented
        a_t, b_t = tangents
        quotient = a.div(b, rounding_mode=mode)
        zeros = make(np.zeros_like(res._data))
        if b_t is None:  # (PyTorch's zero tangent times the quotient: still read, never nan)
            b_t = zeros
            if not np.isfinite(quotient._data).all():
                quotient = make(np.zeros_like(quotient._data))
        return (a_t if a_t is not None else zeros) - b_t * quotient

    return formula


def _atan2_jvp(inputs, meta, res, tangents):
    """atan2(a, b)'s formula: (b a_t - a b_t) / (a^2 + b^2), DivBackward0 on top."""
    a, b = inputs
    a_t, b_t = (_zeros_for(x, t) for x, t in zip(inputs, tangents, strict=True))
    return (-a * b_t + b * a_t) / (a.pow(2) + b.pow(2))


def _scaled(t, value):
    """t * value, no product for 1 (PyTorch's maybe_multiply)."""
    return t if value == 1 else t * value


def _addcdiv_jvp(inputs, meta, res, tangents):
    """addcdiv(s, n, d, value)'s formula: s_t + value n_t / d - value d_t (n / d) / d
    (SubBackward0 on top)."""
    _s, n, d = inputs
    s_t, n_t, d_t = (_zeros_for(x, t) for x, t in zip(inputs, tangents, strict=True))
    value = meta[0]
    return s_t + _scaled(n_t / d, value) - _scaled(d_t * (n / d) / d, value)


def _evenly_read_jvp(inputs, meta, res, tangents):
    """max(), min(), median(), nanmedian() of a whole tensor: the mean of the tangent over
    the elements equal to the result (SumBackward0 on top, as PyTorch's evenly_read_jvp)."""
    x, t = inputs[0], tangents[0]
    hits = x == make(res._data)  # (a nan result matches nothing: a nan tangent, as PyTorch's)
    return (t * (hits / hits.sum())).sum()


def _extreme_jvp(keep_dims, minimum: bool):
    """amax/amin (aminmax) over dims: the tangent summed over the extreme elements over their
    count (DivBackward0 on top, as PyTorch's amaxamin_jvp)."""

    def formula(inputs, meta, res, tangents):
        dims, keepdim = keep_dims(meta)
        x, t = inputs[0], tangents[0]
        if not dims:
            dims = tuple(range(x._data.ndim))
        plain = make(x._data)
        extreme = plain.amin(dims, keepdim=True) if minimum else plain.amax(dims, keepdim=True)
        hits = x == extreme
        return (t * hits).sum(dims, keepdim=keepdim) / hits.sum(dims, keepdim=keepdim)

    return formula


def _shape_dims_keepdim(meta):
    return tuple(meta[1]), meta[2]


def _dims_keepdim(meta):
    return tuple(meta[0]), meta[1]


def _where(mask, a, b):
    return _registry.PUBLIC["torch.where"](mask, a, b)


def _clamp_jvp(inputs, meta, res, tangents):
    """clamp(x, lo, hi) with tensor bounds: the tangent of whichever of x, lo, hi the result
    took (hi where lo > hi; a tie keeps x's), WhereBackward0 on top, as PyTorch's."""
    x, lo, hi = inputs
    x_t = _zeros_for(x, tangents[0])
    lo_t = _zeros_for(lo, tangents[1]) if isinstance(lo, Tensor) else None
    hi_t = _zeros_for(hi, tangents[2]) if isinstance(hi, Tensor) else None
    if lo_t is not None and hi_t is not None:
        return _where(lo > hi, hi_t, _where(x < lo, lo_t, _where(x > hi, hi_t, x_t)))
    if lo_t is not None:
        return _where(x > lo, x_t, lo_t)
    if hi_t is not None:
        return _where(x < hi, x_t, hi_t)
    return NotImplemented


def _clamp_min_jvp(inputs, meta, res, tangents):
    """clamp_min(x, lo): x's tangent where x >= lo, else lo's (a tie keeps x's)."""
    x, lo = inputs
    return _where(x >= lo, _zeros_for(x, tangents[0]), _zeros_for(lo, tangents[1]))


def _clamp_max_jvp(inputs, meta, res, tangents):
    """clamp_max(x, hi): x's tangent where x <= hi, else hi's."""
    x, hi = inputs
    return _where(x <= hi, _zeros_for(x, tangents[0]), _zeros_for(hi, tangents[1]))


def _nansum_jvp(inputs, meta, res, tangents):
    """nansum's formula: the tangent, 0 where x is nan, summed (SumBackward1 on top)."""
    x, t = inputs[0], tangents[0]
    dims, keepdim = tuple(meta[0]), meta[1]
    if not dims:
        dims = tuple(range(x._data.ndim))
    kept = _where(x.isnan(), make(np.zeros((), dtype=t._data.dtype)), t)
    return kept.sum(dims, keepdim=keepdim)


def _norm_dim_jvp(inputs, meta, res, tangents):
    p, dim, keepdim = meta[0], meta[1], meta[2]
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return _norm_jvp(inputs, (p, dims, keepdim), res, tangents)


def _dist_jvp(inputs, meta, res, tangents):
    """dist(a, b, p) is the p-norm of a - b: that norm's formula on a_t - b_t."""
    a, b = inputs
    if not isinstance(b, Tensor) or a._data.dtype.kind == "c" or b._data.dtype.kind == "c":
        return NotImplemented
    a_t, b_t = tangents
    if a_t is None:
        diff_t = -b_t
    elif b_t is None:
        diff_t = a_t
    else:
        diff_t = a_t - b_t
    diff = a - b
    if diff_t._data.shape != diff._data.shape:
        diff_t = diff_t.expand(diff._data.shape)
    p = meta[0]
    return _norm_jvp((diff,), (p, tuple(range(diff._data.ndim)), False), res, (diff_t,))


def _paired_jvp(std: bool):
    """std_mean / var_mean: std's (or var's) formula, and the mean of the tangent."""

    def formula(inputs, meta, outs, tangents):
        x, t = inputs[0], tangents[0]
        if x._data.dtype.kind == "c":
            return NotImplemented
        dims, correction, keepdim = meta[0], meta[1], meta[2]
        first = _var_tangent(x, t, (tuple(dims), correction, keepdim, not dims))
        if std:
            value = _plain_result(outs[0])
            first = (first / (2.0 * value)).masked_fill(value == 0, 0)
        mean = t.mean(tuple(dims), keepdim=keepdim) if dims else t.mean()
        return [first, mean]

    return formula


def _slogdet_jvp(inputs, meta, outs, tangents):
    """slogdet: the sign's tangent is zero (no graph), logabsdet's the trace of A^-1 A_t:
    solve(A, A_t)'s diagonal summed (SumBackward1 on top), for real A."""
    a, a_t = inputs[0], tangents[0]
    if a._data.dtype.kind not in "fV":
        return NotImplemented
    solve = _registry.PUBLIC["torch.linalg.solve"]
    # (A's values: PyTorch solves with its LU factors, an output without derivative)
    trace = solve(make(a._data), a_t).diagonal(0, -2, -1).sum(-1)
    return [make(np.zeros_like(outs[0]._data)), trace]


def _conv_backward_jvp(inputs, meta, outs, tangents):
    """convolution_backward is linear in grad_output and bilinear in (grad_output, input)
    and (grad_output, weight): the tangent of each gradient asked for is the op itself at
    grad_output's tangent, plus the input gradient at weight's tangent and the weight
    gradient at input's tangent (AddBackward0 on top when both parts exist)."""
    from .ops.conv_backward import convolution_backward

    (g, x, w), (g_t, x_t, w_t) = inputs, tangents
    family, geo, mask = meta[0], meta[1], meta[2]
    results = [None, None, None]

    def add(i, t):
        results[i] = t if results[i] is None else results[i] + t

    if g_t is not None:
        for i, part in enumerate(convolution_backward(family, geo, g_t, x, w, mask)):
            if part is not None:
                add(i, part)
    if w_t is not None and mask[0]:
        add(0, convolution_backward(family, geo, g, x, w_t, (True, False, False))[0])
    if x_t is not None and mask[1]:
        add(1, convolution_backward(family, geo, g, x_t, w, (False, True, False))[1])
    return results


# ops of several outputs whose PyTorch forward derivatives are written out here: each
# gives the list of the outputs' tangents (or NotImplemented: the double-vjp rule)
_MULTI_FORMULAS = {"std_mean": _paired_jvp(True), "var_mean": _paired_jvp(False),
                   "linalg_slogdet": _slogdet_jvp, "convolution_backward": _conv_backward_jvp,
                   **_nn_formulas.MULTI_FORMULAS}
# ops whose PyTorch forward derivative is an explicit formula written out here
_FORMULAS = {"where": _where_jvp, "mul": _mul_jvp, "add": _add_jvp, "add_alpha": _add_jvp, "nansum": _nansum_jvp, "fill_scalar": _fill_scalar_jvp, "renorm": _renorm_jvp, "clamp_tensor": _clamp_jvp, "clamp_min_tensor": _clamp_min_jvp,
             "clamp_max_tensor": _clamp_max_jvp, "max": _evenly_read_jvp, "min": _evenly_read_jvp, "median": _evenly_read_jvp,
             "nanmedian": _evenly_read_jvp,
             "amax": _extreme_jvp(_shape_dims_keepdim, False),
             "amin": _extreme_jvp(_shape_dims_keepdim, True),
             "aminmax_max": _extreme_jvp(_dims_keepdim, False),
             "aminmax_min": _extreme_jvp(_dims_keepdim, True), "atan2": _atan2_jvp, "addcdiv": _addcdiv_jvp, "fmod": _rounded_quotient_jvp("trunc"), "remainder": _rounded_quotient_jvp("floor"),
             "norm": _norm_jvp, "linalg_vector_norm": _norm_jvp, "var": _var_jvp, "std": _std_jvp, "logsumexp": _logsumexp_jvp, "softmax": _softmax_jvp, "copysign": _copysign_jvp, "div": _div_jvp, "tanh_backward": _tanh_backward_jvp,
             "sigmoid_backward": _sigmoid_backward_jvp, "mse_loss": _mse_loss_jvp,
             "norm_dim": _norm_dim_jvp, "dist": _dist_jvp, "frobenius_norm": _frobenius_jvp,
             **_more_formulas.FORMULAS, **_nn_formulas.FORMULAS}
_FORMULAS["_safe_softmax"] = _softmax_jvp  # (ATen's math attention softmax: softmax's formula)


def _conj_jvp(inputs, meta, res, tangents):
    """conj's self_t.conj(): the public conj, so the tangent carries the conj bit as
    PyTorch's lazy conj view does (and its zeros' signs: 0j conjugated is -0j)."""
    return _registry.PUBLIC["torch.conj"](tangents[0])


_FORMULAS["conj"] = _conj_jvp


def _formula_node(op, inputs, meta, out, tangents, keep: bool):
    """A node of `op` for evaluating its backward formula on the tangents: with the
    inputs' real edges when a graph is kept (a saved output read by the formula then
    differentiates back to them), a sentinel edge for inputs with only a tangent."""
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
    multi = isinstance(out, list)
    input_meta = None
    first = out[0] if multi else out
    if op.broadcast:
        for i, x in enumerate(inputs):
            if isinstance(x, Tensor) and (x._data.shape != first.shape
                                          or x._data.dtype != first.dtype):
                if input_meta is None:
                    input_meta = [None] * len(inputs)
                input_meta[i] = (x._data.shape, x._data.dtype)
    # (a saved output is read back over its own version counter, so that it finds the
    # tangent the result gets: a backward through the tangent's graph differentiates it)
    held = _RESULT_VC[0]
    vc = held[1] if held is not None and held[0] is first else [0]
    return op.node_class()(op, edges, primals if op.save_inputs else None, None,
                           (out, vc) if op.save_result and not multi else None, meta,
                           input_meta)


# (the array, the version counter) of the result whose tangent _on_op is computing
_RESULT_VC: list = [None]


class _HooksPaused:
    """Within: saved-tensor hooks do not see the nodes made (the double-vjp rule's and a
    backward's own bookkeeping, which PyTorch does not have: its user's hooks would
    otherwise run, and unpack, in the middle of a forward op)."""

    def __enter__(self):
        self.held = _saved_hooks.STACK[:]
        _saved_hooks.STACK[:] = []

    def __exit__(self, *exc):
        _saved_hooks.STACK[:] = self.held


def _keeps_graph(inputs) -> bool:
    return GRAD_MODE.enabled and any(isinstance(x, Tensor) and x.requires_grad for x in inputs)


def _elementwise_jvp(op, inputs, meta, out, tangent: Tensor):
    """PyTorch's auto_element_wise tangent: the backward formula given the tangent as the
    gradient (its graph: the formula's, through the primal and the tangent)."""
    if op.backward is None:
        return None
    keep = _keeps_graph(inputs)
    node = _formula_node(op, inputs, meta, out, (tangent,), keep)
    graph = keep or (GRAD_MODE.enabled and tangent.requires_grad)
    prev = GRAD_MODE.enabled
    GRAD_MODE.enabled = graph
    try:
        got = op.backward(node, tangent)[0]
    finally:
        GRAD_MODE.enabled = prev
    if got is None:
        return make(np.zeros_like(out))
    if not graph and got._requires_grad:
        got = got.detach()
    if got._data.dtype != out.dtype or got._data.shape != out.shape:
        got = make(np.array(np.broadcast_to(got._data, out.shape), dtype=out.dtype))
    return got


def _linear_jvp(op, inputs, meta, out, tangents: list):
    """PyTorch's auto_linear tangent: the op itself on the tangents (zeros for the
    floating inputs without one; integer inputs, indices, stay)."""
    args = []
    for x, t in zip(inputs, tangents, strict=True):
        if t is not None:
            args.append(t)
        elif isinstance(x, Tensor) and x._data.dtype.kind in "fcV":
            args.append(make(np.zeros_like(x._data)))
        elif op.name in _ADDITIVE and isinstance(x, (int, float)) and not isinstance(x, bool):
            args.append(0)  # (a - 0.3: the number's tangent is zero)
        else:
            args.append(x)
    got = _registry.run_op(op, tuple(args), meta)
    if got._data.dtype != out.dtype:
        got = got.to(make(out).dtype)
    return got


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
    if not multi and out.dtype.kind == "c":  # (a holomorphic op's complex formula)
        from .ops import complex as _complex_ops

        op = _complex_ops.twin_for(op)
    keep = _keeps_graph(inputs)
    node = _formula_node(op, inputs, meta, out, tangents, keep)
    input_meta = node.input_meta
    prev = GRAD_MODE.enabled
    # (under no_grad a tangent gets no graph, even from a tangent that has one)
    create_graph = keep or (prev and any(t is not None and t.requires_grad for t in tangents))
    GRAD_MODE.enabled = True
    paused = _HooksPaused()
    paused.__enter__()
    try:
        arrays = out if multi else [out]
        us = [make(np.zeros_like(a), True, None) if a.dtype.kind in "fcV" else None
              for a in arrays]
        grads = op.backward(node, us if multi else us[0])
        if input_meta is not None:
            grads = _registry.reduce_to_inputs(node, grads)
        total = None
        for g, t in zip(grads, tangents, strict=False):
            if g is None or t is None:
                continue
            if g._data.dtype.kind == "c":  # (Re<vjp(u), t>: its gradient in u is J t)
                term = (g.conj() * t).real.sum()
            else:
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
        paused.__exit__(None, None, None)
    results = []
    for a, u in zip(arrays, us, strict=True):
        if u is None:
            results.append(None)
            continue
        jvp = jvps.pop(0)
        if jvp is None:
            jvp = make(np.zeros_like(a))
        elif not create_graph and jvp._requires_grad:
            jvp = jvp.detach()
        if keep and not multi and (op.name in _PRODUCTS or not jvp.requires_grad
                                   and op.name not in _MASKED):
            jvp = _product_rule_graph(op, inputs, jvp)
        results.append(jvp)
    return results if multi else results[0]


# ops whose PyTorch tangent is a product rule's sum, AddBackward0 on top whenever a primal
# requires grad (derivatives.yaml: mul, mm, addmm, bmm, mv, dot, ...)
_PRODUCTS = frozenset({"mul", "mm", "addmm", "bmm", "mv", "dot", "addmv", "baddbmm", "addbmm",
                       "addr", "outer", "vdot"})


# ops whose PyTorch tangent reads the primals only through comparisons (a mask, a
# selection): it has no graph unless a tangent has one
_MASKED = frozenset({"maximum", "minimum", "fmax", "fmin", "clamp_tensor", "clamp_max_tensor",
                     "clamp_min_tensor", "div_mode", "nextafter", "floor_divide"})


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
    def pieces(x, outs, op=None, meta=()) -> None:
        """split/chunk/unbind: each piece's tangent is the same view of x's tangent (made by
        the op itself when the tangent has a graph: SplitBackward0 on each piece)."""
        t = tangent_of(x)
        if t is None or x._data.dtype.kind not in "fcV":
            return
        if op is not None and t._requires_grad and GRAD_MODE.enabled:
            from .ops.shape import _run_pieces

            steps = [o._view_fn[-1] for o in outs]
            with _suspended:
                made = _run_pieces(op, t, [fwd(t._data, *m) for fwd, m in steps], meta, steps)
            for o, piece in zip(outs, made, strict=True):
                set_tangent(o, piece)
            return
        for o in outs:
            fwd, meta = o._view_fn[-1]
            piece = make(fwd(t._data, *meta))
            piece._vc = t._vc
            set_tangent(o, piece)

    @staticmethod
    def copies(sources, outs, op=None) -> None:
        """unsafe_split, split_with_sizes_copy, unbind_copy: copies of the view pieces
        `sources`. A tangent with a graph gives PyTorch's: the unsafe_ splits are auto_linear
        (the op itself on the tangent: UnsafeSplitBackward0, UnsafeSplitWithSizesBackward0), a *_copy op copies each view of the
        tangent into a new tensor (CopyBackwards over the view op's node)."""
        tangents = [tangent_of(src) for src in sources]
        if op is not None and GRAD_MODE.enabled and any(
                t is not None and t._requires_grad for t in tangents):
            with _suspended:
                if op.name in ("unsafe_split", "unsafe_split_with_sizes"):
                    from .ops.composite import _as_copies

                    tangents = list(_as_copies(op, tangents, None))
                else:
                    tangents = [t if t is None else _copied_into(o, t)
                                for o, t in zip(outs, tangents, strict=True)]
            for o, t in zip(outs, tangents, strict=True):
                if t is not None:
                    set_tangent(o, t)
            return
        for o, t in zip(outs, tangents, strict=True):
            if t is not None:
                set_tangent(o, make(np.array(t._data, copy=True)))

    @staticmethod
    def multi(op, inputs, meta, outs) -> None:
        tangents = [tangent_of(x) if isinstance(x, Tensor) else None for x in inputs]
        if all(t is None for t in tangents):
            return
        with _suspended:
            formula = _MULTI_FORMULAS.get(op.name)
            got = NotImplemented if formula is None else formula(inputs, meta, outs, tangents)
            if got is NotImplemented:
                got = jvp_of_op(op, inputs, meta, [o._data for o in outs], tangents)
            if got is None:
                return
            copied = _more_formulas.COPIED_OUTPUTS.get(op.name, ())
            if copied and GRAD_MODE.enabled:
                got = [_copied_into(o, t) if i in copied and t is not None and t._requires_grad
                       else t for i, (o, t) in enumerate(zip(outs, got, strict=True))]
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
                recorded = GRAD_MODE.enabled and (new._requires_grad or mine._requires_grad) \
                    and not (mine._grad_fn is None and mine._requires_grad)
                last = _LAST_IN_PLACE[0]
                _LAST_IN_PLACE[0] = None
                if recorded and last is not None and last[0]() is result:
                    _IN_PLACE_FORMULAS[last[1]](mine, *last[2:])
                elif recorded:
                    mine.copy_(new)  # (recorded, as PyTorch's self_t.copy_(new tangent))
                else:
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


# ------------------------------------------------------------------ backward inside a level

# autograd's AccumulateGrad and retain_grad steps while a level is active are these
# module's wrappers around them: the originals, to put back when the level ends
_ENGINE_ORIGINALS: dict = {}


def _engine_backward(node, grads: list, run):
    """autograd's slot: a node's backward formula in a pass without create_graph.

    PyTorch's formulas are differentiable ops, so inside a dual level the gradients they
    compute from dual tensors (saved inputs and outputs, or gradients with tangents) carry
    tangents (grad of a dual: its Hessian-vector product). gradcli's formulas take numpy
    shortcuts when no graph is recorded; with grad mode on they take the recorded path,
    whose ops give tangents, and the results are detached after (no graph, no tangent
    graph: what PyTorch's no-grad backward gives). A custom Function's backward runs as
    written (the user's ops carry tangents themselves)."""
    op = node.op
    if node.custom or not _TANGENTS:
        if run is not None:
            return run(node, grads)
        return op.backward(node, grads if op.multi else grads[0])
    GRAD_MODE.enabled = True
    paused = _HooksPaused()  # (the nodes recorded here are dropped: PyTorch makes none)
    paused.__enter__()
    try:
        if run is not None:
            out = run(node, grads)
        else:
            out = op.backward(node, grads if op.multi else grads[0])
    finally:
        GRAD_MODE.enabled = False
        paused.__exit__(None, None, None)
    return tuple(_no_graph(g) for g in out)


def _no_graph(g):
    """g without its graph, with its tangent (also without graph) when it has one."""
    if not isinstance(g, Tensor) or (not g._requires_grad and _tangent_graph_free(g)):
        return g
    tangent = tangent_of(g)
    out = g.detach()
    if tangent is not None:
        set_tangent(out, tangent.detach() if tangent._requires_grad else tangent)
    return out


def _tangent_graph_free(g) -> bool:
    t = tangent_of(g)
    return t is None or not t._requires_grad


def _accumulate_with_tangent(var, grads: list, create_graph: bool, shared=None) -> None:
    """AccumulateGrad inside a level, with PyTorch's tangents on .grad: a gradient the
    engine alone held becomes .grad detached (no tangent), one others hold is cloned
    (its tangent too), and a sum into an existing .grad adds the tangents."""
    g = grads[0]
    old = var._grad
    g_tangent = tangent_of(g) if g is not None else None
    old_tangent = tangent_of(old) if old is not None else None
    g_data = g._data if g is not None else None
    # PyTorch takes the gradient over when nothing but the engine refers to it: the
    # engine's own record says so (not in `shared`: a view of an engine-made sum too), or
    # its AccumulateGrad found nobody else held it and took its buffer (autograd._unheld,
    # which is why this frame lets go of `g` first); backward(inputs=...) (no `shared`)
    # hands over its captured gradients
    engine_only = shared is None or id(g) not in shared
    layout_kept = g is not None and _obeys_layout(g, var)
    g = None
    _ENGINE_ORIGINALS["accumulate"](var, grads, create_graph, shared)
    new = var._grad
    stolen = (old is None and not create_graph and new is not None and layout_kept
              and (engine_only or new._data is g_data))
    _after_grad_update(var, old, old_tangent, new if stolen else grads[0], g_tangent, stolen)


def _obeys_layout(g, var) -> bool:
    """PyTorch's layout contract of a gradient for AccumulateGrad (a gradient that breaks
    it is cloned, not taken over): var's strides where var is dense, else contiguous."""
    gd, vd = g._data, var._data
    if gd.shape != vd.shape:
        return False
    size = gd.itemsize
    if _dense(vd):
        return all(n == 1 and gs != 0 or n != 1 and gs == vs
                   for n, gs, vs in zip(gd.shape, gd.strides, vd.strides, strict=True))
    return gd.flags.c_contiguous and size > 0


def _dense(a) -> bool:
    """Non-overlapping and dense: its elements fill a block of memory, in some order."""
    if a.size <= 1:
        return True
    dims = sorted((abs(st), n) for n, st in zip(a.shape, a.strides, strict=True) if n != 1)
    expected = a.itemsize
    for st, n in dims:
        if st != expected:
            return False
        expected *= n
    return True


def _retain_with_tangent(node, grads: list, create_graph: bool) -> None:
    """retain_grad inside a level: PyTorch clones the gradient into .grad (its tangent too)
    or adds it to the .grad there."""
    before = []
    for _nr, held in node.retain_hooks.items():
        t = held()
        if t is not None:
            old = t._grad
            before.append((t, old, tangent_of(old) if old is not None else None))
    _ENGINE_ORIGINALS["retain"](node, grads, create_graph)
    for t, old, old_tangent in before:
        new = t._grad
        if new is old or new is None:
            continue
        nr = t._output_nr
        g = grads[nr] if nr < len(grads) else None
        if g is not None:
            _after_grad_update(t, old, old_tangent, g, tangent_of(g), stolen=False)


def _after_grad_update(var, old, old_tangent, g, g_tangent, stolen: bool) -> None:
    """Give var's new .grad PyTorch's tangent: none when PyTorch took the gradient over
    (`stolen`: its detach()), a copy of the gradient's when it cloned it, the sum of the
    two when it added to an existing .grad."""
    new = var._grad
    if new is None or (g_tangent is None and old_tangent is None):
        return
    with _suspended:
        if old is None:
            if stolen:
                if new is g:
                    _TANGENTS.pop(id(new), None)
            elif g_tangent is not None:  # cloned: PyTorch's clone gives a clone of the tangent
                set_tangent(new, g_tangent.clone() if g_tangent._requires_grad
                            and GRAD_MODE.enabled else _copy_tangent(g_tangent))
            return
        total = g_tangent if old_tangent is None else (
            old_tangent if g_tangent is None else old_tangent + g_tangent)
        if new is old:  # added in place: old's tangent takes the sum in place
            if old_tangent is None:
                set_tangent(old, _copy_tangent(total))
            elif g_tangent is not None:
                _write(old_tangent, total)
        elif tangent_of(new) is None:
            set_tangent(new, _copy_tangent(total))


def _copy_tangent(t: Tensor) -> Tensor:
    return make(np.array(t._data, copy=True))


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
                if isinstance(a, Tensor) and a._data.dtype.kind in "fcV" else None
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
            if not isinstance(o, Tensor) or id(o) in non_diff or o._data.dtype.kind not in "fcV":
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
