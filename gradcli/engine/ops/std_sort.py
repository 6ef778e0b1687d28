"""The order PyTorch's unstable CPU sorts leave equal keys in.

torch.sort (stable=False, the default), argsort and mode sort (value, index) pairs with
C++'s std::sort, which is not stable: among equal values the indices come out in the
order libstdc++'s introsort leaves them (insertion sort up to 16 elements, so small
inputs look stable; median-of-three quicksort above, heapsort past the depth limit).
The indices are part of the result, so this module runs the same algorithm over the
pairs, keyed on the value alone. It only runs where it can matter: rows longer than 16
that hold equal keys; everywhere else a stable numpy sort gives the same order.
"""

from __future__ import annotations

import numpy as np

_THRESHOLD = 16  # libstdc++'s _S_threshold


def order(keys: list, less) -> list:
    """The positions of `keys` in the order std::sort(pairs, less-on-keys) leaves them."""
    a = list(zip(keys, range(len(keys))))
    n = len(a)
    if n > 1:
        def lt(x, y):
            return less(x[0], y[0])

        _introsort(a, 0, n, 2 * (n.bit_length() - 1), lt)
        _final_insertion_sort(a, 0, n, lt)
    return [p[1] for p in a]


def _introsort(a, first, last, depth, lt):
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_sort(a, first, last, lt)
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, lt)
        _introsort(a, cut, last, depth, lt)
        last = cut


def _partition_pivot(a, first, last, lt):
    mid = first + (last - first) // 2
    _median_to_first(a, first, first + 1, mid, last - 1, lt)
    lo, hi, pivot = first + 1, last, a[first]
    while True:
        while lt(a[lo], pivot):
            lo += 1
        hi -= 1
        while lt(pivot, a[hi]):
            hi -= 1
        if not lo < hi:
            return lo
        a[lo], a[hi] = a[hi], a[lo]
        lo += 1


def _median_to_first(a, result, x, y, z, lt):
    if lt(a[x], a[y]):
        if lt(a[y], a[z]):
            pick = y
        elif lt(a[x], a[z]):
            pick = z
        else:
            pick = x
    elif lt(a[x], a[z]):
        pick = x
    elif lt(a[y], a[z]):
        pick = z
    else:
        pick = y
    a[result], a[pick] = a[pick], a[result]


def _heap_sort(a, first, last, lt):
    """partial_sort(first, last, last): make a max-heap, then pop it from the back."""
    n = last - first
    if n >= 2:
        parent = (n - 2) // 2
        while True:
            _adjust_heap(a, first, parent, n, a[first + parent], lt)
            if parent == 0:
                break
            parent -= 1
    while last - first > 1:
        last -= 1
        value = a[last]
        a[last] = a[first]
        _adjust_heap(a, first, 0, last - first, value, lt)


def _adjust_heap(a, first, hole, n, value, lt):
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if lt(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and lt(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value


def _final_insertion_sort(a, first, last, lt):
    if last - first > _THRESHOLD:
        _insertion_sort(a, first, first + _THRESHOLD, lt)
        for i in range(first + _THRESHOLD, last):
            _linear_insert(a, i, lt)
    else:
        _insertion_sort(a, first, last, lt)


def _insertion_sort(a, first, last, lt):
    for i in range(first + 1, last):
        if lt(a[i], a[first]):
            value = a[i]
            a[first + 1:i + 1] = a[first:i]
            a[first] = value
        else:
            _linear_insert(a, i, lt)


def _linear_insert(a, last, lt):
    value = a[last]
    nxt = last - 1
    while lt(value, a[nxt]):
        a[last] = a[nxt]
        last = nxt
        nxt -= 1
    a[last] = value


def _less_nan_last(x, y):
    return (x == x and y != y) or x < y


def _greater_nan_first(x, y):
    return (x != x and y == y) or x > y


def _less(x, y):
    return x < y


def has_ties(sorted_rows: np.ndarray) -> np.ndarray:
    """Per row (last axis) of sorted values: whether two neighbours are equal (NaNs count
    as equal to each other, as the sorts' comparisons leave them unordered)."""
    left, right = sorted_rows[..., 1:], sorted_rows[..., :-1]
    same = left == right
    if sorted_rows.dtype.kind in "fV":
        same |= np.isnan(left) & np.isnan(right)
    return same.any(axis=-1)


def unstable_sort_rows(data: np.ndarray, order_rows: np.ndarray, descending: bool,
                       nan_aware: bool = True) -> np.ndarray:
    """`order_rows` (a stable argsort of `data` along its last axis) redone as std::sort
    would leave it, in the rows longer than 16 that hold ties."""
    if data.shape[-1] <= _THRESHOLD or data.size == 0:
        return order_rows
    flat = data.reshape(-1, data.shape[-1])
    orders = order_rows.reshape(-1, data.shape[-1]).copy()
    ties = has_ties(np.take_along_axis(flat, orders, axis=-1))
    if nan_aware:
        less = _greater_nan_first if descending else _less_nan_last
    else:
        less = _less
    for r in np.nonzero(ties)[0]:
        orders[r] = order(flat[r].tolist(), less)
    return orders.reshape(order_rows.shape)
