"""torch.vmap / torch.func.vmap beyond plain tensors, compared with PyTorch 2.13:
`randomness=` ("error" raises PyTorch's error; "different" and "same" draw PyTorch's
numbers bit for bit: a batched draw, or one unbatched draw seen by every slice), pytree
in_dims, the model-ensembling pattern (stack_module_state + functional_call under
vmap), the result's grad_fn, and torch.vmap being torch.func.vmap."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

RANDOM_OPS = [
    "torch.rand(3)", "torch.randn(3)", "torch.randn(2, 3)", "torch.rand_like(x)",
    "x.clone().uniform_(-2, 3)", "torch.bernoulli(x * 0 + 0.3)",
    "torch.nn.functional.dropout(x + 1, 0.5)", "torch.randint(0, 10, (3,))",
    "torch.normal(x, 2.0)", "x.clone().normal_()", "torch.randn(5, dtype=torch.float64)",
    "torch.randn_like(x) + torch.rand(3, dtype=torch.float64)", "x.clone().exponential_().sum() + torch.randn(17)",
]
# "same" with a batched tensor operand is an error in PyTorch (not reproduced here)
_BATCHED_OPERAND = ("torch.bernoulli(x * 0 + 0.3)", "torch.normal(x, 2.0)")


def _draw(module, expr: str, mode: str, size: int):
    module.manual_seed(0)
    out = module.vmap(lambda x: eval(expr, {"torch": module, "x": x}),  # noqa: S307
                      randomness=mode)(module.zeros(size, 3, dtype=module.float64))
    after = module.rand(2).tolist()  # (where the generator was left)
    return np.asarray(out.tolist()), after


@pytest.mark.parametrize("size", [4, 20])
@pytest.mark.parametrize("mode", ["different", "same"])
@pytest.mark.parametrize("expr", RANDOM_OPS)
def test_random_ops_draw_pytorchs_numbers(expr, mode, size):
    if mode == "same" and expr in _BATCHED_OPERAND:
        pytest.skip("PyTorch refuses same randomness with a batched tensor operand")
    expected = _draw(torch, expr, mode, size)
    got = _draw(gt, expr, mode, size)
    np.testing.assert_array_equal(got[0], expected[0])
    assert got[1] == expected[1]


@pytest.mark.parametrize("expr", ["torch.randn(3)", "x + torch.rand_like(x)",
                                  "torch.nn.functional.dropout(x, 0.5)"])
def test_error_mode_raises_pytorchs_error(expr):
    messages = []
    for module in (torch, gt):
        with pytest.raises(RuntimeError) as info:
            module.vmap(lambda x, m=module: eval(expr, {"torch": m, "x": x}))(  # noqa: S307
                module.zeros(2, 3))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_error_mode_without_a_draw_and_a_bad_mode():
    for module in (torch, gt):
        out = module.vmap(lambda x, m=module: m.nn.functional.dropout(x, 0.5, training=False))(
            module.ones(2, 3))
        assert out.tolist() == [[1.0] * 3] * 2
    messages = []
    for module in (torch, gt):
        with pytest.raises(RuntimeError) as info:
            module.vmap(lambda x: x, randomness="bad")(module.zeros(2))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_torch_vmap_is_torch_func_vmap():
    assert gt.vmap is gt.func.vmap
    assert repr(gt.vmap(lambda r: r * 2)(gt.ones(2, 2))) == repr(
        torch.vmap(lambda r: r * 2)(torch.ones(2, 2)))


def test_pytree_in_dims():
    def run(module):
        data = module.arange(12.0).reshape(2, 2, 3)
        weights = {"a": module.ones(2, 3) * 2, "b": module.arange(2.0)}
        f = module.vmap(lambda d, w: (d * w["a"]).sum() + w["b"],
                        in_dims=(0, {"a": None, "b": 0}))
        nested = module.vmap(lambda pair: pair[0] * pair[1], in_dims=((0, None),))
        return f(data, weights).tolist(), nested((data, module.ones(2, 3))).tolist()

    got, expected = run(gt), run(torch)
    if isinstance(expected, str):
        assert got == expected
        return
    np.testing.assert_allclose(got[0], expected[0], rtol=1.3e-6, atol=1e-5)
    assert got[1] == expected[1]  # (the generator left where PyTorch's is)


ENSEMBLE = """
    torch.manual_seed(0)

    class SimpleMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(6, 8)
            self.fc2 = nn.Linear(8, 4)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x.flatten(1))))

    data = torch.randn(5, 2, 3)
    models = [SimpleMLP() for _ in range(3)]
    params, buffers = torch.func.stack_module_state(models)
    print({k: (tuple(v.shape), v.requires_grad, v.is_leaf) for k, v in params.items()}, buffers)
    print(params["fc1.bias"])

    def fmodel(params, buffers, x):
        return torch.func.functional_call(models[0], (params, buffers), (x,))

    batches = data[None].expand(3, -1, -1, -1) * torch.tensor([1.0, 0.5, 2.0]).view(3, 1, 1, 1)
    print(torch.vmap(fmodel)(params, buffers, batches))
    same = torch.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, data)
    print(same)
    print(torch.allclose(same, torch.stack([m(data) for m in models])))
    same.sum().backward()
    print(params["fc2.bias"].grad)
    for bad in ([], [nn.Linear(1, 1), nn.Linear(1, 1).eval()], [nn.Linear(1, 1), nn.Tanh()]):
        try:
            torch.func.stack_module_state(bad)
        except RuntimeError as err:
            print(err)
"""


def _run(source: str, module_name: str) -> str:
    header = ("import gradcli.torch as torch\nnn = torch.nn\n" if module_name == "gradcli"
              else "import torch\nimport torch.nn as nn\n")
    done = subprocess.run([sys.executable, "-c", header + textwrap.dedent(source)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_model_ensembling_as_the_tutorial():
    assert _run(ENSEMBLE, "gradcli") == _run(ENSEMBLE, "torch")


def _result_node(module, expr: str):
    module.manual_seed(0)
    x = module.randn(4, 3, requires_grad=True)
    w = module.randn(3, requires_grad=True)
    y = module.vmap(lambda r: eval(expr, {"torch": module, "r": r, "w": w}))(x)  # noqa: S307
    y.backward(module.ones_like(y))
    return (type(y.grad_fn).__name__, tuple(y.shape), x.grad.tolist(),
            None if w.grad is None else w.grad.tolist())


@pytest.mark.parametrize("expr", ["r.sum()", "r * 2", "r.dot(w)", "r.exp()", "r.mean()",
                                  "(r ** 2).sum()", "r[0]", "r.softmax(0)", "r.max()",
                                  "torch.cat([r, w])", "r + 1", "r.sin() * w", "r @ w"])
def test_vmap_result_grad_fn_and_gradients(expr):
    got = _result_node(gt, expr)
    expected = _result_node(torch, expr)
    assert got[:2] == expected[:2]
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-6)
    if expected[3] is None:
        assert got[3] is None
    else:
        np.testing.assert_allclose(got[3], expected[3], rtol=1e-6)


JACFWD_RANDOM = {
    "scaled": lambda m: lambda x: x * m.rand(3),
    "broadcast_sum": lambda m: lambda x: (x.sin() * m.randn(2, 1)).sum(0),
    "dropout": lambda m: lambda x: m.nn.functional.dropout(x, 0.5),
}


@pytest.mark.parametrize("mode", ["different", "same", "error"])
@pytest.mark.parametrize("name", sorted(JACFWD_RANDOM))
def test_jacfwd_randomness_as_pytorch(name, mode):
    def run(module):
        module.manual_seed(0)
        f = JACFWD_RANDOM[name](module)
        try:
            jac = module.func.jacfwd(f, randomness=mode)(module.tensor([0.5, -1.0, 2.0]))
        except RuntimeError as err:
            return str(err)
        return jac.tolist(), module.rand(1).tolist()

    got, expected = run(gt), run(torch)
    if isinstance(expected, str):
        assert got == expected
        return
    np.testing.assert_allclose(got[0], expected[0], rtol=1.3e-6, atol=1e-5)
    assert got[1] == expected[1]  # (the generator left where PyTorch's is)
