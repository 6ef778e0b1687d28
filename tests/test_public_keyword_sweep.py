"""Every keyword name PyTorch's signatures give a public function works in gradcli.

The static sweep reads each function's PyTorch signatures (gradcli/engine/ops/
arg_signatures.py, checked against the installed PyTorch by tests/test_public_arg_errors.py)
and gradcli's own parameters: a name is reachable when gradcli's function takes it, or
PyTorch binds it to a positional parameter that gradcli also takes by position (the
boundary moves it there, out_variants._recover), or it is a keyword-only CPU option
the boundary drops when it asks for nothing (`pin_memory=False`, `layout=None`). The few
names left are listed with the reason. The calls below then compare values with PyTorch.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import gradcli.torch as gt
from gradcli.engine.ops import arg_checks
from gradcli.engine.ops.arg_signatures import SIGNATURES
from gradcli.engine.ops.registry import PUBLIC
from gradcli.engine.tensor import Tensor

torch = pytest.importorskip("torch")

# keyword-only options gradcli takes only with the value that changes nothing on a CPU
INERT_OPTIONS = frozenset({"layout", "pin_memory", "device"})
# what is left, and why
LEFT = {
    ("Tensor.expand", "implicit"): "tracing-only flag of PyTorch's",
    ("torch.addmm", "out_dtype"): "the mixed-precision out_dtype overload is not implemented",
    ("torch.baddbmm", "out_dtype"): "the mixed-precision out_dtype overload is not implemented",
    ("torch.bmm", "out_dtype"): "the mixed-precision out_dtype overload is not implemented",
    ("torch.mm", "out_dtype"): "the mixed-precision out_dtype overload is not implemented",
    ("torch.layer_norm", "cudnn_enable"): "a CUDA-only flag",
    ("torch.linalg.pinv", "rcond"): "the deprecated rcond overload is not implemented",
    ("torch.nn.functional.elu_", "input_scale"): "the ELU overload with scales is not exposed",
    ("torch.nn.functional.elu_", "scale"): "the ELU overload with scales is not exposed",
}


def _function_of(key):
    fn = getattr(Tensor, key[len("Tensor."):], None) if key.startswith("Tensor.") else PUBLIC.get(key)
    return getattr(fn, "_without_out", fn), fn


def unreachable() -> set:
    found = set()
    for key, formats in SIGNATURES.items():
        if formats[0].startswith("!"):
            continue
        inner, outer = _function_of(key)
        if inner is None:
            continue
        try:
            params = list(inspect.signature(inner).parameters.values())
        except (TypeError, ValueError):
            continue
        if any(p.kind is p.VAR_KEYWORD for p in params):
            continue
        if key.startswith("Tensor.") and params:
            params = params[1:]
        names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        if inner is not outer and "out" in outer.__code__.co_varnames:
            names.add("out")
        positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
        for fmt in formats:
            sig = arg_checks.Signature(fmt)
            if sig.hidden:
                continue
            for i, p in enumerate(sig.params):
                if p.name in names or p.name == "self":
                    continue
                if not p.keyword_only and (varargs or i < positional):
                    continue  # reached by position
                found.add((key, p.name))
    return found


def test_every_pytorch_keyword_name_is_reachable():
    left = {(key, name) for key, name in unreachable() if name not in INERT_OPTIONS}
    assert left == set(LEFT)


def _values(out):
    if isinstance(out, (tuple, list)):
        return [_values(o) for o in out]
    return np.atleast_1d(np.asarray(out.tolist(), dtype=float))


A = [[4.0, 1.0], [1.0, 3.0]]
B = [[1.0, 5.0], [0.0, 1.0]]
CALLS = {
    "linalg.cholesky(input=)": lambda T: T.linalg.cholesky(input=T.tensor(A)),
    "linalg.eigvalsh(input=)": lambda T: T.linalg.eigvalsh(input=T.tensor(A)),
    "Tensor.max(other=)": lambda T: T.tensor(A).max(other=T.tensor(B)),
    "Tensor.min(other=)": lambda T: T.tensor(A).min(other=T.tensor(B)),
    "sum(axis=, keepdims=)": lambda T: T.sum(T.tensor(A), axis=0, keepdims=True),
    "Tensor.swapaxes(axis0=, axis1=)": lambda T: T.tensor(A).swapaxes(axis0=0, axis1=1),
    "Tensor.tensor_split(sections=)": lambda T: T.tensor(A).tensor_split(sections=2),
    "Tensor.inner(other=)": lambda T: T.tensor(A[0]).inner(other=T.tensor(B[0])),
    "erfc(out=)": lambda T: T.erfc(T.tensor(A), out=T.empty(2, 2)),
    "sort(out=(values, indices))": lambda T: T.sort(T.tensor(B), 1, out=(
        T.empty(0), T.empty(0, dtype=T.int64))),
    "special.expit(out=)": lambda T: T.special.expit(T.tensor(A), out=T.zeros(2, 2)),
    "Tensor.view(size=)": lambda T: T.tensor(A).view(size=(4,)),
    "Tensor.repeat(repeats=)": lambda T: T.tensor(A).repeat(repeats=(1, 2)),
    "Tensor.expand(size=)": lambda T: T.tensor([1.0, 2.0]).expand(size=(3, 2)),
    "Tensor.new_ones(size=, device=)": lambda T: T.tensor(A).new_ones(size=(2,), device="cpu"),
    "zeros(pin_memory=False, layout=None)": lambda T: T.zeros(2, pin_memory=False, layout=None),
    "eye(device='cpu')": lambda T: T.eye(2, device="cpu", pin_memory=False),
    "dsplit(indices=)": lambda T: T.dsplit(T.ones(1, 2, 4), indices=[1]),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_pytorchs_keywords_give_pytorchs_values(call):
    mine, theirs = _values(CALLS[call](gt)), _values(CALLS[call](torch))
    assert len(mine) == len(theirs)
    for a, b in zip(mine if isinstance(mine, list) else [mine],
                    theirs if isinstance(theirs, list) else [theirs]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_an_option_that_asks_for_something_is_not_dropped():
    with pytest.raises(TypeError, match="pin_memory"):
        gt.zeros(2, pin_memory=True)


def test_a_keyword_pytorch_does_not_know_still_gives_its_error():
    with pytest.raises(TypeError) as mine:
        gt.linalg.cholesky(gt.tensor(A), foo=1)
    with pytest.raises(TypeError) as theirs:
        torch.linalg.cholesky(torch.tensor(A), foo=1)
    assert str(mine.value) == str(theirs.value)
