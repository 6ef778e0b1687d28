"""What compiled programs run against: the sandboxed namespace and guards.

Everything a program can reach goes through here:

* :func:`make_builtins` -- the names of docs/language.md (wrapped where a Python
  builtin could read files, consume an unbounded iterator in C or print to
  another stream), its exception classes, and every name of the
  ``gradcli.torch`` facade's ``__all__`` (a Python builtin wins over a facade
  name of the same spelling);
* :func:`get_attr` / :func:`set_attr` -- the attribute policy: engine objects
  (anything defined in ``gradcli.engine`` / ``gradcli.torch``) expose their
  public attributes; facade modules and ``math`` only their listed names;
  Python values an explicit allowlist of methods (docs/language.md); program classes and
  their instances their own attributes and their host base's public ones; super
  objects, numpy arrays and a node's ``_saved_*`` their own rules (see get_attr);
* :func:`make_class` / :func:`make_super` -- class statements and ``super()``;
* the guarded operators (``**``, ``<<``, ``*``, ``+``, ``%`` on Python ints,
  strings and lists) and the length checks, raising
  :class:`~gradcli.lang.limits.LimitExceeded`.

Names starting with ``_`` reach this module only as the compiler lets them through
(the special methods docs/language.md lists, ``_version``, ``_saved_*``) or as strings given to
getattr/setattr/hasattr/delattr (gradcli.lang.pybuiltins), and are checked again here.
"""
from __future__ import annotations

import builtins as _py
import importlib
import itertools
import math
import operator
import re
import sys
import types

from .limits import LimitExceeded, Limits, raise_with

# ------------------------------------------------------------------ sentinels


class _Unbound:
    __slots__ = ()

    def __repr__(self):
        return "<unbound>"


UNBOUND = _Unbound()


class Cell:
    """A variable shared between a function and the functions it defines."""

    __slots__ = ("v",)

    def __init__(self, v=UNBOUND):
        self.v = v


class _Signal:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


BREAK = _Signal("BREAK")
CONTINUE = _Signal("CONTINUE")


# ----------------------------------------------------------------- run state
class RunState:
    """Per-session mutable state shared by all compiled closures."""

    __slots__ = ("steps", "depth", "limits", "out", "max_depth", "budget")

    def __init__(self, limits: Limits, out=None):
        self.limits = limits
        self.out = out  # a text stream, or None for sys.stdout at call time
        self.max_depth = limits.max_depth
        self.budget = limits.max_steps
        self.steps = limits.max_steps  # counts down
        self.depth = 0

    def reset_budget(self):
        self.steps = self.budget = self.limits.max_steps
        self.depth = 0

    def out_of_steps(self):
        self.steps = 0
        raise LimitExceeded(
            f"step limit exceeded: the program ran more than {self.budget} statements "
            f"(raise it with {raise_with('max_steps')})")

    def too_deep(self):
        raise LimitExceeded(
            f"call depth limit exceeded: more than {self.max_depth} nested calls of user "
            f"functions (raise it with {raise_with('max_depth')})")


# ------------------------------------------------------ error location notes
def note(exc, loc):
    """Record ``loc`` = (filename, pos, scope name) on an exception passing
    through the innermost closure of each user frame."""
    d = exc.__dict__
    tb = d.get("_gradcli_tb")
    if tb is None:
        d["_gradcli_tb"] = [loc]
        d["_gradcli_open"] = False
    elif d.get("_gradcli_open"):
        tb.append(loc)
        d["_gradcli_open"] = False


def mark_frame_exit(exc):
    d = exc.__dict__
    if "_gradcli_tb" in d:
        d["_gradcli_open"] = True


def uncatchable(exc) -> bool:
    """Exceptions a program's try/except must not swallow."""
    return isinstance(exc, (RecursionError, MemoryError, BrokenPipeError))


# ---------------------------------------------------------------- the facade
_FACADE = None
FACADE_NAME = "gradcli.torch"


def facade():
    """The gradcli.torch module (imported on first use)."""
    global _FACADE
    if _FACADE is None:
        _FACADE = importlib.import_module(FACADE_NAME)
    return _FACADE


def set_facade(module):
    """Use another module as the torch facade (tests, before the engine exists)."""
    global _FACADE, FACADE_NAME
    _FACADE = module
    FACADE_NAME = module.__name__
    _MODULE_NAMES.clear()
    ENGINE_TYPES.clear()
    _POLICY.clear()
    _SUBCLASSABLE_CACHE.clear()


def facade_module(dotted: str):
    """``torch`` / ``torch.nn.functional`` -> the facade module, or raise
    LookupError with gradcli's "not supported" message."""
    root = facade()
    if dotted == "torch":
        return root
    parts = dotted.split(".")[1:]
    if any(p.startswith("_") for p in parts):
        raise LookupError(f"{dotted} is not supported by gradcli")
    mod = root
    for i, p in enumerate(parts):
        sub = mod.__dict__.get(p)
        if not isinstance(sub, types.ModuleType):
            try:
                sub = importlib.import_module(f"{mod.__name__}.{p}")
            except ImportError:
                raise LookupError(f"torch.{'.'.join(parts[:i + 1])} is not supported by gradcli") \
                    from None
        mod = sub
    return mod


def display_module_name(mod) -> str:
    name = mod.__name__
    if name == FACADE_NAME:
        return "torch"
    if name.startswith(FACADE_NAME + "."):
        return "torch" + name[len(FACADE_NAME):]
    return name


_MODULE_NAMES: dict = {}

MATH_NAMES = frozenset("""
acos acosh asin asinh atan atan2 atanh ceil copysign cos cosh degrees dist e erf erfc exp
exp2 expm1 fabs floor fmod frexp fsum gamma hypot inf isclose isfinite isinf isnan ldexp lgamma
log log10 log1p log2 modf nan pi pow radians remainder sin sinh sqrt tan tanh tau trunc ulp
cbrt gcd isqrt nextafter comb perm factorial prod lcm
""".split())
#: math's integer functions whose result can grow without bound, checked against the
#: big-integer limit before they compute (the rest of math is read from the module)
_MATH_CHECKED: dict = {}


def _check_int_bits(bits: float, what: str):
    if bits > _LIMITS.max_int_bits:
        raise LimitExceeded(f"{what} too large: more than {_LIMITS.max_int_bits} bits")


def _falling_bits(n: int, k: int) -> float:
    """About the bits of n * (n-1) * ... * (n-k+1)."""
    if n < 2 ** 53:
        return (math.lgamma(n + 1) - math.lgamma(n - k + 1)) / math.log(2)
    return k * n.bit_length()


def _math_factorial(n, /):
    if type(n) in INTS and 1 < n <= sys.maxsize:
        _check_int_bits(_falling_bits(n, n), f"math.factorial({n})")
    return math.factorial(n)


def _math_perm(n, k=None, /):
    if type(n) in INTS and type(k) in INTS | {type(None)} and n > 1:
        k_ = n if k is None else k
        if 0 <= k_ <= n:
            _check_int_bits(_falling_bits(n, k_), "math.perm result")
    return math.perm(n, k)


def _math_comb(n, k, /):
    if type(n) in INTS and type(k) in INTS and 0 <= k <= n:
        k_ = min(k, n - k)
        _check_int_bits(_falling_bits(n, k_) - _falling_bits(k_, k_), "math.comb result")
    return math.comb(n, k)


def _math_prod(iterable, /, *, start=1):
    acc = start
    for x in bounded(iterable):
        acc = checked_mul(acc, x)
    return acc


def _math_lcm(*integers):
    if all(type(i) in INTS for i in integers):
        _check_int_bits(sum(abs(i).bit_length() for i in integers), "math.lcm result")
    return math.lcm(*integers)


def math_attr(name):
    """``math.name`` as a program sees it (``name`` in MATH_NAMES)."""
    if not _MATH_CHECKED:
        _MATH_CHECKED.update(factorial=_math_factorial, perm=_math_perm, comb=_math_comb,
                             prod=_math_prod, lcm=_math_lcm)
        for k, f in _MATH_CHECKED.items():
            _MATH_CHECKED[k] = _Builtin(f, k)
    f = _MATH_CHECKED.get(name)
    return f if f is not None else getattr(math, name)


def _raise_missing_as_pytorch(mod, name: str) -> None:
    """A facade module that knows a name is absent from PyTorch's module too (it raises
    Python's own "module 'torch.functional' has no attribute 'relu'") gets that message
    through, not "not supported by gradcli": the program is wrong under PyTorch as well."""
    try:
        getattr(mod, name)
    except AttributeError as e:
        message = str(e)
        if message.startswith("module '") and "not supported by gradcli" not in message:
            # (the facade module's own name is gradcli's: the program sees PyTorch's)
            message = message.replace(f"module '{mod.__name__}'",
                                      f"module '{display_module_name(mod)}'", 1)
            raise AttributeError(message) from None


def module_names(mod) -> frozenset:
    """The names a program may read from an allowed module."""
    names = _MODULE_NAMES.get(mod)
    if names is None:
        if mod is math:
            names = MATH_NAMES
        else:
            declared = getattr(mod, "__all__", None)
            if declared is not None:
                public = {n for n in declared if not n.startswith("_")}
            else:
                public = {n for n, v in vars(mod).items()
                          if not n.startswith("_") and _exportable(v)}
            prefix = mod.__name__ + "."
            for n, v in list(vars(mod).items()):
                if isinstance(v, types.ModuleType) and v.__name__.startswith(prefix) \
                        and not n.startswith("_"):
                    public.add(n)
            public.update(getattr(mod, "_LAZY_SUBMODULES", ()))  # (imported on first use)
            names = frozenset(public) - DENY_ATTRS  # (torch.save, torch.load: files)
        _MODULE_NAMES[mod] = names
    return names


def _exportable(v) -> bool:
    """A facade module without ``__all__`` exports what gradcli defines, including the
    classes that name PyTorch's module as theirs so that they print as PyTorch's
    (``torch.autograd.Function`` says ``torch.autograd.function``)."""
    if isinstance(v, types.ModuleType):
        return False  # submodules are added separately
    if type(v) in (int, float, bool):
        return True
    mod = getattr(v, "__module__", None) if isinstance(v, (type, types.FunctionType)) \
        or callable(v) else type(v).__module__
    return isinstance(mod, str) and mod.startswith(("gradcli.", FACADE_NAME, "torch."))


def is_allowed_module(obj) -> bool:
    if obj is math or type(obj).__name__ == "ProgramModule":  # a sibling .grad file
        return True
    mods = sys.modules.get("gradcli.lang.pymodules")
    if mods is not None and obj in mods.MODULES:
        return True
    name = getattr(obj, "__name__", "")
    return name == FACADE_NAME or name.startswith(FACADE_NAME + ".")


# ----------------------------------------------------------- attribute policy
ENGINE_TYPES: set = set()  # fast path: instances whose public attributes are all allowed
_POLICY: dict = {}
#: ("torch." is gradcli's own classes that print as PyTorch's, such as
#: torch.autograd.function.Function: a program never holds a real torch object)
_ENGINE_PREFIXES = ("gradcli.engine", "gradcli.torch", "torch.")
#: never reachable, even on engine objects (file/pointer access, class walks)
DENY_ATTRS = frozenset({"numpy", "tofile", "dump", "dumps", "save", "load", "ctypes",
                        "mro", "from_file", "storage", "untyped_storage", "data_ptr",
                        "const_data_ptr",
                        "format", "format_map", "export_chrome_trace", "export_stacks",
                        "export_memory_timeline"})

LIST_METHODS = frozenset({"append", "extend", "insert", "pop", "index", "count", "reverse",
                          "sort", "remove", "copy", "clear"})
STR_METHODS = frozenset({"join", "split", "strip", "upper", "lower", "replace", "startswith",
                         "endswith", "lstrip", "rstrip", "rsplit", "splitlines", "count",
                         "find", "isdigit", "isalpha", "isspace", "title", "capitalize",
                         "format", "center", "ljust", "rjust", "zfill", "index"})
DICT_METHODS = frozenset({"get", "keys", "values", "items", "update", "pop", "setdefault",
                          "copy", "clear", "popitem"})
SET_METHODS = frozenset({"add", "update", "discard", "remove", "pop", "clear", "copy", "union",
                         "intersection", "difference", "issubset", "issuperset"})
TUPLE_METHODS = frozenset({"index", "count"})
EXC_ATTRS = frozenset({"args"})
_VALUE_POLICY = {
    list: LIST_METHODS, str: STR_METHODS, tuple: TUPLE_METHODS,
    range: frozenset({"start", "stop", "step", "index", "count"}),
    float: frozenset({"is_integer"}), int: frozenset(), bool: frozenset(),
    complex: frozenset({"real", "imag", "conjugate"}),
    type(None): frozenset(), dict: DICT_METHODS, set: SET_METHODS,
    property: frozenset({"setter", "getter", "deleter", "fget", "fset", "fdel"}),
}


def _is_engine_type(tp) -> bool:
    """A class defined by the engine or the facade, or derived from one (such
    as ``torch.return_types.max``, which names a module that does not exist)."""
    for klass in getattr(tp, "__mro__", (tp,)):
        mod = getattr(klass, "__module__", "") or ""
        if mod.startswith(_ENGINE_PREFIXES) or mod.startswith(FACADE_NAME) or mod == "torch":
            return True
    return False


#: engine classes whose public Python surface is wider than PyTorch's: a program
#: sees only PyTorch's names (a node's raw saved arrays, its op's numpy-level
#: forward/backward or a dtype's numpy dtype would hand it objects outside the
#: sandbox: raw buffers that bypass the version counter and the element limit)
_ENGINE_ALLOWLISTS = (
    ("gradcli.engine.node", "Node",
     frozenset({"name", "next_functions", "metadata", "register_hook", "register_prehook",
                "variable", "requires_grad"})),
    ("gradcli.engine.dtypes", "dtype",
     frozenset({"is_floating_point", "is_signed", "is_complex", "itemsize", "to_real",
                "to_complex"})),
    ("gradcli.engine.ops.registry", "Op", frozenset()),
)

#: a custom Function's node is also the ``ctx`` its forward and backward get: the node's
#: names, the context's API, and (CTX_TYPES) the attributes the program set on it
_CTX_NAMES = _ENGINE_ALLOWLISTS[0][2] | frozenset({
    "save_for_backward", "saved_tensors", "needs_input_grad", "mark_dirty",
    "mark_non_differentiable", "set_materialize_grads", "save_for_forward",
    "saved_variables"})
CTX_TYPES: set = set()


def _is_ctx_type(tp) -> bool:
    mod = sys.modules.get("gradcli.engine.custom_function")
    ctx = getattr(mod, "FunctionCtx", None) if mod is not None else None
    return isinstance(ctx, type) and issubclass(tp, ctx)


def _engine_allowlist(tp):
    if _is_ctx_type(tp):
        CTX_TYPES.add(tp)
        return _CTX_NAMES
    for modname, clsname, names in _ENGINE_ALLOWLISTS:
        mod = sys.modules.get(modname)
        cls = getattr(mod, clsname, None) if mod is not None else None
        if isinstance(cls, type) and issubclass(tp, cls):
            return names
    return None


def _policy(tp):
    """frozenset of allowed names, or "engine" (all public), "module", "class"."""
    pol = _POLICY.get(tp)
    if pol is not None:
        return pol
    if tp in USER_CLASSES:
        _POLICY[tp] = "user"
        return "user"
    if tp in _VALUE_POLICY:
        pol = _VALUE_POLICY[tp]
    elif (tp.__module__ or "").startswith(("numpy", "gradcli.lang.pynumpy")):
        pol = _numpy_policy(tp)
    elif tp.__module__ in ("collections", "__main__") and _pymodules_policy(tp) is not None:
        # (an OrderedDict also reaches programs that never import collections: a
        # Module's state_dict)
        pol = _pymodules_policy(tp)
    elif issubclass(tp, types.ModuleType):
        pol = "module"
    elif issubclass(tp, BaseException):
        pol = EXC_ATTRS
    elif issubclass(tp, type):
        pol = "class"
    elif _is_engine_type(tp):
        pol = _engine_allowlist(tp)
        if pol is None:
            pol = "engine"
            ENGINE_TYPES.add(tp)
    else:
        pol = frozenset()
    _POLICY[tp] = pol
    return pol


def _pymodules_policy(tp):
    from . import pymodules
    return pymodules.policy_for(tp)


def _numpy_policy(tp):
    import numpy as np
    if issubclass(tp, np.ndarray):
        return "ndarray" if tp.__name__ == "SafeArray" else frozenset()
    if issubclass(tp, np.generic):
        return "npscalar"
    if issubclass(tp, np.dtype):
        return "npdtype"
    return frozenset()


def register_int_types(base):
    """numpy's integer scalars get the guards Python ints get (``[0] * n``, ``'a' * n``)."""
    for tp in _all_subclasses(base):
        INTS.add(tp)
        RISKY_MUL.add(tp)


def _all_subclasses(base):
    out, stack = [], [base]
    while stack:
        c = stack.pop()
        out.append(c)
        stack.extend(c.__subclasses__())
    return out


def _type_name(obj) -> str:
    return type(obj).__name__


def get_attr(obj, name):
    """``obj.name`` as a program may see it (name never starts with '_' except the
    tensor's ``_version``, a node's ``_saved_*`` and the special methods docs/language.md lists)."""
    tp = type(obj)
    pol = _policy(tp)
    if type(pol) is frozenset:  # Python values (xs.append in a loop): the common case first
        if name in pol:
            if tp in _CHECKED_TYPES:
                wrapped = _CHECKED_METHODS.get((tp, name))
                if wrapped is not None:
                    return wrapped(obj)
            return getattr(obj, name)
        if tp is super:
            return _super_get(obj, name)
        if tp in CTX_TYPES and not name.startswith("_") and name in obj.__dict__:
            return obj.__dict__[name]  # ctx.constant = c in forward, read in backward
        if name.startswith(("_saved_", "_raw_saved_")) and _engine_allowlist(tp) is not None \
                and tp.__module__.startswith(("gradcli.engine", "builtins")) \
                and hasattr(obj, "next_functions"):  # (built-in ops' nodes: PyTorch's name)
            return saved_attr(obj, name)
        if name == "_version":
            raise AttributeError(f"'{_type_name(obj)}' object has no attribute '_version'")
        if hasattr(obj, name):
            raise AttributeError(f"{_type_name(obj)}.{name} is not supported by gradcli")
        raise AttributeError(f"'{_type_name(obj)}' object has no attribute '{name}'")
    if pol == "engine":
        if name == "numpy" and tp.__name__ == "Tensor":
            return _tensor_numpy(obj)
        if name in DENY_ATTRS or (name.startswith("_") and name != "_version"):
            raise AttributeError(f"{_engine_display(obj)}.{name} is not supported by gradcli")
        return getattr(obj, name)
    if pol == "user":
        return _user_get(obj, tp.__mro__, name)
    if pol == "module":
        if name == "__version__" and is_allowed_module(obj) and \
                isinstance(getattr(obj, name, None), str):
            return getattr(obj, name)  # torch.__version__ >= "2.0": a string, read-only
        if not is_allowed_module(obj) or name not in module_names(obj):
            if is_allowed_module(obj) and not name.startswith("_") and \
                    obj.__name__.startswith(FACADE_NAME + "."):
                _raise_missing_as_pytorch(obj, name)
            raise AttributeError(f"{display_module_name(obj)}.{name} is not supported by gradcli")
        return math_attr(name) if obj is math else getattr(obj, name)
    if pol == "class":
        if obj in USER_CLASSES:
            return _user_get(obj, obj.__mro__, name)
        if name in ALLOWED_DUNDERS and (not _is_engine_type(obj) or
                                        issubclass(obj, _subclassable() or ())):
            # nn.Module.__init__(self), Exception.__init__(self, msg)
            return _dunder_get(obj, obj.__mro__, name)
        if _is_engine_type(obj) and name not in DENY_ATTRS and not name.startswith("_"):
            return getattr(obj, name)
        if hasattr(_REAL_TYPES.get(obj, obj), name):
            raise AttributeError(f"{obj.__name__}.{name} is not supported by gradcli")
        raise AttributeError(f"type object '{obj.__name__}' has no attribute '{name}'")
    numpy_part = sys.modules["gradcli.lang.pynumpy"]
    if pol == "ndarray":
        return numpy_part.array_attr(obj, name)
    if pol == "npscalar":
        return numpy_part.scalar_attr(obj, name)
    return numpy_part.dtype_attr(obj, name)  # "npdtype"


def _tensor_numpy(t):
    """``Tensor.numpy`` for programs: the engine's array, held as a checked numpy array."""
    from . import pynumpy
    method = t.numpy
    register_int_types(__import__("numpy").integer)

    def numpy(*args, **kwargs):
        return pynumpy.wrap(method(*args, **kwargs))
    return _Builtin(numpy, "numpy")


def _engine_display(obj):
    tp = type(obj)
    if tp.__name__ == "Tensor":
        return "Tensor"
    return tp.__name__


def set_attr(obj, name, value):
    """``obj.name = value``: on engine objects (tensors), user classes and their
    instances; never on modules, other classes or Python values."""
    pol = _policy(type(obj))
    if name.startswith("_"):
        raise AttributeError(private_message(name))
    if pol == "user" or (isinstance(obj, type) and obj in USER_CLASSES):
        setattr(obj, name, value)
        return
    if pol == "engine" and name not in DENY_ATTRS and (not name.startswith("_")):
        own = getattr(type(obj), name, None)
        if own is None and _reserved_own(name):
            raise AttributeError(f"'{_type_name(obj)}' object has no attribute '{name}'")
        if own is not None and not hasattr(own, "__set__"):
            # a tensor takes the program's own attributes (t.g = grad, as PyTorch's does),
            # never one that would hide a method the engine itself calls (t.add = print)
            raise AttributeError(f"'{_type_name(obj)}' object attribute '{name}' is read-only")
        setattr(obj, name, value)
        return
    if tp_is_ctx(obj) and _ctx_own(obj, name):
        obj.__dict__[name] = value  # the program's own state on a ctx, never the node's
        return
    if pol == "module":
        if name in SETTABLE_FLAGS.get(display_module_name(obj), ()) and type(value) is bool:
            setattr(obj, name, value)  # (reset for each program: session.reset_engine)
            return
        raise AttributeError(f"cannot assign to {display_module_name(obj)}.{name}: "
                             "modules are read-only in gradcli")
    if pol == "class":
        raise AttributeError(f"cannot set '{name}' attribute of type '{obj.__name__}'")
    if pol is _ENGINE_ALLOWLISTS[0][2]:  # a grad_fn: PyTorch's texts for its attributes
        if name in _NODE_FIELDS or (name == "variable" and _type_name(obj) == "AccumulateGrad"):
            raise AttributeError(
                f"attribute '{name}' of '{_type_name(obj)}' objects is not writable")
        if name not in ("name", "register_hook", "register_prehook"):
            raise AttributeError(f"'{_type_name(obj)}' object has no attribute '{name}'")
    raise AttributeError(f"'{_type_name(obj)}' object attribute '{name}' is read-only")


#: names a program may not give its own attribute on a tensor: the interpreter's internals
#: of other objects (func_globals, gi_frame, f_locals...) and the engine's and host's names
_RESERVED_PREFIXES = ("func_", "im_", "gi_", "f_", "tb_", "cr_", "ag_")
_RESERVED_OWN = frozenset({"mro", "np", "meta", "op", "saved", "apply", "release", "versions",
                           "forward", "engine", "os", "sys", "builtins", "globals", "modules",
                           "load", "save", "dump", "ctypes", "storage", "untyped_storage",
                           "data_ptr", "format_map", "tofile", "trace"})


def _reserved_own(name: str) -> bool:
    return name in _RESERVED_OWN or name in DENY_ATTRS or name.startswith(_RESERVED_PREFIXES)


#: a grad_fn's data attributes (PyTorch's getset descriptors; the other names are methods)
_NODE_FIELDS = frozenset({"next_functions", "metadata", "requires_grad"})


#: module flags reproducibility boilerplate sets (`torch.backends.cudnn.deterministic =
#: True`): a program may assign True or False to these and nothing else of a module
SETTABLE_FLAGS = {"torch.backends.cudnn": frozenset({"enabled", "deterministic", "benchmark",
                                                   "allow_tf32"}),
                  "torch.backends.mkldnn": frozenset({"enabled", "deterministic"})}


def tp_is_ctx(obj) -> bool:
    tp = type(obj)
    if tp not in CTX_TYPES:
        _policy(tp)
    return tp in CTX_TYPES


def del_attr(obj, name):
    pol = _policy(type(obj))
    if name.startswith("_"):
        raise AttributeError(private_message(name))
    if pol == "user" or (isinstance(obj, type) and obj in USER_CLASSES):
        delattr(obj, name)
        return
    if pol == "engine" and name not in DENY_ATTRS and not name.startswith("_"):
        delattr(obj, name)
        return
    if tp_is_ctx(obj) and _ctx_own(obj, name) and name in obj.__dict__:
        del obj.__dict__[name]  # (`del ctx.result` once jvp has used it)
        return
    raise AttributeError(f"'{_type_name(obj)}' object attribute '{name}' cannot be deleted")


#: ctx attributes that are the program's own although the node type defines the name
#: (a custom Function's ctx.result: the engine's saved output means nothing there)
CTX_OWN_ATTRS = frozenset({"result"})


def _ctx_own(obj, name: str) -> bool:
    """Whether `name` on ctx `obj` is the program's own state (never the node's)."""
    return name not in DENY_ATTRS and (name in CTX_OWN_ATTRS or not hasattr(type(obj), name))


# -------------------------------------------------------------- user classes
#: the special methods a class statement may define (docs/language.md); a program may read them
#: as attributes (``super().__init__``), checked at run time by where they are defined
_OPERATOR_DUNDERS = [f"__{p}{op}__" for op in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul") for p in ("", "r", "i")]
ALLOWED_DUNDERS = frozenset([
    "__init__", "__call__", "__repr__", "__str__", "__len__", "__getitem__", "__setitem__",
    "__iter__", "__next__", "__contains__", "__eq__", "__hash__", "__ne__", "__lt__",
    "__le__", "__gt__", "__ge__", "__neg__", "__pos__", "__abs__", "__bool__",
    *_OPERATOR_DUNDERS])
DUNDER_LIST = ("__init__, __call__, __repr__, __str__, __len__, __getitem__, __setitem__, "
               "__iter__, __next__, __contains__, __eq__, __hash__ and the operator methods")

#: every class a program's class statement made (a subclass of one is one too); a plain
#: set, as cheap to test as the policy cache (a class lives as long as its process's
#: sessions: few, small)
USER_CLASSES: set = set()

#: host classes a program may derive from, by their facade path (the nn and autograd
#: parts supply them; a path the facade lacks is skipped). A pruning method is extended by
#: writing its compute_mask, as the pruning tutorial teaches; the facade only hands it the
#: module and tensors a program already holds.
SUBCLASSABLE = ("torch.nn.Module", "torch.autograd.Function", "torch.utils.data.Dataset",
                "torch.optim.Optimizer", "torch.nn.utils.prune.BasePruningMethod")


def private_message(name) -> str:
    return (f"attribute '{name}' is not allowed: gradcli programs cannot use attributes whose "
            "name starts with '_'")


def _refuse(obj, name):
    what = obj.__name__ if isinstance(obj, type) else _type_name(obj)
    return AttributeError(f"{what}.{name} is not supported by gradcli")


def _owner_of(mro, name):
    for klass in mro:
        if name in klass.__dict__:
            return klass
    return None


def _member_ok(owner, name) -> bool:
    """May a program read ``name`` found in the class ``owner``'s own dict?"""
    if owner in USER_CLASSES:
        return True
    if _is_engine_type(owner):
        return name in ALLOWED_DUNDERS or (not name.startswith("_") and name not in DENY_ATTRS)
    if owner is object or (issubclass(owner, BaseException) and owner.__module__ == "builtins"):
        return name in ALLOWED_DUNDERS or name in EXC_ATTRS
    return False


def _user_get(obj, mro, name):
    """An attribute of a user class or instance: its own attributes and methods, and what
    its host base (a Module, a Function, an exception) shows programs."""
    if name.startswith("_") and name not in ALLOWED_DUNDERS:
        raise AttributeError(private_message(name))
    owner = _owner_of(mro, name)
    if owner is None:
        if isinstance(obj, type):  # only the metaclass (type) has it: mro, __call__...
            if hasattr(obj, name):
                raise _refuse(obj, name)
            raise AttributeError(f"type object '{obj.__name__}' has no attribute '{name}'")
        if name in DENY_ATTRS and name not in getattr(obj, "__dict__", {}):
            raise _refuse(obj, name)
        return getattr(obj, name)  # the instance's own, a Module's registered parts
    if _member_ok(owner, name):
        return getattr(obj, name)
    raise _refuse(obj, name)


def _dunder_get(obj, mro, name):
    owner = _owner_of(mro, name)
    if owner is not None and _member_ok(owner, name):
        return getattr(obj, name)
    raise _refuse(obj, name)


def _super_get(sup, name):
    """``super().name``: looked up past the class as Python does, allowed by where found."""
    if name.startswith("_") and name not in ALLOWED_DUNDERS:
        raise AttributeError(private_message(name))
    start, target = sup.__thisclass__, sup.__self_class__
    mro = target.__mro__
    owner = _owner_of(mro[mro.index(start) + 1:], name)
    if owner is None:
        raise AttributeError(f"'super' object has no attribute '{name}'")
    if _member_ok(owner, name):
        return getattr(sup, name)
    raise AttributeError(f"super().{name} is not supported by gradcli")


_SUBCLASSABLE_CACHE: dict = {}


def _subclassable():
    key = (id(_FACADE), SUBCLASSABLE)
    found = _SUBCLASSABLE_CACHE.get(key)
    if found is None:
        found = _SUBCLASSABLE_CACHE[key] = _find_subclassable()
    return found


def _find_subclassable():
    out = []
    for path in SUBCLASSABLE:
        mod, _, attr = path.rpartition(".")
        try:
            value = getattr(facade_module(mod), attr, None)
        except (LookupError, Exception):
            continue
        if isinstance(value, type):
            out.append(value)
    return tuple(out)


def check_base(base):
    """Refuse a base class a program may not derive from (docs/language.md: user classes, torch's
    Module and Function, the exception classes)."""
    if not isinstance(base, type):
        raise TypeError(f"class bases must be classes, not {_type_name(base)}")
    if base in USER_CLASSES or base is object:
        return
    if issubclass(base, BaseException) and base.__module__ == "builtins" and \
            base in EXCEPTIONS.values():
        return
    if _is_engine_type(base) and issubclass(base, _subclassable() or ()):
        return
    shown = display_class_name(base)
    raise TypeError(f"gradcli classes cannot derive from {shown}: a class may derive from "
                    "gradcli classes, torch.nn.Module, torch.autograd.Function and the "
                    "exception classes")


MAX_CLASS_DEPTH = 1000


def make_class(name, qualname, bases, ns):
    """The class a class statement makes: a real Python class (so a host base's own
    machinery, such as Module.__setattr__, works on its instances)."""
    for base in bases:
        check_base(base)
    depth = sum(len(b.__mro__) for b in bases)
    if depth > MAX_CLASS_DEPTH:
        # (each class's MRO lists all its ancestors: a loop deriving each class from the last
        # would make quadratic work and memory in C, outside the step budget)
        raise LimitExceeded(f"class hierarchy too deep: {name} would have {depth} ancestors "
                            f"(the limit is {MAX_CLASS_DEPTH})")
    for key in ns:
        if key.startswith("_") and key not in ALLOWED_DUNDERS:  # the compiler refuses these
            raise TypeError(f"name '{key}' is not allowed in a class body")
    body = dict(ns)
    body["__module__"] = "__main__"
    body["__qualname__"] = qualname
    cls = types.new_class(name, bases or (), None, lambda d: d.update(body))
    USER_CLASSES.add(cls)
    return cls


def make_super(cls, obj):
    """``super()`` and ``super(cls, obj)`` with a gradcli class."""
    if cls not in USER_CLASSES:
        raise TypeError("super() argument 1 must be a gradcli class")
    if not (isinstance(obj, cls) or (isinstance(obj, type) and issubclass(obj, cls))):
        raise TypeError("super(type, obj): obj must be an instance or subtype of type")
    return super(cls, obj)


def super_builtin(*args):
    if not args:
        raise RuntimeError("super(): no arguments")
    if len(args) != 2:
        raise TypeError("super() takes a class and an object in gradcli: super(Class, self)")
    return make_super(*args)


def mapping_items(m, what):
    if type(m) is dict:
        return list(m.items())
    keys = getattr(type(m), "keys", None)
    if keys is None or isinstance(m, (str, list, tuple)):
        raise TypeError(what)
    ks = bounded(get_attr(m, "keys")())
    return [(k, m[k]) for k in ks]


def merge_kwargs(f, pairs):
    """The keyword arguments of a call with ``**mapping`` items, with Python's errors."""
    out = {}
    qual, mod = getattr(f, "__qualname__", None), getattr(f, "__module__", None)
    # (Python names the callee as _PyObject_FunctionStr does)
    fname = f"{_type_name(f)} object" if not isinstance(qual, str) else \
        qual if mod in (None, "builtins") else f"{mod}.{qual}"
    for name, value in pairs:
        items = [(name, value)] if name is not None else mapping_items(
            value, f"{fname}{'()' if isinstance(qual, str) else ''} argument after ** must be a "
                   f"mapping, not {_type_name(value)}")
        for k, v in items:
            if type(k) is not str:
                raise TypeError("keywords must be strings")
            if k.startswith("__"):
                raise TypeError(f"keyword '{k}' is not allowed")
            if k in out:
                raise TypeError(f"{fname}{'()' if isinstance(qual, str) else ''} got multiple "
                                f"values for keyword argument '{k}'")
            out[k] = v
    return out


def merge_mapping(out, m):
    """``{**m}``."""
    for k, v in mapping_items(m, f"'{_type_name(m)}' object is not a mapping"):
        out[k] = v


def is_saved_attr(name) -> bool:
    """A grad_fn's read-only saved values (PyTorch's ``_saved_self``, ``_raw_saved_self``)."""
    return name.startswith(("_saved_", "_raw_saved_")) and name.isidentifier()


class SavedTensor:
    """What ``grad_fn._raw_saved_x`` gives a program: PyTorch's SavedTensor handle, opaque
    (its ``register_hooks`` is plain Python's, not the language's)."""

    __slots__ = ()

    def __repr__(self):
        return f"<torch._C._autograd.SavedTensor object at {id(self):#x}>"


def saved_attr(node, name):
    """A grad_fn's read-only ``_saved_x`` (the saved input or result, as PyTorch names them)
    and ``_raw_saved_x``: the engine's answer and errors (engine/saved_tensor.py), with the
    raw handle replaced by an opaque one."""
    from gradcli.engine.saved_tensor import saved_attr as engine_saved_attr

    value = engine_saved_attr(node, name)
    return SavedTensor() if name.startswith("_raw_saved_") else value


def display_class_name(cls) -> str:
    mod = getattr(cls, "__module__", "") or ""
    if mod.startswith(("gradcli.engine", "gradcli.torch")):
        if cls.__name__ == "Tensor":
            return "torch.Tensor"
        return "torch." + cls.__qualname__ if mod.startswith("gradcli.engine") else \
            "torch" + mod[len("gradcli.torch"):] + "." + cls.__qualname__
    if mod in ("builtins", "__main__"):
        return cls.__qualname__ if mod == "builtins" else f"__main__.{cls.__qualname__}"
    if mod == "torch" or mod.startswith("torch."):  # gradcli's classes under PyTorch's name
        return f"{mod}.{cls.__qualname__}"
    return cls.__qualname__


# -------------------------------------------------------------------- guards
_LIMITS = Limits()  # the active limits (set by Session.run)


def set_active_limits(limits: Limits):
    """Make ``limits`` the ones guards check; returns the engine's previous
    element limit (for :func:`restore_engine_limits`)."""
    global _LIMITS
    _LIMITS = limits
    return _set_engine_limits(limits)


def active_limits() -> Limits:
    return _LIMITS


def _set_engine_limits(limits):
    """Hand the element limit to the engine's allocation guard."""
    mod = sys.modules.get("gradcli.engine.limits")
    if mod is None:
        try:
            mod = importlib.import_module("gradcli.engine.limits")
        except ImportError:
            return None
    box = getattr(mod, "MAX_ELEMENTS", None)
    if isinstance(box, list) and box:
        old = box[0]
        box[0] = limits.max_elements if limits is not None else None
        return old
    return None


def restore_engine_limits(old):
    mod = sys.modules.get("gradcli.engine.limits")
    box = getattr(mod, "MAX_ELEMENTS", None) if mod is not None else None
    if isinstance(box, list) and box:
        box[0] = old


def too_long(n, what="string") -> LimitExceeded:
    return LimitExceeded(f"{what} too long: {n} items would exceed the limit of "
                         f"{_LIMITS.max_length} (raise it with {raise_with('max_length')})")


#: (sets, not frozensets: numpy's integer scalars join them once a program holds arrays)
INTS = {int, bool}
SEQS = frozenset({str, list, tuple})
RISKY_MUL = {int, bool, str, list, tuple}


def checked_pow(a, b):
    """``a ** b``, refused before it computes when an integer result would pass the
    big-integer limit: the bits of ``a ** b`` are about ``b * log2(|a|)``, so a big base
    with a small exponent (``(10**20 + 1) ** 3``) is fine and ``|a| <= 1`` (cheap for any
    exponent) or a negative exponent (a float) never trips it."""
    if type(a) in INTS and type(b) in INTS and b > 1:
        base = abs(int(a))
        if base > 1:
            lim = _LIMITS
            if b > lim.max_power or b * math.log2(base) + 1 > lim.max_int_bits:
                raise LimitExceeded(f"integer power too large: {_short(a)} ** {_short(b)} would "
                                    f"have more than {lim.max_int_bits} bits")
    return a ** b


def checked_lshift(a, b):
    if type(a) in INTS and type(b) in INTS:
        lim = _LIMITS
        if b > lim.max_shift:
            raise LimitExceeded(f"shift too large: {_short(a)} << {_short(b)} "
                                f"(the shift is limited to {lim.max_shift})")
        if abs(a) > sys.float_info.max:
            raise LimitExceeded(f"shift too large: the left operand of << is above "
                                f"{sys.float_info.max!r}")
    return a << b


def checked_mul(a, b):
    ta, tb = type(a), type(b)
    if ta in INTS and tb in INTS:
        if a and b and abs(a).bit_length() + abs(b).bit_length() > _LIMITS.max_int_bits + 1:
            raise LimitExceeded(f"integer product too large: more than {_LIMITS.max_int_bits} bits")
    elif ta in SEQS and tb in INTS:
        if len(a) * b > _LIMITS.max_length:
            raise too_long(len(a) * b, _seq_word(a))
    elif tb in SEQS and ta in INTS:
        if len(b) * a > _LIMITS.max_length:
            raise too_long(len(b) * a, _seq_word(b))
    return a * b


def checked_add(a, b):
    if type(a) in SEQS and type(b) is type(a) and len(a) + len(b) > _LIMITS.max_length:
        raise too_long(len(a) + len(b), _seq_word(a))
    return a + b


def checked_iadd(a, b):
    ta = type(a)
    if ta in SEQS:
        n = len(a) + (len(b) if type(b) in SEQS else len(bounded(b)) if ta is list else 0)
        if n > _LIMITS.max_length:
            raise too_long(n, _seq_word(a))
        if ta is list and type(b) not in SEQS:
            b = bounded(b)
    return operator.iadd(a, b)


def checked_imul(a, b):
    checked_mul(a, b) if type(a) in RISKY_MUL or type(b) in RISKY_MUL else None
    return operator.imul(a, b)


# (patterns: re compiles and caches each on first use, not at every start-up)
_PCT = r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([a-zA-Z%])"


def checked_mod(a, b):
    if type(a) is str:
        lim = _LIMITS.max_length
        check_repr_size(b)
        taken = 0  # the arguments the fields before this one consume ('*' takes one)
        for m in re.finditer(_PCT, a):
            if m.group(0) == "%%":
                continue
            for g in (m.group(1), m.group(2)):
                if g == "*":
                    w = b[taken] if type(b) is tuple and taken < len(b) else None
                    taken += 1
                    if type(w) is int and abs(w) > lim:
                        raise too_long(abs(w), "formatted string")
                elif g and int(g) > lim:
                    raise too_long(int(g), "formatted string")
            taken += 1
        res = a % b
        if len(res) > lim:
            raise too_long(len(res), "string")
        return res
    return a % b


_SPEC = r"^(?:.?[<>=^])?[-+ ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?"


def check_format_spec(spec: str):
    m = re.match(_SPEC, spec)
    if m:
        lim = _LIMITS.max_length
        for g in m.groups():
            if g and int(g) > lim:
                raise too_long(int(g), "formatted string")


def format_value(value, conversion, spec):
    """One f-string replacement field."""
    if isinstance(value, type):
        value = class_shown(value)
    if conversion is not None:
        check_repr_size(value)
        value = str(value) if conversion == "s" else repr(value) if conversion == "r" \
            else ascii(value)
    else:
        check_repr_size(value)
    if spec:
        check_format_spec(spec)
    return format(value, spec)


def _tensor_type():
    mod = sys.modules.get("gradcli.engine.tensor")
    return getattr(mod, "Tensor", None) if mod is not None else None


def tensor_text_size(t) -> int:
    """An upper estimate of the length of ``str(t)`` under the current print
    options (the summarised elements times the widest element)."""
    fmt = sys.modules.get("gradcli.engine.formatting")
    opts = getattr(fmt, "PRINT_OPTIONS", None)
    try:
        precision = int(getattr(opts, "precision", 4))
        threshold = getattr(opts, "threshold", 1000)
        edge = int(getattr(opts, "edgeitems", 3))
        shape = tuple(int(d) for d in t.shape)
    except Exception:
        return 0
    numel = 1
    for d in shape:
        numel *= d
    shown = numel
    if numel > threshold:
        shown = 1
        for d in shape:
            shown *= min(d, 2 * max(edge, 0) + 1)
    return 100 + shown * (max(precision, 0) + 10)


def check_repr_size(value):
    """Refuse to build the text of a container or tensor whose repr would be huge."""
    tv = type(value)
    if tv not in (list, tuple):
        if tv is _tensor_type():
            n = tensor_text_size(value)
            if n > _LIMITS.max_length:
                raise too_long(n, "text")
        return
    lim = _LIMITS.max_length
    total = container_text_size(value, lim)
    if total > lim:
        raise too_long(total, "text")


def container_text_size(value, lim) -> int:
    """An estimate of ``len(repr(value))`` for nested lists/tuples, stopping
    early above ``lim``. A container shared by several parents is printed once
    per parent (``[[0] * 1000] * 1000`` prints a million zeros), so its size is
    counted each time; a container that contains itself prints as ``[...]``."""
    tensor = _tensor_type()
    sizes = {}
    active = set()
    keep = []  # the ids stay unique while the walk runs
    stack = [(value, False)]
    while stack:
        v, done = stack.pop()
        i = id(v)
        if not done:
            if i in sizes or i in active:
                continue
            active.add(i)
            keep.append(v)
            stack.append((v, True))
            for c in v:
                if type(c) in (list, tuple):
                    stack.append((c, False))
            continue
        active.discard(i)
        n = 2 + 2 * len(v)
        for c in v:
            tc = type(c)
            if tc in (list, tuple):
                n += sizes.get(id(c), 5)
            elif tc is str:
                n += len(c) + 2
            elif tc is tensor:
                n += tensor_text_size(c)
            elif tc is int:
                n += 2 + c.bit_length() * 3 // 10
            elif tc is float:
                n += 20
            else:
                n += 8
            if n > lim:
                return n
        sizes[i] = n
    return sizes.get(id(value), 0)


def _seq_word(x):
    return {str: "string", list: "list", tuple: "tuple"}.get(type(x), "sequence")


def _short(v):
    s = repr(v) if abs(v) < 10 ** 30 else f"<{abs(v).bit_length()}-bit int>"
    return s


LAZY_TYPES = frozenset({zip, enumerate, reversed, map, filter, type(iter([])), type(iter(())),
                        type(iter("")), type(iter(range(0))), type(reversed([])),
                        type(iter({})), type(iter({}.values())), type(iter({}.items())),
                        type(iter(set()))})


def bounded(x, what="list"):
    """``x`` itself when it is already materialised or lazy in Python code;
    a list of at most ``max_length`` items when it is a C-level lazy
    iterator or range that C code would otherwise consume without limit."""
    tx = type(x)
    if tx in SEQS:
        return x
    lim = _LIMITS.max_length
    if tx is range:
        try:
            n = len(x)
        except OverflowError:
            raise too_long(f"more than {sys.maxsize}", what) from None
        if n > lim:
            raise too_long(n, what)
        return x
    if tx in LAZY_TYPES or tx in USER_CLASSES:
        # (a program's own iterable may hand C code an endless iterator: take at most
        # the limit, as from a lazy one)
        items = list(itertools.islice(x, lim + 1))
        if len(items) > lim:
            raise too_long(f"more than {lim}", what)
        return items
    return x


def contains(a, b):
    tb = type(b)
    if tb is range and type(a) not in INTS:
        b = bounded(b)
    elif tb in LAZY_TYPES or (tb in USER_CLASSES and _owner_of(tb.__mro__, "__contains__")
                              is None):
        b = bounded(b)
    return a in b


def not_contains(a, b):
    return not contains(a, b)


# ------------------------------------------------ tensor methods that allocate
#: tensor methods whose result size comes from their arguments
SIZED_METHODS = frozenset({"repeat", "tile", "expand", "new_ones", "new_zeros", "new_empty",
                           "new_full", "new_tensor"})


def _ints(args):
    out = []
    stack = list(args)
    while stack:
        a = stack.pop(0)
        if type(a) in INTS:
            out.append(int(a))
        elif isinstance(a, (tuple, list)):
            stack[:0] = list(a)
        else:
            return None
    return out


def check_sized_method(obj, name, args, kwargs):
    """Refuse, before allocating, a repeat/expand/new_* result above max_elements."""
    if name == "new_full":
        args = args[:1]
    elif name == "new_tensor":
        return
    sizes = _ints(args if args else kwargs.get("size", ()))
    if sizes is None:
        return
    n = 1
    for v in sizes:
        if v > 0:
            n *= v
    if name in ("repeat", "tile"):
        try:
            n *= int(obj.numel())
        except Exception:
            return
    lim = _LIMITS.max_elements
    if n > lim:
        raise LimitExceeded(f"tensor of {n:,} elements exceeds the limit of {lim:,} elements "
                            f"(raise it with {raise_with('max_elements')})")


def sized_method(obj, name, bound):
    def call(*args, **kwargs):
        check_sized_method(obj, name, args, kwargs)
        return bound(*args, **kwargs)
    return call


# ----------------------------------------------------- checked list/str methods
def _list_extend(lst):
    def extend(iterable, /):
        items = bounded(iterable)
        n = len(lst) + (len(items) if hasattr(items, "__len__") else 0)
        if n > _LIMITS.max_length:
            raise too_long(n, "list")
        lst.extend(items)
    return extend


def _list_sort(lst):
    def sort(*, key=None, reverse=False):
        lst.sort(key=key, reverse=reverse)
    return sort


def _str_join(s):
    def join(iterable, /):
        items = bounded(iterable)
        if type(items) not in (list, tuple):
            items = list(itertools.islice(items, _LIMITS.max_length + 1))
        total = len(s) * max(len(items) - 1, 0)
        for it in items:
            if type(it) is str:
                total += len(it)
            if total > _LIMITS.max_length:
                raise too_long(total, "string")
        return s.join(items)
    return join


def _str_replace(s):
    def replace(old, new, count=-1, /):
        if type(old) is str and type(new) is str and len(new) > len(old):
            n = s.count(old) if old else len(s) + 1
            if count >= 0:
                n = min(n, count)
            size = len(s) + n * (len(new) - len(old))
            if size > _LIMITS.max_length:
                raise too_long(size, "string")
        return s.replace(old, new, count)
    return replace


def _bounded_args(method):
    """A dict/set method whose arguments C code would iterate: lazy ones are bounded, a
    program's own mapping is read through its keys() within the limit."""
    def wrap(obj):
        bound = getattr(obj, method)
        is_dict = type(obj) is dict

        def one(a):
            if type(a) in (dict, set):
                return a
            if is_dict and hasattr(type(a), "keys"):
                return mapping_items(a, f"'{_type_name(a)}' object is not a mapping")
            return bounded(a)

        def call(*args, **kwargs):
            return bound(*[one(a) for a in args], **kwargs)
        return call
    return wrap


#: what a field of str.format may name: a position or a keyword, nothing looked up in it
_FIELD = r"\A(?:\d*|[^\W\d]\w*)\Z"
_FORMATTER = None


def _formatter():
    """str.format run by string.Formatter, whose steps gradcli checks: a field names a
    position or a keyword only, and each field's spec (nested fields substituted) is
    checked against the length limit before the field is formatted."""
    global _FORMATTER
    if _FORMATTER is None:
        import string

        class Formatter(string.Formatter):
            def get_field(self, field_name, args, kwargs):
                if not re.match(_FIELD, field_name):
                    raise ValueError(
                        f"str.format fields in gradcli name a position or a keyword only: "
                        f"'{{{field_name}}}' looks up an attribute or an index")
                if field_name.isdigit() and int(field_name) >= len(args):
                    raise IndexError(f"Replacement index {int(field_name)} out of range for "
                                     "positional args tuple")
                return super().get_field(field_name, args, kwargs)

            def format_field(self, value, format_spec):
                return format_value(value, None, format_spec)

        _FORMATTER = Formatter()
    return _FORMATTER


def _str_format(s):
    def format(*args, **kwargs):  # noqa: A001 - str.format as programs call it
        res = _formatter().vformat(s, args, kwargs)
        if len(res) > _LIMITS.max_length:
            raise too_long(len(res), "string")
        return res
    return format


_CHECKED_METHODS = {
    (list, "extend"): _list_extend,
    (list, "sort"): _list_sort,
    (str, "join"): _str_join,
    (str, "replace"): _str_replace,
    (str, "format"): _str_format,
    (dict, "update"): _bounded_args("update"),
    (set, "update"): _bounded_args("update"),
    (set, "union"): _bounded_args("union"),
    (set, "intersection"): _bounded_args("intersection"),
    (set, "difference"): _bounded_args("difference"),
    (set, "issubset"): _bounded_args("issubset"),
    (set, "issuperset"): _bounded_args("issuperset"),
}
_CHECKED_TYPES = frozenset({list, str, dict, set})


# ------------------------------------------------------------------ builtins
_PLAIN = frozenset({str, int, float, bool, type(None)})


class _Print:
    """print(*values, sep=' ', end='\\n', flush=False) to the session's stream."""

    __slots__ = ("state",)

    def __init__(self, state):
        self.state = state

    def __call__(self, *values, sep=" ", end="\n", flush=False, file=None, **other):
        if other:
            raise TypeError(f"'{next(iter(other))}' is an invalid keyword argument for print()")
        if file is not None:
            raise TypeError("print() argument 'file' is not supported by gradcli")
        if sep is not None and not isinstance(sep, str):
            raise TypeError(f"sep must be None or a string, not {type(sep).__name__}")
        if end is not None and not isinstance(end, str):
            raise TypeError(f"end must be None or a string, not {type(end).__name__}")
        for v in values:
            if type(v) not in _PLAIN:
                check_repr_size(v)
                if isinstance(v, type):
                    values = tuple(class_shown(x) for x in values)
                    break
        out = self.state.out or sys.stdout
        _py.print(*values, sep=sep, end=end, file=out, flush=bool(flush))

    def __repr__(self):
        return "<built-in function print>"


def _wrap_consumer(fn, name):
    def wrapper(*args, **kwargs):
        if len(args) == 1:
            args = (bounded(args[0]),)
        return fn(*args, **kwargs)
    wrapper.__name__ = wrapper.__qualname__ = name
    return _Builtin(wrapper, name)


def _wrap_first(fn, name):
    def wrapper(*args, **kwargs):
        if args:
            args = (bounded(args[0]),) + args[1:]
        return fn(*args, **kwargs)
    return _Builtin(wrapper, name)


def _repr_builtin(obj, /):
    check_repr_size(obj)
    return repr(class_shown(obj))


class _ClassText(str):
    """A torch class as Python prints it (``<class 'torch.Tensor'>``), for print/str/repr."""

    __slots__ = ()

    def __repr__(self):
        return str(self)


def class_shown(v):
    """An engine class stands in print, str, repr and f-strings for its torch name."""
    if isinstance(v, type) and v not in USER_CLASSES and _is_engine_type(v):
        return _ClassText(f"<class '{display_class_name(v)}'>")
    return v


class _Builtin:
    """A builtin function as programs see it: callable, no attributes, a
    builtin-like repr."""

    __slots__ = ("fn", "name")

    def __init__(self, fn, name):
        self.fn = fn
        self.name = name

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"<built-in function {self.name}>"


EXCEPTIONS = {
    "Exception": Exception, "RuntimeError": RuntimeError, "TypeError": TypeError,
    "ValueError": ValueError, "IndexError": IndexError, "KeyError": KeyError,
    "ZeroDivisionError": ZeroDivisionError, "AssertionError": AssertionError,
    "AttributeError": AttributeError, "NameError": NameError,
    "NotImplementedError": NotImplementedError, "ArithmeticError": ArithmeticError,
    "LookupError": LookupError, "OverflowError": OverflowError,
    "UnboundLocalError": UnboundLocalError, "StopIteration": StopIteration,
}

#: the Python builtins of docs/language.md (these win over facade names)
PY_BUILTIN_NAMES = ("print", "len", "range", "float", "int", "bool", "str", "repr", "abs",
                    "min", "max", "sum", "round", "list", "tuple", "enumerate", "zip",
                    "sorted", "reversed", "all", "any", "isinstance", "issubclass", "type",
                    "getattr", "setattr", "hasattr", "delattr", "map", "filter", "iter",
                    "next", "dict", "set", "id", "hash", "callable", "super", "property",
                    "staticmethod", "classmethod", "divmod", "pow", "object", "NotImplemented")


def make_builtins(state: RunState, with_facade=True) -> dict:
    b = {}
    if with_facade:
        fac = facade()
        for name in getattr(fac, "__all__", ()):
            # (a forbidden Python builtin stays forbidden bare: `compile` is torch.compile
            # only when written so)
            if not name.startswith("_") and name not in DENY_ATTRS and name not in _REASONS \
                    and hasattr(fac, name):
                b[name] = getattr(fac, name)
        b["torch"] = fac
    b.update(EXCEPTIONS)
    b.update({
        "print": _Print(state),
        "len": len, "range": range, "float": float, "int": int, "bool": bool,
        "complex": complex,
        "str": str_builtin,
        "repr": _Builtin(_repr_builtin, "repr"),
        "abs": abs, "round": round,
        "min": _wrap_consumer(min, "min"), "max": _wrap_consumer(max, "max"),
        "sum": _wrap_first(sum, "sum"), "all": _wrap_consumer(all, "all"),
        "any": _wrap_consumer(any, "any"),
        "list": list_builtin, "tuple": tuple_builtin,
        "enumerate": enumerate, "zip": zip,
        "sorted": _wrap_first(sorted, "sorted"), "reversed": reversed,
        "isinstance": isinstance,
    })
    from . import pybuiltins
    b.update(pybuiltins.BUILTINS)
    return b


def _make_seq_builtin(tp, check=None):
    """Stands for ``list``/``tuple``/``str``: calling it builds one within the
    length limit; ``isinstance(x, list)`` still works."""
    def call(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs:
            if check is not None:
                check(args[0])
                return tp(class_shown(args[0]))
            return tp(bounded(args[0], tp.__name__))
        return tp(*args, **kwargs)

    meta = type(f"{tp.__name__}_builtin", (type,), {
        "__call__": call,
        "__instancecheck__": lambda cls, obj: isinstance(obj, tp),
        "__subclasscheck__": lambda cls, sub: issubclass(sub, tp),
        "__repr__": lambda cls: f"<class '{tp.__name__}'>",
    })
    return meta(tp.__name__, (), {})


list_builtin = _make_seq_builtin(list)
tuple_builtin = _make_seq_builtin(tuple)
str_builtin = _make_seq_builtin(str, check_repr_size)
REAL_TYPES = {list_builtin: list, tuple_builtin: tuple, str_builtin: str}
_REAL_TYPES = REAL_TYPES

#: every Python builtin a program may not use, with the reason shown
_REASONS = {
    "open": "programs cannot access files",
    "input": "programs cannot read input",
    "eval": "programs cannot run code from strings",
    "exec": "programs cannot run code from strings",
    "compile": "programs cannot run code from strings",
    "breakpoint": "programs cannot start a debugger",
    "exit": "programs end at their last statement (or raise an exception)",
    "quit": "programs end at their last statement (or raise an exception)",
    "help": "there is no interactive help inside programs",
}
for _n in ("vars", "dir", "globals", "locals", "memoryview"):
    _REASONS[_n] = "programs cannot inspect or change objects' internals"


def forbidden_reason(name: str):
    """Why a Python builtin is not available, or None if it is not one."""
    if name in _REASONS:
        return _REASONS[name]
    if hasattr(_py, name) and not name.startswith("_") and name not in PY_BUILTIN_NAMES \
            and name not in EXCEPTIONS and name not in ("True", "False", "None"):
        return "it is not part of the gradcli language"
    return None
