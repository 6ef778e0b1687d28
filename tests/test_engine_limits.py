"""--max-elements is checked before an op allocates its result (SPEC 4).

Generic over the op table: every op with an `out_size` (the broadcasting ones get one
by default) is run through its `torch_call` over the table's shapes, and the count it
announces before the forward must equal the size of the result it then makes (0 means
"no larger than an input", which was checked when it was made). So an op whose result
can grow cannot announce the wrong size, and a new op of that kind is picked up here.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_ops_table import _call, _inputs, _shape_cases

import gradcli.torch as gt
from gradcli.engine import limits
from gradcli.engine.ops.registry import OPS


@pytest.fixture
def budget():
    """Set the engine's element budget for one test (the language runtime sets it per run)."""
    def set_to(n):
        limits.MAX_ELEMENTS[0] = n
    yield set_to
    limits.MAX_ELEMENTS[0] = None


SIZED = sorted(name for name, op in OPS.items() if op.out_size is not None and op.torch_call)


def test_growing_ops_announce_their_size():
    # the ops whose results can outgrow their inputs all say how big they will be
    for name in ("add", "mul", "sub", "div", "where", "mm", "bmm", "addmm", "cat", "stack",
                 "repeat", "expand"):
        if name in OPS:
            assert OPS[name].out_size is not None, name


@pytest.mark.parametrize("name", SIZED)
def test_out_size_is_the_result_size(name, monkeypatch, budget):
    op = OPS[name]
    pending, checked = [], []
    real_size, real_forward = op.out_size, op.forward

    def out_size(arrays, meta):
        n = real_size(arrays, meta)
        pending.append((n, max((a.size for a in arrays if isinstance(a, np.ndarray)), default=0)))
        return n

    def forward(*args):
        out = real_forward(*args)
        if pending:  # announced just before this forward
            n, biggest_input = pending.pop()
            size = np.asarray(out).size
            assert n == size or (n == 0 and size <= biggest_input), (name, n, size)
            checked.append(size)
        return out

    monkeypatch.setattr(op, "out_size", out_size)
    monkeypatch.setattr(op, "forward", forward)
    budget(10 ** 12)
    for seed, shapes in enumerate(_shape_cases(op)):
        a_np, b_np = _inputs(op, seed, shapes)
        try:
            _call(gt, op.torch_call, gt.tensor(a_np, requires_grad=True),
                  gt.tensor(b_np, requires_grad=True))
        except (RuntimeError, IndexError, ValueError, TypeError):
            pending.clear()  # shapes the op refuses: the forward's own error stands
    assert checked, f"{name}: its torch_call never reached the size check"


@pytest.mark.parametrize("src", [
    "torch.ones(10 ** 4, 1) + torch.ones(1, 10 ** 4)",
    "torch.ones(10 ** 4, 1) @ torch.ones(1, 10 ** 4)",
    "torch.outer(torch.ones(10 ** 4), torch.ones(10 ** 4))",
    "torch.cat([torch.ones(10 ** 5)] * 100)",
    "torch.stack([torch.ones(10 ** 5)] * 100)",
    "torch.ones(10 ** 3).repeat(10 ** 4)",
    "torch.ones(1, 10 ** 3).expand(10 ** 4, 10 ** 3) * 2",
    "torch.addmm(torch.zeros(1, 1), torch.ones(10 ** 4, 1), torch.ones(1, 10 ** 4))",
])
def test_over_budget_results_are_refused_before_allocating(src, budget):
    budget(10 ** 6)
    with pytest.raises(limits.AllocationLimitError, match="exceeds the limit of 1,000,000"):
        eval(src, {"torch": gt})  # noqa: S307 - fixed test text


def test_no_limit_in_plain_python():
    assert limits.MAX_ELEMENTS[0] is None
    assert (gt.ones(2000, 1) * gt.ones(1, 600)).numel() == 1_200_000
