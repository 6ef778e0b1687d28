"""vmap's checks of in_dims, out_dims and its inputs, in PyTorch's order with its texts
(structure errors print PyTorch's TreeSpec), and dict subclasses returned as themselves."""

from __future__ import annotations

from collections import OrderedDict

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _foo():
    return 0


def _bar(x):
    return x


def _cases(m):
    v = m.vmap
    x = m.zeros(2, 3)
    return {
        "no_inputs": lambda: v(_foo)(),
        "no_inputs_with_param": lambda: v(_bar)(),
        "no_tensor_mapped": lambda: v(_bar, (None,))(1),
        "in_dim_too_big": lambda: v(_bar, in_dims=3)(x),
        "in_dim_too_negative": lambda: v(_bar, in_dims=-3)(x),
        "in_dim_of_scalar": lambda: v(_bar, in_dims=(0,))(m.zeros(())),
        "in_dim_for_non_tensor": lambda: v(lambda a, b: a, in_dims=(0, 0))(x, 1),
        "too_few_in_dims": lambda: v(lambda a, b: a, in_dims=(0,))(x, x),
        "too_many_in_dims": lambda: v(lambda a, b: a, in_dims=(0, 0, 0))(x, x),
        "in_dims_str": lambda: v(_bar, in_dims="lol")(x),
        "in_dims_list": lambda: v(_bar, in_dims=[0])(x),
        "in_dims_float": lambda: v(_bar, in_dims=(0.5,))(x),
        "in_dims_dict_for_tensor": lambda: v(_bar, in_dims=({"a": 0},))(x),
        "in_dims_nested": lambda: v(lambda p: p[0] + p[1], in_dims=((0, 1),))((x, x.t())),
        "sizes_differ": lambda: v(m.mul)(m.zeros(2), m.zeros(3)),
        "out_dims_str": lambda: v(_bar, out_dims="lol")(x),
        "out_dims_tuple_str": lambda: v(_bar, out_dims=("lol",))(x),
        "out_dim_too_big": lambda: v(_bar, out_dims=3)(x),
        "out_dim_too_negative": lambda: v(_bar, out_dims=-4)(x),
        "out_dim_too_big_computed": lambda: v(lambda a: a * 2, out_dims=3)(x),
        "out_dims_too_few": lambda: v(lambda a: (a, a), out_dims=(0,))(x),
        "out_dims_too_many": lambda: v(_bar, out_dims=(0, 0))(x),
        "out_dims_nested": lambda: v(lambda a: (a, (a, a)), out_dims=(0, (0, 1)))(x),
    }


def _outcome(m, name):
    try:
        out = _cases(m)[name]()
    except Exception as err:  # noqa: BLE001 - the type and text are what is compared
        return type(err).__name__, str(err)
    leaves = out if isinstance(out, tuple) else (out,)
    return "ok", repr([tuple(t.shape) if isinstance(t, m.Tensor) else len(t) for t in leaves])


@pytest.mark.parametrize("name", sorted(_cases(gt)))
def test_vmap_argument_checks_as_pytorch(name):
    assert _outcome(gt, name) == _outcome(torch, name)


def test_ordered_dict_output_stays_ordered_dict():
    out = gt.vmap(lambda t: OrderedDict([("sin", t.sin()), ("cos", t.cos())]))(gt.zeros(2, 3))
    assert type(out) is OrderedDict and list(out) == ["sin", "cos"]
    assert out["cos"].tolist() == [[1.0] * 3] * 2


VIEW_CASES = {
    "transpose": (lambda t: t.t(), 0, 0),
    "select_in_dim_1": (lambda t: t[0], 1, 0),
    "unsqueeze_out_dim_1": (lambda t: t.unsqueeze(0), 0, 1),
    "slice_out_dim_last": (lambda t: t[1:], 2, -1),
    "in_place": (lambda t: t.mul_(2), 0, 0),
    "identity": (lambda t: t, 1, 0),
}


@pytest.mark.parametrize("name", sorted(VIEW_CASES))
def test_vmap_of_a_view_op_is_a_view_of_the_input(name):
    fn, in_dim, out_dim = VIEW_CASES[name]
    facts = []
    for m in (torch, gt):
        x = m.arange(60, dtype=m.float32).reshape(3, 4, 5)
        out = m.vmap(fn, in_dims=in_dim, out_dims=out_dim)(x)
        shape, values = tuple(out.shape), out.tolist()
        x.add_(1000)  # (a view of x shows the write)
        facts.append((shape, values, out.tolist()))
    assert facts[0] == facts[1]
