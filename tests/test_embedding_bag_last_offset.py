"""torch.embedding_bag with include_last_offset and indices past the last offset, as
PyTorch's CPU kernel treats them: filed under the last bag in offset2bag and counted in
bag_size; taken in by max, by sum and mean with a padding_idx, and by every float64
path; left out of the forward of the reduced-precision sum and mean fast paths (mean
still dividing by the longer bag_size, its backward reading offset2bag). The one case
not compared is the gradient of the float32 plain sum, which PyTorch computes from an
offset2bag it never filled (uninitialised memory)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402

INDICES = [0, 2, 4, 1, 2]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("offsets", [[0, 2, 2], [0, 2, 3], [0, 1], [0, 0, 1], [0, 5]],
                         ids=lambda o: "-".join(map(str, o)))
@pytest.mark.parametrize("mode", [0, 1, 2], ids=["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_indices_past_the_last_offset_as_pytorch(dtype, offsets, mode, padding_idx):
    results = []
    for lib in (G, torch):
        lib.manual_seed(0)
        weight = lib.randn(5, 3, dtype=getattr(lib, dtype), requires_grad=True)
        out = lib.embedding_bag(weight, lib.tensor(INDICES), lib.tensor(offsets), False, mode,
                                False, None, True, padding_idx)
        grad_out = lib.arange(3.0 * (len(offsets) - 1), dtype=getattr(lib, dtype))
        out[0].backward(grad_out.reshape(-1, 3) + 1)
        results.append(([np.array(t.tolist()) for t in out], out[0].grad_fn.name(),
                        np.array(weight.grad.tolist())))
    (ours, ours_fn, ours_grad), (theirs, theirs_fn, theirs_grad) = results
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1.3e-6, atol=1e-5)
    for a, b in zip(ours[1:], theirs[1:]):  # offset2bag, bag_size, max_indices
        assert a.tolist() == b.tolist()
    assert ours_fn == theirs_fn == "EmbeddingBagBackward0"
    if not (dtype == "float32" and mode == 0 and padding_idx is None):
        np.testing.assert_allclose(ours_grad, theirs_grad, rtol=1.3e-6, atol=1e-5)


def test_module_with_include_last_offset_as_pytorch():
    results = []
    for lib in (G, torch):
        lib.manual_seed(1)
        bag = lib.nn.EmbeddingBag(6, 2, mode="max", include_last_offset=True)
        y = bag(lib.tensor([1, 5, 3, 0, 2]), lib.tensor([0, 1, 3]))
        y.sum().backward()
        results.append((np.array(y.tolist()), np.array(bag.weight.grad.tolist())))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1.3e-6, atol=1e-5)
    np.testing.assert_allclose(results[0][1], results[1][1])
