"""Forward-mode AD through every op of the op table, compared with PyTorch 2.13.

Each op's `torch_call` (over `a`, and `b` for binary ops) runs inside a dual level with
random tangents on its inputs, once in PyTorch and once in gradcli; the outputs' primal
and tangent must agree within torch.testing's float64 tolerances, and an output that has
no tangent in PyTorch (integer results) has none here. Ops PyTorch has no forward AD
for are skipped (gradcli needs none of their errors)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradcli.torch as gt
from gradcli.engine.forward_ad import tangent_of
from gradcli.engine.ops.registry import OPS

torch = pytest.importorskip("torch")

CALLED = sorted(name for name, op in OPS.items() if op.torch_call)
SHAPES_UNARY = [((2, 3), ())]
SHAPES_BINARY = [((2, 3), (3,)), ((2, 3), (2, 3))]
DOMAINS = {"real": (0.3, 2.0, True), "positive": (0.3, 2.0, False), "small": (0.2, 1.2, True)}
# float64 rtol 1e-7 (torch.testing) is met by the double-vjp rule's own rounding except
# where a tangent sums many products (mm-like ops): allowed the same relative slack
RTOL, ATOL = 1e-7, 1e-7
# where PyTorch's own forward and reverse Jacobians disagree (its jvp formula and its
# backward treat the unused triangle of a triangular input differently: torch.func.jacfwd
# != jacrev there), gradcli's tangent is the transpose of its backward: the reverse one
JACFWD_NOT_JACREV = {"cholesky_inverse", "triangular_solve"}


def _uses_b(expr: str) -> bool:
    return "b" in compile(expr, "<torch_call>", "eval").co_names


def _values(rng, shape, domain):
    lo, hi, signed = DOMAINS[domain]
    mag = rng.uniform(lo, hi, size=shape)
    if signed:
        mag = mag * rng.choice([-1.0, 1.0], size=shape)
    return np.asarray(mag, dtype=np.float64)


def _call(module, expr, a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(expr, {"torch": module}, {"a": a, "b": b})  # noqa: S307 - the table's text


def _leaves(out) -> list:
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _leaves(o)]
    return [out]


def _op_inputs(op, uses_b: bool):
    """(arrays, tangents) for each shape case of `op`: values in its domain, seeded by the
    case's number (a second operand, for binary ops, over the reals)."""
    for seed, shapes in enumerate(SHAPES_BINARY if uses_b else SHAPES_UNARY):
        rng = np.random.default_rng(seed)
        arrays = [_values(rng, shapes[0], op.domain)]
        if uses_b:
            arrays.append(_values(rng, shapes[1], "real"))
        yield arrays, [rng.standard_normal(x.shape) for x in arrays]


def _torch_run(expr, arrays, tangents, uses_b, requires_grad):
    fwad = torch.autograd.forward_ad
    with fwad.dual_level():
        ins = [fwad.make_dual(torch.tensor(x, requires_grad=requires_grad), torch.tensor(t))
               for x, t in zip(arrays, tangents)]
        out = _call(torch, expr, ins[0], ins[1] if uses_b else None)
        got = []
        for o in _leaves(out):
            if isinstance(o, torch.Tensor):
                p, t = fwad.unpack_dual(o)
                got.append((p.detach().numpy().copy(),
                            None if t is None else t.detach().numpy().copy()))
    return got


def _gradcli_run(expr, arrays, tangents, uses_b, requires_grad):
    fwad = gt.autograd.forward_ad
    with fwad.dual_level():
        ins = [fwad.make_dual(gt.tensor(x, requires_grad=requires_grad), gt.tensor(t))
               for x, t in zip(arrays, tangents)]
        out = _call(gt, expr, ins[0], ins[1] if uses_b else None)
        got = []
        for o in _leaves(out):
            if isinstance(o, gt.Tensor):
                t = tangent_of(o)
                got.append((np.array(o._data), None if t is None else np.array(t._data)))
    return got


@pytest.mark.parametrize("requires_grad", [False, True], ids=["plain", "requires_grad"])
@pytest.mark.parametrize("name", CALLED)
def test_tangents_match_pytorch(name, requires_grad):
    """Primals without and with requires_grad (then a tangent is computed with a graph, and
    the table's double-backward expressions run their backward on dual tensors)."""
    op = OPS[name]
    if name in JACFWD_NOT_JACREV:
        pytest.skip("PyTorch's jacfwd differs from its jacrev here (see JACFWD_NOT_JACREV)")
    uses_b = _uses_b(op.torch_call)
    compared = 0
    for arrays, tangents in _op_inputs(op, uses_b):
        try:
            expected = _torch_run(op.torch_call, arrays, tangents, uses_b, requires_grad)
        except (RuntimeError, NotImplementedError, IndexError, ValueError, TypeError):
            continue  # no forward AD in PyTorch (or not this shape): nothing to match
        got = _gradcli_run(op.torch_call, arrays, tangents, uses_b, requires_grad)
        assert len(got) == len(expected), name
        for (p, t), (ep, et) in zip(got, expected):
            np.testing.assert_allclose(p, ep, rtol=1e-6, atol=1e-7, err_msg=f"{name} primal")
            if et is None:
                assert t is None, f"{name}: PyTorch's output has no tangent, gradcli's has"
                continue
            assert t is not None, f"{name}: gradcli's output has no tangent"
            assert t.shape == et.shape, name
            np.testing.assert_allclose(t, et, rtol=RTOL, atol=ATOL, err_msg=f"{name} tangent")
        compared += 1
    if not compared:
        pytest.skip(f"PyTorch has no forward AD for {op.torch_call!r}")


@pytest.mark.parametrize("name", sorted(JACFWD_NOT_JACREV))
def test_pytorch_own_jacobians_disagree_where_skipped(name):
    """The skip above holds only while PyTorch's two Jacobians really differ."""
    expr = OPS[name].torch_call
    a = torch.tensor(_values(np.random.default_rng(0), (2, 3), OPS[name].domain))

    def f(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _call(torch, expr, x, None)

    assert not torch.allclose(torch.func.jacfwd(f)(a), torch.func.jacrev(f)(a))
