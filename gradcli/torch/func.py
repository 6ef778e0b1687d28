"""torch.func over gradcli's engine: jvp, vjp, grad, grad_and_value, jacrev, jacfwd,
hessian, linearize, vmap and functional_call, as plain functions.

PyTorch's functorch wraps tensors per transform level; here each transform is a direct
use of the engine: reverse-mode ones differentiate a fresh input (a leaf, or a view of
an input that already needs a gradient, so an enclosing transform differentiates through
it: grad(grad(f)) works), the outermost forward-mode one uses the dual level
(torch.autograd.forward_ad) and a jvp inside it computes J t by reverse mode, the double
vjp, whose ops carry the outer tangents (jacfwd(jacfwd(f)), jvp of jvp).
vmap runs the function once per slice and stacks the results.
"""

from __future__ import annotations

import functools

from gradcli.engine import forward_ad as _fwad
from gradcli.engine.autograd import grad as _autograd_grad
from gradcli.engine.grad_mode import GRAD_MODE, enable_grad
from gradcli.engine.tensor import Tensor

from . import func_batched as _batched
from . import func_guards as _guards

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "stack_module_state", "vjp", "vmap"]

_NEEDS_SETUP_CONTEXT = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
    "...), it must override the setup_context staticmethod. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html")
_NEEDS_VMAP_RULE = (
    "You tried to vmap over {name}, but it does not have vmap support. Please override and "
    "implement the vmap staticmethod or set generate_vmap_rule=True. For more details, please "
    "see https://pytorch.org/docs/main/notes/extending.func.html")
_STATE = _guards.STATE  # the calling thread's transforms


def _check_custom_function(cls, setup_style: bool) -> None:
    """custom_function's slot while a transform runs (in any thread): a Function without
    setup_context cannot run under one, nor one without a vmap rule under vmap (PyTorch's
    errors)."""
    state = _STATE
    if not state.transforms:
        return  # (another thread's transform)
    if not setup_style:
        raise RuntimeError(_NEEDS_SETUP_CONTEXT)
    if state.vmapping and not getattr(cls, "generate_vmap_rule", False) and not any(
            "vmap" in vars(k) for k in cls.__mro__ if k.__module__ != "torch.autograd.function"):
        raise RuntimeError(_NEEDS_VMAP_RULE.format(name=cls.__name__))


class _Transform:
    """Within: a torch.func transform runs (`vmapping`: one PyTorch runs under vmap)."""

    __slots__ = ("vmapping",)

    def __init__(self, vmapping: bool = False):
        self.vmapping = vmapping

    def __enter__(self):
        state = _STATE
        _guards.push("other")
        state.transforms += 1
        state.vmapping += self.vmapping

    def __exit__(self, *exc):
        state = _STATE
        state.transforms -= 1
        state.vmapping -= self.vmapping
        _guards.pop()


_guards.CUSTOM_CHECK[0] = _check_custom_function
_TRANSFORM = _Transform()
_VMAPPING = _Transform(True)


def _under_vmap(run):
    """`run` as a transform PyTorch runs under vmap (jacfwd, vmap)."""

    @functools.wraps(run)
    def vmapped(*args, **kwargs):
        with _VMAPPING:
            return run(*args, **kwargs)

    return vmapped


# ------------------------------------------------------------------ pytrees

def _split_aux(name: str, output, has_aux: bool):
    """(output, aux) of a transformed function: with has_aux it must return exactly that
    pair (PyTorch's error otherwise); without, aux is None."""
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{name}: output of function f should be a tuple: (output, aux) "
                           "if has_aux is True")
    _check_aux(output[1])
    return output


def _check_aux(aux) -> None:
    """An aux output holds tensors only (PyTorch's pytree: None is a leaf too)."""
    for leaf in _flatten(aux)[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")


def _check_nonempty(outs: list, name: str) -> None:
    """PyTorch's check that f returned something: no leaves, or just None."""
    if not outs or (len(outs) == 1 and outs[0] is None):
        raise RuntimeError(f"{name}: Expected f to be a function that has non-empty output "
                           f"(got output = {outs})")


def _jvp_outputs(name: str, output, has_aux: bool):
    """A jvp's function result checked as PyTorch's jvp checks it: (the flat tensors, their
    structure, aux)."""
    output, aux = _split_aux(name, output, has_aux)
    outs, out_spec = _flatten(output)
    _check_nonempty(outs, name)
    for o in outs:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{name}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")
    return outs, out_spec, aux


def _flatten(tree) -> tuple[list, object]:
    """Leaves (in order) and a spec to rebuild the structure (tuples, lists, dicts)."""
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for item in tree:
            sub, spec = _flatten(item)
            leaves.extend(sub)
            specs.append((len(sub), spec))
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for key, item in tree.items():
            sub, spec = _flatten(item)
            leaves.extend(sub)
            specs.append((key, len(sub), spec))
        return leaves, (type(tree), specs)  # (dict, OrderedDict, defaultdict...)
    return [tree], None


def _unflatten(leaves: list, spec):
    if spec is None:
        return leaves[0]
    kind, specs = spec
    if issubclass(kind, dict):
        out, at = {}, 0
        for key, n, sub in specs:
            out[key] = _unflatten(leaves[at:at + n], sub)
            at += n
        return out if kind is dict else _same_kind_of_dict(kind, out)
    out, at = [], 0
    for n, sub in specs:
        out.append(_unflatten(leaves[at:at + n], sub))
        at += n
    if kind is tuple or kind is list:
        return kind(out)
    return kind(*out)  # a namedtuple


def _same_kind_of_dict(kind, items: dict):
    """A dict subclass rebuilt with its items (a defaultdict keeps no factory: a plain
    dict of its items, as PyTorch's pytree unflattens what it cannot rebuild)."""
    try:
        return kind(items)
    except TypeError:
        return items


def _spec_text(spec, indent: int = 0) -> str:
    """PyTorch's TreeSpec text (its repr), as its structure errors print it."""
    if spec is None:
        return "*"
    kind, specs = spec
    if issubclass(kind, dict):
        context = repr([k for k, _, _ in specs])
        children = [s for _, _, s in specs]
    else:
        context = "None"
        children = [s for _, s in specs]
    text = ""
    if children:
        indent += 2
        text = _spec_text(children[0], indent) + ("," if len(children) > 1 else "")
        text += ",".join("\n" + " " * indent + _spec_text(c, indent) for c in children[1:])
    return f"TreeSpec({kind.__name__}, {context}, [{text}])"


# ------------------------------------------------------------------ argnums

def _wrap_argnum(argnum, n: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < n:
        return argnum
    if -n <= argnum < 0:
        return argnum + n
    raise RuntimeError(f"Got argnum={argnum}, but only {n} positional inputs")


def _argnums(argnums, n: int):
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, n)
    if isinstance(argnums, tuple):
        if len(argnums) == 0:
            raise RuntimeError("argnums must be non-empty")
        wrapped = tuple(_wrap_argnum(a, n) for a in argnums)
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"argnums elements must be unique, got {wrapped}")
        return wrapped
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _picked(args: tuple, argnums):
    return args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def _replaced(args: tuple, argnums, new) -> tuple:
    if isinstance(argnums, int):
        return tuple(new if i == argnums else a for i, a in enumerate(args))
    return tuple(new[argnums.index(i)] if i in argnums else a for i, a in enumerate(args))


# ------------------------------------------------------------------ reverse mode

def _differentiable(x: Tensor) -> Tensor:
    """The tensor a reverse transform differentiates for input x: a leaf over x's data,
    or (x already needing a gradient) an alias of x, so the gradient stays a function of x.
    A tangent of x goes with it (jacfwd over jacrev: hessian)."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if x.requires_grad:
        from gradcli.engine.ops.views import alias

        with enable_grad():  # (an alias: its backward hands the gradient on as it is, so
            out = alias(x)  # grad(grad(f)) ends in f's last op, as PyTorch's levels do)
        _INPUT_ALIASES.add(out._grad_fn)
        return out
    out = _detached(x)._requires_grad_(True)
    _batched.carry(x, out)
    return out


# the alias nodes _differentiable made (weakly: they go with their graphs)
_INPUT_ALIASES = __import__("weakref").WeakSet()


def _detached(x: Tensor, tangent_graph: bool = True) -> Tensor:
    """x.detach(), keeping x's tangent (a transform's result inside a jvp keeps it); a
    transform's result keeps no graph on its tangent either (`tangent_graph` False)."""
    out = x.detach()
    tangent = _fwad.tangent_of(x)
    if tangent is not None:
        if not tangent_graph and tangent.requires_grad:
            tangent = tangent.detach()
        _fwad.set_tangent(out, tangent)
    return out


def _keep_graph(inputs) -> bool:
    """Whether results keep their graph: an enclosing transform, or inputs that needed a
    gradient already."""
    return GRAD_MODE.enabled and (_STATE.depth > 0 or any(
        isinstance(x, Tensor) and x.requires_grad for x in inputs))


def _plain(t, keep: bool):
    if isinstance(t, Tensor) and not keep:
        return _detached(t, False)
    return t


def _grads_of(outputs: list, inputs: list, cotangents: list, keep: bool) -> list:
    """d<outputs, cotangents>/d inputs, zeros where an input was not used."""
    import numpy as np

    from gradcli.engine.tensor import make

    pairs = [(o, c) for o, c in zip(outputs, cotangents, strict=True)
             if isinstance(o, Tensor) and o.requires_grad]
    if _fwad._LEVEL[0] >= 0 and not keep:
        # inside a jvp (hessian): the backward runs with a graph, so that the engine sums
        # gradients with tensor ops, which carry tangents, then the graph is dropped (and
        # the tangents' graphs, never made: TANGENT_GRAPHS_UNUSED)
        _fwad.TANGENT_GRAPHS_UNUSED[0] += 1
        try:
            got = _grads_of(outputs, inputs, cotangents, True)
        finally:
            _fwad.TANGENT_GRAPHS_UNUSED[0] -= 1
        return [_detached(g, False) for g in got]
    if not pairs:
        return [make(np.zeros_like(x._data)) for x in inputs]
    with enable_grad():
        # (create_graph always: functorch runs the backward formulas with grad mode on,
        # and some branch on it, e.g. prod's with several zeros: exclusive cumprods, whose
        # zeros carry signs, not plain zeros; the graph is dropped below when not kept)
        passes = _STATE.passes
        passes.append(_STATE.depth)  # (the level whose hooks fire: func_guards.level_hook)
        try:
            got = _autograd_grad([o for o, _ in pairs], inputs, [c for _, c in pairs],
                                 retain_graph=True, create_graph=True, allow_unused=True)
        finally:
            passes.pop()
    out = []
    for x, g in zip(inputs, got, strict=True):
        if g is None:
            g = make(np.zeros_like(x._data))
        out.append(g if keep else _detached(g, False))
    return out


def vjp(func, *primals, has_aux: bool = False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives one gradient per primal."""
    flat, spec = _flatten(primals)
    keep = _keep_graph(flat)
    inner = _inputs_for(flat)
    _STATE.depth += 1
    try:
        with enable_grad(), _TRANSFORM:
            output = func(*_unflatten(inner, spec))
    finally:
        _STATE.depth -= 1
    aux = None
    if has_aux:
        if not (isinstance(output, tuple) and len(output) == 2):
            raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                               "(output, aux) if has_aux is True")
        output, aux = output
        _check_aux(aux)
    outs, out_spec = _flatten(output)
    _check_nonempty(outs, "vjp(f, *primals)")
    for o in outs:
        if not isinstance(o, Tensor):
            raise RuntimeError("vjp(f, *primals): expected f(*primals) to return only "
                                   f"tensors, got unsupported type {type(o)}")
        if o._data.dtype.kind not in "fc":
            raise RuntimeError(
                "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                f"Tensor with dtype {o.dtype}")

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        cots, cot_spec = _flatten(cotangents)
        if _spec_text(cot_spec) != _spec_text(out_spec):
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {_spec_text(cot_spec)}, "
                f"primal output: {_spec_text(out_spec)}")
        # (whether the caller's graph is kept is decided when vjp_fn runs: under no_grad
        # then, not; after a vjp made under no_grad, still, as PyTorch's)
        grads = _grads_of(outs, inner, cots, _keep_graph(inner.originals))
        return _unflatten(grads, spec)

    shown = _unflatten([_plain(o, keep) for o in outs], out_spec)
    if has_aux:
        return shown, vjp_fn, _tree_plain(aux, keep, inner)
    return shown, vjp_fn


def _tree_plain(tree, keep: bool, inner=None):
    leaves, spec = _flatten(tree)
    if inner is None:
        return _unflatten([_plain(x, keep) for x in leaves], spec)
    return _unflatten([_aux_leaf(x, keep, inner) for x in leaves], spec)


class _Inputs(list):
    """The differentiable copies a transform made, with the tensors they stand for."""

    originals: list = []


def _inputs_for(flat: list) -> _Inputs:
    inner = _Inputs(_differentiable(x) for x in flat)
    inner.originals = flat
    return inner


def _bypass_aliases(inner: _Inputs, *trees) -> None:
    """Edges into the aliases _differentiable made for inputs that needed a gradient,
    redirected to what each alias stands on (its backward hands the gradient on
    unchanged): the graph kept for the caller reaches x's own node, as PyTorch's (whose
    levels unwrap to x itself) does. Only nodes newer than the aliases can point at them,
    so the walk stops at older ones."""
    aliases = {}
    for x, original in zip(inner, inner.originals, strict=True):
        node = x._grad_fn if isinstance(original, Tensor) and original.requires_grad else None
        if node in _INPUT_ALIASES:
            aliases[node] = node.next_functions[0]
    if not aliases:
        return
    oldest = min(node.seq for node in aliases)

    def bypassed(node) -> bool:
        # this transform's aliases, and an inner transform's (done by now) standing on one
        if node in aliases:
            return True
        if node not in _INPUT_ALIASES or node.seq < oldest:
            return False
        target, nr = node.next_functions[0]
        if target is None or not bypassed(target):
            return False
        aliases[node] = aliases[target]
        return True

    stack = []
    for tree in trees:
        for leaf in _flatten(tree)[0]:
            if isinstance(leaf, Tensor) and leaf._grad_fn is not None:
                stack.append(leaf._grad_fn)
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen or bypassed(node) or getattr(node, "seq", -1) < oldest:
            continue
        seen.add(id(node))
        edges = node.next_functions
        if any(bypassed(child) for child, _ in edges if child is not None):
            node.next_functions = tuple(aliases[child] if child in aliases else (child, nr)
                                        for child, nr in edges)
        stack.extend(child for child, _ in node.next_functions if child is not None)


def _aux_leaf(t, keep: bool, inner: _Inputs):
    """An aux output as PyTorch's levels unwrap it: an input itself is the caller's
    tensor, a view stays a view (of the caller's tensor when it viewed an input), so an
    in-place change of it shows through as PyTorch's does."""
    if not isinstance(t, Tensor):
        return t
    for x, original in zip(inner, inner.originals, strict=True):
        if t is x:
            return original
    if keep:
        return t
    out = _detached(t, False)
    base = t._base
    if base is None:
        return out
    root = next((o for x, o in zip(inner, inner.originals, strict=True) if base is x), None)
    if root is None:
        root = _detached(base, False)
    chain = t._view_fn
    if root._base is not None:
        chain = root._view_fn + chain
        root = root._base
    out._base = root
    out._view_fn = chain
    out._vc = root._vc
    out._attr_version = root._vc[0]
    out._creation = t._creation
    return out


def _traced_call(func, args, kwargs, argnums, has_aux: bool, who: str) -> tuple:
    """func(*args) with args[argnums] replaced by fresh differentiable copies, recorded
    (grad mode on, one level deeper): (output, aux, the copies, their tree spec, whether
    the caller's graph is kept)."""
    nums = _argnums(argnums, len(args))
    flat, spec = _flatten(_picked(args, nums))
    keep = _keep_graph(flat)
    inner = _inputs_for(flat)
    _STATE.depth += 1
    try:
        with enable_grad(), _TRANSFORM:
            output = func(*_replaced(args, nums, _unflatten(inner, spec)), **kwargs)
    finally:
        _STATE.depth -= 1
    output, aux = _split_aux(who, output, has_aux)
    return output, aux, inner, spec, keep


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """A function returning (gradient of func's scalar output w.r.t. args[argnums], value)."""

    @functools.wraps(func)
    def run(*args, **kwargs):
        output, aux, inner, spec, keep = _traced_call(func, args, kwargs, argnums, has_aux,
                                                      "grad_and_value(f)(*args)")
        if not isinstance(output, Tensor):
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                               f"got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError(
                "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                f"tensor with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                "APIs instead?")
        import numpy as np

        from gradcli.engine.tensor import make

        one = make(np.ones_like(output._data))
        grads = _grads_of([output], inner, [one], keep)
        gradient = _unflatten(grads, spec)
        value = _plain(output, keep)
        if keep:
            _bypass_aliases(inner, grads, value, aux)
        if has_aux:
            return gradient, (value, _tree_plain(aux, keep, inner))
        return gradient, value

    return run


def grad(func, argnums=0, has_aux: bool = False):
    """A function returning the gradient of func's scalar output w.r.t. args[argnums]."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def run(*args, **kwargs):
        gradient, value = inner(*args, **kwargs)
        if has_aux:
            return gradient, value[1]
        return gradient

    return run


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None,
           _preallocate_and_copy: bool = False):
    """A function returning the Jacobian of func w.r.t. args[argnums], one reverse pass per
    output element (shape: output's shape + input's shape)."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def run(*args, **kwargs):
        output, aux, inner, spec, keep = _traced_call(func, args, kwargs, argnums, has_aux,
                                                      "jacrev(f, ...)(*args)")
        outs, out_spec = _flatten(output)
        _check_nonempty(outs, "vjp(f, *primals)")  # (PyTorch's jacrev is a vjp)
        for o in outs:
            if not isinstance(o, Tensor):
                raise RuntimeError("vjp(f, *primals): expected f(*primals) to return only "
                                   f"tensors, got unsupported type {type(o)}")
        jacs = []  # per output: per input
        # PyTorch's backward passes run under vmap over the one-hot rows (a plain loop only
        # with chunk_size=1): a custom Function they reach needs a vmap rule
        rows_under = _Transform(vmapping=chunk_size != 1)
        for o in outs:
            with rows_under:
                rows = _jacobian_rows(o, inner, keep)
            jacs.append(_unflatten(rows, spec))
        result = _unflatten(jacs, out_spec)
        aux = _tree_plain(aux, keep, inner) if has_aux else None
        if keep:
            _bypass_aliases(inner, result, aux)
        if has_aux:
            return result, aux
        return result

    return run


def _jacobian_rows(o: Tensor, inputs: list, keep: bool) -> list:
    """For each input, d o / d input with shape o.shape + input.shape."""
    import numpy as np

    import gradcli.torch as torch
    from gradcli.engine.tensor import make

    n = o.numel()
    per_input = [[] for _ in inputs]
    sources = _row_sources(o) if o.requires_grad else None
    skip = n > 1 and o.requires_grad and _zero_rows_add_nothing(o, inputs, keep)
    if not skip:
        sources = None
    if sources is not None:
        # o is an inner jacrev's Jacobian: each element is one of its rows' elements, so
        # each pass starts at that row (its graph only, not the stack of them all)
        width = n // len(sources) if sources else 0
        bases = [make(np.zeros(width, dtype=o._data.dtype)) for _ in range(width)]
        for j, basis in enumerate(bases):
            basis._data[j] = 1
        outputs = [[row.reshape(-1)] for row in sources]
        pairs = ((out, basis) for out in outputs for basis in bases)
    else:
        flat_o = [o.reshape(-1)] if o.requires_grad else None
        pairs = ((flat_o, None) for _ in range(n))
    from gradcli.engine.node import next_sequence

    first_seq = next_sequence()  # (the passes' nodes are newer)
    cotangents = []  # the passes' one-hot arrays
    _SKIP_ZERO_ROWS[0] += skip
    try:
        for k, (flat_o, basis) in enumerate(pairs):
            if flat_o is None:
                grads = [make(np.zeros_like(x._data)) for x in inputs]
            else:
                if basis is None:
                    basis = make(np.zeros(n, dtype=o._data.dtype))
                    basis._data[k] = 1
                cotangents.append(basis._data)
                grads = _grads_of(flat_o, inputs, [basis], keep)
            for rows, g in zip(per_input, grads, strict=True):
                rows.append(g)
    finally:
        _SKIP_ZERO_ROWS[0] -= skip
    out = []
    for x, rows in zip(inputs, per_input, strict=True):
        if rows:
            stacked = _rows_stacked(torch.stack(rows))
        else:
            stacked = make(np.zeros((0,) + x._data.shape, dtype=x._data.dtype))
        result = stacked.reshape(tuple(o.shape) + tuple(x.shape))
        if rows and result._grad_fn is not None:
            _remember_rows(result, rows)
            if n > 1:
                _sum_over_rows(rows, first_seq, cotangents)
        out.append(result)
    return out


def _sum_over_rows(rows: list, first_seq: int, cotangents: list) -> None:
    """(jacrev's rows; jacfwd's columns, its tangents the cotangents here.)
    Where the passes' graphs read a value that does not depend on the cotangent (the
    forward's tensors, or one a backward formula computed from them), PyTorch's vmapped
    passes read it once for the whole batch of cotangents, so a later reverse pass through
    the Jacobian sums that value's gradient over the batch: a sum that starts at +0, so
    zeros come out +0 where one row's own -0 stands here (tanh's second derivative off
    the diagonal prints 0., not -0.). The passes' nodes that depend on the cotangent (a
    saved tensor over a one-hot array's memory, or an input from such a node) add +0 to
    the gradients they hand to the others (_PlusZeroOnEdges)."""
    roots = {id(a) for a in cotangents}
    batched: dict = {}

    def root_of(array):
        while getattr(array, "base", None) is not None:
            array = array.base
        return array

    def newer(node) -> list:
        return [child for child, _ in node.next_functions
                if child is not None and getattr(child, "seq", -1) >= first_seq]

    def depends(start) -> bool:
        """Whether start's output depends on the cotangent (iteratively: deep graphs)."""
        stack = [(start, False)]
        while stack:
            node, expanded = stack.pop()
            key = id(node)
            if expanded:
                batched[key] = any(
                    isinstance(x, Tensor) and id(root_of(x._data)) in roots
                    for x in (getattr(node, "saved", None) or ())) or any(
                    batched.get(id(child), False) for child in newer(node))
            elif key not in batched:
                batched[key] = False  # (until expanded: a graph has no cycles)
                stack.append((node, True))
                stack.extend((child, False) for child in newer(node)
                             if id(child) not in batched)
        return batched[id(start)]

    seen = set()
    stack = [row._grad_fn for row in rows if row._grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen or getattr(node, "seq", -1) < first_seq:
            continue
        seen.add(id(node))
        children = node.next_functions
        stack.extend(child for child, _ in children if child is not None)
        if not hasattr(node, "op") or type(node.op) is _PlusZeroOnEdges or not depends(node):
            continue
        edges = tuple(i for i, (child, _) in enumerate(children) if child is not None and (
            getattr(child, "seq", -1) < first_seq or not depends(child)))
        if edges:
            node.op = _PlusZeroOnEdges(node.op, edges)


class _PlusZeroOnEdges:
    """A node's op whose backward adds +0 to the gradients it hands down the given edges
    (the sum over a batch of cotangents PyTorch's vmapped passes make there): -0 becomes
    +0, nothing else changes. The node keeps its class and every other attribute."""

    __slots__ = ("_op", "_edges")

    def __init__(self, op, edges: tuple):
        self._op = op
        self._edges = edges

    def __getattr__(self, name):
        return getattr(self._op, name)

    def backward(self, c, g):
        import numpy as np

        from gradcli.engine.tensor import make

        out = list(self._op.backward(c, g))
        for i in self._edges:
            t = out[i] if i < len(out) else None
            if isinstance(t, Tensor) and t._data.dtype.kind == "f":
                d = t._data
                if np.signbit(d[d == 0]).any():  # (else nothing would change)
                    out[i] = t + 0.0 if t.requires_grad else make(d + d.dtype.type(0))
        return tuple(out)


# > 0 while a jacrev's passes may skip the parts of the graph a zero cotangent reaches
_SKIP_ZERO_ROWS = [0]


def _zero_rows_add_nothing(o: Tensor, inputs: list, keep: bool) -> bool:
    """Whether the passes over o may skip the inner Jacobian rows a zero cotangent reaches.
    PyTorch's jacrev takes every pass over the whole graph (vmapped), so what a zero
    cotangent reaches adds 0 * (its derivative): nothing, unless a derivative there is
    infinite or NaN, which makes the sum NaN. Those additions are the same in every pass,
    so one probe pass over the whole graph tells whether the passes may skip them; if
    not, none does. The probe is unobservable: it runs only when o's graph holds a
    Jacobian's rows (else there is nothing to skip), as a dry run (the explain view's: no
    tensor or node hook fires, nothing accumulates), and not when it would run user code
    or leave a record (a custom Function's backward, saved-tensor unpack hooks, anomaly
    mode's checks, a profiler's spans): then no pass skips."""
    import numpy as np

    from gradcli.engine import autograd as _engine
    from gradcli.engine import grad_mode as _grad_mode
    from gradcli.engine.tensor import make

    if not _ROWS_STACK or _grad_mode.ANOMALY[0] or _engine.NODE_HOOK[0] is not None:
        return False
    rows_op = _ROWS_STACK[0]
    found = False
    seen = set()
    stack = [o._grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if getattr(node, "custom", False) or getattr(node, "packed", False):
            return False
        found = found or getattr(node, "op", None) is rows_op
        stack.extend(child for child, _ in node.next_functions)
    if not found:
        return False
    flat = o.reshape(-1)
    zero = make(np.zeros(flat.shape, dtype=o._data.dtype))
    with enable_grad():  # (create_graph, as the passes run: see _grads_of)
        got = _engine.run_engine([flat], [zero], True, True, list(inputs), accumulate=False,
                                 observe=_unobserved, stop_at_targets=True)
    return not any(g is not None and np.isnan(g._data).any() for g in got)


def _unobserved(node, grads_in, grads_out) -> None:
    """The probe's observer: it looks at nothing (run_engine's dry-run mode is the point)."""


# id of a Jacobian jacrev returned with a graph -> (weak reference to it, its grad_fn,
# its version, its rows): a jacrev of it differentiates the rows themselves
_ROW_SOURCES: dict = {}


def _remember_rows(result: Tensor, rows: list) -> None:
    import weakref

    key = id(result)
    ref = weakref.ref(result, lambda _r, key=key: _ROW_SOURCES.pop(key, None))
    _ROW_SOURCES[key] = (ref, result._grad_fn, result._vc[0], rows)


def _row_sources(o: Tensor):
    """The rows of o when o is, unchanged, a Jacobian jacrev made (None otherwise)."""
    entry = _ROW_SOURCES.get(id(o))
    if entry is None or entry[0]() is not o or o._grad_fn is not entry[1] or \
            o._vc[0] != entry[2] or not o.requires_grad:
        return None
    return entry[3]


def _rows_backward(c, g):
    """stack's backward for a Jacobian's rows. During a jacrev's passes that skip zero
    rows (_SKIP_ZERO_ROWS), it hands None (no gradient: the engine skips everything
    behind it) to a row whose gradient is a constant zero. A jacrev over a jacrev
    differentiates one element of the inner Jacobian per pass: without this, each pass
    ran the backward graphs of all the inner rows on zeros (O(rows) work per pass)."""
    import numpy as np

    dim = c.meta[0]
    n = len(c.next_functions)
    constant = _SKIP_ZERO_ROWS[0] and not g.requires_grad and _fwad.tangent_of(g) is None
    nonzero = (np.moveaxis(g._data, dim, 0).reshape(n, -1).any(axis=1) if constant
               else None)
    return tuple(g.select(dim, i) if c.needs(i) and (nonzero is None or nonzero[i]) else None
                 for i in range(n))


_ROWS_STACK: list = []  # the op of _rows_stacked's nodes, made on first use


def _rows_stacked(stacked: Tensor) -> Tensor:
    """torch.stack of a Jacobian's rows, its node (still StackBackward0) running
    _rows_backward."""
    fn = stacked._grad_fn
    if fn is None or type(fn).__name__ != "StackBackward0":
        return stacked
    if not _ROWS_STACK:
        from gradcli.engine.ops.registry import Op

        _ROWS_STACK.append(Op("stack", "StackBackward0", fn.op.forward, _rows_backward,
                              "d stack(rows)/d row: the gradient's slice for it, none where "
                              "it is a constant zero"))
    op = _ROWS_STACK[0]
    stacked._grad_fn = op.node_class()(op, fn.next_functions, fn.saved, fn.versions,
                                       fn.saved_result, fn.meta, fn.input_meta)
    return stacked


# ------------------------------------------------------------------ forward mode

_JVP_STRICT = ("jvp(f, primals, tangents, strict=True): The output of f is independent of the "
               "inputs. This is not allowed with strict=True.")


def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """(func(*primals), the Jacobian of func times tangents), by forward-mode AD."""
    name = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{name}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    flat_p, spec_p = _flatten(primals)
    flat_t, spec_t = _flatten(tangents)
    if _spec_text(spec_p) != _spec_text(spec_t):
        raise RuntimeError(
            f"{name}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {_spec_text(spec_p)} and tangents with structure {_spec_text(spec_t)}")
    for what, leaves in (("primals", flat_p), ("tangents", flat_t)):
        if not leaves:
            raise RuntimeError(f"{name}: Expected {what} to contain at least one Tensor.")
        for x in leaves:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{name}: Expected {what} to only contain Tensors, got {type(x)}")
    keep = _keep_graph(flat_p + flat_t)
    if _JVP_NESTING[0]:
        return _nested_jvp(func, flat_p, spec_p, flat_t, strict, has_aux, keep)
    _JVP_NESTING[0] += 1
    try:
        return _outer_jvp(func, flat_p, spec_p, flat_t, strict, has_aux, keep)
    finally:
        _JVP_NESTING[0] -= 1


# how many jvp calls are running: PyTorch's JVP_NESTING (the outermost one enters the dual
# level; a user's dual_level around it is nested forward AD, PyTorch's error)
_JVP_NESTING = [0]
_JVP_NAME = "jvp(f, primals, tangents)"


def _outer_jvp(func, flat_p, spec_p, flat_t, strict, has_aux, keep):
    """jvp by forward-mode AD: one dual level for the call."""
    name = _JVP_NAME
    with _fwad.dual_level():
        duals = [_fwad.make_dual(p, t) for p, t in zip(flat_p, flat_t, strict=True)]
        with _TRANSFORM:
            output = func(*_unflatten(duals, spec_p))
        outs, out_spec, aux = _jvp_outputs(name, output, has_aux)
        primals_out, tangents_out = [], []
        for o in outs:
            t = _fwad.tangent_of(o)
            if t is None:
                if strict:
                    raise RuntimeError(_JVP_STRICT)
                import gradcli.torch as torch

                t = torch.zeros_like(o)
            with _fwad._suspended:
                if not keep:  # (a graph made inside, e.g. by a jacrev in func: none outside)
                    o, t = o.detach(), t.detach()
                elif o.requires_grad:  # (PyTorch hands back an alias: AliasBackward0)
                    from gradcli.engine.ops.views import alias

                    o = alias(o)
            primals_out.append(o)
            tangents_out.append(t)
    result = _unflatten(primals_out, out_spec), _unflatten(tangents_out, out_spec)
    if has_aux:
        return result + (aux,)
    return result


def _nested_jvp(func, flat_p, spec_p, flat_t, strict, has_aux, keep):
    """jvp inside another jvp (jacfwd of jacfwd, jvp of jvp): PyTorch gives each its own
    functorch level. Here the inner one computes J t by reverse mode, the "double vjp":
    the vector-Jacobian product g(u) = J^T u is linear in u, so J t = d<g(u), t>/du. Its
    ops are ordinary ops, so the enclosing jvp's tangents run through them (and through
    their backward formulas), and the dual level stays the one PyTorch has."""


    name = _JVP_NAME
    inner = _inputs_for(flat_p)
    _STATE.depth += 1
    try:
        with enable_grad(), _TRANSFORM:
            output = func(*_unflatten(inner, spec_p))
    finally:
        _STATE.depth -= 1
    outs, out_spec, aux = _jvp_outputs(name, output, has_aux)
    restore = _custom_saved_as_constants(outs, inner)
    try:
        return _nested_tangents(outs, out_spec, aux, inner, flat_t, strict, has_aux, keep)
    finally:
        for undo in restore:
            undo()


def _custom_saved_as_constants(outs: list, inner: list) -> list:
    """PyTorch gives the inner level's tangent of a custom Function's output by the
    Function's jvp with forward grad off, so the enclosing jvp sees no dependence of that
    tangent on anything the Function's inputs were computed from (jvp of jvp through a
    Function: zero second derivative through it, and through the ops before it). Here,
    while the double vjp runs, the custom nodes between `inner` and `outs` and the nodes
    only they reach back to read their saved tensors as constants of the enclosing jvp
    (no tangent; their history kept). Nodes also on a path that avoids every custom
    Function keep theirs. Returns the undo steps."""
    stop = {id(x._grad_fn) for x in inner if x._grad_fn is not None}
    roots = [o._grad_fn for o in outs if isinstance(o, Tensor) and o._grad_fn is not None]

    def walk(starts, through_custom: bool) -> dict:
        found, stack = {}, list(starts)
        while stack:
            node = stack.pop()
            if node is None or id(node) in found or id(node) in stop:
                continue
            found[id(node)] = node
            if node.custom and not through_custom:
                continue
            stack.extend(fn for fn, _nr in (node.next_functions or ()) if fn is not None)
        return found

    direct = walk(roots, through_custom=False)
    customs = [n for n in direct.values() if n.custom]
    if not customs:
        return []
    behind = walk([fn for n in customs for fn, _nr in (n.next_functions or ()) if fn is not None],
                  through_custom=True)
    undo = []
    for node in customs + [n for k, n in behind.items() if k not in direct or n.custom]:
        if node.custom:
            undo.extend(_custom_node_constant(node))
        elif not node.packed:
            undo.extend(_op_node_constant(node))
    return undo


def _custom_node_constant(node) -> list:
    entries = node.__dict__.get("_saved")
    if not isinstance(entries, list) or not entries:
        return []
    original = list(entries)
    for i, entry in enumerate(entries):
        if entry is None or entry[1] is None or entry[2] is not None:
            continue  # (packed by hooks, or an output of the node: kept as is)
        entries[i] = (_without_tangent(entry[0]), entry[1], None)

    def undo():
        entries.clear()
        entries.extend(original)

    return [undo]


def _op_node_constant(node) -> list:
    """An op's node reading its saved inputs and output without their tangents."""
    steps = []
    saved = node.saved
    if saved is not None and any(isinstance(x, Tensor) and _fwad.tangent_of(x) is not None
                                 for x in saved):
        node.saved = tuple(_without_tangent(x) if isinstance(x, Tensor) else x for x in saved)

        def put_back(node=node, saved=saved):
            node.saved = saved

        steps.append(put_back)
    result = node.saved_result
    if result is not None:
        key = id(result[0])
        entry = _fwad._SAVED_RESULTS.pop(key, None)
        if entry is not None:
            steps.append(lambda key=key, entry=entry: _fwad._SAVED_RESULTS.__setitem__(key, entry))
    return steps


def _without_tangent(t: Tensor) -> Tensor:
    """A tensor over t's memory and version counter with t's place in the graph (its
    grad_fn, or its accumulator for a leaf), but no tangent."""
    from gradcli.engine.tensor import make

    if t._grad_fn is not None:
        out = make(t._data, True, t._grad_fn)
        out._output_nr = t._output_nr
    elif t._requires_grad:
        out = make(t._data, True, None)
        out._accumulator = t._grad_accumulator()
    else:
        out = make(t._data)
    out._vc = t._vc
    return out


def _nested_tangents(outs, out_spec, aux, inner, flat_t, strict, has_aux, keep):
    """The double vjp of _nested_jvp for each output (see there)."""
    import numpy as np

    from gradcli.engine.tensor import make

    primals_out, tangents_out = [], []
    for o in outs:
        t = None
        if o.requires_grad and o._data.dtype.kind in "fc":
            with enable_grad():
                u = make(np.zeros_like(o._data), True)
                grads = _autograd_grad([o], inner, [u], retain_graph=True, create_graph=True,
                                       allow_unused=True)
                total = None
                for g, tangent in zip(grads, flat_t, strict=True):
                    if g is not None:
                        term = (g * tangent).sum()
                        total = term if total is None else total + term
                if total is not None and total.requires_grad:
                    t = _autograd_grad([total], [u], retain_graph=True, create_graph=True,
                                       allow_unused=True)[0]
        if t is None:
            if strict:
                raise RuntimeError(_JVP_STRICT)
            t = make(np.zeros_like(o._data))
        primals_out.append(_plain(o, keep))
        tangents_out.append(_plain(t, keep))
    result = _unflatten(primals_out, out_spec), _unflatten(tangents_out, out_spec)
    if has_aux:
        return result + (_tree_plain(aux, keep, inner),)
    return result


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian of func at primals times
    the tangents. PyTorch traces the tangent computation once; here each call runs jvp."""
    output = func(*primals)
    flat_p, spec_p = _flatten(primals)
    shapes = [p.shape for p in flat_p]
    dtypes = [p.dtype for p in flat_p]

    def jvp_fn(*tangents):
        flat_t, spec_t = _flatten(tangents)
        if _spec_text(spec_t) != _spec_text(spec_p):
            raise RuntimeError(f"Expected the tangents {_spec_text(spec_t)} to have the same "
                               f"argspec as the primals {_spec_text(spec_p)}")
        for idx, t in enumerate(flat_t):
            if t.shape != shapes[idx]:
                raise RuntimeError(f"tangent:{idx} with shape {t.shape} in flattened pytree "
                                   f"doesn't match the shape {shapes[idx]} of the "
                                   "corresponding primal.")
            if t.dtype != dtypes[idx]:
                raise RuntimeError(f"tangent:{idx} with dtype {t.dtype} in flattened pytree "
                                   f"doesn't match the dtype {dtypes[idx]} of the "
                                   "corresponding primal.")
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """A function returning the Jacobian of func w.r.t. args[argnums], one forward pass per
    input element (shape: output's shape + input's shape). PyTorch vmaps the passes, so
    random ops inside follow `randomness` as under vmap (func_randomness.py)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    @functools.wraps(func)
    def run(*args, **kwargs):
        import numpy as np

        import gradcli.torch as torch
        from gradcli.engine.tensor import make

        from .func_randomness import Randomness

        nums = _argnums(argnums, len(args))
        picked = _picked(args, nums)
        flat, spec = _flatten(picked)
        sizes = [x.numel() for x in flat]
        columns = None  # per output: per input: list of tangents
        aux = None
        out_spec = None
        outs = None
        draws = Randomness(randomness, max(sum(sizes), 1))
        column = 0
        from gradcli.engine.node import next_sequence

        first_seq = next_sequence()  # (the passes' nodes are newer)
        bases = []  # the passes' one-hot tangent arrays
        for i, k in [(n, e) for n in range(len(flat)) for e in range(sizes[n])]:
            draws.slice(column)
            column += 1
            with draws:
                tangents = []
                for j, y in enumerate(flat):
                    t = np.zeros(y._data.shape, dtype=y._data.dtype)
                    if j == i:
                        t.reshape(-1)[k] = 1
                    bases.append(t)
                    tangents.append(make(t))

                def call(*leaves):
                    return func(*_replaced(args, nums, _unflatten(list(leaves), spec)), **kwargs)

                got = jvp(call, tuple(flat), tuple(tangents), has_aux=has_aux)
                out, tan = got[0], got[1]
                if has_aux:
                    aux = got[2]
                outs, out_spec = _flatten(out)
                tans, _ = _flatten(tan)
                if columns is None:
                    columns = [[[] for _ in flat] for _ in outs]
                for c, t in zip(columns, tans, strict=True):
                    c[i].append(t)
        if columns is None:  # no input element: evaluate once for the output's shape
            out = func(*args, **kwargs)
            if has_aux:
                out, aux = out
            outs, out_spec = _flatten(out)
            columns = [[[] for _ in flat] for _ in outs]
        jacs = []
        for o, per_input in zip(outs, columns, strict=True):
            blocks = []
            for x, cols in zip(flat, per_input, strict=True):
                if cols:
                    if len(cols) > 1 and any(c._grad_fn is not None for c in cols):
                        _sum_over_rows(cols, first_seq, bases)  # (as PyTorch's vmapped jvps)
                    stacked = torch.stack(cols, dim=-1)
                    stacked = stacked.reshape(tuple(o.shape) + tuple(x.shape))
                else:
                    stacked = make(np.zeros(tuple(o.shape) + tuple(x.shape), dtype=o._data.dtype))
                blocks.append(stacked)
            jacs.append(_unflatten(blocks, spec))
        result = _unflatten(jacs, out_spec)
        if has_aux:
            return result, aux
        return result

    return _under_vmap(run)


def hessian(func, argnums=0):
    """The Hessian: jacfwd of jacrev (forward over reverse)."""
    return jacfwd(jacrev(func, argnums), argnums)


# ------------------------------------------------------------------ vmap

def _vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """vmap: func over a batch dimension, called once per slice, the results stacked.
    Random ops inside draw as PyTorch's batched ones do (func_randomness.py). Reached as
    torch.vmap (the same object as torch.func.vmap, as PyTorch's)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if not (chunk_size is None or chunk_size > 0):  # (a str: Python's own TypeError, as there)
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    fname = getattr(func, "__name__", "fn")

    @functools.wraps(func)
    def run(*args, **kwargs):
        import gradcli.torch as torch

        if not isinstance(out_dims, int):
            for leaf in _flatten(out_dims)[0]:
                if leaf is not None and not isinstance(leaf, int):
                    raise ValueError(
                        f"vmap({fname}, ..., out_dims={out_dims}): `out_dims` must be an int, "
                        "None or a python collection of ints representing where in the outputs "
                        "the vmapped dimension should appear.")
        flat, spec, leaf_dims, size = _vmap_inputs(fname, in_dims, args)
        if chunk_size is not None:
            # (the slices run one by one in any case; PyTorch's chunk list, made here,
            # refuses a float chunk_size with Python's TypeError)
            [chunk_size] * (size // chunk_size)  # noqa: B018
        from .func_randomness import Randomness

        results = []
        with Randomness(randomness, size) as draws, _batched.Tracking() as batched:
            for b in range(size):
                draws.slice(b)
                sliced = [x.select(d, b) if d is not None and isinstance(x, Tensor) else x
                          for x, d in zip(flat, leaf_dims, strict=True)]
                for x, d in zip(sliced, leaf_dims, strict=True):
                    if d is not None:
                        batched.mark(x)
                result = func(*_unflatten(sliced, spec), **kwargs)
                results.append(result)
                if b == 0:  # (which outputs PyTorch's run would hand back batched)
                    first_batched = [_batched.is_batched(leaf) for leaf in _flatten(result)[0]]
        first, out_spec = _flatten(results[0])
        odims = _out_leaf_dims(fname, out_dims, results[0], first, out_spec)
        per_leaf = [[] for _ in first]
        for r in results:
            leaves, _ = _flatten(r)
            for acc, leaf in zip(per_leaf, leaves, strict=True):
                acc.append(leaf)
        stacked = []
        for acc, d, was_batched in zip(per_leaf, odims, first_batched, strict=True):
            if d is None:
                if isinstance(acc[0], Tensor) and was_batched:
                    raise ValueError(f"vmap({fname}, ...): `{fname}` can not return a "
                                     "BatchedTensor when out_dim is None")
                stacked.append(acc[0])
                continue
            if not isinstance(acc[0], Tensor):
                raise ValueError(f"vmap({fname}, ...): `{fname}` must only return Tensors, got "
                                 f"type {type(acc[0])}. Did you mean to set out_dims= to None "
                                 "for output?")
            view = _view_of_input(acc, d, flat)
            stacked.append(view if view is not None
                           else _named_as_slices(torch.stack(acc, dim=d), acc[0]))
        return _unflatten(stacked, out_spec)

    return _under_vmap(run)


# node name -> an unregistered op joining vmap's slices under that name
_SLICE_JOINS: dict = {}
# a slice's last node -> the node PyTorch's batching rule ends in instead (a full
# reduction becomes one over the non-batch dims, a dot a matrix-vector product, linear a
# matmul plus the bias, a vector-matrix product's squeeze one of several dims)
_BATCHED_NODE = {"SumBackward0": "SumBackward1", "MeanBackward0": "MeanBackward1",
                 "DotBackward0": "MvBackward0", "MaxBackward1": "MaxBackward0",
                 "MinBackward1": "MinBackward0", "AddmmBackward0": "AddBackward0",
                 "SqueezeBackward4": "SqueezeBackward5", "NansumBackward0": "NansumBackward0"}


def _named_as_slices(stacked: Tensor, first: Tensor) -> Tensor:
    """PyTorch's vmap runs the function once over the batch, so its result's grad_fn is
    the function's last node (AddBackward0), not a stack: the stacked result's node
    renamed after the slices' last node (the stack's backward, under that name)."""
    fn, last = stacked._grad_fn, first._grad_fn
    if fn is None or last is None or getattr(fn, "custom", False):
        return stacked
    name = type(last).__name__
    name = _BATCHED_NODE.get(name, name)
    from gradcli.engine.ops.registry import Op

    op = _SLICE_JOINS.get(name)
    if op is None:
        op = _SLICE_JOINS[name] = Op("vmap_join", name, fn.op.forward, fn.op.backward,
                                     "vmap: the slices' gradients, each to its slice",
                                     multi=fn.op.multi)
    stacked._grad_fn = op.node_class()(op, fn.next_functions, fn.saved, fn.versions,
                                       fn.saved_result, fn.meta, fn.input_meta)
    return stacked


from gradcli.engine.ops.registry import PUBLIC as _PUBLIC  # noqa: E402

vmap = _PUBLIC["torch.vmap"]


def _view_of_input(slices: list, out_dim: int, inputs: list):
    """PyTorch's vmap of a view op (or of an in-place op, which returns its input) hands
    back a view of the input: when every slice's result views the same input's storage
    with one geometry, at offsets a constant step apart, that view (None otherwise: the
    results are stacked; also with a graph, whose stacked node is named as PyTorch's)."""
    first = slices[0]
    root = first._base if first._base is not None else None
    if root is None or first.requires_grad or not any(root is x or root is getattr(x, "_base", None)
                               for x in inputs if isinstance(x, Tensor)):
        return None
    shape, strides = tuple(first.shape), first.stride()
    offsets = []
    for t in slices:
        if t._base is not root or tuple(t.shape) != shape or t.stride() != strides:
            return None
        offsets.append(t.storage_offset())
    step = offsets[1] - offsets[0] if len(offsets) > 1 else 1
    if step <= 0 or any(o != offsets[0] + b * step for b, o in enumerate(offsets)):
        return None
    full = root.as_strided((len(slices),) + shape, (step,) + tuple(strides), offsets[0])
    return full.movedim(0, out_dim) if out_dim else full  # (stack's range check and text)


def _broadcast_dims(dims, tree):
    """dims (a prefix of tree: an int or None stands for all leaves below it) per leaf of
    tree, or None where the structures differ (PyTorch's _broadcast_to_and_flatten)."""
    if not isinstance(dims, (tuple, list, dict)):
        return [dims] * len(_flatten(tree)[0])
    if type(dims) is not type(tree) or len(dims) != len(tree):
        return None
    if isinstance(dims, dict):
        if list(dims) != list(tree):
            return None
        pairs = [(dims[k], tree[k]) for k in dims]
    else:
        pairs = list(zip(dims, tree, strict=True))
    out = []
    for sub_dims, sub_tree in pairs:
        flat = _broadcast_dims(sub_dims, sub_tree)
        if flat is None:
            return None
        out.extend(flat)
    return out


def _vmap_inputs(fname: str, in_dims, args: tuple):
    """(flat args, their spec, each leaf's mapped dim (non-negative) or None, the batch
    size), with PyTorch's checks in its order and its texts."""
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): expected "
                         f"`in_dims` to be int or a (potentially nested) tuple matching "
                         f"the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({fname})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. "
                         "The latter is unsupported.")
    flat, spec = _flatten(tuple(args))
    leaf_dims = _broadcast_dims(in_dims, tuple(args))
    if leaf_dims is None:
        raise ValueError(
            f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
            f"the structure of `inputs`. in_dims has structure {_spec_text(_flatten(in_dims)[1])}"
            f" but inputs has structure {_spec_text(spec)}.")
    where = f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): "
    for i, (arg, d) in enumerate(zip(flat, leaf_dims, strict=True)):
        if d is not None and not isinstance(d, int):
            raise ValueError(f"{where}Got in_dim={d} for an input but in_dim must be either an "
                             "integer dimension or None.")
        if d is None:
            continue
        if not isinstance(arg, Tensor):
            raise ValueError(f"{where}Got in_dim={d} for an input but the input is of type "
                             f"{type(arg)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        n = arg.dim()
        if d < -n or d >= n:
            raise ValueError(f"{where}Got in_dim={d} for some input, but that input is a Tensor "
                             f"of dimensionality {n} so expected in_dim to satisfy -{n} <= "
                             f"in_dim < {n}.")
        leaf_dims[i] = d % n
    sizes = [x.shape[d] for x, d in zip(flat, leaf_dims, strict=True) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(n != sizes[0] for n in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return flat, spec, leaf_dims, sizes[0]


def _out_leaf_dims(fname: str, out_dims, result, first: list, out_spec) -> list:
    """The out dim of each output leaf, broadcast as PyTorch's _unwrap_batched does (a
    single tensor also takes a 1-tuple), with its text when the structures differ."""
    if isinstance(result, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        odims = None
    else:
        odims = _broadcast_dims(out_dims, result)
    if odims is None:
        raise ValueError(
            f"vmap({fname}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
            f"with the structure of `outputs`. out_dims has structure "
            f"{_spec_text(_flatten(out_dims)[1])} but outputs has structure "
            f"{_spec_text(out_spec)}.")
    return odims


# ------------------------------------------------------------------ modules

def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """Call `module` with some of its parameters and buffers replaced by the given tensors
    (by qualified name) for the duration of the call."""
    if isinstance(parameter_and_buffer_dicts, dict):
        given = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        repeated = []
        for k in keys:
            if keys.count(k) > 1 and k not in repeated:
                repeated.append(k)
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional "
                             "call is ambiguous")
        given = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    replacing = dict(given)
    if tie_weights:  # a tensor registered under several names is replaced under all of them
        names_of: dict = {}
        for name, t in _named_tensors(module):
            names_of.setdefault(id(t), []).append(name)
        for names in names_of.values():
            chosen = [n for n in names if n in given]
            if len(chosen) > 1 and len({id(given[n]) for n in chosen}) != 1:
                raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                                 "which are tied. Consider using tie_weights=False")
            if chosen:
                for n in names:
                    replacing.setdefault(n, given[chosen[0]])
    if strict:
        known = {name for name, _ in _named_tensors(module)}
        unexpected = [k for k in replacing if k not in known]
        missing = [k for k in known if k not in replacing]
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               + "\n\t".join(msgs))
    undo = []
    try:
        for name, value in replacing.items():
            undo.append(_swap(module, name, value))
        return module(*args, **kwargs)
    finally:
        for restore in reversed(undo):
            restore()


def stack_module_state(models):
    """(params, buffers): each parameter and buffer of the models stacked along a new
    first dim, by qualified name, for vmap over functional_call (model ensembling). The
    stacked parameters are new leaves (optimizable), unrelated to the models' own."""
    import gradcli.torch as torch

    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(tables: list) -> dict:
        out = {}
        for name in tables[0]:
            tensors = [table[name] for table in tables]
            wanting = [t.requires_grad for t in tensors]
            if any(wanting) and not all(wanting):
                raise RuntimeError(f"Expected {name} from each model to have the same "
                                   ".requires_grad")
            joined = torch.stack(tensors)
            out[name] = joined.detach()._requires_grad_() if all(wanting) else joined
        return out

    return (stacked([dict(m.named_parameters()) for m in models]),
            stacked([dict(m.named_buffers()) for m in models]))


def _named_tensors(module):
    """(qualified name, tensor) of every parameter and buffer, shared ones under each name."""
    out = []

    def walk(mod, prefix):
        d = mod.__dict__
        for table in ("_parameters", "_buffers"):
            for name, t in d.get(table, {}).items():
                if t is not None:
                    out.append((prefix + name, t))
        for name, sub in d.get("_modules", {}).items():
            if sub is not None:
                walk(sub, prefix + name + ".")

    walk(module, "")
    return out


def _swap(module, qualified: str, value):
    """Put `value` where `qualified` names (a parameter, a buffer or a plain attribute) and
    return what puts the original back. The path goes through registered submodules only,
    and the name is set as `module.name = value` would set it: a name starting with '_'
    is refused (a .grad program reaches this function)."""
    *path, name = qualified.split(".")
    mod = module
    for part in path:
        sub = mod.__dict__.get("_modules", {}).get(part)
        if sub is None:
            raise AttributeError(f"{type(mod).__name__} has no attribute `{part}`")
        mod = sub
    if not name or name.startswith("_"):
        raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
    d = mod.__dict__
    for table in ("_parameters", "_buffers"):
        held = d.get(table)
        if held is not None and name in held:
            old = held[name]
            held[name] = value

            def restore(held=held, name=name, old=old):
                held[name] = old

            return restore
    if hasattr(type(mod), name):  # a method or property of the class: never replaced
        raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
    missing = object()
    old = d.get(name, missing)
    setattr(mod, name, value)

    def restore_attr(mod=mod, name=name, old=old):
        if old is missing:
            delattr(mod, name)
        else:
            setattr(mod, name, old)

    return restore_attr


# ------------------------------------------------------------------ functionalize and the
# batch-norm helper (issue #23's names)

__all__ += ["functionalize", "replace_all_batch_norm_modules_"]


def functionalize(func, *, remove: str = "mutations"):
    """func with its mutations rewritten out-of-place, in PyTorch a program transform for
    compilers. Run eagerly, the rewritten program computes what func computes and writes
    the same inputs back, so gradcli returns func itself, wrapped (after PyTorch's check of
    `remove`)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}."
            " Valid options are:\n     remove='mutations': all inplace and out= operators will "
            "be removed from the program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing operators "
            "{view} will be replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def functionalized(*args, **kwargs):
        return func(*args, **kwargs)

    return functionalized


def replace_all_batch_norm_modules_(root):
    """Every batch-norm module of root (root included) stops tracking running statistics:
    running_mean / running_var / num_batches_tracked become None (in place; root returned)."""
    from gradcli.torch.nn.modules.layers import _BatchNorm

    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
