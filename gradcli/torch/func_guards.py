"""torch.func's per-thread state, and what a function under a transform may not do, refused
with PyTorch's texts.

PyTorch keeps functorch's stack of running transforms per thread, so a transform running
in one thread changes nothing for another. So does gradcli: `STATE` (a threading.local)
holds the calling thread's running transforms, its vmap calls and which of its tensors
they batched. The Tensor methods concerned (item, __bool__, tolist, numpy, __float__,
__int__, __index__, requires_grad_, retain_grad) call `tensor.TRANSFORM_GUARD`, which is
`guard` while any thread runs a transform and None otherwise (one global read then), and
`guard` looks at the calling thread's state only:

- inside any transform, Tensor.requires_grad_() and Tensor.retain_grad() are refused
  (functorch owns the autograd state of the tensors it transforms; so
  torch.autograd.functional.*, which calls requires_grad_, is refused too). gradcli's own
  code that needs a leaf inside a transform (backward formulas, factories' requires_grad=,
  the transforms' fresh inputs) calls `Tensor._requires_grad_`, which is never refused;
- inside a vmap, a batched tensor cannot become a Python number (.item(), float(), int(),
  an index), a truth value or host memory (.tolist(), .numpy()).
"""

from __future__ import annotations

import threading

from gradcli.engine import node as _node_mod
from gradcli.engine import tensor as _tensor_mod

REQUIRES_GRAD = (
    "You are attempting to call Tensor.requires_grad_() (or perhaps using "
    "torch.autograd.functional.* APIs) inside of a function being transformed by a functorch "
    "transform. This is unsupported, please attempt to use the functorch transforms (e.g. grad, "
    "vjp, jacrev, jacfwd, hessian) or call requires_grad_() outside of a function being "
    "transformed instead.")
RETAIN_GRAD = (
    "You are attempting to call Tensor.retain_grad() inside of a function being transformed by "
    "a functorch transform. This is unsupported, please attempt to use the functorch transforms "
    "(e.g. grad, vjp, jacrev, jacfwd, hessian) or call retain_grad() outside of a function being "
    "transformed instead.")
ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
        "calling .item() on a Tensor, please try to rewrite what you're doing with other "
        "operations. If error is occurring somewhere inside PyTorch internals, please file a "
        "bug report.")
CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent "
                "control flow. We don't support that yet, please file an issue at "
                "https://github.com/pytorch/pytorch/issues .")
# a grad/jvp transform between the vmap and the tensor: PyTorch cannot tell which it was
EITHER = ("vmap: It looks like you're either (1) calling .item() on a Tensor or (2) attempting "
          "to use a Tensor in some data-dependent control flow or (3) encountering this error "
          "in PyTorch internals. For (1): we don't support vmap over calling .item() on a "
          "Tensor, please try to rewrite what you're doing with other operations. For (2): we "
          "don't support data-dependent control flow in vmap yet, please file an issue at "
          "https://github.com/pytorch/pytorch/issues . For (3): please file an issue.")
NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"


class _State(threading.local):
    """The calling thread's transforms (each thread starts with none)."""

    def __init__(self):
        self.kinds: list = []  # the running transforms, innermost last: "vmap" or "other"
        self.transforms = 0  # func._Transform entries running
        self.vmapping = 0  # of those, the ones PyTorch runs under vmap (vmap, jacfwd, hessian)
        self.depth = 0  # reverse-mode transforms running (their results keep their graph)
        self.passes: list = []  # the depths whose transforms' backward passes are running
        self.vmaps: list = []  # tokens of the running vmap calls, outermost first
        self.marks: dict = {}  # id(tensor) -> (weak reference to it, token of its vmap)


STATE = _State()
_LOCK = threading.Lock()
# threads inside a transform now; the guard is installed while this is not 0
_THREADS = [0]
# func.py's check of custom autograd.Functions (custom_function.FUNC_TRANSFORMS), set there
CUSTOM_CHECK = [None]


def is_batched(t) -> bool:
    """Whether t is batched by one of the calling thread's running vmap calls."""
    state = STATE
    entry = state.marks.get(id(t))
    return entry is not None and entry[1] in state.vmaps and entry[0]() is t


def depth(t) -> int:
    """How deep the calling thread's vmap that batched t is (0: t is not batched)."""
    state = STATE
    entry = state.marks.get(id(t))
    if entry is None or entry[0]() is not t or entry[1] not in state.vmaps:
        return 0
    return state.vmaps.index(entry[1]) + 1


def number_message() -> str:
    kinds = STATE.kinds
    return ITEM if kinds and kinds[-1] == "vmap" else EITHER


def truth_message() -> str:
    kinds = STATE.kinds
    return CONTROL_FLOW if kinds and kinds[-1] == "vmap" else EITHER


_CONVERSIONS = {"item": number_message, "__float__": number_message,
                "__int__": number_message, "__index__": number_message,
                "__bool__": truth_message}


def guard(t, what: str) -> None:
    """tensor.TRANSFORM_GUARD: refuses `t.<what>()` when the calling thread's transforms
    forbid it (see the module's docstring)."""
    state = STATE
    if not state.kinds:
        return
    if what == "requires_grad_":
        raise RuntimeError(REQUIRES_GRAD)
    if what == "retain_grad":
        raise RuntimeError(RETAIN_GRAD)
    if not state.vmaps or not is_batched(t):
        return
    if what == "__index__" and t._data.dtype.kind not in "iub":
        return  # (a float tensor's own TypeError)
    message = _CONVERSIONS.get(what)
    raise RuntimeError(NO_STORAGE if message is None else message())


def level_hook(hook):
    """node.TRANSFORM_HOOK: a hook registered inside a reverse transform belongs to that
    transform's level, as PyTorch's hook on a level's wrapper tensor does: it fires in the
    passes that transform runs (or a backward the function itself runs inside it), not in
    an enclosing transform's passes through the kept graph (jacrev of jacrev: the outer
    passes go through the inner rows' graphs and back into f's tensors) nor in a backward
    after the transform returned."""
    level = STATE.depth
    if level == 0:
        return hook

    def at_level(*args):
        state = STATE
        passes = state.passes
        if (passes[-1] == level - 1) if passes else state.depth >= level:
            return hook(*args)
        return None

    at_level.__name__ = getattr(hook, "__name__", type(hook).__name__)  # (error texts name it)
    at_level.__wrapped__ = hook
    return at_level


def push(kind: str) -> None:
    """A transform starts on the calling thread ("vmap" or "other")."""
    kinds = STATE.kinds
    if not kinds:
        with _LOCK:
            _THREADS[0] += 1
            if _THREADS[0] == 1:
                from gradcli.engine import custom_function

                _tensor_mod.TRANSFORM_GUARD = guard
                _node_mod.TRANSFORM_HOOK = level_hook
                custom_function.FUNC_TRANSFORMS = CUSTOM_CHECK[0]
    kinds.append(kind)


def pop() -> None:
    """The calling thread's innermost transform ended."""
    kinds = STATE.kinds
    kinds.pop()
    if not kinds:
        with _LOCK:
            _THREADS[0] -= 1
            if not _THREADS[0]:
                from gradcli.engine import custom_function

                _tensor_mod.TRANSFORM_GUARD = None
                _node_mod.TRANSFORM_HOOK = None
                custom_function.FUNC_TRANSFORMS = None
