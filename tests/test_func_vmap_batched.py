"""vmap refuses what PyTorch's BatchedTensor refuses: a batched value turned into a Python
number, a truth value, host memory, or fed to an op whose result's shape depends on the
values; unbatched tensors inside the function still convert. Texts compared with PyTorch."""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _cases(m):
    return {
        "item": lambda t: t.item(),
        "item_of_result": lambda t: (t * 2).sum().item(),
        "float": lambda t: t * float(t),
        "int": lambda t: t * int(t),
        "index": lambda t: t * [1.0, 2.0, 3.0, 4.0][t.long()],
        "tolist": lambda t: t.tolist(),
        "numpy": lambda t: t.numpy(),
        "if": lambda t: t * 2 if t > 0 else t,
        "bool": lambda t: t * bool(t),
        "and": lambda t: t == 1.0 and t,
        "isnan_any": lambda t: t if not m.isnan(t).any() else t,
        "unbatched_item": lambda t: t * m.tensor(2.0).item(),
        "unbatched_bool": lambda t: t if m.tensor(1.0) > 0 else -t,
        "nonzero": lambda t: m.nonzero(t),
        "nonzero_method": lambda t: t.nonzero(),
        "where_one_arg": lambda t: m.where(t > 0),
        "where_three_args": lambda t: m.where(t > 0, t, -t),
        "unique": lambda t: m.unique(t),
        "masked_select": lambda t: t.masked_select(t > 0),
        "equal": lambda t: m.equal(t, t),
        "grad_item": lambda t: m.func.grad(lambda u: u.sin() * u.item())(t),
        "grad_if": lambda t: m.func.grad(lambda u: u.sin() if u > 0 else u.cos())(t),
        "jacrev_float": lambda t: m.func.jacrev(lambda u: u * float(u))(t),
        "grad_tolist": lambda t: m.func.grad(lambda u: u * u.tolist())(t),
        "nested_item": lambda t: m.vmap(lambda u: u.item())(t.reshape(1)),
        "outer_captured": lambda t: m.vmap(lambda u: u * t.item())(m.ones(2)),
        "inplace_into_unbatched_copy": lambda t: m.zeros(()).copy_(t),
        "inplace_into_unbatched_setitem": lambda t: m.zeros(2).__setitem__(0, t),
        "inplace_into_batched": lambda t: t.clone().add_(m.ones(())),
        "inplace_into_new_zeros": lambda t: t.new_zeros(()).add_(t),
        "inplace_into_new_empty_copy": lambda t: t.new_empty(()).copy_(t),
        "inplace_outer_into_inner": lambda t: m.vmap(lambda u: t.clone().mul_(u))(m.ones(2)),
    }


def _outcome(m, name):
    x = m.tensor([1.0, -2.0, 3.0])
    try:
        out = m.vmap(_cases(m)[name])(x)
    except Exception as err:  # noqa: BLE001 - the type and text are what is compared
        return type(err).__name__, str(err)
    return "ok", [round(v, 6) for v in out.reshape(-1).tolist()]


@pytest.mark.parametrize("name", sorted(_cases(gt)))
def test_vmap_refuses_batched_values_as_pytorch(name):
    assert _outcome(gt, name) == _outcome(torch, name)


def test_tensor_methods_are_restored_after_vmap():
    before = {n: gt.Tensor.__dict__.get(n) for n in ("item", "__bool__", "gt", "__gt__", "tolist")}
    with pytest.raises(RuntimeError):
        gt.vmap(lambda t: t.item())(gt.ones(2))
    assert {n: gt.Tensor.__dict__.get(n) for n in before} == before
    assert gt.tensor([2.0]).item() == 2.0
    assert gt.nonzero(gt.tensor([0.0, 1.0])).tolist() == [[1]]


@pytest.mark.parametrize("out_dims, fn", [
    (0, lambda t: 3.14),
    (0, lambda t: (t, 3)),
    (None, lambda t: t),
    ((0, None), lambda t: (t, "hello")),
    (None, lambda t: "hello"),
])
def test_vmap_non_tensor_and_unbatched_outputs(out_dims, fn):
    def outcome(m):
        try:
            r = m.vmap(fn, out_dims=out_dims)(m.ones(2, 3))
        except Exception as err:  # noqa: BLE001
            return type(err).__name__, str(err)
        return [tuple(v.shape) if isinstance(v, m.Tensor) else v
                for v in (r if isinstance(r, tuple) else (r,))]
    assert outcome(gt) == outcome(torch)


RANDOM_CASES = {
    # a batched parameter whose slices are all equal is still batched for PyTorch
    "same_bernoulli_equal_slices": ("same", lambda m, t: m.bernoulli(t)),
    "same_normal_equal_slices": ("same", lambda m, t: m.normal(t, 1.0)),
    "same_unbatched_param": ("same", lambda m, t: m.bernoulli(m.full((3,), 0.5)) + t),
    "different_inplace_unbatched": ("different", lambda m, t: m.ones(3).normal_() + t),
    "different_inplace_batched": ("different", lambda m, t: t.clone().uniform_()),
    "different_dropout": ("different", lambda m, t: m.nn.functional.dropout(t, 0.5)),
    "different_bernoulli_into_unbatched": ("different", lambda m, t: m.zeros(3).bernoulli_(t)),
}


@pytest.mark.parametrize("name", sorted(RANDOM_CASES))
def test_randomness_sees_batched_inputs_as_pytorch(name):
    mode, fn = RANDOM_CASES[name]

    def outcome(m):
        try:
            out = m.vmap(lambda t: fn(m, t), randomness=mode)(m.full((2, 3), 0.5))
        except Exception as err:  # noqa: BLE001
            return type(err).__name__, str(err)
        return "ok", tuple(out.shape)
    assert outcome(gt) == outcome(torch)


def test_a_vmap_leaves_tensor_and_torch_as_it_found_them():
    """vmap installs its refusing and marking methods for the call only: after it (and after
    one that raised), every Tensor attribute and torch function is the object it was."""
    import gradcli.torch as gtorch

    tensor_before = dict(vars(gtorch.Tensor))
    torch_before = dict(vars(gtorch))
    gtorch.vmap(lambda t: gtorch.where(t > 0, t, -t).sum() + t.eq(1).any())(gtorch.randn(3, 2))
    with pytest.raises(RuntimeError):
        gtorch.vmap(lambda t: t.item())(gtorch.randn(3))
    assert {k: v for k, v in vars(gtorch.Tensor).items() if tensor_before.get(k) is not v} == {}
    assert set(vars(gtorch.Tensor)) == set(tensor_before)
    changed = {k for k, v in vars(gtorch).items() if k in torch_before and torch_before[k] is not v}
    assert changed == set()
