"""Every op declared with `declare.unary` / `declare.binary`, checked from its one entry:
each public name it declares (torch.X, Tensor.X, Tensor.X_, torch.special.X ...) exists
in gradcli.torch and gives what PyTorch's same name gives (values, dtype, grad_fn name,
gradients), for float64, float32 and integer inputs; the in-place variant writes into its
tensor and records PyTorch's node. tests/test_ops_table.py runs the same entries through
gradcheck (first and second order) and hypothesis-drawn comparisons with PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradcli.torch as gt
from gradcli.engine.ops.declare import DECLARED

torch = pytest.importorskip("torch")

RANGES = {"real": (-2.0, 2.0), "positive": (0.3, 2.0), "small": (-1.2, 1.2), "unit": (-0.9, 0.9),
          "above1": (1.1, 3.0), "positive_small": (0.05, 0.95)}


def _resolve(module, full: str):
    """(callable, in_place) for a public name in `module` (gradcli.torch or torch)."""
    parts = full.split(".")
    if parts[0] == "Tensor":
        name = parts[1]
        return (lambda x, *a: getattr(x, name)(*a)), name.endswith("_")
    obj = module
    for part in parts[1:]:
        obj = getattr(obj, part)
    return obj, False


def _inputs(module, decl, dtype: str, seed: int):
    rng = np.random.default_rng(seed)
    lo, hi = RANGES[decl.domain]
    shapes = [(2, 3)] if decl.kind == "unary" else [(2, 3), (3,)]
    out = []
    for shape in shapes:
        values = rng.uniform(lo, hi, size=shape)
        if dtype == "int64":
            values = np.round(values) + (1 if lo > 0 else 0)
            out.append(module.tensor(values.astype(np.int64)))
        else:
            out.append(module.tensor(values, dtype=getattr(module, dtype), requires_grad=True))
    return out


def _run(module, full, decl, dtype, seed, torch_name=None):
    fn, in_place = _resolve(module, torch_name or full)
    args = _inputs(module, decl, dtype, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if in_place:
                target = args[0].clone() if args[0].requires_grad else args[0]
                out = fn(target, *args[1:])
                assert out is target
            else:
                out = fn(*args)
        except Exception as err:  # noqa: BLE001 - compared with PyTorch's
            return err, args, None
    grads = None
    if out.requires_grad:
        try:
            grads = module.autograd.grad(out.sum(), [a for a in args if a.requires_grad],
                                         allow_unused=True)
        except Exception as err:  # noqa: BLE001 - no derivative (acosh_, zeta's self)
            grads = err
    return out, args, grads


def check_declaration(decl, torch_names=None) -> int:
    """Compare every public name of `decl` with PyTorch; returns how many were compared.
    `torch_names` maps a name to PyTorch's spelling (fixtures declare names PyTorch lacks)."""
    compared = 0
    for full in decl.names:
        theirs_name = torch_names(full) if torch_names else full
        for dtype in ("float64", "float32", "int64"):
            theirs, _, tgrads = _run(torch, full, decl, dtype, 7, theirs_name)
            ours, _, ograds = _run(gt, full, decl, dtype, 7)
            if isinstance(theirs, Exception):
                assert isinstance(ours, Exception), (full, dtype, theirs, ours)
                assert type(ours).__name__ == type(theirs).__name__, (full, dtype, ours, theirs)
                assert str(ours) == str(theirs), (full, dtype)
                continue
            assert not isinstance(ours, Exception), (full, dtype, ours)
            assert str(ours.dtype) == str(theirs.dtype), (full, dtype)
            assert tuple(ours.shape) == tuple(theirs.shape), (full, dtype)
            theirs_fn = type(theirs.grad_fn).__name__ if theirs.grad_fn is not None else None
            ours_fn = type(ours.grad_fn).__name__ if ours.grad_fn is not None else None
            assert ours_fn == theirs_fn, (full, dtype)
            torch.testing.assert_close(torch.from_numpy(np.array(ours._data)), theirs.detach(),
                                       equal_nan=True)
            if isinstance(tgrads, Exception):
                assert (type(ograds).__name__, str(ograds)) == (type(tgrads).__name__,
                                                                str(tgrads)), full
            elif tgrads is not None:
                for og, tg in zip(ograds, tgrads, strict=True):
                    torch.testing.assert_close(torch.from_numpy(np.array(og._data)), tg,
                                               equal_nan=True)
            compared += 1
    return compared


@pytest.mark.parametrize("name", sorted(n for n, d in DECLARED.items() if d.names))
def test_declared_names_match_pytorch(name):
    assert check_declaration(DECLARED[name]) > 0


def test_every_declared_name_is_installed():
    from gradcli.engine.tensor import Tensor

    for decl in DECLARED.values():
        for full in decl.names:
            prefix, _, short = full.rpartition(".")
            holder = Tensor if prefix == "Tensor" else _resolve(gt, prefix + ".x")[0] \
                if False else _module(prefix)
            assert getattr(holder, short) is not None, full


def _module(prefix: str):
    if prefix == "Tensor":
        from gradcli.engine.tensor import Tensor

        return Tensor
    obj = gt
    for part in prefix.split(".")[1:]:
        obj = getattr(obj, part)
    return obj
