"""Adding an op is one entry: a unary op declared here, in a test fixture, gets its
torch.* function, Tensor method and in-place method, its table entry, and is picked up
by the generic tests (tests/test_ops_table.py's gradcheck and graph checks and
tests/test_ops_declared.py's comparison of every public name with PyTorch)."""

from __future__ import annotations

import numpy as np
import pytest
import test_ops_declared  # noqa: E402 - tests/ is on sys.path under pytest
import test_ops_table

import gradcli.torch as gt
from gradcli.engine.ops import declare
from gradcli.engine.ops.registry import OPS
from gradcli.engine.tensor import Tensor


@pytest.fixture
def fixture_op():
    """One entry: PyTorch's log1p, under a name gradcli does not have."""
    declare.unary("fixture_log1p", "Log1PBackward0", np.log1p,
                  lambda c, g: (g / (c.saved[0] + 1),), "d log1p(a)/da = 1/(1+a)",
                  domain="positive", extra=("torch.special.fixture_log1p",))
    yield "fixture_log1p"
    declare.unregister("fixture_log1p")


def test_one_entry_gives_every_name(fixture_op):
    x = gt.tensor([0.5, 1.5], dtype=gt.float64, requires_grad=True)
    out = gt.fixture_log1p(x)
    assert type(out.grad_fn).__name__ == "Log1PBackward0"
    assert np.allclose(x.fixture_log1p()._data, np.log1p([0.5, 1.5]))
    assert gt.special.fixture_log1p is gt.fixture_log1p
    y = x.detach().clone()
    assert y.fixture_log1p_() is y and np.allclose(y._data, np.log1p([0.5, 1.5]))
    assert OPS["fixture_log1p"].torch_call == "torch.fixture_log1p(a)"


def test_generic_table_tests_pick_it_up(fixture_op):
    test_ops_table.test_torch_call_reaches_its_op(fixture_op)
    test_ops_table.test_gradcheck_first_and_second_order(fixture_op)


def test_generic_pytorch_comparison_picks_it_up(fixture_op):
    pytest.importorskip("torch")
    decl = declare.DECLARED[fixture_op]
    compared = test_ops_declared.check_declaration(
        decl, torch_names=lambda full: full.replace("fixture_log1p", "log1p").replace(
            "torch.special.log1p", "torch.special.log1p"))
    assert compared >= 2 * len(decl.names)  # (an int input may raise on both sides)


def test_unregister_removes_every_trace():
    declare.unary("fixture_gone", "Log1PBackward0", np.log1p, lambda c, g: (g,), "",
                  inplace=True)
    declare.unregister("fixture_gone")
    assert "fixture_gone" not in OPS and not hasattr(Tensor, "fixture_gone_")
    with pytest.raises(AttributeError, match="not supported by gradcli"):
        gt.fixture_gone  # noqa: B018


def test_a_second_op_of_one_name_is_refused():
    from gradcli.engine.ops.registry import defop

    before = OPS["exp"]
    with pytest.raises(ValueError, match="'exp' is declared twice"):
        defop("exp", "ExpBackward0", np.exp)
    assert OPS["exp"] is before
