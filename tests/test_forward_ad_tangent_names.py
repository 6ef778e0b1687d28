"""The tangent's own graph under forward AD, compared with PyTorch 2.13 op by op.

PyTorch computes an output's tangent with its forward-derivative formula
(derivatives.yaml `result:`), and when that formula reads a primal that requires grad,
or a tangent that does, the tangent gets a graph whose last node is the formula's last
op. So the printed `grad_fn` of a tangent shows which formula ran: this test runs every
op of the op table inside a dual level in both situations (the primals require grad;
the tangents do) and compares the name of each output tangent's grad_fn (or its absence)
with PyTorch's (and whether it requires grad, and the output's own grad_fn). The values are test_forward_ad_ops.py's business."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradcli.engine.rng_ops  # noqa: F401 - its ops join the table when first used
import gradcli.torch as gt
from gradcli.engine.forward_ad import _MULTI_FORMULAS, tangent_of
from gradcli.engine.forward_ad_formulas import FORMULAS
from gradcli.engine.ops.registry import OPS

torch = pytest.importorskip("torch")

from tests.test_forward_ad_ops import (  # noqa: E402 - after the importorskip
    SHAPES_BINARY,
    SHAPES_UNARY,
    _call,
    _leaves,
    _op_inputs,
    _uses_b,
    _values,
)

CALLED = sorted(name for name, op in OPS.items() if op.torch_call)
MODES = ("primal_requires_grad", "tangent_requires_grad")

# ops whose tangent's graph still ends in another node than PyTorch's, with the reason;
# (op, mode) -> reason. Strict: an entry that starts matching fails the run. (Empty: every
# op's tangent ends in PyTorch's node.)
_DIFFERENT: dict[tuple[str, str], str] = {
}


def _name(fn) -> str | None:
    return None if fn is None else type(fn).__name__


def _names(module, expr, arrays, tangents, uses_b, mode):
    fwad = module.autograd.forward_ad
    primal_rg = mode == MODES[0]
    with fwad.dual_level():
        ins = [fwad.make_dual(module.tensor(x, requires_grad=primal_rg),
                              module.tensor(t, requires_grad=not primal_rg))
               for x, t in zip(arrays, tangents)]
        out = _call(module, expr, ins[0], ins[1] if uses_b else None)
        got = []
        for o in _leaves(out):
            if isinstance(o, module.Tensor):
                t = fwad.unpack_dual(o).tangent if module is torch else tangent_of(o)
                got.append((_name(o.grad_fn), None if t is None else _name(t.grad_fn),
                            None if t is None else t.requires_grad))
    return got


def _params():
    for mode in MODES:
        for name in CALLED:
            reason = _DIFFERENT.get((name, mode))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            yield pytest.param(name, mode, id=f"{name}-{mode}", marks=marks)


@pytest.mark.parametrize(("name", "mode"), list(_params()))
def test_tangent_grad_fn_matches_pytorch(name, mode):
    op = OPS[name]
    uses_b = _uses_b(op.torch_call)
    compared = 0
    for arrays, tangents in _op_inputs(op, uses_b):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = _names(torch, op.torch_call, arrays, tangents, uses_b, mode)
        except (RuntimeError, NotImplementedError, IndexError, ValueError, TypeError):
            continue  # no forward AD in PyTorch (or not this shape): nothing to match
        got = _names(gt, op.torch_call, arrays, tangents, uses_b, mode)
        assert got == expected, f"{name} ({mode}): gradcli {got}, PyTorch {expected}"
        compared += 1
    if not compared:
        pytest.skip(f"PyTorch has no forward AD for {op.torch_call!r}")


# the ops whose tangent formula forward_ad_formulas writes out: the tangent's graph is
# differentiated too (w.r.t. the primal and the tangent), and must give PyTorch's values
# (logcumsumexp and _softmax_backward_data left out: PyTorch's own formulas modify a
# tensor their graph saved, so their backward raises "modified by an inplace operation";
# linalg_householder_product too: the derivative of PyTorch's tangent is not the true one,
# gradcli's is, test_forward_ad_tangent_graphs checks it against finite differences)
_FORMULA_OPS = sorted((set(FORMULAS) | set(_MULTI_FORMULAS)) & set(CALLED)
                      - {"logcumsumexp", "softmax_backward_data_public",
                         "linalg_householder_product"})


def _tangent_grads(module, expr, arrays, tangents, uses_b):
    """The gradient of sum(tangent * w) w.r.t. the primals and the tangents (w fixed), or
    the error text when the tangent's graph cannot be differentiated."""
    fwad = module.autograd.forward_ad
    with fwad.dual_level():
        xs = [module.tensor(x, requires_grad=True) for x in arrays]
        ts = [module.tensor(t, requires_grad=True) for t in tangents]
        ins = [fwad.make_dual(x, t) for x, t in zip(xs, ts)]
        out = _call(module, expr, ins[0], ins[1] if uses_b else None)
        first = _leaves(out)[0]
        t = fwad.unpack_dual(first).tangent if module is torch else tangent_of(first)
        weight = module.tensor(np.linspace(0.5, 1.5, int(np.prod(t.shape)) or 1)[
            :int(np.prod(t.shape))].reshape(tuple(t.shape)))
        try:
            grads = module.autograd.grad((t * weight).sum(), xs + ts, allow_unused=True)
        except RuntimeError as err:
            return str(err)
    return [None if g is None else g.detach().numpy() if module is torch else np.array(g._data)
            for g in grads]


@pytest.mark.parametrize("name", _FORMULA_OPS)
def test_written_out_formulas_differentiate_as_pytorch(name):
    op = OPS[name]
    uses_b = _uses_b(op.torch_call)
    rng = np.random.default_rng(1)
    shapes = (SHAPES_BINARY if uses_b else SHAPES_UNARY)[-1]
    arrays = [_values(rng, shapes[0], op.domain)]
    if uses_b:
        arrays.append(_values(rng, shapes[1], "real"))
    tangents = [rng.standard_normal(x.shape) for x in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = _tangent_grads(torch, op.torch_call, arrays, tangents, uses_b)
        except (RuntimeError, NotImplementedError, IndexError, ValueError, TypeError):
            pytest.skip("no forward AD in PyTorch for this call")
        got = _tangent_grads(gt, op.torch_call, arrays, tangents, uses_b)
    if isinstance(expected, str):
        assert got == expected
        return
    assert not isinstance(got, str), got
    for g, e in zip(got, expected, strict=True):
        if e is None or not np.any(e):
            assert g is None or not np.any(g), name
            continue
        np.testing.assert_allclose(g, e, rtol=1e-7, atol=1e-7, err_msg=name)
