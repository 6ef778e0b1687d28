"""`tensor op python_scalar` hands numpy's ufunc a cached 0-d array of the tensor's dtype
instead of the Python scalar (registry._scalar_operand): the values must stay numpy's
weak-scalar values bit for bit, and the cache must neither grow nor confuse scalars."""

import numpy as np
import pytest

import gradcli.torch as torch
from gradcli.engine.ops import registry
from gradcli.engine.ops.registry import OPS, _scalar_operand

BINARY_UFUNC_OPS = [op for op in OPS.values() if op.binary_ufunc]
OPERATORS = {"add": lambda t, s: t + s, "sub": lambda t, s: t - s,
             "mul": lambda t, s: t * s, "div": lambda t, s: t / s}


def _scalars():
    rng = np.random.default_rng(5)
    fixed = [2, 0, 1, -1, 3, 1 << 24, -(1 << 24), (1 << 24) + 1, 1 << 40, 0.0, -0.0, 0.1,
             1.0001, 1e-45, 1e-320, 3.4e38, 3.5e38, 1e300, -1e300, float("inf"),
             float("-inf"), float("nan"), 2.5, 1 / 3]
    return fixed + [float(v) for v in rng.standard_normal(200) * 10.0 ** rng.integers(-330, 310, 200)]


def _arrays(dtype):
    rng = np.random.default_rng(6)
    values = rng.standard_normal(300) * 10.0 ** rng.integers(-40, 40, 300)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 3e38]
    flat = np.concatenate([values, specials]).astype(dtype)
    return [flat, flat[5:6].reshape(())]


def _bits(x) -> bytes:
    x = np.asarray(x)
    return x.dtype.str.encode() + repr(x.shape).encode() + x.tobytes()


def test_the_operators_take_the_cached_operand_path():
    # every two-input ufunc op takes the path (fmax, hypot, ...); the operators must be
    # among them, and the test below checks each one's bits
    assert set(OPERATORS) <= {op.name for op in BINARY_UFUNC_OPS}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_operand_gives_the_weak_scalar_bits(dtype):
    for op in BINARY_UFUNC_OPS:
        for a in _arrays(dtype):
            for s in _scalars():
                want = op.forward(a, s)
                got = op.forward(a, _scalar_operand(s, a.dtype))
                assert _bits(got) == _bits(want), (op.name, dtype, s)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_tensor_operators_with_scalars_match_numpy(dtype):
    for name, apply in OPERATORS.items():
        ufunc = OPS[name].forward
        for a in _arrays(dtype.np):
            t = torch.tensor(a.tolist(), dtype=dtype)
            for s in _scalars():
                for _ in range(2):  # the second time takes the cached operand
                    assert _bits(apply(t, s)._data) == _bits(ufunc(t._data, s)), (name, s)


def test_signed_zeros_and_nans_are_told_apart():
    t = torch.tensor([1.0, -2.0])
    assert [str(v) for v in (t * -0.0).tolist()] == ["-0.0", "0.0"]
    assert [str(v) for v in (t * 0.0).tolist()] == ["0.0", "-0.0"]
    assert [str(v) for v in (t * -0.0).tolist()] == ["-0.0", "0.0"]


def test_changing_scalars_in_a_loop_and_the_cache_stays_small():
    t = torch.tensor([0.3, -1.2, 2.5], requires_grad=True)
    for i in range(1000):
        s = i / 7  # a new float object every time round
        y = t * s
        assert _bits(y._data) == _bits(t._data * s)
        assert len(registry._OPERANDS) <= 64
    y.sum().backward()
    assert t.grad.tolist() == pytest.approx([999 / 7] * 3)


def test_held_operands_are_read_only():
    s = 1.5
    torch.tensor([1.0]) * s
    held = registry._OPERANDS[id(s)][2]
    assert held.ndim == 0 and not held.flags.writeable


def test_gradients_through_cached_scalars():
    x = torch.tensor([0.3, -1.2, 2.5], requires_grad=True)
    for _ in range(3):
        y = x * 2
        while y.norm() < 1000:
            y = y * 2
        y.backward(torch.tensor([0.1, 1.0, 0.0001]))
    assert x.grad.tolist() == pytest.approx([3 * 51.2, 3 * 512.0, 3 * 0.0512])
    assert y.grad_fn.name() == "MulBackward0"


COMPARISONS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
               ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
_COMPARE_INTS = [1000, 0, -3, (1 << 24) - 1, 1 << 24, (1 << 24) + 1, 2147483647, -2147483648]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_zero_dim_comparisons_with_scalars_are_numpys(dtype):
    """`while y.norm() < 1000:` takes a scalar path (_compare): its answer must be numpy's
    weak-scalar comparison everywhere, ints past float32's 2^24 included."""
    values = [v for v in _arrays(dtype.np)[0][::7]] + [np.float64(16777217.0), 16777215.0]
    for v in values:
        t = torch.tensor(float(v), dtype=dtype)
        d = t._data[()]
        for s in _scalars()[:40] + _COMPARE_INTS:
            for name, cmp in COMPARISONS.items():
                got = cmp(t, s)
                assert got.dtype == torch.bool and got.shape == ()
                assert bool(got) == bool(cmp(d, s)), (dtype, float(v), s, name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zero_dim_comparisons_with_scalars_are_pytorchs(dtype):
    real = pytest.importorskip("torch")
    values = [1.0, 0.1, -0.0, 16777216.0, 16777215.0, 3.4e38, float("inf"), float("nan"), 999.99994]
    for v in values:
        t, r = torch.tensor(v, dtype=getattr(torch, dtype)), real.tensor(v, dtype=getattr(real, dtype))
        for s in [0.1, 2.5, 1e300, -1e-320, float("nan")] + _COMPARE_INTS:
            for name, cmp in COMPARISONS.items():
                assert bool(cmp(t, s)) == bool(cmp(r, s)), (dtype, v, s, name)
