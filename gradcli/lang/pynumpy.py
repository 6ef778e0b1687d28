"""``import numpy as np`` for programs: an allow-listed part of numpy (docs/language.md).

Array creation, arithmetic, indexing, reductions, the common elementwise functions, a
seeded ``np.random`` per session and printing exactly as numpy prints. Nothing that touches
files, raw memory or pickles (tofile, save, load, ctypes, frombuffer, fromfile, memmap,
lib, ...): those names are simply not in the module a program gets.

Arrays a program holds are :class:`SafeArray` views (numpy's own ndarray subclass
machinery): every ufunc on them -- and so every operator -- checks the size of its result
against ``--max-elements`` before numpy allocates it, as the engine does for tensors.
They print as numpy arrays and are numpy arrays to ``isinstance`` and to torch
(``torch.from_numpy``, ``torch.tensor`` take them as plain ndarrays).
"""
from __future__ import annotations

import numpy as np

from . import pymodules
from . import runtime as R

_SAFE_KINDS = "biuf"


def _check(n):
    lim = R.active_limits().max_elements
    if n > lim:
        raise R.LimitExceeded(f"array of {n:,} elements exceeds the limit of {lim:,} elements "
                              "(--max-elements)")


def _prod(shape):
    n = 1
    for d in shape:
        n *= max(int(d), 0)
    return n


def _shape_arg(shape):
    if isinstance(shape, (list, tuple)):
        return tuple(int(d) for d in shape)
    return (int(shape),)


def plain(x):
    return x.view(np.ndarray) if isinstance(x, SafeArray) else x


def wrap(x):
    """A numpy result as a program holds it."""
    if type(x) is np.ndarray:
        if x.dtype.kind not in _SAFE_KINDS:
            raise TypeError(f"numpy arrays of dtype {x.dtype} are not supported by gradcli")
        return x.view(SafeArray)
    if isinstance(x, tuple):
        return tuple(wrap(v) for v in x)
    if isinstance(x, list):
        return [wrap(v) for v in x]
    return x


def _ufunc_size(ufunc, method, inputs):
    shapes = [np.shape(x) for x in inputs]
    if method == "outer":
        return _prod(sum(shapes, ()))
    if method != "__call__":
        return 0
    if ufunc is np.matmul and len(shapes) == 2 and all(shapes):
        a, b = shapes
        a2 = a if len(a) > 1 else (1,) + a
        b2 = b if len(b) > 1 else b + (1,)
        try:
            batch = np.broadcast_shapes(a2[:-2], b2[:-2])
        except ValueError:
            return 0
        return _prod(batch) * a2[-2] * b2[-1]
    try:
        return _prod(np.broadcast_shapes(*shapes))
    except ValueError:
        return 0  # numpy raises its own error


def _is_tensor(x):
    """(gradcli's Tensor names PyTorch's module as its own: a program never holds a real
    torch.Tensor)"""
    return type(x).__name__ == "Tensor" and type(x).__module__ in ("torch", "gradcli.engine.tensor")


def _operators():
    import operator
    return {np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
            np.true_divide: operator.truediv, np.floor_divide: operator.floordiv,
            np.remainder: operator.mod, np.power: operator.pow, np.matmul: operator.matmul,
            np.less: operator.lt, np.less_equal: operator.le, np.greater: operator.gt,
            np.greater_equal: operator.ge, np.equal: operator.eq, np.not_equal: operator.ne}


_TENSOR_OPERATORS = _operators()


class SafeArray(np.ndarray):
    """An ndarray as a program holds it (see the module docstring)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and not kwargs and ufunc in _TENSOR_OPERATORS and \
                any(_is_tensor(x) for x in inputs):
            # `tensor + array` (Tensor.__add__ declined): the tensor operator, the array as a
            # tensor, as PyTorch computes it
            fac = R.facade()
            return _TENSOR_OPERATORS[ufunc](*[fac.from_numpy(plain(x)) if isinstance(
                x, np.ndarray) else x for x in inputs])
        _check(_ufunc_size(ufunc, method, inputs))
        inputs = tuple(plain(x) for x in inputs)
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(plain(x) for x in out)
        return wrap(getattr(ufunc, method)(*inputs, **kwargs))

    def __repr__(self):
        return repr(self.view(np.ndarray))

    def __str__(self):
        return str(self.view(np.ndarray))

    def __format__(self, spec):
        return format(self.view(np.ndarray), spec)


#: what a program may read from an array (no tofile, dump, ctypes, data, base, view...)
ARRAY_ATTRS = frozenset({
    "shape", "ndim", "size", "dtype", "T", "reshape", "sum", "mean", "max", "min", "std",
    "var", "argmax", "argmin", "astype", "tolist", "copy", "flatten", "ravel", "transpose",
    "dot", "item", "all", "any", "cumsum", "prod", "clip", "round", "squeeze", "argsort",
    "sort", "fill", "itemsize", "nbytes", "swapaxes", "real"})
ARRAY_PROPERTIES = frozenset({"shape", "ndim", "size", "dtype", "T", "itemsize", "nbytes", "real"})
SCALAR_ATTRS = frozenset({"item", "dtype", "shape", "ndim", "size", "real", "imag", "tolist"})
DTYPE_ATTRS = frozenset({"name", "itemsize", "kind", "char"})


def _dtype_arg(dtype):
    if dtype is None:
        return None
    dt = np.dtype(R.REAL_TYPES.get(dtype, dtype))
    if dt.kind not in _SAFE_KINDS:
        raise TypeError(f"numpy dtype {dt} is not supported by gradcli")
    return dt


def array_attr(arr, name):
    """``arr.name`` for a program's array: results are wrapped, sizes checked."""
    if name not in ARRAY_ATTRS:
        if hasattr(arr, name):
            raise AttributeError(f"numpy.ndarray.{name} is not supported by gradcli")
        raise AttributeError(f"'numpy.ndarray' object has no attribute '{name}'")
    if name in ARRAY_PROPERTIES:
        return wrap(getattr(arr, name))
    base = plain(arr)
    method = getattr(base, name)
    if name == "astype":
        def call(dtype, *args, **kwargs):
            return wrap(method(_dtype_arg(dtype), *args, **kwargs))
    elif name == "dot":
        def call(other, *args, **kwargs):
            _check(_ufunc_size(np.matmul, "__call__", (base, plain(other))))
            return wrap(method(plain(other), *args, **kwargs))
    else:
        def call(*args, **kwargs):
            return wrap(method(*[plain(a) for a in args], **kwargs))
    return R._Builtin(call, name)


def scalar_attr(value, name):
    if name not in SCALAR_ATTRS:
        raise AttributeError(f"numpy.{type(value).__name__}.{name} is not supported by gradcli")
    v = getattr(value, name)
    return R._Builtin(v, name) if callable(v) else wrap(v)


def dtype_attr(dt, name):
    if name not in DTYPE_ATTRS:
        raise AttributeError(f"numpy.dtype.{name} is not supported by gradcli")
    return getattr(dt, name)


# ------------------------------------------------------------------ the module
def _arrays_in(args):
    out = []
    for a in map(_tensor_data, args):
        if isinstance(a, (list, tuple)) or type(a) in R.USER_CLASSES:
            out.append(np.asarray(R.bounded(a)))
        else:
            out.append(plain(a))
    return out


def _tensor_data(obj):
    """A tensor's array as numpy takes it (PyTorch's Tensor.__array__: numpy())."""
    if _is_tensor(obj):
        return obj.numpy()
    return obj


def _array(obj, dtype=None, copy=True, ndmin=0):
    obj = _tensor_data(obj)
    if isinstance(obj, range) or type(obj) in R.LAZY_TYPES or type(obj) in R.USER_CLASSES:
        obj = R.bounded(obj)  # (numpy would size an array by a program object's __len__)
    arr = np.array(plain(obj), dtype=_dtype_arg(dtype), copy=copy, ndmin=ndmin)
    _check(arr.size)
    return wrap(arr)


def _asarray(obj, dtype=None):
    if isinstance(obj, SafeArray) and dtype is None:
        return obj
    return _array(obj, dtype=dtype, copy=None)


def _filled(fn, with_value=False, name=None):
    at = 1 if with_value else 0  # (where dtype comes among the arguments after the shape)
    name = name or fn.__name__

    def make(shape, *args, dtype=None, **kwargs):
        if len(args) > at:  # np.empty((n, m), "int64"): the dtype given by position
            if dtype is not None:
                raise TypeError(f"argument for {name}() given by name ('dtype') and position "
                                f"(position {at + 1})")
            dtype, args = args[at], args[:at] + args[at + 1:]
        _check(_prod(_shape_arg(shape)))
        if with_value:
            return wrap(fn(shape, *args, dtype=_dtype_arg(dtype), **kwargs))
        return wrap(fn(shape, *args, dtype=_dtype_arg(dtype) or float, **kwargs))
    return make


def _like(fn):
    def make(a, *args, dtype=None, **kwargs):
        return wrap(fn(plain(a) if not isinstance(a, (list, tuple)) else np.asarray(a), *args,
                       dtype=_dtype_arg(dtype), **kwargs))
    return make


def _arange(*args, dtype=None):
    if not 1 <= len(args) <= 3:
        raise TypeError("arange() requires stop to be specified.")
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (
        args[0], args[1], args[2] if len(args) == 3 else 1)
    if step == 0:
        raise ZeroDivisionError("division by zero")
    import math
    _check(max(0, math.ceil((stop - start) / step)))
    return wrap(np.arange(*args, dtype=_dtype_arg(dtype)))


def _spaced(fn):
    def make(start, stop, num=50, *args, **kwargs):
        _check(int(num))
        return wrap(fn(start, stop, num, *args, **kwargs))
    return make


def _eye(N, M=None, k=0, dtype=float):
    _check(int(N) * int(M if M is not None else N))
    return wrap(np.eye(N, M, k, dtype=_dtype_arg(dtype)))


def _identity(n, dtype=float):
    _check(int(n) * int(n))
    return wrap(np.identity(n, dtype=_dtype_arg(dtype)))


def _ufunc(uf):
    def call(*args, **kwargs):
        arrays = _arrays_in(args)
        _check(_ufunc_size(uf, "__call__", arrays))
        if "out" in kwargs:
            kwargs["out"] = plain(kwargs["out"])
        return wrap(uf(*arrays, **kwargs))
    return call


def _bounded_fn(fn):
    """A function whose result is no larger than its (bounded) inputs."""
    def call(*args, **kwargs):
        return wrap(fn(*_arrays_in(args), **kwargs))
    return call


def _joined(fn):
    def call(arrays, *args, **kwargs):
        arrays = [np.asarray(plain(a)) if not isinstance(a, np.ndarray) else plain(a)
                  for a in R.bounded(arrays)]
        _check(sum(a.size for a in arrays))
        return wrap(fn(arrays, *args, **kwargs))
    return call


def _outer(a, b):
    a, b = _arrays_in((a, b))
    _check(a.size * b.size)
    return wrap(np.outer(a, b))


def _dot(a, b, *args):
    a, b = _arrays_in((a, b))
    _check(_ufunc_size(np.matmul, "__call__", (a, b)) if a.ndim and b.ndim else
           max(a.size, b.size))
    return wrap(np.dot(a, b))


def _where(cond, *xy):
    arrays = _arrays_in((cond, *xy))
    _check(_ufunc_size(np.add, "__call__", arrays))
    return wrap(np.where(*arrays))


def _take_along_axis(arr, indices, axis=-1):
    """np.take_along_axis (the torch.func tutorial's NumpySort): the other dimensions
    broadcast, so the result can outgrow both inputs; its size is checked first."""
    a, i = _arrays_in((arr, indices))
    if axis is None:
        _check(i.size)
    elif a.ndim == i.ndim and isinstance(axis, int) and -a.ndim <= axis < a.ndim:
        ax = axis % a.ndim
        try:
            _check(_prod(np.broadcast_shapes(
                tuple(1 if d == ax else n for d, n in enumerate(a.shape)), i.shape)))
        except ValueError:
            pass  # numpy raises its own error
    return wrap(np.take_along_axis(a, i, axis))


def _bincount(x, weights=None, minlength=0):
    """np.bincount (class counts in Raschka's course notebooks): its result has max(x) + 1
    or minlength entries, however small x is, so that size is checked before numpy
    allocates it."""
    arrays = _arrays_in((x,) if weights is None else (x, weights))
    a = np.asarray(arrays[0])
    n = int(minlength) if type(minlength) in R.INTS else 0
    if a.size and a.dtype.kind in "iub":
        n = max(n, int(a.max()) + 1)
    _check(n)
    return wrap(np.bincount(*arrays, minlength=minlength))


def _meshgrid(*xi, **kwargs):
    """np.meshgrid (a decision-region grid in course notebooks): each output has as many
    elements as the inputs' sizes multiplied, checked before numpy builds them (a sparse
    grid keeps each input's own size)."""
    arrays = _arrays_in(xi)
    if not kwargs.get("sparse", False):
        _check(_prod(np.asarray(a).size for a in arrays))
    return wrap(np.meshgrid(*arrays, **kwargs))


UFUNCS = ("sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh exp exp2 expm1 log log2 log10 "
          "log1p sqrt square abs absolute sign floor ceil trunc rint maximum minimum add subtract "
          "multiply divide true_divide floor_divide power mod remainder negative reciprocal "
          "isnan isinf isfinite greater less equal not_equal greater_equal less_equal "
          "logical_and logical_or logical_not matmul hypot").split()
BOUNDED = ("sum mean std var max min amax amin argmax argmin prod cumsum cumprod all any "
           "reshape transpose squeeze expand_dims clip round around ravel flip sort argsort "
           "allclose isclose array_equal median copy diag trace unique count_nonzero "
           "nonzero shape ndim size").split()
DTYPES = ("float32 float64 float16 int64 int32 int16 int8 uint8 bool_ int_ double "
          "single").split()
SAFE_CLASSES = frozenset(getattr(np, n) for n in DTYPES)


def _ndarray_stand_in():
    def call(cls, *args, **kwargs):
        raise TypeError("numpy.ndarray() is not supported by gradcli: make arrays with "
                        "np.array, np.zeros, ...")
    meta = type("ndarray_builtin", (type,), {
        "__call__": call,
        "__instancecheck__": lambda cls, obj: isinstance(obj, np.ndarray),
        "__subclasscheck__": lambda cls, sub: issubclass(sub, np.ndarray),
        "__repr__": lambda cls: "<class 'numpy.ndarray'>",
    })
    return meta("ndarray", (), {})


NDARRAY = _ndarray_stand_in()


def _random_module():
    state = np.random.RandomState(0)

    def sized(fn, at):
        """`at`: size's place among the positional arguments (randint(low, high, size))."""
        def call(*args, **kwargs):
            size = args[at] if len(args) > at else kwargs.get("size")
            if size is not None:
                _check(_prod(_shape_arg(size)))
            return wrap(fn(*args, **kwargs))
        return call

    def dims(fn):
        def call(*shape):
            _check(_prod(shape))
            return wrap(fn(*shape))
        return call

    def seed(s=None):
        state.seed(0 if s is None else s)

    def shuffle(x):
        state.shuffle(plain(x) if isinstance(x, np.ndarray) else x)

    def permutation(x):
        if type(x) in R.INTS:
            _check(x)
        return wrap(state.permutation(plain(x)))

    def choice(a, size=None, replace=True, p=None):
        if size is not None:
            _check(_prod(_shape_arg(size)))
        if type(a) in R.INTS:
            _check(a)
        return wrap(state.choice(plain(a), size, replace, plain(p)))

    members = {"seed": seed, "rand": dims(state.rand), "randn": dims(state.randn),
               "randint": sized(state.randint, 2), "random": sized(state.random_sample, 0),
               "random_sample": sized(state.random_sample, 0),
               "normal": sized(state.normal, 2), "uniform": sized(state.uniform, 2),
               "choice": choice, "shuffle": shuffle,
               "permutation": permutation}
    return pymodules._module("numpy.random", {k: R._Builtin(v, k) for k, v in members.items()})


def make_numpy():
    R.register_int_types(np.integer)
    members = {
        "array": _array, "asarray": _asarray,
        "zeros": _filled(np.zeros), "ones": _filled(np.ones), "empty": _filled(np.zeros, name="empty"),
        "full": _filled(np.full, with_value=True),
        "zeros_like": _like(np.zeros_like), "ones_like": _like(np.ones_like),
        "full_like": _like(np.full_like), "empty_like": _like(np.zeros_like),
        "arange": _arange, "linspace": _spaced(np.linspace), "logspace": _spaced(np.logspace),
        "eye": _eye, "identity": _identity, "outer": _outer, "dot": _dot, "where": _where,
        "concatenate": _joined(np.concatenate), "stack": _joined(np.stack),
        "vstack": _joined(np.vstack), "hstack": _joined(np.hstack),
        "take_along_axis": _take_along_axis, "bincount": _bincount,
        "meshgrid": _meshgrid,
    }
    members = {k: R._Builtin(v, k) for k, v in members.items()}
    for name in UFUNCS:
        members[name] = R._Builtin(_ufunc(getattr(np, name)), name)
    for name in BOUNDED:
        members[name] = R._Builtin(_bounded_fn(getattr(np, name)), name)
    for name in DTYPES:
        members[name] = getattr(np, name)
    members.update({"pi": np.pi, "e": np.e, "inf": np.inf, "nan": np.nan, "newaxis": None,
                    "ndarray": NDARRAY, "random": _random_module(),
                    "__version__": np.__version__})
    mod = pymodules._module("numpy", members)
    mod.__all__ = [n for n in mod.__all__ if not n.startswith("_")]
    return mod
