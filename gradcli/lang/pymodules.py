"""The Python modules a program may import besides torch and math (docs/language.md), as programs see them.

Each is a fresh module object per session holding only the names docs/language.md lists, each a
wrapper that keeps the sandbox's promises:

* ``random``: seed, random, randint, uniform, choice, shuffle, gauss, sample of one
  ``random.Random`` per session, seeded 0 until the program seeds it (as torch's generator);
  no ``Random`` class, state or module internals; ``sample``'s count within the length limit;
* ``functools``: ``partial`` (its ``func``/``args``/``keywords`` are not readable: the
  attribute policy shows nothing of objects it does not know) and ``reduce`` (its iterable
  bounded, since C code consumes it);
* ``collections``: ``OrderedDict`` (built within the length limit, dict's methods and
  ``move_to_end``) and ``namedtuple`` (classes whose instances show their fields, ``count``
  and ``index``; no ``_make``/``_asdict``: '_' names; no ``module=``);
* ``numpy`` (see :mod:`gradcli.lang.pynumpy`), loaded on first import.
"""
from __future__ import annotations

import types
import weakref

from . import runtime as R

#: the module objects handed to programs (runtime.is_allowed_module accepts them)
MODULES: weakref.WeakSet = weakref.WeakSet()
NAMES = ("random", "functools", "collections", "numpy", "functorch")


def _module(name, members: dict):
    mod = types.ModuleType(name)
    for k, v in members.items():
        setattr(mod, k, v)
    mod.__all__ = sorted(members)
    MODULES.add(mod)
    return mod


def _fn(fn, name):
    return R._Builtin(fn, name)


# ------------------------------------------------------------------ random
def make_random():
    import random

    gen = random.Random(0)

    def sample(population, k, *, counts=None):
        if type(k) in R.INTS and k > R.active_limits().max_length:
            raise R.too_long(k, "sample")
        if counts is not None:
            counts = list(R.bounded(counts))
        if not isinstance(population, (list, tuple, str, range)):
            population = list(R.bounded(population))
        return gen.sample(population, k, counts=counts)

    def shuffle(x):
        gen.shuffle(x)

    def seed(a=None, version=2):
        if a is None:
            a = 0  # (Python seeds from the clock: gradcli programs are reproducible)
        gen.seed(a, version)

    return _module("random", {
        "seed": _fn(seed, "seed"), "random": _fn(gen.random, "random"),
        "randint": _fn(gen.randint, "randint"), "uniform": _fn(gen.uniform, "uniform"),
        "choice": _fn(gen.choice, "choice"), "shuffle": _fn(shuffle, "shuffle"),
        "gauss": _fn(gen.gauss, "gauss"), "sample": _fn(sample, "sample"),
    })


# --------------------------------------------------------------- functools
def make_functools():
    import functools

    def reduce(function, iterable, *initial):
        return functools.reduce(function, R.bounded(iterable), *initial)

    return _module("functools", {"partial": functools.partial,
                                 "reduce": _fn(reduce, "reduce")})


# ------------------------------------------------------------- collections
#: the classes namedtuple made for programs, and their field names
NAMEDTUPLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
ORDERED_DICT_METHODS = R.DICT_METHODS | {"move_to_end"}


def make_collections():
    import collections

    real = collections.OrderedDict

    def namedtuple(typename, field_names, *, rename=False, defaults=None):
        if defaults is not None:
            defaults = list(R.bounded(defaults))
        if not isinstance(field_names, str):
            field_names = list(R.bounded(field_names))
        cls = collections.namedtuple(typename, field_names, rename=rename, defaults=defaults,
                                     module="__main__")
        NAMEDTUPLES[cls] = frozenset(cls._fields) | R.TUPLE_METHODS
        return cls

    def ordered_call(cls, *args, **kwargs):
        from .pybuiltins import _bounded_mapping_arg
        return real(*_bounded_mapping_arg(args), **kwargs)

    meta = type("OrderedDict_builtin", (type,), {
        "__call__": ordered_call,
        "__instancecheck__": lambda cls, obj: isinstance(obj, real),
        "__subclasscheck__": lambda cls, sub: issubclass(sub, real),
        "__repr__": lambda cls: "<class 'collections.OrderedDict'>",
    })
    ordered = meta("OrderedDict", (), {})
    R.REAL_TYPES[ordered] = real
    from .pybuiltins import _SHOWN_CLASS
    _SHOWN_CLASS[real] = ordered  # type(od)(...) is built within the length limit too
    return _module("collections", {"OrderedDict": ordered,
                                   "namedtuple": _fn(namedtuple, "namedtuple")})


# ---------------------------------------------------------------- functorch
def make_functorch():
    """PyTorch's old functorch package (the forward-AD tutorial imports it): torch.func's
    transforms and make_functional(_with_buffers), all gradcli functions."""
    from gradcli.torch import _functorch_compat as compat

    return _module("functorch", {name: getattr(compat, name) for name in compat.__all__})


_MAKERS = {"random": make_random, "functools": make_functools,
           "collections": make_collections, "functorch": make_functorch}


def load(name, cache: dict):
    """The session's module ``name`` (made on first import; ``cache`` is per session)."""
    mod = cache.get(name)
    if mod is None:
        if name == "numpy":
            from . import pynumpy
            mod = pynumpy.make_numpy()
        else:
            mod = _MAKERS[name]()
        cache[name] = mod
    return mod


def policy_for(tp):
    """The attribute names of a value these modules made, or None."""
    names = NAMEDTUPLES.get(tp)
    if names is not None:
        return names
    if tp.__module__ == "collections" and tp.__name__ == "OrderedDict":
        return ORDERED_DICT_METHODS
    return None
