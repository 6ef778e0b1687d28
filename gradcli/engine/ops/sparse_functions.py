"""What torch functions and Tensor methods do with a sparse COO tensor, as PyTorch 2.13's
sparse kernels do: a sparse result where PyTorch has one (the value-wise functions with
f(0) = 0, products and quotients by a scalar, sums and products of two sparse tensors,
dtype conversions, transposes, unsqueeze, narrow_copy, index_select, select, cat, stack),
PyTorch's own error where it has none ("Could not run 'aten::exp' with arguments from the
'SparseCPU' backend...").

Why here and not in the dispatch: a sparse tensor keeps its dense equivalent in `_data`,
so every dense function computes the right values (and records the node PyTorch records:
SinBackward0, TBackward0, CatBackward0...) and only the result's layout is missing. A
method of a sparse tensor is found through `SparseCOO.__getattribute__`, which only sparse
tensors pay for; the torch.* functions listed here are wrapped once at start-up
(`install`), the dense path paying one class test in those functions alone.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..grad_mode import no_grad
from ..tensor import Tensor, make
from .composite import NARROW_COPY
from .registry import PUBLIC, run_unary
from .sparse_coo import (
    _GRAD_LAYOUTS,
    SparseCOO,
    _attach,
    _mask,
    _note_grad_layout,
    _pattern,
    _plus_zero,
)

#: value-wise functions PyTorch computes on a sparse tensor's values (f(0) = 0); those in
#: _LINEAR keep an uncoalesced tensor's entries as they are, the others coalesce it first
_VALUEWISE = """abs absolute neg negative sin tan sqrt asin asinh atan atanh arcsin arctan
arcsinh arctanh sinh tanh ceil floor round trunc fix frac sign sgn signbit expm1 log1p erf
erfinv deg2rad rad2deg relu isnan isinf isposinf isneginf nan_to_num square conj_physical
floor_divide pow""".split()
#: their derivative is zero: PyTorch's gradient is a sparse tensor with no entries
_ZERO_DERIVATIVE = frozenset("ceil floor round trunc fix sign".split())
_LINEAR = frozenset("neg negative clone mul multiply div divide true_divide".split())
_INPLACE = frozenset(f"{n}_" for n in _VALUEWISE + ["mul", "div"])

#: functions without a sparse kernel: the operator PyTorch's dispatcher names
_REFUSED = {
    "exp": "exp", "log": "log", "cos": "cos", "cosh": "cosh", "acos": "acos",
    "arccos": "acos", "acosh": "acosh", "arccosh": "acosh", "sigmoid": "sigmoid",
    "exp2": "exp2", "log2": "log2", "log10": "log10", "reciprocal": "reciprocal",
    "rsqrt": "rsqrt", "digamma": "digamma", "lgamma": "lgamma", "logit": "logit", "i0": "i0",
    "sinc": "sinc", "angle": "angle", "isfinite": "ne.Scalar", "logical_not": "logical_not.out",
    "bitwise_not": "bitwise_not", "erfc": "erfc", "softplus": "softplus", "gelu": "gelu",
    "maximum": "maximum", "minimum": "minimum", "clamp": "clamp", "clip": "clamp",
    "clamp_min": "clamp_min", "clamp_max": "clamp_max",
    "mean": "mean.dim", "prod": "prod", "amax": "amax", "amin": "amin", "max": "max",
    "min": "min", "argmax": "argmax", "argmin": "argmin", "cumsum": "cumsum",
    "cumprod": "cumprod", "std": "std.correction", "var": "var.correction",
    "count_nonzero": "count_nonzero.dim_IntList", "all": "all", "logsumexp": "logsumexp",
    "softmax": "_softmax", "log_softmax": "_log_softmax", "squeeze": "as_strided",
    "narrow": "as_strided", "split": "as_strided", "chunk": "as_strided",
    "unbind": "as_strided", "ones_like": "fill_.Scalar", "full_like": "fill_.Scalar",
    "fill_": "fill_.Scalar", "rand_like": "uniform_", "randn_like": "normal_",
    "dot": "dot", "flip": "flip", "roll": "roll", "nonzero": "nonzero", "gather": "gather",
    "sort": "sort.stable", "argsort": "sort.stable", "topk": "topk", "diag": "diagonal_copy",
    "trace": "trace", "tril": "tril", "triu": "triu", "equal": "equal", "view": "as_strided",
    "isclose": "eq.Tensor", "allclose": "eq.Tensor", "exp_": "exp_", "cos_": "cos_",
    "sigmoid_": "sigmoid_", "log_": "log_", "tanh_backward": "tanh_backward",
    "cross": "cross", "cummax": "cummax", "cummin": "cummin", "median": "median",
    "kthvalue": "kthvalue", "mode": "mode", "norm_except_dim": "norm_except_dim",
}
#: comparisons and remainders: the overload depends on the other operand
_COMPARED = frozenset("eq ne lt le gt ge greater less greater_equal less_equal not_equal".split())
_ALIASES = {"greater": "gt", "less": "lt", "greater_equal": "ge", "less_equal": "le",
            "not_equal": "ne"}
_RESHAPING = frozenset("reshape flatten repeat_interleave view_as reshape_as".split())
_CONTIGUOUS = frozenset("contiguous ravel".split())
_EXPANDING = frozenset("expand expand_as repeat broadcast_to".split())

_ADD_DENSE = "add(sparse, dense) is not supported. Use add(dense, sparse) instead."
_STRIDED_ONLY = "memory format option is only supported by strided tensors"

#: the sparse results whose backward PyTorch cannot run (its formula calls an operator
#: without a sparse kernel on the sparse input or gradient): what it raises
_BACKWARD_REFUSED = {
    "sin": "cos", "sinh": "cosh", "tanh": "tanh_backward", "erf": "exp", "erfinv": "exp",
    "nan_to_num": "ne.Scalar", "sgn": "_efficientzerotensor", "unsqueeze": "as_strided",
    "cat": "as_strided", "narrow_copy": "as_strided", "index_select": "index_add_",
    "select": "select_backward",
    "tan": _ADD_DENSE, "asin": _ADD_DENSE, "arcsin": _ADD_DENSE, "asinh": _ADD_DENSE,
    "arcsinh": _ADD_DENSE, "atan": _ADD_DENSE, "arctan": _ADD_DENSE, "expm1": _ADD_DENSE,
    "atanh": _STRIDED_ONLY, "arctanh": _STRIDED_ONLY, "sqrt": "div",
    "norm": "masked_fill_.Scalar",
}


def _refuse_backward(out: Tensor, name: str) -> Tensor:
    """Give the node of a sparse result PyTorch's failure when its backward runs."""
    what = _BACKWARD_REFUSED.get(name)
    node = out._grad_fn
    if what is None or node is None:
        return out

    def refuse(grad_outputs):
        if what == "div":
            raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor "
                               f"divisor (got shape {list(out._data.shape)} for divisor)")
        if " " in what:
            raise RuntimeError(what if what != _STRIDED_ONLY else what)
        raise _could_not_run(what)

    node.register_prehook(refuse)
    return out


def _could_not_run(op: str):
    return NotImplementedError(
        f"Could not run 'aten::{op}' with arguments from the 'SparseCPU' backend. This could "
        "be because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build).")


def _dense_fn(name: str):
    """The dense function a sparse one computes its values with (the unwrapped one)."""
    return _DENSE.get(name) or getattr(Tensor, name)


_KEEP: list = []


def _dense(t):
    """A dense tensor standing for sparse tensor `t` in a dense function: the same values
    (its dense equivalent), version counter and autograd edge (t's node, or t's own
    AccumulateGrad), so the node the function records, and what it saves, are dense: a
    backward formula doing arithmetic on a saved input (log1p's 1 + x) computes densely,
    as PyTorch's does on its sparse values."""
    if not isinstance(t, SparseCOO):
        return t
    alias = make(t._data, t._requires_grad, t._grad_fn)
    alias._output_nr = t._output_nr
    alias._vc = t._vc
    if t._requires_grad and t._grad_fn is None:
        # (a leaf holds its AccumulateGrad weakly: kept here until the dense function has
        # recorded its node, which then holds it)
        _KEEP.append(t._grad_accumulator())
        if len(_KEEP) > 64:
            del _KEEP[:32]
        alias._accumulator = t._accumulator
    elif t._base is not None and t._base._requires_grad:
        alias._base = t._base
    return alias


def _finish(out: Tensor, indices: np.ndarray, values: np.ndarray, coalesced: bool,
            like=None) -> Tensor:
    """`out` (a fresh dense result) made the sparse tensor of this pattern: off the
    pattern its dense equivalent holds +0.0 (neg gives -0.0 there), as PyTorch's
    to_dense adds the values into zeros."""
    data = out._data
    if data.dtype.kind in "fcb" and data.size:
        sparse_dim = indices.shape[0]
        mask = np.zeros(data.shape[:sparse_dim], bool)
        if indices.shape[1]:
            mask[tuple(indices)] = True
        mask = mask.reshape(mask.shape + (1,) * (data.ndim - sparse_dim))
        if not data.flags.writeable or data.base is not None:
            data = data.copy()
            out._data = data
        np.copyto(data, np.zeros((), data.dtype), where=~np.broadcast_to(mask, data.shape))
        if data.dtype.kind in "fc":
            _plus_zero(data)
    return _attach(out, indices, values, coalesced)


def _values_through(fn, values: np.ndarray, *args, **kwargs) -> np.ndarray:
    with no_grad():
        return np.asarray(fn(make(values), *args, **kwargs)._data)


def _valuewise(name: str):
    fn = _dense_fn(name)
    linear = name in _LINEAR

    def run(self, *args, **kwargs):
        if name == "pow" and args and not isinstance(args[0], Tensor) and args[0] == 0:
            raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would "
                               "make the result tensor dense")
        if name in ("div", "divide", "true_divide", "floor_divide") and args and \
                isinstance(args[0], Tensor) and args[0]._data.ndim:
            raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor "
                               f"divisor (got shape {list(args[0]._data.shape)} for divisor)")
        before = _GRAD_LAYOUTS.get(id(self))
        src = self if linear or _pattern(self)[2] else self.coalesce()
        if name in _ZERO_DERIVATIVE and before is None:  # (coalesce's sparse one is zero too)
            _GRAD_LAYOUTS[id(self)] = "zero"
        else:
            _note_grad_layout(self, "sparse")
        out = fn(_dense(src), *args, **kwargs)
        indices, values, coalesced = _pattern(src)
        return _refuse_backward(_finish(out, indices.copy(), _values_through(
            fn, values, *args, **kwargs), coalesced), name)

    run.__name__ = name
    return run


def _inplace(name: str):
    base = _valuewise(name[:-1])

    def run(self, *args, **kwargs):
        if self._requires_grad or self._grad_fn is not None:
            raise NotImplementedError(f"torch.Tensor.{name} of a sparse tensor that requires "
                                      "grad is not supported by gradcli")
        res = base(self, *args, **kwargs)
        if res._data.dtype != self._data.dtype:
            raise RuntimeError(f"result type {_word(res.dtype)} can't be cast to the desired "
                               f"output type {_word(self.dtype)}")
        self._data = res._data
        indices, values, coalesced = _pattern(res)
        _attach(self, indices, values, coalesced and name != "mul_")  # (as PyTorch flags it)
        self._vc[0] += 1
        return self

    run.__name__ = name
    return run


def _word(dtype) -> str:
    from ..tensor import _type_word

    return _type_word(dtype)


def _converting(target):
    """float(), double(), long()... and to(dtype): the values converted (ToCopyBackward0);
    the tensor itself when the dtype is already that."""
    def run(self, *args, **kwargs):
        dtype = target or _dtype_arg(args, kwargs)
        if dtype is None or dtype == self.dtype:
            return self
        to = _DENSE["Tensor.to"]
        out = to(_dense(self), dtype)
        indices, values, coalesced = _pattern(self)
        _note_grad_layout(self, "sparse")
        return _finish(out, indices.copy(), np.asarray(to(make(values), dtype)._data),
                       coalesced)
    return run


def _dtype_arg(args, kwargs):
    for a in (*args, kwargs.get("dtype")):
        if isinstance(a, dtypes.dtype):
            return a
    return None


def _binary(name: str):
    """add/sub/mul of two sparse tensors (or a sparse and a dense one for mul), a sparse
    tensor by a scalar for mul/div."""
    fn = _dense_fn(name)
    scalar = _valuewise(name) if name in ("mul", "multiply", "div", "divide", "true_divide",
                                          "floor_divide") else None

    def run(self, other, *args, **kwargs):
        other_sparse = isinstance(other, SparseCOO)
        if name in ("add", "sub", "subtract"):
            if not other_sparse:
                raise RuntimeError(_ADD_DENSE)
            return _union(fn, self, other, *args, **kwargs)
        if other_sparse:
            if name in ("mul", "multiply"):
                return _intersection(fn, self, other)
            raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor "
                               f"divisor (got shape {list(other._data.shape)} for divisor)")
        if isinstance(other, Tensor) and other._data.ndim and name in ("mul", "multiply"):
            return _masked_product(fn, self, other)
        return scalar(self, other, *args, **kwargs)

    run.__name__ = name
    return run


def _union(fn, a, b, *args, **kwargs):
    _check_same_size(a, b)
    _note_grad_layout(a, "sparse")
    _note_grad_layout(b, "sparse")
    out = fn(_dense(a), _dense(b), *args, **kwargs)
    ia, va, ca = _pattern(a)
    ib, vb, cb = _pattern(b)
    if ca and cb and ia.shape[0] == ib.shape[0]:  # (both coalesced: the sorted union)
        sparse_shape = a._data.shape[:ia.shape[0]]
        mask = _mask(a).reshape(sparse_shape) | _mask(b).reshape(sparse_shape)
        indices = np.array(np.nonzero(mask), np.int64).reshape(ia.shape[0], -1)
        return _finish(out, indices, out._data[tuple(indices)].copy(), True)
    if ia.shape == ib.shape and np.array_equal(ia, ib):  # (the same entries: values added)
        with no_grad():
            values = np.asarray(fn(make(va), make(vb), *args, **kwargs)._data)
        return _finish(out, ia.copy(), values, ca and cb)
    with no_grad():  # (the entries one after the other, uncoalesced)
        vb = np.asarray(fn(make(np.zeros_like(vb)), make(vb), *args, **kwargs)._data)
    return _finish(out, np.concatenate([ia, ib], 1), np.concatenate([va, vb.astype(
        out._data.dtype)]).astype(out._data.dtype), False)


def _check_same_size(a, b):
    if a._data.shape != b._data.shape:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(a._data.shape)} but other has size "
                           f"{list(b._data.shape)} (FYI: dense-sparse addition does not "
                           "currently support broadcasting)")


def _intersection(fn, a, b):
    _note_grad_layout(a, "sparse")
    _note_grad_layout(b, "sparse")
    a2 = a if _pattern(a)[2] else a.coalesce()
    b2 = b if _pattern(b)[2] else b.coalesce()
    out = fn(_dense(a2), _dense(b2))
    both = (_mask(a2) & _mask(b2)).reshape(a._data.shape[:_pattern(a2)[0].shape[0]])
    indices = np.array(np.nonzero(both), np.int64).reshape(both.ndim, -1)
    return _finish(out, indices, out._data[tuple(indices)].copy(), True)


def _masked_product(fn, s, d):
    """sparse * dense (or dense * sparse): the sparse tensor's pattern, its values times
    the dense entries there."""
    src = s if _pattern(s)[2] else s.coalesce()
    _note_grad_layout(s, "sparse")
    out = fn(_dense(src), d)
    indices = _pattern(src)[0].copy()
    return _finish(out, indices, out._data[tuple(indices)].copy(), True)


def _dense_first_mul(fn):
    def run(input, other, *args, **kwargs):
        if isinstance(other, SparseCOO) and isinstance(input, Tensor) and input._data.ndim:
            return _masked_product(lambda s, d: fn(d, s), other, input)
        return fn(input, other, *args, **kwargs)
    return run


# ------------------------------------------------------------------ shapes


def _permuted(name: str):
    fn = _dense_fn(name)

    def run(self, *args, **kwargs):
        out = fn(_dense(self), *args, **kwargs)  # (TBackward0, TransposeBackward0, PermuteBackward0)
        indices, values, _ = _pattern(self)
        sparse_dim = indices.shape[0]
        ndim = self._data.ndim
        if name == "t":
            order = list(range(ndim))[::-1]
        elif name in ("transpose", "swapaxes", "swapdims"):
            d0, d1 = (_wrap(int(a), ndim) for a in _dims(args, kwargs, ("dim0", "dim1")))
            order = list(range(ndim))
            order[d0], order[d1] = order[d1], order[d0]
        else:
            dims = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else \
                (args or kwargs.get("dims"))
            order = [_wrap(int(d), ndim) for d in dims]
        if any(order[d] >= sparse_dim for d in range(sparse_dim)) or \
                any(order[d] < sparse_dim for d in range(sparse_dim, ndim)):
            raise RuntimeError("transpose(): a sparse dim with a dense dim is not supported by "
                               "gradcli")
        _note_grad_layout(self, "sparse")
        perm = order[:sparse_dim]
        moved_values = np.transpose(values, [0] + [d - sparse_dim + 1 for d in order[sparse_dim:]])
        return _finish(out,
                       indices[perm].copy(), moved_values.copy(), False)

    return run


def _dims(args, kwargs, names):
    return list(args) + [kwargs[n] for n in names[len(args):]]


def _wrap(d: int, ndim: int) -> int:
    if not -max(ndim, 1) <= d < max(ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {d})")
    return d % max(ndim, 1)


def _unsqueeze(self, dim):
    ndim = self._data.ndim
    if not -ndim - 1 <= dim <= ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim - 1}, "
                         f"{ndim}], but got {dim})")
    dim = dim % (ndim + 1)
    indices, values, coalesced = _pattern(self)
    sparse_dim = indices.shape[0]
    out = _dense_fn("unsqueeze")(_dense(self), dim)
    _note_grad_layout(self, "sparse")
    if dim <= sparse_dim:
        new = np.insert(indices, dim, 0, axis=0)
        return _refuse_backward(_finish(out, new, values.copy(), False), "unsqueeze")
    return _finish(out, indices.copy(), np.expand_dims(values, dim - sparse_dim + 1), coalesced)


def _narrow_copy(self, dim, start, length):
    ndim = self._data.ndim
    dim = _wrap(int(dim), ndim)
    indices, values, coalesced = _pattern(self)
    _DENSE["narrow"](self, dim, start, length)  # (PyTorch's checks and messages)
    start = start % self._data.shape[dim] if start < 0 else start
    out = run_unary(NARROW_COPY, _dense(self), (dim, int(start), int(length), self._data.shape))
    _note_grad_layout(self, "sparse")
    if dim < indices.shape[0]:
        keep = (indices[dim] >= start) & (indices[dim] < start + length)
        new = indices[:, keep].copy()
        new[dim] -= start
        return _refuse_backward(_finish(out, new, values[keep].copy(), coalesced),
                                "narrow_copy")
    cut = [slice(None)] * values.ndim
    cut[dim - indices.shape[0] + 1] = slice(start, start + length)
    return _finish(out, indices.copy(), values[tuple(cut)].copy(), coalesced)


def _index_select(self, dim, index):
    ndim = self._data.ndim
    dim = _wrap(int(dim), ndim)
    indices, values, _ = _pattern(self)
    out = _dense_fn("index_select")(_dense(self), dim, index)
    _note_grad_layout(self, "sparse")
    picks = np.asarray(index._data).reshape(-1)
    if dim >= indices.shape[0]:
        return _finish(out, indices.copy(), np.take(values, picks, dim - indices.shape[0] + 1),
                       False)
    cols, vals = [], []
    for new, old in enumerate(picks):
        hit = indices[dim] == old
        part = indices[:, hit].copy()
        part[dim] = new
        cols.append(part)
        vals.append(values[hit])
    return _refuse_backward(_finish(out, np.concatenate(cols, 1).reshape(indices.shape[0], -1),
                                    np.concatenate(vals).reshape((-1,) + values.shape[1:]),
                                    False), "index_select")


def _select(self, dim, index):
    ndim = self._data.ndim
    dim = _wrap(int(dim), ndim)
    indices, values, coalesced = _pattern(self)
    out = _dense_fn("select")(_dense(self), dim, index)
    _note_grad_layout(self, "sparse")
    index = index % self._data.shape[dim] if index < 0 else index
    if dim >= indices.shape[0]:
        return _finish(out, indices.copy(), np.take(values, index, dim - indices.shape[0] + 1),
                       coalesced)
    hit = indices[dim] == index
    new = np.delete(indices[:, hit], dim, axis=0)
    return _refuse_backward(_finish(out, new, values[hit].copy(), int(hit.sum()) <= 1),
                            "select")


def _getitem(self, key):
    if isinstance(key, int) and not isinstance(key, bool):
        return _dense_if_0d(_select(self, 0, key))
    if isinstance(key, tuple) and all(
            (isinstance(k, int) and not isinstance(k, bool)) or k == slice(None) for k in key) \
            and len(key) <= self._data.ndim:
        out, dim = self, 0
        for k in key:
            if k == slice(None):
                dim += 1
            else:
                out = _dense_if_0d(_select(out, dim, k))
        return out
    raise NotImplementedError("indexing a sparse tensor other than by one integer is not "
                              "supported by gradcli")


def _dense_if_0d(t):
    """A 0-d result of indexing is a dense tensor in PyTorch."""
    if isinstance(t, SparseCOO) and t._data.ndim == 0:
        t.__class__ = Tensor
    return t


def _cat(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    for pos, t in enumerate(tensors):
        if not isinstance(t, SparseCOO):
            raise RuntimeError(f"Concatenating sparse tensors, but a dense tensor was found at "
                               f"position {pos}.")
    first = tensors[0]
    ndim = first._data.ndim
    dim = _wrap(int(dim), ndim)
    result = _DENSE["torch.cat"]([_dense(t) for t in tensors], dim)
    cols, vals, offset = [], [], 0
    for t in tensors:
        indices, values, _ = _pattern(t)
        _note_grad_layout(t, "sparse")
        if dim < indices.shape[0]:
            moved = indices.copy()
            moved[dim] += offset
            cols.append(moved)
            vals.append(values)
        offset += t._data.shape[dim]
    if dim >= _pattern(first)[0].shape[0]:
        raise NotImplementedError("cat of sparse tensors along a dense dim is not supported by "
                                  "gradcli")
    return _refuse_backward(_finish(result, np.concatenate(cols, 1), np.concatenate(vals),
                                    False), "cat")


def _stack(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    for pos, t in enumerate(tensors):
        if not isinstance(t, SparseCOO):
            raise RuntimeError(f"Concatenating sparse tensors, but a dense tensor was found at "
                               f"position {pos}.")
    ndim = tensors[0]._data.ndim + 1
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    dim %= ndim
    result = _DENSE["torch.stack"]([_dense(t) for t in tensors], dim)
    cols, vals = [], []
    for k, t in enumerate(tensors):
        indices, values, _ = _pattern(t)
        _note_grad_layout(t, "sparse")
        cols.append(np.insert(indices, dim, k, axis=0))
        vals.append(values)
    return _finish(result, np.concatenate(cols, 1), np.concatenate(vals), False)


def _clone(self, *, memory_format=None):
    out = _dense_fn("clone")(_dense(self))
    indices, values, coalesced = _pattern(self)
    _note_grad_layout(self, "sparse")
    return _finish(out, indices.copy(), values.copy(), coalesced)


def _on_dense(fn, name: str = ""):
    """A function of a sparse tensor whose result is dense (norm, any)."""
    def run(self, *args, **kwargs):
        return _refuse_backward(fn(_dense(self), *args, **kwargs), name)
    return run


def _sum_function(input, *args, **kwargs):
    return input.sum(*args, **kwargs)


def _any(self, *args, **kwargs):
    return _dense_fn("any")(_dense(self), *args, **kwargs)


# ------------------------------------------------------------------ refusals


def _refusing(name: str):
    op = _REFUSED.get(name)

    def run(self, *args, **kwargs):
        if name in _COMPARED:
            other = args[0] if args else kwargs.get("other")
            base = _ALIASES.get(name, name)
            raise _could_not_run(f"{base}.Tensor" if isinstance(other, Tensor) else
                                 f"{base}.Scalar")
        if name in ("remainder", "fmod"):
            raise _could_not_run(f"{name}.Tensor")
        if name in _RESHAPING:
            raise RuntimeError("reshape is not implemented for sparse tensors")
        if name in _CONTIGUOUS:
            raise RuntimeError("unsupported memory format option Contiguous")
        if name in _EXPANDING:
            raise RuntimeError("expand is unsupported for Sparse tensors")
        raise _could_not_run(op)

    run.__name__ = name
    return run


_REFUSING_NAMES = (set(_REFUSED) | _COMPARED | _RESHAPING | _CONTIGUOUS | _EXPANDING
                   | {"remainder", "fmod"})

#: dense functions as they were before install() wrapped them (by public name)
_DENSE: dict = {}
#: Tensor method name -> function(self, ...) for a sparse tensor
METHODS: dict = {}
#: operators of a sparse tensor -> function(self, other)
OPERATORS: dict = {}


def _build_methods() -> None:
    for name in _VALUEWISE:
        METHODS[name] = _valuewise(name)
    for name in _INPLACE:
        if hasattr(Tensor, name):
            METHODS[name] = _inplace(name)
    METHODS["zero_"] = _zero
    for name in ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide"):
        METHODS[name] = _binary(name)
    METHODS["floor_divide"] = _valuewise("floor_divide")
    for name, target in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                         ("bfloat16", "bfloat16"), ("long", "int64"), ("int", "int32"),
                         ("short", "int16"), ("char", "int8"), ("byte", "uint8"),
                         ("bool", "bool")):
        METHODS[name] = _converting(getattr(dtypes, "bool_" if target == "bool" else target))
    METHODS["to"] = METHODS["type"] = _converting(None)
    for name in ("t", "transpose", "swapaxes", "swapdims", "permute"):
        METHODS[name] = _permuted(name)
    METHODS["unsqueeze"] = _unsqueeze
    METHODS["narrow_copy"] = _narrow_copy
    METHODS["index_select"] = _index_select
    METHODS["select"] = _select
    METHODS["clone"] = _clone
    METHODS["positive"] = METHODS["conj"] = METHODS["resolve_conj"] = \
        METHODS["resolve_neg"] = lambda self: self
    METHODS["any"] = _any
    METHODS["norm"] = _on_dense(_dense_fn("norm"), "norm")
    METHODS["unbind"] = _unbind
    for name in _REFUSING_NAMES:
        METHODS.setdefault(name, _refusing(name))
    OPERATORS.update({
        "__add__": METHODS["add"], "__sub__": METHODS["sub"], "__mul__": METHODS["mul"],
        "__rmul__": METHODS["mul"], "__truediv__": METHODS["div"],
        "__floordiv__": METHODS["floor_divide"], "__pow__": METHODS["pow"],
        "__neg__": METHODS["neg"], "__abs__": METHODS["abs"], "__pos__": lambda self: self,
        "__getitem__": _getitem,
        "__radd__": _reflected("add"), "__rsub__": _reflected("sub"),
        "__rtruediv__": lambda self, other: (_ for _ in ()).throw(_could_not_run("reciprocal")),
        "__rpow__": lambda self, other: (_ for _ in ()).throw(_could_not_run("pow.Scalar")),
        "__eq__": _refusing("eq"), "__ne__": _refusing("ne"), "__lt__": _refusing("lt"),
        "__le__": _refusing("le"), "__gt__": _refusing("gt"), "__ge__": _refusing("ge"),
    })


def _reflected(name: str):
    """dense + sparse, dense - sparse: a dense result (PyTorch's add(dense, sparse)); a
    number + sparse is refused as sparse + dense."""
    def run(self, other):
        if not isinstance(other, Tensor):
            raise RuntimeError(_ADD_DENSE)
        return _dense_fn(name)(other, _dense(self))
    return run


def _zeros_like(input, *args, **kwargs):
    """zeros_like of a sparse tensor: sparse, with no entries."""
    out = _DENSE["torch.zeros_like"](input, *args, **kwargs)
    indices = _pattern(input)[0]
    values_shape = (0,) + input._data.shape[indices.shape[0]:]
    return _finish(out, np.zeros((indices.shape[0], 0), np.int64),
                   np.zeros(values_shape, out._data.dtype), True)


def _unbind(self, dim=0):
    return tuple(_select(self, dim, i) for i in range(self._data.shape[_wrap(int(dim),
                                                                               self._data.ndim)]))


def _hstack(tensors, *, out=None):
    tensors = list(tensors)
    return _cat(tensors, 1 if tensors and tensors[0]._data.ndim > 1 else 0)


def _vstack(tensors, *, out=None):
    return _cat(list(tensors), 0)


def _zero(self):
    if self._requires_grad or self._grad_fn is not None:
        raise NotImplementedError("torch.Tensor.zero_ of a sparse tensor that requires grad is "
                                  "not supported by gradcli")
    self._data = np.zeros_like(self._data)
    empty = np.zeros((_pattern(self)[0].shape[0], 0), np.int64)
    _attach(self, empty, np.zeros((0,) + _pattern(self)[1].shape[1:], self._data.dtype), True)
    self._vc[0] += 1
    return self


def _routing(public_name: str, dense, sparse, first_is_list: bool = False):
    """torch.NAME: the sparse function for a sparse first argument, else the dense one."""
    if first_is_list:
        def routed(tensors, *args, **kwargs):
            if isinstance(tensors, (list, tuple)) and any(
                    t.__class__ is SparseCOO for t in tensors):
                return sparse(tensors, *args, **kwargs)
            return dense(tensors, *args, **kwargs)
    else:
        def routed(*args, **kwargs):
            if (args[0] if args else kwargs.get("input")).__class__ is not SparseCOO:
                return dense(*args, **kwargs)
            if not args:
                args = (kwargs.pop("input"),)
            return sparse(*args, **kwargs)
    routed.__name__ = getattr(dense, "__name__", public_name)
    routed.__qualname__ = getattr(dense, "__qualname__", public_name)
    routed.__doc__ = dense.__doc__
    routed.__wrapped__ = dense
    return routed


def _coo_only(name: str, fn):
    """An operator of a COO tensor (a CSR matrix, its subclass, refuses it as before)."""
    def operator(self, *args):
        if self.__class__ is not SparseCOO:
            raise NotImplementedError(f"torch.Tensor.{name} of a sparse tensor is not "
                                      "supported by gradcli")
        return fn(self, *args)
    operator.__name__ = name
    return operator


def install() -> None:
    """Wrap the torch.* functions that answer a sparse tensor differently (called once the
    op table and its other wrappers are in place: ops/__init__)."""
    for name in ("torch.cat", "torch.stack", "Tensor.to", "torch.zeros_like"):
        _DENSE[name] = PUBLIC[name]
    for name in set(_VALUEWISE) | _LINEAR | {"unsqueeze", "narrow_copy", "index_select", "norm",
                                             "select", "clone", "any", "add", "sub",
                                             "subtract", "t", "transpose", "swapaxes",
                                             "swapdims", "permute"} | _REFUSING_NAMES:
        fn = getattr(Tensor, name, None)
        if fn is not None:
            _DENSE.setdefault(name, fn)
    _build_methods()
    from .sparse_coo import SPARSE_METHODS

    SPARSE_METHODS.update(METHODS)
    SPARSE_METHODS.update(OPERATORS)
    for name, sparse in METHODS.items():
        full = f"torch.{name}"
        dense = PUBLIC.get(full)
        # (torch.float, torch.bfloat16... are dtypes, not the conversion methods' functions)
        if callable(dense) and not name.endswith("_"):
            if name in ("mul", "multiply"):
                dense = _dense_first_mul(dense)
            PUBLIC[full] = _routing(full, dense, sparse)
    PUBLIC["torch.sum"] = _routing("torch.sum", PUBLIC["torch.sum"], _sum_function)
    PUBLIC["torch.cat"] = _routing("torch.cat", PUBLIC["torch.cat"], _cat, True)
    PUBLIC["torch.zeros_like"] = _routing("torch.zeros_like", PUBLIC["torch.zeros_like"],
                                          _zeros_like)
    PUBLIC["torch.hstack"] = _routing("torch.hstack", PUBLIC["torch.hstack"], _hstack, True)
    PUBLIC["torch.vstack"] = _routing("torch.vstack", PUBLIC["torch.vstack"], _vstack, True)
    for name in ("torch.nn.functional.softmax", "torch.nn.functional.log_softmax"):
        if name in PUBLIC:
            PUBLIC[name] = _routing(name, PUBLIC[name], _refusing(name.rsplit(".", 1)[1]))
    for name in ("torch.concat", "torch.concatenate"):
        if name in PUBLIC:
            PUBLIC[name] = _routing(name, PUBLIC[name], _cat, True)
    for name, fn in OPERATORS.items():
        setattr(SparseCOO, name, _coo_only(name, fn))
    PUBLIC["torch.stack"] = _routing("torch.stack", PUBLIC["torch.stack"], _stack, True)
