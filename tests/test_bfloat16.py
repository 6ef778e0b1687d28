"""torch.bfloat16 against PyTorch: printing, casts (round to nearest even), type promotion,
finfo, autograd through the common ops, and a bfloat16 Linear trained a few steps.

PyTorch computes bfloat16 ops on CPU in float32 and rounds once at the end; where our
results are bit-identical that is asserted, elsewhere torch.testing's bfloat16 tolerances
(rtol 1.6e-2, atol 1e-5)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402

BF16_TOL = {"rtol": 1.6e-2, "atol": 1e-5}


def _floats(t) -> np.ndarray:
    """A bfloat16 tensor (either library) as float32 numbers (exact: bfloat16 widens exactly)."""
    return np.asarray(t.detach().float().tolist(), dtype=np.float32)


def _both(src: str):
    """Evaluate src with torch bound to PyTorch, then to gradcli.torch."""
    out = []
    for lib in (torch, G):
        out.append(eval(src, {"torch": lib, "np": np}))  # noqa: S307 - our own test strings
    return out


PRINTED = [
    "torch.tensor([1.0, 2.5, 3.14159, 1000.3]).bfloat16()",
    "torch.tensor([[1e-5, 300.0], [-2.0, 7.0]], dtype=torch.bfloat16)",
    "torch.tensor([1.0, 2.0, 3.0], dtype=torch.bfloat16)",
    "torch.tensor(0.1, dtype=torch.bfloat16)",
    "torch.tensor([float('nan'), float('inf'), -float('inf'), 0.0], dtype=torch.bfloat16)",
    "torch.tensor([], dtype=torch.bfloat16)",
    "torch.zeros(2, 0, dtype=torch.bfloat16)",
    "torch.arange(12, dtype=torch.bfloat16).reshape(3, 4) / 7",
    "torch.linspace(-3, 3, 2000).bfloat16()",
    "torch.tensor([1.5, 2.25], dtype=torch.bfloat16, requires_grad=True)",
    "torch.tensor([1.5, 2.25], dtype=torch.bfloat16, requires_grad=True) * 2",
    "torch.tensor([123456.0, 1e20, 3e-30], dtype=torch.bfloat16)",
    "torch.ones(2, 3).to(torch.bfloat16)",
    "torch.ones(2, 3).to(dtype=torch.bfloat16)",
    "torch.ones(2, 3).type(torch.bfloat16)",
    "torch.ones(2, 3, dtype=torch.bfloat16).dtype",
    "torch.ones(2, 3).bfloat16().type()",
    "torch.full((2,), 3.3, dtype=torch.bfloat16)",
    "torch.tensor([1.5, 2.25], dtype=torch.bfloat16).tolist()",
    "torch.tensor(2.7, dtype=torch.bfloat16).item()",
]


@pytest.mark.parametrize("src", PRINTED)
def test_printed_as_pytorch(src):
    ours_torch, ours = _both(src)
    assert str(ours) == str(ours_torch)
    assert repr(ours) == repr(ours_torch)


def test_dtype_object():
    assert repr(G.bfloat16) == "torch.bfloat16"
    assert G.bfloat16.is_floating_point and G.bfloat16.is_signed
    assert G.bfloat16.itemsize == torch.bfloat16.itemsize == 2
    x = G.ones(3, dtype=G.bfloat16)
    assert x.is_floating_point() is True
    assert x.element_size() == 2
    assert G.is_floating_point(x)
    assert x.dtype is G.bfloat16


def test_finfo_as_pytorch():
    ours, theirs = G.finfo(G.bfloat16), torch.finfo(torch.bfloat16)
    assert str(ours) == str(theirs)
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, field) == getattr(theirs, field), field


def _cast_inputs() -> np.ndarray:
    """float32 values on and around every kind of bfloat16 rounding case: ties (to even,
    both ways), just above/below ties, overflow, subnormals, nan, inf, signed zero."""
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2 ** 32, 4000, dtype=np.uint64).astype(np.uint32)
    ties = (rng.integers(0, 2 ** 16, 200, dtype=np.uint64).astype(np.uint32) << 16) | 0x8000
    near = np.concatenate([ties - 1, ties + 1])
    special = np.array([0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F8000, 0x00000001, 0x80008000, 0x7FC00000,
                        0x7F800000, 0xFF800000, 0x80000000, 0x3F808000, 0x3F818000],
                       dtype=np.uint32)
    return np.concatenate([bits, ties, near, special]).view(np.float32)


def test_float32_to_bfloat16_rounds_to_nearest_even_as_pytorch():
    values = _cast_inputs()
    theirs = torch.from_numpy(values.copy()).bfloat16().view(torch.int16).numpy()
    ours = G.tensor(values).bfloat16()
    back = G.tensor(values).bfloat16().float()
    # compare the 16-bit patterns through the float32 widening; a nan only as a nan (the
    # payload PyTorch's vectorized cast leaves depends on the CPU's instruction set)
    ours_bits = (np.asarray(back.tolist(), dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    theirs_bits = theirs.view(np.uint16)
    nan = np.isnan(values)
    assert np.isnan(np.asarray(back.tolist(), dtype=np.float32)[nan]).all()
    assert np.array_equal(ours_bits[~nan], theirs_bits[~nan])
    assert ours.dtype is G.bfloat16


@pytest.mark.parametrize("source", ["float64", "float16", "int64", "int32", "int16", "int8",
                                    "uint8", "bool"])
def test_casts_to_bfloat16_as_pytorch(source):
    rng = np.random.default_rng(3)
    if source == "bool":
        data = rng.integers(0, 2, 50).astype(bool)
    elif source.startswith(("int", "uint")):
        info = np.iinfo(source)
        data = np.concatenate([rng.integers(info.min, info.max, 300, dtype=np.int64, endpoint=True),
                               np.arange(250, 270), [info.max, info.min, 2 ** 8 + 1]])
        data = np.clip(data, info.min, info.max).astype(source)
    else:
        limit = 6e4 if source == "float16" else 1e30
        data = np.clip(rng.standard_normal(500) * 10.0 ** rng.integers(-8, 8, 500), -limit,
                       limit).astype(source)
        if source == "float64":  # double rounding: above a bfloat16 tie in float64 only
            data = np.concatenate([data, [1 + 2 ** -8 + 2 ** -40, 1 + 2 ** -8 - 2 ** -40, 1e300]])
    theirs = _floats(torch.from_numpy(data.copy()).to(torch.bfloat16))
    ours = _floats(G.tensor(data).to(G.bfloat16))
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("target", ["float64", "float32", "float16", "int64", "int32", "int16",
                                    "int8", "uint8", "bool"])
def test_casts_from_bfloat16_as_pytorch(target):
    values = np.array([0.0, -0.0, 1.5, -2.5, 3.99, -7.75, 100.5, 255.0, 65504.0, 1e-3, -1e-3],
                      dtype=np.float32)
    t_src, g_src = torch.tensor(values).bfloat16(), G.tensor(values).bfloat16()
    theirs = t_src.to(getattr(torch, target))
    ours = g_src.to(getattr(G, target))
    assert str(ours.dtype) == str(theirs.dtype)
    assert ours.tolist() == theirs.tolist()


PROMOTIONS = [
    ("bfloat16", "float16"), ("bfloat16", "float32"), ("bfloat16", "float64"),
    ("bfloat16", "int64"), ("int8", "bfloat16"), ("bool", "bfloat16"), ("uint8", "bfloat16"),
    ("bfloat16", "bfloat16"), ("float16", "bfloat16"),
]


@pytest.mark.parametrize(("a", "b"), PROMOTIONS)
def test_promote_types_as_pytorch(a, b):
    assert str(G.promote_types(getattr(G, a), getattr(G, b))) == \
        str(torch.promote_types(getattr(torch, a), getattr(torch, b)))


@pytest.mark.parametrize("src", [
    "torch.ones(2, dtype=torch.bfloat16) + torch.ones(2, dtype=torch.float16)",
    "torch.ones(2, dtype=torch.bfloat16) + torch.ones(2, dtype=torch.float32)",
    "torch.ones(2, dtype=torch.bfloat16) * torch.ones(2, dtype=torch.int64)",
    "torch.arange(3) * torch.ones(3, dtype=torch.bfloat16)",
    "torch.ones(2, dtype=torch.bfloat16) + 1",
    "torch.ones(2, dtype=torch.bfloat16) + 2.5",
    "torch.ones(2, dtype=torch.bfloat16) + True",
    "torch.ones(2, dtype=torch.bfloat16) + torch.tensor(1.0)",
    "torch.ones(2, dtype=torch.bfloat16) + torch.tensor(1.0, dtype=torch.float64)",
    "torch.ones(2, dtype=torch.float16) + torch.tensor(1.0, dtype=torch.bfloat16)",
    "torch.tensor(1.0, dtype=torch.bfloat16) + torch.tensor(1.0, dtype=torch.float16)",
    "torch.ones(2, dtype=torch.int32) / torch.tensor(2.0, dtype=torch.bfloat16)",
    "torch.result_type(torch.ones(2, dtype=torch.bfloat16), 1.0)",
    "torch.cat([torch.ones(2, dtype=torch.bfloat16), torch.ones(2, dtype=torch.float16)])",
    "torch.where(torch.tensor([True, False]), torch.ones(2, dtype=torch.bfloat16), 0.5)",
])
def test_promotion_in_ops_as_pytorch(src):
    theirs, ours = _both(src)
    assert str(ours) == str(theirs)


def test_numpy_refused_as_pytorch():
    import ml_dtypes

    with pytest.raises(TypeError, match="^Got unsupported ScalarType BFloat16$"):
        G.ones(2, dtype=G.bfloat16).numpy()
    with pytest.raises(TypeError) as ours:
        G.from_numpy(np.ones(2, ml_dtypes.bfloat16))
    with pytest.raises(TypeError) as theirs:
        torch.from_numpy(np.ones(2, ml_dtypes.bfloat16))
    assert str(ours.value) == str(theirs.value)


def test_requires_grad_and_leaf_printing():
    for lib in (torch, G):
        x = lib.ones(2, dtype=lib.bfloat16)
        x.requires_grad_()
        assert x.requires_grad
        y = lib.zeros(2, dtype=lib.bfloat16)
        y.requires_grad = True
        assert y.requires_grad
    p = G.nn.Parameter(G.ones(2, dtype=G.bfloat16))
    assert str(p) == str(torch.nn.Parameter(torch.ones(2, dtype=torch.bfloat16)))


def _data():
    rng = np.random.default_rng(0)
    return {
        "A": rng.standard_normal((8, 300)).astype(np.float32),
        "B": rng.standard_normal((300, 5)).astype(np.float32),
        "Y": rng.standard_normal((8, 5)).astype(np.float32),
        "bias": rng.standard_normal(5).astype(np.float32),
    }


# op under test -> whether every value (output and gradients) must be PyTorch's bit for bit:
# elementwise arithmetic rounds once in either library; where PyTorch's result depends on
# its kernels (SLEEF's exp, the gemm's summation order, vector width), the tolerances
GRAD_CASES = {
    "add": (lambda L, a, b, d: a + a * 3, True),
    "mul": (lambda L, a, b, d: a * a, True),
    "sub_scalar_mul": (lambda L, a, b, d: (a - 0.5) * 2, True),
    "relu": (lambda L, a, b, d: L.relu(a), True),
    "sum": (lambda L, a, b, d: a.sum(), False),
    "sum_dim": (lambda L, a, b, d: a.sum(1), False),
    "mean": (lambda L, a, b, d: a.mean(), False),
    "mean_dim": (lambda L, a, b, d: a.mean(0), False),
    "exp": (lambda L, a, b, d: (a / 4).exp(), False),
    "softmax": (lambda L, a, b, d: L.softmax(a, 1), False),
    "log_softmax": (lambda L, a, b, d: L.log_softmax(a, 1), False),
    "matmul": (lambda L, a, b, d: a @ b, False),
    "linear": (lambda L, a, b, d: L.nn.functional.linear(a, b.t(), L.tensor(d["bias"]).bfloat16()),
               False),
    "mse_loss": (lambda L, a, b, d: L.nn.functional.mse_loss(a @ b, L.tensor(d["Y"]).bfloat16()),
                 False),
    "tanh_sigmoid": (lambda L, a, b, d: L.tanh(a) + L.sigmoid(a), False),
    "div_sqrt": (lambda L, a, b, d: a / (a * a + 1).sqrt(), False),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_backward_through_ops(name):
    fn, exact = GRAD_CASES[name]
    d = _data()
    results = []
    for lib in (torch, G):
        a = lib.tensor(d["A"], dtype=lib.bfloat16, requires_grad=True)
        b = lib.tensor(d["B"], dtype=lib.bfloat16, requires_grad=True)
        out = fn(lib, a, b, d)
        (out.sum() if out.dim() else out).backward()
        results.append((out, a.grad, b.grad))
    (t_out, t_ga, t_gb), (g_out, g_ga, g_gb) = results
    assert g_out.grad_fn.name() == t_out.grad_fn.name()
    for theirs, ours in ((t_out, g_out), (t_ga, g_ga), (t_gb, g_gb)):
        assert (ours is None) == (theirs is None)
        if theirs is None:
            continue
        assert ours.dtype is G.bfloat16 and theirs.dtype is torch.bfloat16
        if exact:
            np.testing.assert_array_equal(_floats(ours), _floats(theirs))
        else:
            np.testing.assert_allclose(_floats(ours), _floats(theirs), **BF16_TOL)


def test_linear_model_trains_as_pytorch():
    rng = np.random.default_rng(1)
    x_np, y_np = rng.standard_normal((16, 4)).astype(np.float32), rng.standard_normal((16, 2)).astype(np.float32)
    w_np, b_np = rng.standard_normal((2, 4)).astype(np.float32), rng.standard_normal(2).astype(np.float32)
    runs = []
    for lib in (torch, G):
        model = lib.nn.Linear(4, 2)
        with lib.no_grad():
            model.weight.copy_(lib.tensor(w_np))
            model.bias.copy_(lib.tensor(b_np))
        model = model.to(lib.bfloat16)
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x, y = lib.tensor(x_np).bfloat16(), lib.tensor(y_np).bfloat16()
        losses = []
        for _ in range(6):
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        runs.append((losses, model.weight, model.bias, model.weight.grad))
    # (PyTorch rounds a short tensor's add(alpha=) step by step and a long one's fused,
    # where the vector width of the CPU splits them: the tolerances, not the bits)
    (t_losses, *t_tensors), (g_losses, *g_tensors) = runs
    np.testing.assert_allclose(g_losses, t_losses, **BF16_TOL)
    for theirs, ours in zip(t_tensors, g_tensors, strict=True):
        assert ours.dtype is G.bfloat16
        np.testing.assert_allclose(_floats(ours), _floats(theirs), **BF16_TOL)
    assert g_losses[-1] < g_losses[0]


def test_start_up_does_not_import_ml_dtypes():
    code = ("import sys, gradcli.torch as torch; print('ml_dtypes' in sys.modules); "
            "torch.ones(1) * 2; print('ml_dtypes' in sys.modules); "
            "torch.ones(1, dtype=torch.bfloat16); print('ml_dtypes' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "True"]


def test_cli_program_with_bfloat16(tmp_path):
    prog = tmp_path / "bf.grad"
    prog.write_text("x = torch.tensor([1.0, 2.5, 3.14159], dtype=torch.bfloat16, requires_grad=True)\n"
                    "y = (x * x).sum()\n"
                    "y.backward()\n"
                    "print(y)\n"
                    "print(x.grad)\n"
                    "print(torch.finfo(torch.bfloat16).eps)\n")
    out = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)], capture_output=True,
                         text=True, check=True)
    x = torch.tensor([1.0, 2.5, 3.14159], dtype=torch.bfloat16, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    expected = f"{y!s}\n{x.grad!s}\n{torch.finfo(torch.bfloat16).eps}\n"
    assert out.stdout == expected


def test_overflow_is_quiet_as_in_pytorch():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for src in ("torch.softmax(torch.tensor([3e38, -3e38, 1.0]).bfloat16(), 0)",
                    "torch.tensor([3e38, -3e38, 1.0]).bfloat16() * 10",
                    "torch.add(torch.tensor([3e38, 1.0]).bfloat16(), torch.ones(2).bfloat16(), "
                    "alpha=1e38)"):
            theirs, ours = _both(src)
            assert str(ours) == str(theirs)


def test_module_bfloat16_as_pytorch():
    for lib in (torch, G):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU()).bfloat16()
        assert model[0].weight.dtype is lib.bfloat16 and model[0].weight.requires_grad
    G.manual_seed(0)
    torch.manual_seed(0)
    ours = G.nn.Linear(3, 2).bfloat16()
    theirs = torch.nn.Linear(3, 2).bfloat16()
    assert str(ours.weight) == str(theirs.weight)
