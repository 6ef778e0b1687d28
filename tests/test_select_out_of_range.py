"""torch.select / Tensor.select with an index out of range say so in select()'s own words
("select(): index 5 out of range for tensor of size [2, 3] at dimension 0"), while
indexing (x[5], x[1, 5]) keeps the subscript's "index 5 is out of bounds for dimension
0 with size 2": both as PyTorch 2.13."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402

CASES = {
    "torch.select past the end": lambda T: T.select(T.zeros(2, 3), 0, 5),
    "torch.select negative past": lambda T: T.select(T.zeros(2, 3), 1, -4),
    "method, negative dim": lambda T: T.zeros(2, 3).select(-1, 7),
    "empty dim": lambda T: T.zeros(2, 0, 3).select(1, 0),
    "empty 1-d": lambda T: T.zeros(0).select(0, 0),
    "0-dim": lambda T: T.zeros(()).select(0, 0),
    "bad dim": lambda T: T.zeros(2, 3).select(2, 0),
    "subscript": lambda T: T.zeros(2, 3)[5],
    "second subscript": lambda T: T.zeros(2, 3)[1, 5],
    "in range": lambda T: T.zeros(2, 3).select(1, -3),
}


def _outcome(call, lib):
    try:
        return ("ok", tuple(call(lib).shape))
    except Exception as err:  # the comparison is of the type and text
        return (type(err).__name__, str(err))


@pytest.mark.parametrize("name", list(CASES))
def test_select_errors_as_pytorch(name):
    assert _outcome(CASES[name], G) == _outcome(CASES[name], torch)

