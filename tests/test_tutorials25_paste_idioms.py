"""Idioms met pasting a fifth round of public material (pytorch/examples' sequence and
regression scripts, d2l's RNN text generation, nanoGPT, makemore, the Annotated
Transformer), each in a small case of its own, compared live with PyTorch: numpy-style
keywords on torch functions that pass through more than one wrapper, numpy's positional
dtype and size arguments inside programs."""

from __future__ import annotations

import numpy as np
import pytest
from comparison_helpers import printed_by_gradcli, printed_by_python  # noqa: E402, I001

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402

run = printed_by_gradcli


def python(src: str) -> str:
    """What the program prints under Python with PyTorch and numpy installed."""
    return printed_by_python(src, module_name="p")


@pytest.mark.parametrize("call", [
    "lib.argmax(Y, axis=2)", "lib.argmin(Y, axis=-1, keepdims=True)",
    "lib.max(Y, axis=1)", "lib.sum(Y, axis=2)", "Y.argmax(axis=2)",
    "lib.std(Y, 1, keepdims=True)", "Y.var(dim=1, keepdims=True)",
    "lib.var_mean(Y, axis=1, keepdims=True)", "lib.std_mean(Y, dim=2, keepdims=True)",
    "lib.aminmax(Y, axis=1)", "Y.aminmax(dim=0, keepdims=True)",
])
def test_numpy_keyword_spellings_through_every_wrapper(call):
    """torch.argmax is wrapped twice (a sparse first argument's route, complex input's
    refusal): axis= must still reach it as PyTorch's parser binds it; keepdims= must pass
    where another parameter (unbiased) stands between dim and keepdim."""
    def value(lib):
        Y = lib.tensor([[[1.0, 3.0, 2.0], [0.5, -1.0, 4.0]], [[2.0, 2.5, -3.0], [1.0, 1.0, 0.0]]])
        return repr(eval(call, {"lib": lib, "Y": Y}))  # noqa: S307
    assert value(gt) == value(torch)


def test_a_bad_keyword_still_fails_as_in_pytorch():
    with pytest.raises(TypeError) as theirs:
        torch.argmax(torch.ones(2, 2), axes=1)
    with pytest.raises(TypeError) as mine:
        gt.argmax(gt.ones(2, 2), axes=1)
    assert str(mine.value) == str(theirs.value)


NUMPY_DATA = """\
import numpy as np
import torch
np.random.seed(2)
x = np.empty((3, 6), "int64")
x[:] = np.array(range(6)) + np.random.randint(-8, 8, 3).reshape(3, 1)
print(x)
print(np.random.normal(0.0, 2.0, (2, 2)))
print(np.random.uniform(-1, 1, 3))
print(np.random.random(2), np.random.random_sample((1, 2)))
print(np.zeros((2,), "float32").dtype, np.ones(3, int), np.full((2,), 7, "int32"))
data = torch.from_numpy(np.sin(x / 1.0 / 4).astype("float64"))
print(data.dtype, data[:, :2])
"""


def test_numpy_dtype_and_size_by_position():
    assert run(NUMPY_DATA) == python(NUMPY_DATA)


def test_numpy_dtype_twice_is_numpys_error():
    out = run("import numpy as np\nx = np.empty((2, 2), 'int64', dtype=float)\n")
    assert out == ("!TypeError: argument for empty() given by name ('dtype') and position "
                   "(position 1)")
    try:
        np.empty((2, 2), "int64", dtype=float)
    except TypeError as e:
        assert str(e) in out


def test_numpy_random_size_by_position_is_limited():
    out = run("import numpy as np\nx = np.random.randint(0, 5, (100000, 100000))\n")
    assert "exceeds the limit" in out


def _loader_warnings(lib, pin):
    import warnings
    ds = lib.utils.data.TensorDataset(lib.arange(6.0))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        batches = [b[0].tolist() for b in lib.utils.data.DataLoader(ds, batch_size=4,
                                                                   pin_memory=pin)]
    return batches, [(w.category.__name__, str(w.message)) for w in seen]


@pytest.mark.parametrize("pin", [True, False])
def test_pin_memory_on_a_cpu_warns_as_pytorch(pin):
    """A tutorial's DataLoader(..., pin_memory=True) prints PyTorch's UserWarning when its
    iterator starts (there is no accelerator to pin memory for)."""
    assert _loader_warnings(gt, pin) == _loader_warnings(torch, pin)


HAND_BACKPROP = """\
import torch
torch.manual_seed(0)
x = torch.randn(4, 3)
w = torch.randn(3, 2)
out = x @ w
out.g = torch.ones(4, 2) / 4
w.g = x.t() @ out.g
x.g = out.g @ w.t()
print(w.g, x.g.shape, hasattr(x, 'g'), hasattr(w, 'h'))
w2 = w.clone().requires_grad_(True)
(x @ w2).mean().backward()
print(torch.allclose(w.g, w2.grad))
del x.g
print(hasattr(x, 'g'))
"""


def test_a_tensor_keeps_the_programs_own_attributes():
    """fast.ai's backprop lesson stores each gradient by hand in `t.g`."""
    assert run(HAND_BACKPROP) == python(HAND_BACKPROP)


@pytest.mark.parametrize("attack", [
    "t.add = print", "t.backward = print", "t.size = 3", "setattr(t, 'add', print)",
    "t.__dict__['add'] = print", "setattr(t, '__dict__', {})", "print(t.__dict__)",
    "t.__class__ = int", "t.data = 3", "t.func_globals = {}", "t.gi_frame = 1",
    "t.data.f_locals = 1", "t.np = 1", "t.storage = 1", "setattr(t, 'tb_frame', 1)",
])
def test_a_tensors_own_attributes_cannot_hide_its_methods(attack):
    out = run(f"import torch\nt = torch.ones(2)\n{attack}\nprint(t.add(1))\n")
    assert out.startswith("!") and "tensor(" not in out, out
    assert "Traceback" not in out


def _reversing(lib, with_rule):
    class Flip(lib.autograd.Function):
        generate_vmap_rule = with_rule

        @staticmethod
        def forward(x):
            return x.flip(0)

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return Flip.apply(g)

    return Flip


@pytest.mark.parametrize("with_rule,chunk_size", [(False, None), (False, 1), (True, None),
                                                  (False, 2)])
def test_jacrev_runs_a_functions_backward_under_vmap(with_rule, chunk_size):
    """The extending-torch.func tutorial's jacrev of a Function whose backward applies
    another Function: PyTorch's rows run under vmap (a plain loop only with chunk_size=1),
    so that Function needs a vmap rule."""
    def outcome(lib):
        flip = _reversing(lib, with_rule)
        try:
            jac = lib.func.jacrev(flip.apply, chunk_size=chunk_size)(lib.tensor([1.0, 2.0, 3.0]))
            return repr(jac)
        except RuntimeError as e:
            return str(e)
    assert outcome(gt) == outcome(torch)
