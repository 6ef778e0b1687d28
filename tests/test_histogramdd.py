"""torch.histogramdd against PyTorch: counts, weights, density, edges (from the data, from
range, given as tensors), degenerate and empty inputs, the refusing nodes and errors."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402

RNG = np.random.default_rng(30)
DATA = RNG.standard_normal((40, 2))


def _case(lib, name, dtype):
    x = lib.tensor(DATA.astype(dtype))
    if name == "int":
        return lib.histogramdd(x, bins=3)
    if name == "list":
        return lib.histogramdd(x, bins=[3, 5])
    if name == "range":
        return lib.histogramdd(x, bins=[2, 4], range=[-1.0, 1.0, -2.0, 2.0])
    if name == "density":
        return lib.histogramdd(x, bins=[3, 2], density=True)
    if name == "weights":
        return lib.histogramdd(x, bins=4, weight=lib.tensor(np.arange(40.0).astype(dtype)))
    if name == "edges":
        return lib.histogramdd(x, bins=[lib.tensor([-1.0, 0.0, 1.0], dtype=x.dtype),
                                        lib.tensor([-3.0, 0.0, 0.5, 3.0], dtype=x.dtype)])
    if name == "constant":
        return lib.histogramdd(lib.ones(3, 1, dtype=x.dtype), bins=2)
    if name == "empty":
        return lib.histogramdd(lib.zeros(0, 2, dtype=x.dtype), bins=2)
    if name == "batched":
        return lib.histogramdd(x.reshape(4, 10, 2), bins=2)
    raise AssertionError(name)


@pytest.mark.parametrize("name", ["int", "list", "range", "density", "weights", "edges",
                                  "constant", "empty", "batched"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogramdd(name, dtype):
    ours, theirs = (_case(lib, name, dtype) for lib in (gt, torch))
    assert type(ours).__name__ == "histogramdd"
    assert str(ours.hist.dtype) == str(theirs.hist.dtype)
    np.testing.assert_allclose(ours.hist.numpy(), theirs.hist.numpy(), rtol=1.3e-6, atol=1e-6)
    assert len(ours.bin_edges) == len(theirs.bin_edges)
    for a, b in zip(ours.bin_edges, theirs.bin_edges):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1.3e-6, atol=1e-6)


def test_histogramdd_refuses_backward():
    for lib in (gt, torch):
        x = lib.tensor(DATA, requires_grad=True)
        result = lib.histogramdd(x, bins=2)
        assert type(result.hist.grad_fn).__name__ == "NotImplemented"
        assert result.bin_edges[0].requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::_histogramdd_from_bin_cts "
                                               "is not implemented"):
            result.hist.sum().backward()


@pytest.mark.parametrize("call", [
    lambda lib: lib.histogramdd(lib.ones(3), bins=2),
    lambda lib: lib.histogramdd(lib.ones(3, 2), bins=[2]),
    lambda lib: lib.histogramdd(lib.ones(3, 2, dtype=lib.int64), bins=2),
])
def test_histogramdd_errors(call):
    seen = []
    for lib in (gt, torch):
        with pytest.raises((RuntimeError, NotImplementedError)) as info:
            call(lib)
        seen.append((type(info.value).__name__, str(info.value)))
    assert seen[0] == seen[1]
