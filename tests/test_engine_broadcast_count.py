"""registry.broadcast_count (the element limit's size of a broadcasting op's result) counts
as numpy's broadcasting does, without calling it (it made arrays on every op of a
`gradcli run` program)."""

import itertools

import numpy as np
import pytest

from gradcli.engine.ops.registry import broadcast_count

SIZES = (0, 1, 2, 3)
SHAPES = [()] + [s for n in (1, 2, 3) for s in itertools.product(SIZES, repeat=n)]


def _numpy_count(shapes) -> int:
    if len(shapes) < 2 or shapes.count(shapes[0]) == len(shapes):
        return 0
    try:
        return int(np.prod(np.broadcast_shapes(*shapes)))
    except ValueError:
        return 0


@pytest.mark.parametrize("first", SHAPES[::7])
def test_pairs_and_triples_count_as_numpy_broadcasts(first):
    for second in SHAPES:
        for third in (None, (), (1,), (3, 1), (2, 1, 1)):
            shapes = [first, second] + ([] if third is None else [third])
            arrays = [np.empty(s) for s in shapes] + [2.0]  # (a scalar operand is skipped)
            assert broadcast_count(arrays, ()) == _numpy_count(shapes), shapes


def test_shapes_that_do_not_broadcast_count_nothing():
    assert broadcast_count([np.empty((2, 3)), np.empty((3, 2))], ()) == 0
    assert broadcast_count([np.empty((0,)), np.empty((2,))], ()) == 0


def test_a_large_result_is_counted_exactly():
    a = np.broadcast_to(np.float32(0), (100_000, 1))
    b = np.broadcast_to(np.float32(0), (1, 300_000))
    assert broadcast_count([a, b], ()) == 30_000_000_000
