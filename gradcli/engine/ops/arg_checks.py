"""PyTorch's argument errors for the public functions, worked out only when a call failed.

PyTorch checks every call of a torch.* function or Tensor method against its declared
signatures before running anything, so a bad argument gives the same text whatever the
op: `sin(): argument 'input' (position 1) must be Tensor, not str`, `cat() got an
unexpected keyword argument 'foo'`, `sum() received an invalid combination of
arguments - got (...), but expected one of: ...`. gradcli's functions are plain
Python and do not check: a bad argument surfaces as whatever the body trips over
('str' object has no attribute '_data'). Checking every call up front would slow every
op, so the checks run only after a call has raised: `diagnose` matches the arguments
against the function's signatures (`arg_signatures.SIGNATURES`, loaded then) and gives
the argument error PyTorch would have raised first, or None when the arguments fit (the
original error then stands).
"""

from __future__ import annotations

import numbers
import re

#: parser type word -> the name its messages print
_SHOWN = {
    "Tensor": "Tensor", "Scalar": "Number", "int64_t": "int", "SymInt": "int",
    "double": "float", "TensorList": "tuple of Tensors", "IntArrayRef": "tuple of ints",
    "SymIntArrayRef": "tuple of ints", "ArrayRef<double>": "tuple of floats",
    "Generator": "torch.Generator", "bool": "bool", "Storage": "torch.Storage",
    "PyObject*": "object", "ScalarType": "torch.dtype", "Layout": "torch.layout",
    "MemoryFormat": "torch.memory_format", "Device": "torch.device",
    "c10::string_view": "str", "std::string_view": "str", "std::string": "str",
    "ScalarList": "tuple of Scalars", "c10::List<::std::optional<Tensor>>":
    "tuple of Tensors", "DeviceIndex": "int", "Stream": "Stream",
    "DispatchKeySet": "DispatchKeySet", "QScheme": "torch.qscheme",
}
# numpy-style keyword spellings PyTorch's parser also takes
_NUMPY_NAMES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"),
                "other": ("x2",)}
# the functions whose Tensor parameters also take a Python number (PyTorch's short list)
_NUMBERS_AS_TENSORS = frozenset("""
add add_ div div_ divide divide_ mul mul_ multiply multiply_ sub sub_ subtract subtract_
true_divide true_divide_ to _to_copy copy_ floor_divide floor_divide_
""".split())


class Param:
    __slots__ = ("kind", "name", "size", "allow_none", "optional", "default", "keyword_only",
                 "aliases")

    def __init__(self, text: str, keyword_only: bool):
        kind, _, rest = text.partition(" ")
        self.allow_none = kind.endswith("?")
        kind = kind.rstrip("?")
        self.size = 0
        if "[" in kind:
            kind, _, size = kind.partition("[")
            self.size = int(size.rstrip("]"))
        self.kind = kind
        name, eq, default = rest.partition("=")
        self.name = name
        self.optional = bool(eq)
        self.default = default if eq else None
        if default == "None":
            self.allow_none = True
        self.keyword_only = keyword_only
        self.aliases = (name,) + _NUMPY_NAMES.get(name, ())

    def shown(self) -> str:
        return _SHOWN.get(self.kind, self.kind)

    def display(self) -> str:
        text = f"{self.shown()} {self.name}"
        return text if self.default is None else f"{text} = {self.default}"


class Signature:
    __slots__ = ("name", "params", "hidden", "min_args", "max_pos_args", "numbers_as_tensors")

    def __init__(self, fmt: str):
        self.name, _, rest = fmt.partition("(")
        body, _, tail = rest.rpartition(")")
        self.hidden = tail in ("|deprecated", "|hidden")
        self.params = []
        keyword_only = False
        for part in body.split(", ") if body else ():
            if part == "*":
                keyword_only = True
            else:
                self.params.append(Param(part, keyword_only))
        self.min_args = sum(not p.optional for p in self.params)
        self.max_pos_args = sum(not p.keyword_only for p in self.params)
        self.numbers_as_tensors = self.name in _NUMBERS_AS_TENSORS

    def display(self) -> str:
        parts, starred = [], False
        for p in self.params:
            if p.keyword_only and not starred:
                parts.append("*")
                starred = True
            parts.append(p.display())
        return "(" + ", ".join(parts) + ")"


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement


def _typename(obj) -> str:
    """Python's tp_name for `obj` as PyTorch's objects would have it (a C extension's
    type carries its module in it: numpy.float64, numpy.ndarray, numpy.bool)."""
    cls = type(obj)
    if cls.__module__.startswith(("gradcli", "torch")):
        return _TORCH_TYPE_NAMES.get(cls.__name__, cls.__name__)
    if not cls.__flags__ & _HEAP_TYPE and cls.__module__ != "builtins":
        return f"{cls.__module__}.{cls.__name__}"
    return cls.__name__


_TORCH_TYPE_NAMES = {"DType": "torch.dtype", "dtype": "torch.dtype", "Size": "torch.Size",
                     "device": "torch.device", "Generator": "torch._C.Generator",
                     "Parameter": "Parameter"}


def _is_tensor(obj) -> bool:
    from ..tensor import Tensor

    return isinstance(obj, Tensor)


def _is_int(obj) -> bool:
    if isinstance(obj, bool):
        return False
    if isinstance(obj, numbers.Integral):
        return True
    if _is_tensor(obj):
        return obj.dim() == 0 and not obj.is_floating_point() and obj.dtype.__repr__() != \
            "torch.bool"
    return hasattr(obj, "__index__") and not isinstance(obj, (str, bytes))


def _check(p: Param, obj, numbers_as_tensors: bool, position: int = 0) -> tuple[bool, int]:
    """(fits, failed element index or -1) for argument `obj` of parameter `p` (the
    `position`-th parameter of its signature)."""
    kind = p.kind
    if kind == "Tensor":
        if _is_tensor(obj):
            return True, -1
        return (numbers_as_tensors and isinstance(obj, numbers.Number)), -1
    if kind == "Scalar":  # a number, or a tensor holding one that needs no gradient
        if _is_tensor(obj):
            return obj.dim() == 0 and not obj.requires_grad, -1
        return isinstance(obj, numbers.Number), -1
    if kind in ("int64_t", "SymInt", "DeviceIndex"):
        return _is_int(obj), -1
    if kind == "double":
        return (isinstance(obj, numbers.Real) or (_is_tensor(obj) and obj.dim() == 0)), -1
    if kind == "bool":  # (a bool only: numpy's bool is refused too)
        return isinstance(obj, bool), -1
    if kind in ("IntArrayRef", "SymIntArrayRef"):
        if p.size and _is_int(obj):
            return True, -1
        if isinstance(obj, (tuple, list)):  # (the parser looks at the first item only:
            return (True, -1) if not obj or _is_int(obj[0]) else (False, 0)  # _list_items)
        return False, -1
    if kind == "c10::List<::std::optional<Tensor>>" and isinstance(obj, (tuple, list)):
        for j, item in enumerate(obj):  # (read at once: a wrong item ends the parse)
            if item is not None and not _is_tensor(item):
                raise ArgError(f"expected Tensor as element {j} in argument {position}, but "
                               f"got {_typename(item)}")
        return True, -1
    if kind in ("TensorList", "c10::List<::std::optional<Tensor>>"):
        return isinstance(obj, (tuple, list)), -1
    if kind == "ArrayRef<double>":
        if p.size and isinstance(obj, numbers.Real):
            return True, -1
        return isinstance(obj, (tuple, list)) and all(isinstance(x, numbers.Real)
                                                      for x in obj), -1
    if kind == "ScalarList":
        return isinstance(obj, (tuple, list)) and all(isinstance(x, numbers.Number)
                                                      for x in obj), -1
    if kind == "ScalarType":
        return _typename(obj) == "torch.dtype" or any(obj is t for t in (float, int, bool,
                                                                          complex)), -1
    if kind in ("c10::string_view", "std::string_view", "std::string"):
        return isinstance(obj, str), -1
    if kind == "Device":
        return isinstance(obj, (str, int)) or _typename(obj) == "torch.device", -1
    if kind == "Generator":
        return _typename(obj) == "torch._C.Generator", -1
    if kind == "Layout":
        return type(obj).__name__ == "layout", -1
    if kind == "MemoryFormat":
        return type(obj).__name__ == "memory_format", -1
    if kind == "Storage":  # (gradcli has no storages: only a storage object of its own would do)
        return type(obj).__name__.endswith("Storage"), -1
    return True, -1  # PyObject* and the rarer kinds: anything


class ArgError(Exception):
    """The parser's message for a call that fits no signature."""


class Conversion(Exception):
    """An argument that fitted its signature but failed the parser's conversion (a bad
    device string): `error` is what PyTorch raises."""

    def __init__(self, error: Exception):
        super().__init__(str(error))
        self.error = error


def _extra_args(sig: Signature, nargs: int):
    if sig.min_args != sig.max_pos_args:
        return ArgError(f"{sig.name}() takes from {sig.min_args} to {sig.max_pos_args} "
                        f"positional arguments but {nargs} were given")
    n = sig.max_pos_args
    return ArgError(f"{sig.name}() takes {n} positional argument{'' if n == 1 else 's'} but "
                    f"{nargs} {'was' if nargs == 1 else 'were'} given")


def _find_param(sig: Signature, key: str) -> int:
    for i, p in enumerate(sig.params):
        if p.name == key:
            return i
    return -1


def parse(sig: Signature, args: tuple, kwargs: dict, raise_error: bool) -> bool:
    """Whether `args`/`kwargs` fit `sig`; with raise_error, the ArgError saying why not."""
    nargs = len(args)
    remaining = len(kwargs)
    varargs_list = (sig.max_pos_args == 1 and sig.params[0].kind in ("IntArrayRef",
                                                                       "SymIntArrayRef"))
    if nargs > sig.max_pos_args and not (varargs_list and _is_int(args[0])):
        if raise_error:
            raise _extra_args(sig, nargs)
        return False
    pos = 0
    for i, p in enumerate(sig.params):
        obj, is_kwd, given = None, False, False
        if pos < nargs:
            if p.keyword_only:
                if raise_error:
                    raise _extra_args(sig, nargs)
                return False
            obj, given = args[pos], True
        else:
            for alias in p.aliases:
                if alias in kwargs:
                    obj, given = kwargs[alias], True
                    break
            is_kwd = True
        if (not given and p.optional) or (given and obj is None and p.allow_none):
            pass
        elif not given:
            if raise_error:
                missing = [f'"{q.name}"' for q in sig.params[i:] if not q.optional]
                raise ArgError(f"{sig.name}() missing {len(missing)} required positional "
                               f"argument{'s' if len(missing) == 1 else ''}: "
                               + ", ".join(missing))
            return False
        else:
            fits, failed = _check(p, obj, sig.numbers_as_tensors, i)
            if not fits and varargs_list and i == 0 and not is_kwd and _is_int(obj):
                # sizes as separate arguments (x.view(2, 3)): every one must be an int
                for j, item in enumerate(args):
                    if not _is_int(item):
                        if raise_error:
                            raise ArgError(
                                f"{sig.name}(): argument '{p.name}' failed to unpack the object "
                                f"at pos {j + 1} with error \"type must be tuple of ints,but got "
                                f"{_typename(item)}\"")
                        return False
                pos = nargs
                continue
            if not fits:
                if not raise_error:
                    return False
                if is_kwd:
                    raise ArgError(f"{sig.name}(): argument '{p.name}' must be {p.shown()}, "
                                   f"not {_typename(obj)}")
                if failed >= 0:
                    raise ArgError(
                        f"{sig.name}(): argument '{p.name}' (position {pos + 1}) must be "
                        f"{p.shown()}, but found element of type {_typename(obj[failed])} at "
                        f"pos {failed}")
                raise ArgError(f"{sig.name}(): argument '{p.name}' (position {pos + 1}) must "
                               f"be {p.shown()}, not {_typename(obj)}")
        if not is_kwd:
            pos += 1
        elif given:
            remaining -= 1
    if remaining > 0:
        if raise_error:
            for key in kwargs:
                idx = _find_param(sig, key)
                if idx < 0 and not any(key in q.aliases for q in sig.params):
                    raise ArgError(f"{sig.name}() got an unexpected keyword argument '{key}'")
                if 0 <= idx < nargs:
                    raise ArgError(f"{sig.name}() got multiple values for argument '{key}'")
            raise ArgError("invalid keyword arguments")
        return False
    return True


def _joined(parts: list, positional: int) -> str:
    """PyTorch's listing trims the last ", " only when some argument was positional."""
    text = "".join(part + ", " for part in parts)
    return "(" + (text[:-2] if positional else text) + ")"


def _arg_desc(args, kwargs) -> str:
    parts = [_typename(a) for a in args] + [f"{k}={_typename(v)}" for k, v in kwargs.items()]
    return _joined(parts, len(args))


def _option_words(option: str) -> list:
    """The listing's own reading of a shown signature: (name, type) per comma part."""
    words = []
    for part in option[1:-1].split(", ") if option != "()" else [""]:
        type_name, _, name = part.rpartition(" ")
        words.append((name, type_name))
    return words


def _matches(type_name: str, obj) -> bool:
    shown = _typename(obj)
    if type_name == "float":
        return shown in ("float", "int", "long")
    if type_name == "int":
        return shown in ("int", "long")
    return shown == type_name


def _formatted(words, args, kwargs) -> str:
    out = []
    items = list(args) + [None] * len(kwargs)
    for i, arg in enumerate(items):
        is_kw = i >= len(args)
        if is_kw:
            arg = kwargs[words[i][0]]
        ok = i < len(words) and _matches(words[i][1], arg)
        text = f"{words[i][0]}=" if is_kw else ""
        if isinstance(arg, (tuple, list)):
            inner = ", ".join(_typename(x) for x in arg)
            if isinstance(arg, tuple):
                inner = "(" + inner + ("," if len(arg) == 1 else "") + ")"
            else:
                inner = "[" + inner + "]"
            text += f"{_typename(arg)} of {inner}"
        else:
            text += _typename(arg)
        out.append(text if ok else f"!{text}!")
    return _joined(out, len(args))


def _unmatched_kwargs(words, kwargs) -> list:
    start = max(len(words) - len(kwargs), 0)
    names = {w[0] for w in words[start:]}
    return [k for k in kwargs if k not in names]


def _invalid_combination(name: str, options: list, args, kwargs) -> str:
    kwargs = dict(reversed(kwargs.items()))  # (PyTorch's listing names keywords last to first)
    text = f"{name}() received an invalid combination of arguments - "
    count = len(args) + len(kwargs)
    if len(options) == 1:
        words = _option_words(options[0])
        unmatched = _unmatched_kwargs(words, kwargs) if kwargs else []
        if unmatched:
            return text + "got unrecognized keyword arguments: " + ", ".join(unmatched)
        got = _formatted(words, args, kwargs) if len(words) == count else _arg_desc(args, kwargs)
        return text + f"got {got}, but expected {options[0]}"
    text += f"got {_arg_desc(args, kwargs)}, but expected one of:\n"
    for option in options:
        text += f" * {option}\n"
        words = _option_words(option)
        if len(words) == count:
            unmatched = _unmatched_kwargs(words, kwargs) if kwargs else []
            if unmatched:
                text += ("      didn't match because some of the keywords were incorrect: "
                         + ", ".join(unmatched) + "\n")
            else:
                text += ("      didn't match because some of the arguments have invalid "
                         f"types: {_formatted(words, args, kwargs)}\n")
    return text


_PARSED: dict = {}


def signatures_of(public_name: str) -> list | None:
    sigs = _PARSED.get(public_name)
    if sigs is None:
        from .arg_signatures import SIGNATURES

        formats = SIGNATURES.get(public_name)
        if formats is None:
            return None
        if formats[0].startswith("!noargs "):
            sigs = _PARSED[public_name] = formats[0].partition(" ")[2]
        elif formats[0] == "!python":
            sigs = _PARSED[public_name] = PythonLevel(public_name, *formats[1:])
        elif formats[0] == "!dispatch":
            sigs = _PARSED[public_name] = Dispatch(*formats[1:])
        else:
            sigs = _PARSED[public_name] = [Signature(f) for f in formats]
    return sigs


def diagnose(public_name: str, args: tuple, kwargs: dict) -> TypeError | None:
    """PyTorch's TypeError for this call of `public_name` ("torch.sum", "Tensor.sum": a
    method's args exclude self), or None when the arguments fit its signatures."""
    try:
        sigs = signatures_of(public_name)
    except Exception:  # noqa: BLE001 - a broken table must not hide the real error
        return None
    if not sigs:
        return None
    if isinstance(sigs, (PythonLevel, Dispatch)):
        try:
            return sigs.diagnose(args, kwargs)
        except Exception:  # noqa: BLE001 - keep the original error
            return None
    if isinstance(sigs, str):  # a function PyTorch declares with no parameters at all
        if kwargs:
            return TypeError(f"{sigs}() takes no keyword arguments")
        return TypeError(f"{sigs}() takes no arguments ({len(args)} given)") if args else None
    try:
        return _diagnose(sigs, args, kwargs)
    except ArgError as err:
        return TypeError(str(err))
    except Conversion as err:
        return err.error
    except Exception:  # noqa: BLE001 - arguments our parser cannot read: keep the original
        return None


def _diagnose(sigs, args, kwargs):
    if len(sigs) == 1:
        parse(sigs[0], args, kwargs, True)
        return _list_items(sigs[0], args, kwargs)
    for sig in sigs:
        if parse(sig, args, kwargs, False):
            return _list_items(sig, args, kwargs)
    count = len(args) + len(kwargs)
    plausible = [s for s in sigs if s.min_args <= count <= len(s.params) and not s.hidden]
    if len(plausible) == 1:
        parse(plausible[0], args, kwargs, True)
    options = [s.display() for s in sigs if not s.hidden]
    return TypeError(_invalid_combination(sigs[0].name, options, args, kwargs))


def _list_items(sig: Signature, args, kwargs):
    """The error PyTorch gives once a signature fitted, unpacking a tensor list whose
    items are not all tensors (the parser checks only that it is a list or tuple), or an
    int list whose first item was an int and a later one is not."""
    for i, p in enumerate(sig.params):
        if p.kind == "Device":
            obj = args[i] if i < len(args) and not p.keyword_only else next(
                (kwargs[a] for a in p.aliases if a in kwargs), None)
            _read_device(obj)
            continue
        if p.kind not in ("TensorList", "c10::List<::std::optional<Tensor>>", "IntArrayRef",
                          "SymIntArrayRef"):
            continue
        obj = args[i] if i < len(args) and not p.keyword_only else next(
            (kwargs[a] for a in p.aliases if a in kwargs), None)
        if not isinstance(obj, (list, tuple)):
            continue
        if p.kind.endswith("IntArrayRef"):
            bad = next((j for j, item in enumerate(obj) if not _is_int(item)), None)
            if bad is not None:
                return TypeError(f"{sig.name}(): argument '{p.name}' failed to unpack the "
                                 f"object at pos {bad + 1} with error \"type must be tuple of "
                                 f"ints,but got {_typename(obj[bad])}\"")
            continue
        for j, item in enumerate(obj):
            if not _is_tensor(item) and not (item is None and p.kind != "TensorList"):
                return TypeError(f"expected Tensor as element {j} in argument {i}, but got "
                                 f"{_typename(item)}")
    return None


def _read_device(obj) -> None:
    """The parser turns a Device argument given as a str or an int into a device before
    the op runs: a bad device string or a negative index fails there, whatever the op."""
    if type(obj) is str:
        from ..devices import parse as parse_device

        try:
            parse_device(obj)
        except RuntimeError as err:
            raise Conversion(err) from None
    elif type(obj) is int:
        from ..devices import NO_ACCELERATOR

        raise Conversion(RuntimeError("Device index must not be negative" if obj < 0
                                      else NO_ACCELERATOR))


_PARAMS = re.compile(r"^(\*{0,2}[A-Za-z_][A-Za-z0-9_]*(=None)?|\*|/)(, (\*{0,2}[A-Za-z_]"
                     r"[A-Za-z0-9_]*(=None)?|\*|/))*$|^$")


_NOT_ALL_GIVEN = object()


class PythonLevel:
    """A function PyTorch writes in Python (F.softmax, torch.meshgrid, Tensor.norm):
    Python itself words its arity and keyword errors (with PyTorch's parameter list and
    qualified name, `params`/`qualname`), then its body either reads an attribute of the
    first argument (`attribute`: "'str' object has no attribute 'dim'"; "weight.dtype":
    of that parameter) or passes it to a parser-checked op (`inner`, a SIGNATURES key) as
    that op's first argument (`leading`: its first n parameters, in order)."""

    def __init__(self, public_name: str, qualname: str, params: str, inner: str = "",
                 attribute: str = "", unwrap: str = "", leading: str = ""):
        if not _PARAMS.match(params) or not re.match(r"^[A-Za-z_][A-Za-z0-9_.]*$", qualname):
            raise ValueError(f"bad signature for {public_name}")
        space: dict = {}
        exec(f"def stub({params}):\n    return locals()", {}, space)  # noqa: S102 - checked text
        self.stub = space["stub"]
        self.stub.__qualname__ = qualname
        self.method = public_name.startswith("Tensor.")
        names = params.split(",") if params else []
        at = 1 if self.method else 0  # (a method's first is self; Tensor.storage has only it)
        first = names[at].strip() if len(names) > at else ""
        # *tensors: the body hands the whole tuple on (torch.meshgrid(*tensors)); a
        # (*args, **kwargs) dispatcher hands its arguments on as they came
        self.varargs = first.startswith("*") and "**" not in params
        self.first = first.lstrip("*").partition("=")[0]
        self.inner = inner
        self.attribute = attribute
        # how a *tensors body reads one argument: "one" hands it on alone
        # (torch.atleast_1d(x)), "sequence" only a list or tuple (torch.meshgrid([x, y]))
        self.unwrap = unwrap
        self.leading = int(leading or 0)

    def diagnose(self, args, kwargs):
        try:
            bound = self.stub(*(((None,) + tuple(args)) if self.method else args), **kwargs)
        except TypeError as err:
            return err
        param, dot, attribute = self.attribute.rpartition(".")
        if dot:  # the body first reads an attribute of this parameter
            if not _is_tensor(bound[param]):
                return AttributeError(f"'{_typename(bound[param])}' object has no attribute "
                                      f"'{attribute}'")
            return None
        if self.leading and self.inner:
            handed = self._handed_on(bound, args, kwargs)
            if handed is not _NOT_ALL_GIVEN:
                return handed
        if self.method:
            return None  # the tensor itself is the first argument: nothing more to say
        if self.varargs:
            first = tuple(args)
            if len(args) == 1 and (self.unwrap == "one" or (
                    self.unwrap == "sequence" and isinstance(args[0], (list, tuple)))):
                first = args[0]
        elif args:  # (a (*args, **kwargs) dispatcher's first argument is args[0] too)
            first = args[0]
        elif self.first in kwargs:
            first = kwargs[self.first]
        else:
            return None
        if _is_tensor(first):
            return None
        if self.attribute:
            return AttributeError(f"'{_typename(first)}' object has no attribute "
                                  f"'{self.attribute}'")
        if self.inner.startswith("Tensor."):  # (its body calls a method of the first)
            return AttributeError(f"'{_typename(first)}' object has no attribute "
                                  f"'{self.inner[len('Tensor.'):]}'")
        if self.inner:
            return diagnose(self.inner, (first,), {})
        return None


    def _handed_on(self, bound, args, kwargs):
        """The body hands its first `leading` parameters on to op `inner` in order (as a
        method of the first one when `inner` is "Tensor.x"); only when all were given."""
        names = self.stub.__code__.co_varnames[:self.leading]
        if any(i >= len(args) and n not in kwargs for i, n in enumerate(names)):
            return _NOT_ALL_GIVEN
        values = tuple(bound[n] for n in names)
        if self.inner.startswith("Tensor."):
            if not _is_tensor(values[0]):
                return AttributeError(f"'{_typename(values[0])}' object has no attribute "
                                      f"'{self.inner[len('Tensor.'):]}'")
            return diagnose(self.inner, values[1:], {})
        return diagnose(self.inner, values, {})


class Dispatch:
    """A PyTorch function that is one of two Python functions chosen by a flag argument
    (torch._jit_internal.boolean_dispatch: F.max_pool2d by return_indices, torch.unique
    by return_inverse then return_counts): the flag is read as the dispatcher reads it
    (by keyword, else at its position, else its default) and the chosen function's entry
    (`if_true` / `if_false`, SIGNATURES keys) words the error."""

    def __init__(self, arg_name: str, index: str, default: str, if_true: str, if_false: str):
        self.arg_name = arg_name
        self.index = int(index)
        self.default = default == "True"
        self.if_true, self.if_false = if_true, if_false

    def diagnose(self, args, kwargs):
        if self.arg_name in kwargs:
            flag = kwargs[self.arg_name]
        elif self.index < len(args):
            flag = args[self.index]
        else:
            flag = self.default
        if not isinstance(flag, (bool, int, float, type(None), str, list, tuple)):
            return None  # (a tensor's truth may itself raise: leave that to the call)
        return diagnose(self.if_true if flag else self.if_false, args, kwargs)


def rebind(public_name: str, args: tuple, kwargs: dict, accepted=None):
    """(args, kwargs) as gradcli's function takes what PyTorch's first fitting signature
    binds, or None when that changes nothing: a keyword PyTorch binds to a positional
    parameter moves to its position (in order, while they follow on without a gap:
    gradcli takes its positional parameters in PyTorch's order, not always under its
    names), and a keyword-only option gradcli's function does not take (`accepted`: the
    names it does take) is dropped where its value changes nothing on a CPU
    (`pin_memory=False`, `layout=None`, `device="cpu"`)."""
    try:
        sigs = signatures_of(public_name)
    except Exception:  # noqa: BLE001
        return None
    if not isinstance(sigs, list):
        return None
    for sig in sigs:
        if sig.hidden or not parse(sig, args, kwargs, False):
            continue
        moved, rest = list(args), dict(kwargs)
        if len(args) > 1 and sig.max_pos_args == 1 and not _check(sig.params[0], args[0],
                                                                   False)[0]:
            return (tuple(args),), rest  # x.flip(0, 1): sizes given one by one
        for p in sig.params[len(args):]:
            key = None if p.keyword_only else next((a for a in p.aliases if a in rest), None)
            if key is None:
                break
            moved.append(rest.pop(key))
        dropped = False
        if accepted is not None:
            for p in sig.params:
                if p.keyword_only and p.name in rest and p.name not in accepted and _inert(
                        p, rest[p.name]):
                    del rest[p.name]
                    dropped = True
                # a numpy spelling past a gap (x.std(1, keepdims=True): unbiased comes
                # between) goes by PyTorch's name where gradcli's function takes that name
                alias = next((a for a in p.aliases[1:] if a in rest), None)
                if alias is not None and p.name in accepted and p.name not in rest:
                    rest[p.name] = rest.pop(alias)
                    dropped = True
        return (tuple(moved), rest) if len(moved) > len(args) or dropped else None
    return None


def _inert(p: Param, value) -> bool:
    """Whether keyword-only option `p` given `value` asks for nothing but the default
    behaviour of a CPU tensor."""
    if value is None:
        return p.allow_none
    if p.default in ("False", "True") and isinstance(value, bool):
        return value == (p.default == "True")
    if p.kind == "Device":  # (a program's object never has its __str__ run here)
        return (type(value) is str or _typename(value) == "torch.device") and str(value) in (
            "cpu", "cpu:0")
    return False
