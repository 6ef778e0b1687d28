"""torch.exp_(t), torch.clamp_(t, ...), torch.relu_(t)...: PyTorch's in-place function
forms change the tensor given first and return it, with the same values and grad_fn as
its Tensor method (compared with PyTorch, one call per name)."""

from __future__ import annotations

import math

import pytest

import gradcli.torch as gt
from gradcli.engine.ops import TORCH_INPLACE_FUNCTIONS

torch = pytest.importorskip("torch")

EXTRA = {
    "clamp_": lambda T: (0.3, 0.6), "clip_": lambda T: (0.3, 0.6), "clamp_max_": lambda T: (0.5,),
    "clamp_min_": lambda T: (0.5,), "fill_": lambda T: (2.0,), "xlogy_": lambda T: (T.tensor(
        [2.0, 3.0, 4.0]),), "dropout_": lambda T: (0.0, False), "alpha_dropout_": lambda T: (0.0, False),
    "feature_alpha_dropout_": lambda T: (0.0, False), "feature_dropout_": lambda T: (0.0, False),
    "index_put_": lambda T: ((T.tensor([1]),), T.tensor(9.0)), "round_": lambda T: (),
    "gcd_": lambda T: (T.tensor([4, 6, 8]),), "lcm_": lambda T: (T.tensor([4, 6, 8]),),
    "ldexp_": lambda T: (T.tensor([1, 2, 3]),),
}
INTEGER = {"gcd_", "lcm_"}


def _run(T, name):
    fn = getattr(T, name)
    if name in INTEGER:
        x = T.tensor([2, 3, 4])
    else:
        leaf = T.tensor([0.25, 0.5, 0.75], requires_grad=name not in ("detach_",))
        x = leaf * 1.5 if name != "detach_" else leaf.clone()
    args = EXTRA.get(name, lambda T: ())(T)
    try:
        out = fn(x, *args)
    except (RuntimeError, TypeError) as e:
        return f"{type(e).__name__}: {e}"
    values = [round(v, 6) if not math.isnan(v) else "nan" for v in x.detach().double().tolist()]
    node = None if x.grad_fn is None else type(x.grad_fn).__name__
    return out is x, values, str(x.dtype), node


@pytest.mark.parametrize("name", TORCH_INPLACE_FUNCTIONS)
def test_inplace_function_form_matches_pytorch(name):
    if not hasattr(gt, name):
        pytest.skip(f"gradcli has no Tensor.{name}")
    assert _run(gt, name) == _run(torch, name)
