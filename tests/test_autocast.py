"""torch.autocast on CPU against PyTorch: which ops run in the autocast dtype, which in
float32, which in their inputs' dtype; the recorded casts and the gradients' dtypes;
enabled=False, nesting, the decorator form, torch.amp / torch.cpu.amp, the state queries
and warnings; the language (a real CLI process) and its sandbox."""

from __future__ import annotations

import io
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402
from gradcli.lang import Limits  # noqa: E402
from gradcli.lang.session import run_source  # noqa: E402

BF16_TOL = {"rtol": 1.6e-2, "atol": 1e-5}
RNG = np.random.default_rng(5)
DATA = {
    "m": RNG.standard_normal((4, 6)).astype(np.float32),
    "n": RNG.standard_normal((6, 3)).astype(np.float32),
    "b3": RNG.standard_normal((2, 4, 6)).astype(np.float32),
    "c3": RNG.standard_normal((2, 6, 3)).astype(np.float32),
    "img": RNG.standard_normal((1, 2, 5, 5)).astype(np.float32),
    "ker": RNG.standard_normal((3, 2, 3, 3)).astype(np.float32),
    "seq": RNG.standard_normal((1, 2, 7)).astype(np.float32),
    "ker1": RNG.standard_normal((3, 2, 3)).astype(np.float32),
    "tgt": np.array([0, 2, 1, 2]),
    "pos": np.abs(RNG.standard_normal((4, 3))).astype(np.float32) + 0.1,
}


def _args(lib, names, dtype=None):
    out = []
    for n in names:
        arr = DATA[n]
        t = lib.tensor(arr)
        if dtype is not None and arr.dtype.kind == "f":
            t = t.to(getattr(lib, dtype))
        out.append(t)
    return out


# (call, input names, the dtype the inputs are given in): the result's dtype and values are
# compared with PyTorch's under autocast
CASES = {
    "mm": (lambda L, a, b: L.mm(a, b), ("m", "n"), None),
    "matmul_op": (lambda L, a, b: a @ b, ("m", "n"), None),
    "Tensor.mm": (lambda L, a, b: a.mm(b), ("m", "n"), None),
    "bmm": (lambda L, a, b: L.bmm(a, b), ("b3", "c3"), None),
    "matmul_3d": (lambda L, a, b: L.matmul(a, b), ("b3", "c3"), None),
    "addmm": (lambda L, a, b: L.addmm(L.ones(3), a, b), ("m", "n"), None),
    "baddbmm": (lambda L, a, b: L.baddbmm(L.zeros(2, 4, 3), a, b), ("b3", "c3"), None),
    "addbmm": (lambda L, a, b: L.addbmm(L.zeros(4, 3), a, b), ("b3", "c3"), None),
    "linear": (lambda L, a, b: L.nn.functional.linear(a, b.t()), ("m", "n"), None),
    "linear_bias": (lambda L, a, b: L.nn.functional.linear(a, b.t(), L.ones(3)), ("m", "n"), None),
    "conv2d": (lambda L, a, b: L.nn.functional.conv2d(a, b, padding=1), ("img", "ker"), None),
    "conv1d": (lambda L, a, b: L.nn.functional.conv1d(a, b), ("seq", "ker1"), None),
    "conv_transpose2d": (lambda L, a, b: L.nn.functional.conv_transpose2d(a, b.transpose(0, 1)),
                         ("img", "ker"), None),
    "mse_bf16_in": (lambda L, a, b: L.nn.functional.mse_loss(a, b), ("m", "m"), "bfloat16"),
    "cross_entropy_bf16_in": (lambda L, a, t: L.nn.functional.cross_entropy(a[:, :3], t),
                              ("m", "tgt"), "bfloat16"),
    "l1_bf16_in": (lambda L, a, b: L.nn.functional.l1_loss(a, b), ("m", "m"), "bfloat16"),
    "bce_logits_bf16_in": (lambda L, a, b: L.nn.functional.binary_cross_entropy_with_logits(
        a, b.sigmoid()), ("m", "m"), "bfloat16"),
    "kl_div_bf16_in": (lambda L, a, b: L.nn.functional.kl_div(a.log(), b, reduction="batchmean"),
                       ("pos", "pos"), "bfloat16"),
    "prod_bf16_in": (lambda L, a: L.prod(a), ("pos",), "bfloat16"),
    "add_stays": (lambda L, a, b: a + b, ("m", "m"), None),
    "relu_stays_bf16": (lambda L, a: L.relu(a), ("m",), "bfloat16"),
    "softmax_stays": (lambda L, a: L.softmax(a, 1), ("m",), None),
    "sum_stays": (lambda L, a: a.sum(), ("m",), None),
    "cat_promotes": (lambda L, a, b: L.cat([a, b.to(L.bfloat16)]), ("m", "m"), None),
    "mm_float64_stays": (lambda L, a, b: L.mm(a, b), ("m", "n"), "float64"),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(CASES))
def test_op_policy_as_pytorch(name, dtype):
    fn, names, given = CASES[name]
    results = []
    for lib in (torch, G):
        args = _args(lib, names, given)
        with lib.autocast(device_type="cpu", dtype=getattr(lib, dtype)):
            results.append(fn(lib, *args))
    theirs, ours = results
    assert str(ours.dtype) == str(theirs.dtype), name
    np.testing.assert_allclose(np.asarray(ours.detach().float().tolist()),
                               theirs.detach().float().numpy(), **BF16_TOL)


def test_casts_are_recorded_and_gradients_come_back_in_float32():
    for lib in (torch, G):
        z = lib.tensor(DATA["m"][:4, :4], requires_grad=True)
        with lib.autocast("cpu"):
            y = lib.mm(z, z)
            # a leaf that requires grad is cast once in a region: both inputs share the node
            first, second = (edge[0] for edge in y.grad_fn.next_functions)
            assert first is second
            assert first.name() == "ToCopyBackward0"
            assert y.grad_fn.name() == "MmBackward0"
            # a view of it is no leaf: cast each time
            v = lib.mm(z.t(), z.t())
            assert v.grad_fn.next_functions[0][0] is not v.grad_fn.next_functions[1][0]
        y.sum().backward()
        assert z.grad.dtype is lib.float32
    ours_grad, theirs_grad = None, None
    for lib in (torch, G):
        x = lib.tensor(DATA["m"], requires_grad=True)
        w = lib.tensor(DATA["n"], requires_grad=True)
        with lib.autocast("cpu"):
            loss = lib.nn.functional.mse_loss(lib.nn.functional.linear(x, w.t()), lib.zeros(4, 3))
        assert loss.dtype is lib.float32
        loss.backward()
        grads = (x.grad.float().tolist(), w.grad.float().tolist())
        if lib is torch:
            theirs_grad = grads
        else:
            ours_grad = grads
    for ours, theirs in zip(ours_grad, theirs_grad, strict=True):
        np.testing.assert_allclose(ours, theirs, **BF16_TOL)


def test_enabled_false_nesting_and_state_queries():
    for lib in (torch, G):
        x = lib.ones(2, 2)
        assert lib.is_autocast_enabled() is False
        assert lib.is_autocast_enabled("cpu") is False
        assert lib.get_autocast_dtype("cpu") is lib.bfloat16
        with lib.autocast("cpu", enabled=False):
            assert lib.is_autocast_enabled("cpu") is False
            assert lib.mm(x, x).dtype is lib.float32
        with lib.autocast("cpu", dtype=lib.float16):
            assert lib.is_autocast_enabled("cpu") is True
            assert lib.is_autocast_enabled() is False  # (CUDA's)
            assert lib.get_autocast_dtype("cpu") is lib.float16
            assert lib.mm(x, x).dtype is lib.float16
            with lib.autocast("cpu", enabled=False):
                assert lib.mm(x, x).dtype is lib.float32
            with lib.autocast("cpu"):  # (no dtype: the current one)
                assert lib.mm(x, x).dtype is lib.float16
            with lib.autocast("cpu", dtype=lib.bfloat16):
                assert lib.mm(x, x).dtype is lib.bfloat16
            assert lib.mm(x, x).dtype is lib.float16
        assert lib.mm(x, x).dtype is lib.float32
        assert lib.get_autocast_dtype("cpu") is lib.bfloat16


def test_decorator_and_module_spellings():
    for lib in (torch, G):
        x = lib.ones(2, 2)

        @lib.autocast(device_type="cpu")
        def product(a):
            return a @ a

        assert product(x).dtype is lib.bfloat16
        assert (x @ x).dtype is lib.float32
        assert lib.amp.autocast is lib.autocast
        with lib.amp.autocast("cpu", dtype=lib.bfloat16):
            assert (x @ x).dtype is lib.bfloat16
        with pytest.warns(FutureWarning, match=r"torch\.cpu\.amp\.autocast\(args\.\.\.\)` is "
                                               r"deprecated"):
            region = lib.cpu.amp.autocast()
        with region:
            assert (x @ x).dtype is lib.bfloat16


def test_an_exception_inside_the_region_leaves_everything_restored():
    from gradcli.engine import autocast_state
    from gradcli.engine.ops import linalg

    code = linalg.mm.__code__
    with pytest.raises(RuntimeError), G.autocast("cpu"):
        assert linalg.mm.__code__ is code  # (no function is changed: the policy is declared)
        assert autocast_state.ENABLED == 1
        G.mm(G.ones(2, 3), G.ones(2, 3))
    assert linalg.mm.__code__ is code
    assert autocast_state.ENABLED == 0 and autocast_state.STATE.inside == 0
    assert G.is_autocast_enabled("cpu") is False
    assert G.mm(G.ones(2, 2), G.ones(2, 2)).dtype is G.float32


@pytest.mark.parametrize("make", [
    lambda lib: lib.autocast("cuda"),
    lambda lib: lib.autocast("cpu", dtype=lib.float32),
    lambda lib: lib.autocast("cpu", dtype=lib.float64),
])
def test_warnings_as_pytorch(make):
    texts = []
    for lib in (torch, G):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            region = make(lib)
        texts.append([(w.category, str(w.message)) for w in caught])
        with region:
            assert lib.is_autocast_enabled("cpu") is False
    assert texts[1] == texts[0]


@pytest.mark.parametrize("args", [(1,), ("tpu",), ("cpux",)])
def test_bad_device_type_as_pytorch(args):
    with pytest.raises(Exception) as theirs:
        torch.autocast(*args)
    with pytest.raises(Exception) as ours:
        G.autocast(*args)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


def test_decorating_a_non_callable_as_pytorch():
    with pytest.raises(TypeError) as theirs:
        torch.autocast("cpu")(5)
    with pytest.raises(TypeError) as ours:
        G.autocast("cpu")(5)
    assert str(ours.value) == str(theirs.value)


def test_training_steps_under_autocast_as_pytorch():
    x_np = RNG.standard_normal((16, 6)).astype(np.float32)
    y_np = RNG.standard_normal((16, 2)).astype(np.float32)
    w_np = RNG.standard_normal((2, 6)).astype(np.float32)
    runs = []
    for lib in (torch, G):
        model = lib.nn.Linear(6, 2)
        with lib.no_grad():
            model.weight.copy_(lib.tensor(w_np))
            model.bias.zero_()
        opt = lib.optim.SGD(model.parameters(), lr=0.05)
        x, y = lib.tensor(x_np), lib.tensor(y_np)
        losses = []
        for _ in range(4):
            opt.zero_grad()
            with lib.autocast("cpu"):
                out = model(x)
                loss = lib.nn.functional.mse_loss(out, y)
            assert out.dtype is lib.bfloat16 and loss.dtype is lib.float32
            loss.backward()
            assert model.weight.grad.dtype is lib.float32
            opt.step()
            losses.append(loss.item())
        runs.append((losses, model.weight.detach().tolist()))
    np.testing.assert_allclose(runs[1][0], runs[0][0], **BF16_TOL)
    np.testing.assert_allclose(runs[1][1], runs[0][1], **BF16_TOL)


PROGRAM = """\
x = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.5]], requires_grad=True)
w = torch.full((4, 3), 0.3, requires_grad=True)
with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    print(torch.is_autocast_enabled("cpu"))
    y = torch.nn.functional.linear(x, w)
    print(y)
    loss = torch.nn.functional.mse_loss(y, torch.zeros(2, 4))
print(loss)
loss.backward()
print(w.grad)
print(torch.is_autocast_enabled("cpu"))
with torch.amp.autocast("cpu", enabled=False):
    print((x @ w.t()).dtype)
"""


def test_cli_program_as_pytorch(tmp_path):
    prog = tmp_path / "amp.grad"
    prog.write_text(PROGRAM)
    out = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)], capture_output=True,
                         text=True, check=True)
    expected = io.StringIO()
    saved = sys.stdout
    sys.stdout = expected
    try:
        exec(PROGRAM, {"torch": torch})  # noqa: S102 - our own program, under PyTorch
    finally:
        sys.stdout = saved
    assert out.stdout == expected.getvalue()


def _run(src):
    out, err = io.StringIO(), io.StringIO()
    code = run_source(src, "attack.grad", limits=Limits(), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("src", [
    "a = torch.autocast('cpu')\na.__enter__.__globals__",
    "torch.amp.autocast.__init__",
    "torch.amp.types",
    "torch.cpu.amp.autocast.mro()",
    "from torch.amp import sys",
    "import torch.cpu\ntorch.cpu.is_available.__globals__",
    "a = torch.autocast('cpu')\na._enabled",
    "a = torch.autocast('cpu')\na.fast_dtype.np",
    "torch.autocast('cpu')(print)(torch.amp.__dict__)",
    "torch.is_autocast_enabled.__code__",
])
def test_sandbox_attacks_on_the_autocast_names_fail_cleanly(src):
    code, out, err = _run(src)
    assert code in (1, 2), (code, out, err)
    assert "Traceback" not in err
    assert err.strip()


def test_the_language_imports_the_amp_modules():
    code, out, err = _run("from torch.amp import autocast\nimport torch.cpu.amp\n"
                          "with autocast('cpu'):\n    print((ones(2, 2) @ ones(2, 2)).dtype)\n"
                          "print(torch.cpu.amp.autocast)\n")
    assert code == 0, err
    assert out.splitlines()[0] == "torch.bfloat16"
