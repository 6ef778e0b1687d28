"""The Python builtins docs/language.md lists for classes and tutorials' idioms, as programs see them.

Each keeps the sandbox's promises where the real builtin would break one:

* ``type(x)`` returns ``x``'s class, but the class of a class is the stand-in ``type``,
  which refuses three arguments (a program makes classes only with ``class``), and the
  classes of list/tuple/str/dict/set are the length-checked stand-ins;
* ``getattr``/``setattr``/``hasattr``/``delattr`` apply the dot's rules to the name string
  at run time (a name built as ``'_' + '_class__'`` is refused like the spelled one);
* ``iter`` takes one argument (``iter(f, sentinel)`` would let C code call ``f``
  without end); ``dict``/``set`` take at most the length limit from a lazy iterable;
* ``pow`` with two integers is ``**``'s guarded power.
"""
from __future__ import annotations

import builtins as _py
import types

from . import runtime as R


def _check_name(name):
    if type(name) is not str:
        raise TypeError(f"attribute name must be string, not '{type(name).__name__}'")
    if name.startswith("_") and name not in R.ALLOWED_DUNDERS and name != "_version" and \
            not R.is_saved_attr(name):
        raise AttributeError(R.private_message(name))


_MISSING = object()


def _positional(name, args, kwargs, lo, hi=None):
    """CPython's argument-count checks of a builtin that takes positional arguments only."""
    if kwargs:
        raise TypeError(f"{name}() takes no keyword arguments")
    n = len(args)
    hi = lo if hi is None else hi
    if lo == hi and n != lo:
        raise TypeError(f"{name} expected {lo} argument{'s' if lo != 1 else ''}, got {n}")
    if n < lo:
        raise TypeError(f"{name} expected at least {lo} argument{'s' if lo != 1 else ''}, "
                        f"got {n}")
    if n > hi:
        raise TypeError(f"{name} expected at most {hi} argument{'s' if hi != 1 else ''}, "
                        f"got {n}")
    return args


def getattr_(*args, **kwargs):
    obj, name, *default = _positional("getattr", args, kwargs, 2, 3)
    _check_name(name)
    try:
        return R.get_attr(obj, name)
    except AttributeError:
        if not default:
            raise
        return default[0]


def setattr_(*args, **kwargs):
    obj, name, value = _positional("setattr", args, kwargs, 3)
    _check_name(name)
    if name.startswith("_"):
        raise AttributeError(R.private_message(name))
    R.set_attr(obj, name, value)


def hasattr_(*args, **kwargs):
    obj, name = _positional("hasattr", args, kwargs, 2)
    _check_name(name)
    try:
        R.get_attr(obj, name)
    except AttributeError:
        return False
    return True


def delattr_(*args, **kwargs):
    obj, name = _positional("delattr", args, kwargs, 2)
    _check_name(name)
    R.del_attr(obj, name)


def iter_(*args, **kwargs):
    obj, *sentinel = _positional("iter", args, kwargs, 1, 2)
    if sentinel:
        raise TypeError("iter() with a sentinel is not supported by gradcli: iter() takes one "
                        "argument")
    return _py.iter(obj)


_POW_PARAMS = ("base", "exp", "mod")


def pow_(*args, **kwargs):
    """pow(base, exp, mod=None) with argument clinic's messages; two integers go
    through ``**``'s guarded power."""
    if len(args) + len(kwargs) > 3:
        raise TypeError(f"pow() takes at most 3 arguments ({len(args) + len(kwargs)} given)")
    vals = dict(zip(_POW_PARAMS, args))
    for i, k in enumerate(_POW_PARAMS):
        if i >= len(args) and k in kwargs:
            vals[k] = kwargs[k]
        elif i < 2 and k not in vals:
            raise TypeError(f"pow() missing required argument '{k}' (pos {i + 1})")
    for k in kwargs:
        if k in _POW_PARAMS and _POW_PARAMS.index(k) < len(args):
            raise TypeError(f"argument for pow() given by name ('{k}') and position "
                            f"({_POW_PARAMS.index(k) + 1})")
        if k not in _POW_PARAMS:
            raise TypeError(f"'{k}' is an invalid keyword argument for pow()")
    mod = vals.get("mod")
    if mod is None:
        return R.checked_pow(vals["base"], vals["exp"])
    base, exp = vals["base"], vals["exp"]
    if type(base) in R.INTS and type(exp) in R.INTS and type(mod) in R.INTS:
        _check_modular_pow(exp, mod)
    return _py.pow(base, exp, mod)


#: about the work of the slowest modular power allowed (a second or so): pow(3, 2**8000 - 1,
#: 2**8000 - 3) takes seconds and pow(a, b, m) with 20,000-bit b and m half a minute, while
#: the result itself stays small, so the result-size guard of ``**`` cannot see it
MODULAR_POW_WORK = 4e9


def _check_modular_pow(exp, mod):
    """Refuses pow(a, b, m) whose work (one multiplication modulo m per bit of b, each
    about bits(m) ** 1.585 with Karatsuba) would run away."""
    eb, mb = abs(int(exp)).bit_length(), abs(int(mod)).bit_length()
    if eb * max(mb, 64) ** 1.585 > MODULAR_POW_WORK:
        raise R.LimitExceeded(f"modular power too large: pow() with a {eb}-bit exponent and a "
                              f"{mb}-bit modulus")


def issubclass_(*args, **kwargs):
    cls, classinfo = _positional("issubclass", args, kwargs, 2)
    return _py.issubclass(R.REAL_TYPES.get(cls, cls), classinfo)



def _bounded_mapping_arg(args):
    """dict(x)'s argument as C code may take it: a lazy iterable bounded, a program's own
    mapping read through its keys() within the limit (C would list all its keys at once)."""
    if len(args) == 1 and type(args[0]) is not dict:
        if hasattr(type(args[0]), "keys"):
            return (R.mapping_items(args[0], "object is not a mapping"),)
        return (R.bounded(args[0], "dict"),)
    return args


def _dict_call(cls, *args, **kwargs):
    return dict(*_bounded_mapping_arg(args), **kwargs)


def _set_call(cls, *args):
    if len(args) == 1:
        return set(R.bounded(args[0], "set"))
    return set(*args)


def _stand_in(real, call):
    """A class-like stand-in for ``real``: calling it goes through ``call``; isinstance,
    issubclass and its printing are the real class's."""
    meta = type(f"{real.__name__}_builtin", (type,), {
        "__call__": call,
        "__instancecheck__": lambda cls, obj: isinstance(obj, real),
        "__subclasscheck__": lambda cls, sub: issubclass(sub, real),
        "__repr__": lambda cls: f"<class '{real.__name__}'>",
    })
    return meta(real.__name__, (), {})


def _type_call(cls, *args, **kwargs):
    if len(args) == 1 and not kwargs:
        return type_of(args[0])
    if len(args) == 3:
        raise TypeError("type() with three arguments is not supported by gradcli: programs "
                        "make classes with the class statement")
    raise TypeError("type() takes 1 or 3 arguments")  # (Python's words)


dict_builtin = _stand_in(dict, _dict_call)
set_builtin = _stand_in(set, _set_call)
type_builtin = _stand_in(type, _type_call)
R.REAL_TYPES.update({dict_builtin: dict, set_builtin: set, type_builtin: type})

#: the class a program sees for a value of each of these classes
_SHOWN_CLASS = {list: R.list_builtin, tuple: R.tuple_builtin, str: R.str_builtin,
                dict: dict_builtin, set: set_builtin}
_BUILTIN_FUNCTION = type(len)


def _not_constructible(name, real=None):
    def call(cls, *args, **kwargs):
        raise TypeError(f"cannot create '{name}' instances in gradcli")
    body = {"__call__": call, "__repr__": lambda cls: f"<class '{name}'>"}
    if real is not None:  # isinstance(f, type(g)) still reads as Python's
        body["__instancecheck__"] = lambda cls, obj: isinstance(obj, real)
    meta = type(f"{name}_builtin", (type,), body)
    return meta(name, (), {})


_MODULE_CLASS = _not_constructible("module")
#: classes whose constructors build code-level objects (a function from a code object, a
#: bound method of any callable): type() of such a value gives a stand-in that prints and
#: checks as the class but cannot be called
_CODE_CLASSES = {tp: _not_constructible(tp.__name__, tp)
                 for tp in (types.FunctionType, types.MethodType, types.CodeType,
                            types.FrameType, types.TracebackType, types.GeneratorType,
                            types.CellType)}


def type_of(obj):
    """``type(obj)``: the class a program may hold for it (stand-ins where calling the real
    class would build a class, a module or a container without the length check)."""
    tp = type(obj)
    if issubclass(tp, type):
        return type_builtin
    shown = _SHOWN_CLASS.get(tp)
    if shown is not None:
        return shown
    if issubclass(tp, types.ModuleType):
        return _MODULE_CLASS
    code_class = _CODE_CLASSES.get(tp)
    if code_class is not None:
        return code_class
    if tp is super:
        return BUILTINS["super"]
    if tp.__name__ == "SafeArray" and tp.__module__ == "gradcli.lang.pynumpy":
        from .pynumpy import NDARRAY
        return NDARRAY
    if tp.__module__ == __name__ or tp.__module__ == R.__name__:
        return _BUILTIN_FUNCTION  # print, repr, the stand-ins' helpers: builtin functions
    return tp


class _SuperBuiltin(R._Builtin):
    """``super`` prints as Python's class does."""

    __slots__ = ()

    def __repr__(self):
        return "<class 'super'>"


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name  # (argument errors name the builtin: "getattr()")
    return fn


def _builtin(fn, name):
    return R._Builtin(_named(fn, name), name)


BUILTINS = {
    "type": type_builtin,
    "issubclass": _builtin(issubclass_, "issubclass"),
    "getattr": _builtin(getattr_, "getattr"),
    "setattr": _builtin(setattr_, "setattr"),
    "hasattr": _builtin(hasattr_, "hasattr"),
    "delattr": _builtin(delattr_, "delattr"),
    "map": map, "filter": filter,
    "iter": _builtin(iter_, "iter"),
    "next": next,
    "dict": dict_builtin, "set": set_builtin,
    "id": id, "hash": hash, "callable": callable,
    "super": _SuperBuiltin(_named(R.super_builtin, "super"), "super"),
    "property": property, "staticmethod": staticmethod, "classmethod": classmethod,
    "divmod": divmod,
    "pow": _builtin(pow_, "pow"),
    "object": object,
    # (what an operator method returns to let the other operand try: a plain constant)
    "NotImplemented": NotImplemented,
}
