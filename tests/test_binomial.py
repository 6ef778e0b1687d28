"""torch.binomial against PyTorch: seeded draws bit for bit in both float dtypes, over the
inversion and BTRS regimes and the edge probabilities, with a generator, and the random
state left where PyTorch leaves it; the refusing node and the dtype errors."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402

CASES = [(5.0, 0.3), (100.0, 0.4), (100.0, 0.8), (7.0, 0.9), (1000.0, 0.02), (50.0, 0.5),
         (0.0, 0.5), (3.0, 1.0), (20.0, 0.0), (12.0, 0.97)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_bit_for_bit(dtype):
    counts = np.repeat([c for c, _ in CASES], 40).astype(dtype)
    probs = np.repeat([p for _, p in CASES], 40).astype(dtype)
    draws = []
    for lib in (gt, torch):
        lib.manual_seed(17)
        sample = lib.binomial(lib.tensor(counts), lib.tensor(probs))
        draws.append((sample.numpy(), lib.rand(3).numpy(), str(sample.dtype)))
    assert np.array_equal(draws[0][0], draws[1][0])
    assert np.array_equal(draws[0][1], draws[1][1])
    assert draws[0][2] == draws[1][2]


def test_binomial_generator_and_node():
    samples = []
    for lib in (gt, torch):
        g = lib.Generator().manual_seed(5)
        count = lib.full((6,), 30.0, requires_grad=True)
        sample = lib.binomial(count, lib.full((6,), 0.25), generator=g)
        assert type(sample.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
            sample.sum().backward()
        samples.append(sample.detach().numpy())
    assert np.array_equal(*samples)


@pytest.mark.parametrize("call", [
    lambda lib: lib.binomial(lib.ones(2, dtype=lib.int64), lib.ones(2)),
    lambda lib: lib.binomial(lib.ones(2), lib.ones(2, dtype=lib.float64)),
])
def test_binomial_errors(call):
    seen = []
    for lib in (gt, torch):
        with pytest.raises((RuntimeError, ValueError)) as info:
            call(lib)
        seen.append((type(info.value).__name__, str(info.value)))
    assert seen[0] == seen[1]
