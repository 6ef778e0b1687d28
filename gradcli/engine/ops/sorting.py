"""Sorting and order statistics (issue 24, group 3): sort argsort msort topk kthvalue
median nanmedian mode cummax cummin logcumsumexp aminmax.

The values come with their indices (int64, no gradient); a value's gradient goes back to
the element it was taken from (PyTorch's value_selecting_reduction_backward: a scatter of
the gradient at the indices), so each op is one table entry plus its entry point.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..node import keep_given
from ..tensor import Tensor, _type_word, _wrap_dim, make
from .reductions import RETURN_TYPES, return_type
from .registry import defop, public, run_unary


def _pair_type(kind: str, first: str = "values", second: str = "indices"):
    """torch.return_types.KIND: a (values, indices) pair, as max/min's."""
    if first == "values":
        cls = type(kind, (return_type,), {"__slots__": (), "__module__": "torch.return_types",
                                           "__new__": tuple.__new__})
    else:
        def field(i):
            return property(lambda self: self[i])

        def __repr__(self):
            return (f"torch.return_types.{kind}(\n{first}={self[0]!r},\n{second}={self[1]!r})")

        cls = type(kind, (tuple,), {"__slots__": (), "__module__": "torch.return_types",
                                    first: field(0), second: field(1), "__repr__": __repr__,
                                    "__str__": __repr__})
    RETURN_TYPES[kind] = cls
    return cls


SORT_T = _pair_type("sort")
TOPK_T = _pair_type("topk")
KTHVALUE_T = _pair_type("kthvalue")
MEDIAN_T = _pair_type("median")
NANMEDIAN_T = _pair_type("nanmedian")
MODE_T = _pair_type("mode")
CUMMAX_T = _pair_type("cummax")
CUMMIN_T = _pair_type("cummin")
AMINMAX_T = _pair_type("aminmax", "min", "max")


def _values_op(name: str, node: str, rule: str, call: str):
    """An op whose forward returns precomputed values (meta: dim, indices, keepdim, shape);
    its backward scatters the gradient to where the values came from."""

    def forward(a, dim, indices, keepdim, shape, values):
        return values

    def backward(c, g):
        dim, indices, keepdim, shape, _ = c.meta
        if not keepdim and len(shape):
            g = g.unsqueeze(dim)
            indices = np.expand_dims(indices, dim)
        from . import indexing

        if not len(shape):
            return (g.reshape(()),)
        zeros = make(np.zeros(shape, dtype=g._data.dtype))
        return (indexing.scatter(zeros, dim, make(indices), g),)

    return defop(name, node, forward, backward, rule, save="meta", torch_call=call)


def _values_add_op(name: str, node: str, rule: str, call: str):
    """As _values_op, with the gradient added where indices repeat (cummax/cummin)."""

    def forward(a, dim, indices, keepdim, shape, values):
        return values

    def backward(c, g):
        dim, indices, keepdim, shape, _ = c.meta
        from . import indexing

        if not len(shape):
            return (g.reshape(()),)
        zeros = make(np.zeros(shape, dtype=g._data.dtype))
        return (indexing.scatter_add(zeros, dim, make(indices), g),)

    return defop(name, node, forward, backward, rule, save="meta", torch_call=call)


SORT = _values_op("sort", "SortBackward0", "d sort(a)/da: the gradient back to each value's place",
                  "torch.sort(a, 0)[0] if a.dim() else torch.sort(a)[0]")
SORT_STABLE = _values_op("sort_stable", "SortBackward1",
                         "d sort(a, stable=)/da: the gradient back to each value's place",
                         "torch.sort(a.reshape(-1), stable=True)[0]")
TOPK = _values_op("topk", "TopkBackward0", "d topk(a)/da: the gradient to the chosen elements",
                  "torch.topk(a.reshape(-1), 1)[0]")
KTHVALUE = _values_op("kthvalue", "KthvalueBackward0", "d kthvalue(a)/da: to the chosen element",
                      "torch.kthvalue(a.reshape(-1), 1)[0]")
MEDIAN_DIM = _values_op("median_dim", "MedianBackward1", "d median(a, dim)/da: to the median",
                        "torch.median(a.reshape(-1), 0)[0]")
NANMEDIAN_DIM = _values_op("nanmedian_dim", "NanmedianBackward1",
                           "d nanmedian(a, dim)/da: to the median",
                           "torch.nanmedian(a.reshape(-1), 0)[0]")
MODE = _values_op("mode", "ModeBackward0", "d mode(a, dim)/da: to the chosen element",
                  "torch.mode(a.reshape(-1).round(), 0)[0]")
CUMMAX = _values_add_op("cummax", "CummaxBackward0", "d cummax(a)/da: to each running maximum",
                        "torch.cummax(a.reshape(-1), 0)[0]")
CUMMIN = _values_add_op("cummin", "CumminBackward0", "d cummin(a)/da: to each running minimum",
                        "torch.cummin(a.reshape(-1), 0)[0]")


def _check_tensor(fname, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")


def _dim(input, dim):
    return _wrap_dim(dim, max(input._data.ndim, 1))


def _run_values(op, input, dim, indices, keepdim, values, given=None):
    values = np.array(values, copy=True, order="C")
    res = run_unary(op, input, (dim, indices, keepdim, input._data.shape, values))
    return res if given is None else keep_given(res, op, given)  # (the dim as the call gave it)


def _sort_arrays(d, dim, descending, stable=True):
    if d.ndim == 0:
        return d.copy(), np.zeros((), np.int64)
    key = d
    if descending:
        # descending, stable, nan first (PyTorch sorts nan as the largest)
        order = np.flip(np.argsort(np.flip(key, dim), axis=dim, kind="stable"), dim)
        order = d.shape[dim] - 1 - order
    else:
        order = np.argsort(key, axis=dim, kind="stable")
    order = order.astype(np.int64)
    if not stable and d.shape[dim] > 16 and not _radix_sorted(d, descending):
        from .std_sort import unstable_sort_rows  # (ties: the order std::sort leaves them in)

        order = np.moveaxis(unstable_sort_rows(np.moveaxis(d, dim, -1),
                                               np.moveaxis(order, dim, -1), descending), -1, dim)
    return np.take_along_axis(d, order, axis=dim), order


def _radix_sorted(d, descending: bool) -> bool:
    """PyTorch sorts long 1-d integer tensors with a stable radix sort instead."""
    return d.ndim == 1 and d.size >= 32768 and d.dtype.kind in "iu" and not descending


@public("torch.sort", "Tensor.sort")
def sort(input, dim=-1, descending=False, stable=None):
    _check_tensor("sort", input)
    if isinstance(dim, bool):  # sort(input, *, stable, dim, descending)
        dim, descending = -1, dim
    given, dim = dim, _dim(input, dim)
    values, order = _sort_arrays(input._data, dim, bool(descending), bool(stable))
    op = SORT if stable is None else SORT_STABLE  # the sort.stable overload: SortBackward1
    return SORT_T((_run_values(op, input, dim, order, True, values, given), make(order)))


@public("torch.argsort", "Tensor.argsort")
def argsort(input, dim=-1, descending=False, stable=False):
    _check_tensor("argsort", input)
    dim = _dim(input, dim)
    return make(_sort_arrays(input._data, dim, bool(descending), bool(stable))[1])


@public("torch.msort", "Tensor.msort")
def msort(input):
    return sort(input, 0)[0]


@public("torch.topk", "Tensor.topk")
def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    _check_tensor("topk", input)
    d = input._data
    given, dim = dim, _dim(input, dim)
    size = d.shape[dim] if d.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    values, order = _sort_arrays(d, dim, bool(largest))
    if d.ndim:
        order = np.take(order, np.arange(k), axis=dim)
        values = np.take(values, np.arange(k), axis=dim)
        if k and k * 64 > size and k - 1 <= 16 and size <= _SELECT_MAX:
            _topk_ties(d, dim, k, bool(largest), bool(sorted), values, order)
    return TOPK_T((_run_values(TOPK, input, dim, order, True, values, given), make(order)))


def _topk_ties(d, dim, k, largest, sorted_, values, order):
    """Rows holding equal values (-0. and 0. included), and every row when not sorted: the
    elements PyTorch's CPU topk returns, in its order, which for k * 64 > n is libstdc++'s nth_element (an introselect with a
    median-of-three pivot, an insertion sort at the end) and then a sort of the first k - 1
    (_nth_element); written into values and order (moved to the last axis)."""
    n = d.shape[dim]
    rows = np.moveaxis(d, dim, -1).reshape(-1, n)
    vals = np.moveaxis(values, dim, -1).reshape(-1, k)
    idxs = np.moveaxis(order, dim, -1).reshape(-1, k)
    for r, row in enumerate(rows):
        if not sorted_ or len(np.unique(row)) < n:  # (unsorted: the selection's own order)
            picked = _nth_element(row.tolist(), k, largest, sorted_)
            if picked is not None:
                vals[r] = [v for v, _ in picked]
                idxs[r] = [i for _, i in picked]
    values[...] = np.moveaxis(vals.reshape(np.moveaxis(values, dim, -1).shape), -1, dim)
    order[...] = np.moveaxis(idxs.reshape(np.moveaxis(order, dim, -1).shape), -1, dim)


def _nth_element(row: list, k: int, largest: bool, sorted_: bool):
    """The first k (value, index) pairs after std::nth_element(begin, begin + k - 1, end)
    with PyTorch's comparator (nan before numbers when largest, after them otherwise),
    then std::sort of the first k - 1 when sorted (an insertion sort below 16 elements);
    None where libstdc++ would fall back to a heap select (not written here)."""
    q = [(v, i) for i, v in enumerate(row)]

    if largest:
        def before(x, y):
            return (x[0] != x[0] and y[0] == y[0]) or x[0] > y[0]
    else:
        def before(x, y):
            return (x[0] == x[0] and y[0] != y[0]) or x[0] < y[0]

    def insertion_sort(first, last):
        for i in range(first + 1, last):
            val = q[i]
            if before(val, q[first]):
                q[first + 1:i + 1] = q[first:i]
                q[first] = val
            else:
                j = i
                while before(val, q[j - 1]):
                    q[j] = q[j - 1]
                    j -= 1
                q[j] = val

    def median_to_first(result, a, b, c):
        if before(q[a], q[b]):
            pick = b if before(q[b], q[c]) else (c if before(q[a], q[c]) else a)
        elif before(q[a], q[c]):
            pick = a
        else:
            pick = c if before(q[b], q[c]) else b
        q[result], q[pick] = q[pick], q[result]

    def partition(first, last, pivot):
        while True:
            while before(q[first], q[pivot]):
                first += 1
            last -= 1
            while before(q[pivot], q[last]):
                last -= 1
            if not first < last:
                return first
            q[first], q[last] = q[last], q[first]
            first += 1

    first, last, nth = 0, len(q), k - 1
    depth = 2 * (len(q).bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            return None
        depth -= 1
        median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
        cut = partition(first + 1, last, first)
        if cut <= nth:
            first = cut
        else:
            last = cut
    insertion_sort(first, last)
    if sorted_:
        insertion_sort(0, k - 1)
    return q[:k]


def _kth(d, dim, k):
    """The k-th smallest (1-based) along dim, and its index (nan counts as the largest).
    Where a row holds equal values (-0. and 0. included), which of them is returned is
    PyTorch's quickselect's choice (_select_tied); a row of distinct values has one answer."""
    values, order = _sort_arrays(d, dim, False)
    if d.ndim == 0:
        return values, order
    kth_values = np.array(np.take(values, k - 1, axis=dim))  # (arrays: written through below)
    kth_order = np.array(np.take(order, k - 1, axis=dim))
    n = d.shape[dim]
    if 1 < n <= _SELECT_MAX:
        rows = np.moveaxis(d, dim, -1).reshape(-1, n)
        flat_v, flat_i = kth_values.reshape(-1), kth_order.reshape(-1)
        for r, row in enumerate(rows):
            if len(np.unique(row)) < n:
                flat_v[r], flat_i[r] = _select_tied(row.tolist(), k - 1)
    return kth_values, kth_order


#: rows longer than this keep the sort's choice among ties (a select in Python is O(n))
_SELECT_MAX = 4096


def _select_tied(arr: list, k: int):
    """(value, index) of the k-th smallest (0-based) by PyTorch's CPU kthvalue: a
    median-of-three quickselect that moves the elements (and their indices) in place, so
    among equal elements the one it lands on at position k is returned."""
    idx = list(range(len(arr)))

    def above(x, y):  # x > y, a nan above every number
        return (x != x and y == y) or x > y

    def swap(a, b):
        arr[a], arr[b] = arr[b], arr[a]
        idx[a], idx[b] = idx[b], idx[a]

    lo, hi = 0, len(arr) - 1
    while hi > lo:
        if hi == lo + 1:
            if above(arr[lo], arr[hi]):
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)
        if above(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if above(arr[lo], arr[hi]):
            swap(lo, hi)
        if above(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while above(pivot, arr[i]):
                i += 1
            j -= 1
            while above(arr[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return arr[k], idx[k]


@public("torch.kthvalue", "Tensor.kthvalue")
def kthvalue(input, k, dim=-1, keepdim=False):
    _check_tensor("kthvalue", input)
    d = input._data
    given, dim = dim, _dim(input, dim)
    size = d.shape[dim] if d.ndim else 1
    if size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {dim} to have non-zero size.")
    if not 1 <= k <= size:
        raise IndexError(f"kthvalue(): selected number k out of range for dimension {dim}")
    values, order = _kth(d, dim, k)
    return _keep(KTHVALUE_T, KTHVALUE, input, dim, order, values, keepdim, given)


def _keep(kind, op, input, dim, order, values, keepdim, given=None):
    if keepdim and input._data.ndim:
        order = np.expand_dims(order, dim)
        values = np.expand_dims(values, dim)
    out = _run_values(op, input, dim, np.asarray(order, np.int64), bool(keepdim), values, given)
    return kind((out, make(np.asarray(order, np.int64))))


def _median_index(d, dim, ignore_nan):
    """(value, index) of the lower median along dim; nan propagates unless ignore_nan."""
    values, order = _sort_arrays(d, dim, False)
    if d.ndim == 0:
        return values, order
    n = d.shape[dim]
    if ignore_nan:
        count = n - np.isnan(d).sum(axis=dim, keepdims=True)
        k = np.where(count > 0, (count - 1) // 2, 0)
    else:
        has_nan = np.isnan(d).any(axis=dim, keepdims=True)
        k = np.where(has_nan, n - 1, (n - 1) // 2)
        if has_nan.any():  # the first nan's index, as PyTorch returns
            first_nan = np.argmax(np.isnan(d), axis=dim)
            k_v = np.take_along_axis(values, k, axis=dim).squeeze(dim)
            k_i = np.take_along_axis(order, k, axis=dim).squeeze(dim)
            k_i = np.where(np.isnan(k_v), first_nan, k_i)
            return k_v, k_i
    return (np.take_along_axis(values, k, axis=dim).squeeze(dim),
            np.take_along_axis(order, k, axis=dim).squeeze(dim))


def _evenly(c, g):
    """median()/nanmedian() of the whole tensor: the gradient shared by the elements equal
    to the result (PyTorch's evenly_distribute_backward)."""
    a = c.saved[0]
    result = c.result
    mask = (a == result) if not np.isnan(result._data) else a.isnan()
    count = mask.sum()
    return (mask.to(g.dtype) * (g / count),)


MEDIAN = defop("median", "MedianBackward0", lambda a, v: v, _evenly,
               "d median(a)/da: shared by the elements equal to the median",
               save="inputs,result", torch_call="torch.median(a)")
NANMEDIAN = defop("nanmedian", "NanmedianBackward0", lambda a, v: v, _evenly,
                  "d nanmedian(a)/da: shared by the elements equal to the median",
                  save="inputs,result", torch_call="torch.nanmedian(a)")


def _median(kind, op_all, op_dim, fname, input, dim, keepdim, ignore_nan):
    _check_tensor(fname, input)
    d = input._data
    if dim is None:
        if d.size == 0:  # (nan, with its node: the gradient is empty)
            return run_unary(op_all, input, (np.array(np.nan, d.dtype),))
        flat = d.reshape(-1)
        v, _ = _median_index(flat, 0, ignore_nan)
        return run_unary(op_all, input, (np.asarray(v, d.dtype),))
    given, dim = dim, _dim(input, dim)
    if d.ndim and d.shape[dim] == 0:  # (nanmedian's message names median() too)
        raise IndexError(f"median(): Expected reduction dim {dim} to have non-zero size.")
    values, order = _median_index(d, dim, ignore_nan)
    return _keep(kind, op_dim, input, dim, order, values, keepdim, given)


@public("torch.median", "Tensor.median")
def median(input, dim=None, keepdim=False):
    return _median(MEDIAN_T, MEDIAN, MEDIAN_DIM, "median", input, dim, keepdim, False)


@public("torch.nanmedian", "Tensor.nanmedian")
def nanmedian(input, dim=None, keepdim=False):
    return _median(NANMEDIAN_T, NANMEDIAN, NANMEDIAN_DIM, "nanmedian", input, dim, keepdim,
                   True)


@public("torch.mode", "Tensor.mode")
def mode(input, dim=-1, keepdim=False):
    _check_tensor("mode", input)
    d = input._data
    given, dim = dim, _dim(input, dim)
    if d.ndim == 0:
        return _keep(MODE_T, MODE, input, dim, np.zeros((), np.int64), d.copy(), keepdim, given)
    if d.shape[dim] == 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    moved = np.moveaxis(d, dim, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    vals = np.empty(flat.shape[0], d.dtype)
    idx = np.empty(flat.shape[0], np.int64)
    for r, row in enumerate(flat):
        uniq, counts = np.unique(row, return_counts=True)
        best = uniq[np.argmax(counts)]  # the smallest of the most frequent
        if row.size > 16:  # PyTorch: the last of best's run in std::sort's (unstable) order
            from .std_sort import order as std_order

            ranked = std_order(row.tolist(), lambda x, y: x < y)
            idx[r] = [i for i in ranked if row[i] == best][-1]
        else:  # (insertion sort: stable, so the last occurrence)
            idx[r] = np.nonzero(row == best)[0][-1]
        vals[r] = row[idx[r]]  # (and its value: 0. of a tie of -0. and 0. that ends in 0.)
    shape = moved.shape[:-1]
    return _keep(MODE_T, MODE, input, dim, idx.reshape(shape), vals.reshape(shape), keepdim, given)


def _cum_extreme(kind, op, fname, input, dim, better):
    _check_tensor(fname, input)
    d = input._data
    dim = _dim(input, dim)
    if d.ndim == 0:
        return kind((run_unary(op, input, (dim, np.zeros((), np.int64), True, d.shape, d.copy())),
                     make(np.zeros((), np.int64))))
    moved = np.moveaxis(d, dim, -1)
    vals = np.empty_like(moved)
    idx = np.empty(moved.shape, np.int64)
    best = moved[..., 0].copy() if moved.shape[-1] else None  # (an empty dim: empty results)
    at = np.zeros(moved.shape[:-1], np.int64)
    for j in range(moved.shape[-1]):
        x = moved[..., j]
        take = better(x, best) | np.isnan(x)
        take &= ~np.isnan(best) | np.isnan(x)
        best = np.where(take, x, best)
        at = np.where(take, j, at)
        vals[..., j] = best
        idx[..., j] = at
    vals = np.moveaxis(vals, -1, dim)
    idx = np.moveaxis(idx, -1, dim)
    out = run_unary(op, input, (dim, idx, True, d.shape, np.array(vals, order="C")))
    return kind((out, make(np.array(idx, order="C"))))


@public("torch.cummax", "Tensor.cummax")
def cummax(input, dim):
    return _cum_extreme(CUMMAX_T, CUMMAX, "cummax", input, dim, lambda x, b: x >= b)


@public("torch.cummin", "Tensor.cummin")
def cummin(input, dim):
    return _cum_extreme(CUMMIN_T, CUMMIN, "cummin", input, dim, lambda x, b: x <= b)


def _logcumsumexp_fwd(a, dim):
    # (+ 0.: PyTorch's running log-sum-exp of -0. is 0.)
    if a.ndim == 0:
        return a + a.dtype.type(0.0)
    return np.logaddexp.accumulate(a, axis=dim) + a.dtype.type(0.0)


def _logcumsumexp_grad(c, g):
    """d out_j/d x_i = exp(x_i - out_j) for j >= i: a reversed cumulative sum."""
    x = c.saved[0]
    out = c.result
    dim = c.meta[0]
    if x.dim() == 0:
        return (g,)
    with np.errstate(over="ignore"):
        plain = np.isfinite(np.exp(-out._data)).all() and np.isfinite(np.exp(x._data)).all()
    if plain:
        return ((g * (-out).exp()).flip(dim).cumsum(dim).flip(dim) * x.exp(),)
    # beyond exp's range: in log space, the positive and negative parts of g apart

    def part(gp):
        rev = logcumsumexp((gp.log() - out).flip(dim), dim).flip(dim)
        return (x + rev).exp()

    return (part(g.clamp_min(0)) - part((-g).clamp_min(0)),)


LOGCUMSUMEXP = defop("logcumsumexp", "LogcumsumexpBackward0", _logcumsumexp_fwd,
                     _logcumsumexp_grad, "d logcumsumexp(a)_j/da_i = exp(a_i - out_j), j >= i",
                     save="inputs,result", torch_call="torch.logcumsumexp(a.reshape(-1), 0)")


@public("torch.logcumsumexp", "Tensor.logcumsumexp")
def logcumsumexp(input, dim):
    _check_tensor("logcumsumexp", input)
    d = input._data
    array = d.astype(dtypes.get_default_dtype().np) if d.dtype.kind not in "fV" else None
    return run_unary(LOGCUMSUMEXP, input, (_dim(input, dim),), array)


def _aminmax_backward(c, g):
    """amin's or amax's gradient (PyTorch's AminmaxBackward0 for either output): shared
    evenly by the elements equal to the extreme."""
    a = c.saved[0]
    dims, keepdim = c.meta
    result = c.result
    if not keepdim and dims:
        for d in sorted(dims):
            result = result.unsqueeze(d)
            g = g.unsqueeze(d)
    mask = (a == result).to(g.dtype)
    count = mask.sum(dims, keepdim=True) if dims else mask.sum()
    return (mask * (g / count),)


def _extreme(np_fn):
    return lambda a, dims, keepdim: np_fn(a, axis=dims or None, keepdims=keepdim)


AMINMAX_MIN = defop("aminmax_min", "AminmaxBackward0", _extreme(np.amin), _aminmax_backward,
                    "d aminmax(a).min/da: shared by the minima", save="inputs,result",
                    torch_call="torch.aminmax(a)[0]")
AMINMAX_MAX = defop("aminmax_max", "AminmaxBackward0", _extreme(np.amax), _aminmax_backward,
                    "d aminmax(a).max/da: shared by the maxima", save="inputs,result",
                    torch_call="torch.aminmax(a)[1]")


@public("torch.aminmax", "Tensor.aminmax")
def aminmax(input, *, dim=None, keepdim=False):
    _check_tensor("aminmax", input)
    d = input._data
    if dim is None:
        dims = tuple(range(d.ndim))
        if d.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
    else:
        dims = (_dim(input, dim),)
        if d.ndim and d.shape[dims[0]] == 0:
            raise IndexError("aminmax(): Expected reduction dim " + str(dims[0])
                             + " to have non-zero size.")
        if not d.ndim:
            dims = ()
    meta = (dims, bool(keepdim))
    return AMINMAX_T((run_unary(AMINMAX_MIN, input, meta), run_unary(AMINMAX_MAX, input, meta)))


# ------------------------------------------------------------- searchsorted, bucketize

def _bound_indices(seq: np.ndarray, vals: np.ndarray, right: bool, sorter) -> np.ndarray:
    """Per row, the index where each value would go in that row of `seq` (rows: all but
    the last dim, the same for both), by ATen's binary search: move right while
    `!(mid >= v)` (left) or `!(mid > v)` (right), so a NaN value goes past the end and a
    NaN boundary counts as larger than every number."""
    n = seq.shape[-1]
    lo = np.zeros(vals.shape, dtype=np.int64)
    hi = np.full(vals.shape, n, dtype=np.int64)
    active = lo < hi
    with np.errstate(invalid="ignore"):
        while active.any():
            mid = (lo + hi) // 2
            at = np.minimum(mid, n - 1)
            if sorter is not None:
                at = np.take_along_axis(sorter, at, axis=-1)
            mid_val = np.take_along_axis(seq, at, axis=-1)
            go_right = ~(mid_val > vals) if right else ~(mid_val >= vals)
            lo = np.where(active & go_right, mid + 1, lo)
            hi = np.where(active & ~go_right, mid, hi)
            active = lo < hi
    return lo


def _sizes_text(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


@public("torch.searchsorted")
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, out=None,
                 sorter=None):
    """Indices that keep each row of `sorted_sequence` sorted if `input`'s values went in
    there (integers, never differentiable)."""
    name = "torch.searchsorted()"
    if out is not None:
        raise RuntimeError(f"{name}: out= is not supported by gradcli")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{name}: side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(f"{name}: side and right can't be set to opposites, got side of "
                               f"left while right was True")
        right = side == "right"
    seq = sorted_sequence._data
    if seq.ndim == 0:
        raise RuntimeError(f"{name}: boundaries tensor should have positive dimension, but got "
                           f"0 dimension")
    scalar = not isinstance(input, Tensor)
    vals = np.asarray(input) if scalar else input._data
    if scalar and seq.ndim != 1:
        raise RuntimeError(
            f"{name}: input value can be a scalar only when boundaries tensor dimension is 1, "
            f"but we got boundaries tensor dim({seq.ndim}) and input value's dim(0) numel(1)")
    if seq.ndim > 1 and (vals.ndim != seq.ndim or vals.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(
            f"{name}: boundaries tensor should be 1 dimension or the first N-1 dimensions of "
            f"boundaries tensor and input value tensor must match, but we got boundaries tensor "
            f"{_sizes_text(seq.shape)} and input value tensor {_sizes_text(vals.shape)}")
    order = None
    if sorter is not None:
        if sorter._data.dtype != np.int64:
            raise RuntimeError(f"{name}: sorter must be a tensor of long dtype but got dtype "
                               f"{_type_word(dtypes.of_array(sorter._data))}")
        if sorter._data.shape != seq.shape:
            raise RuntimeError(f"{name}: boundary and sorter must have the same size, but got "
                               f"boundary tensor {_sizes_text(seq.shape)}and got sorter tensor "
                               f"{_sizes_text(sorter._data.shape)}")
        order = sorter._data
    index_dtype = np.int32 if out_int32 else np.int64
    if seq.shape[-1] == 0 or vals.size == 0:
        return make(np.zeros(vals.shape, dtype=index_dtype))
    if seq.ndim == 1:  # one row for every value
        flat = vals.reshape(1, -1)
        found = _bound_indices(seq.reshape(1, -1), flat, right,
                               None if order is None else order.reshape(1, -1))
        return make(found.reshape(vals.shape).astype(index_dtype))
    rows = int(np.prod(seq.shape[:-1]))
    found = _bound_indices(seq.reshape(rows, -1), vals.reshape(rows, -1), right,
                           None if order is None else order.reshape(rows, -1))
    return make(found.reshape(vals.shape).astype(index_dtype))


@public("torch.bucketize")
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each value of `input` among the 1-d sorted `boundaries`."""
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._data.ndim})")
    if out is not None:
        raise RuntimeError("torch.bucketize(): out= is not supported by gradcli")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# ------------------------------------------------------------------------- unique

def _unique_flat(a: np.ndarray):
    """Sorted distinct values of `a`, the index of each element among them and the counts;
    every NaN is its own value, after the numbers, in the order the NaNs come (as ATen's
    CPU kernel)."""
    flat = a.reshape(-1)
    nan = np.isnan(flat) if flat.dtype.kind in "fV" else np.zeros(flat.shape, dtype=bool)
    numbers = flat[~nan]
    values, inverse, counts = np.unique(numbers, return_inverse=True, return_counts=True)
    n_nan = int(nan.sum())
    index = np.empty(flat.shape, dtype=np.int64)
    index[~nan] = inverse.reshape(-1)
    index[nan] = len(values) + np.arange(n_nan)
    values = np.concatenate([values, flat[nan]])
    counts = np.concatenate([counts, np.ones(n_nan, dtype=np.int64)]).astype(np.int64)
    return values.astype(a.dtype), index.reshape(a.shape), counts


def _unique_dim(a: np.ndarray, dim: int):
    """Sorted distinct slices of `a` along `dim` (rows compared lexicographically)."""
    moved = np.moveaxis(a, dim, 0)
    rows = moved.reshape(moved.shape[0], int(np.prod(moved.shape[1:])))
    if rows.shape[0] == 0:
        return a.copy(), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    slices, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    slices = slices.reshape((slices.shape[0],) + moved.shape[1:])
    return np.moveaxis(slices, 0, dim).astype(a.dtype), inverse.reshape(-1), counts


def _no_derivative(name):
    def backward(ctx, grad):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return backward


UNIQUE = defop("unique", "Unique2Backward0", lambda a: _unique_flat(a)[0],
               _no_derivative("_unique2"), "unique has no derivative")
UNIQUE_DIM = defop("unique_dim", "UniqueDimBackward0", lambda a, dim: _unique_dim(a, dim)[0],
                   _no_derivative("unique_dim"), "unique has no derivative")


@public("torch.unique", "Tensor.unique")
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (or slices along `dim`), sorted, with the inverse indices and
    counts if asked; the values' node has no derivative, as PyTorch's."""
    a = input._data
    if dim is None:
        _, inverse, counts = _unique_flat(a)
        values = run_unary(UNIQUE, input)
    else:
        d = _wrap_dim(dim, a.ndim)
        _, inverse, counts = _unique_dim(a, d)
        values = run_unary(UNIQUE_DIM, input, (d,))
    out = [values]
    if return_inverse:
        out.append(make(inverse))
    if return_counts:
        out.append(make(counts))
    return out[0] if len(out) == 1 else tuple(out)
