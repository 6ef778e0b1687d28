"""torch.unique_consecutive and the internal unique functions (torch._unique,
torch._unique2, torch._VF.unique_dim): values, inverse indices, counts, which outputs
require grad and the nodes without a derivative, compared with PyTorch."""

from __future__ import annotations

import pytest
from scenario_log import attempt, same

torch = pytest.importorskip("torch")

NAN = float("nan")
FLAT = [1.0, 1.0, 2.0, 2.0, 3.0, 1.0, 1.0, NAN, NAN, 2.0]
ROWS = [[1.0, 3.0], [1.0, 3.0], [2.0, 3.0], [1.0, 3.0]]


def _show(res):
    res = res if isinstance(res, tuple) else (res,)
    return [(r.tolist(), str(r.dtype), r.requires_grad,
             type(r.grad_fn).__name__ if r.grad_fn is not None else None) for r in res]


@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("counts", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_unique_consecutive(inverse, counts, dim):
    def scenario(t, log):
        src = t.tensor(ROWS if dim is not None else FLAT, requires_grad=True)
        log.append(_show(t.unique_consecutive(src, return_inverse=inverse,
                                              return_counts=counts, dim=dim)))
        log.append(_show(src.unique_consecutive(return_inverse=inverse, return_counts=counts,
                                                dim=dim)))

    same(scenario)


@pytest.mark.parametrize("sort", [True, False])
@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("counts", [False, True])
def test_internal_unique_functions(sort, inverse, counts):
    def scenario(t, log):
        x = t.tensor([3.0, 1.0, 2.0, 1.0, 3.0], requires_grad=True)
        m = t.tensor(ROWS, requires_grad=True)
        log.append(_show(t._unique(x, sorted=sort, return_inverse=inverse)))
        log.append(_show(t._unique2(x, sorted=sort, return_inverse=inverse,
                                    return_counts=counts)))
        log.append(_show(t._VF.unique_dim(m, dim=0, sorted=sort, return_inverse=inverse,
                                          return_counts=counts)))

    same(scenario)


def test_no_derivative_and_integer_inputs():
    def scenario(t, log):
        x = t.tensor([1.0, 1.0, 2.0], requires_grad=True)
        attempt(log, lambda: t.unique_consecutive(x).sum().backward())
        attempt(log, lambda: t._unique2(x)[0].sum().backward())
        log.append(_show(t.unique_consecutive(t.tensor([4, 4, 5, 4]), return_counts=True)))
        log.append(_show(t.unique_consecutive(t.tensor([], dtype=t.long), return_inverse=True)))

    same(scenario)
