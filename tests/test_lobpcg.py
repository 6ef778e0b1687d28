"""torch.lobpcg against PyTorch: the k largest / smallest eigenpairs (values within
PyTorch's own convergence tolerance, vectors up to sign), the generalized problem, batches,
the random start's draw (the state afterwards is PyTorch's), the autograd node and its
gradients (sign-independent losses), the size error."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402

RNG = np.random.default_rng(40)


def _spd(m, batch=()):
    M = RNG.standard_normal(batch + (m, m))
    return M @ np.swapaxes(M, -1, -2) + np.eye(m)


def _aligned(ours, theirs):
    signs = np.sign(np.sum(ours * theirs, axis=-2, keepdims=True))
    return ours * signs


@pytest.mark.parametrize("k, largest", [(1, None), (2, True), (3, False)])
@pytest.mark.parametrize("generalized", [False, True])
def test_lobpcg_values_and_vectors(k, largest, generalized):
    A = _spd(12)
    B = _spd(12) if generalized else None
    outs = []
    for lib in (gt, torch):
        lib.manual_seed(2)
        result = lib.lobpcg(lib.tensor(A), k=k, B=None if B is None else lib.tensor(B),
                            largest=largest)
        outs.append((result, lib.rand(2).numpy()))
    (v1, V1), after1 = outs[0]
    (v2, V2), after2 = outs[1]
    np.testing.assert_allclose(v1.numpy(), v2.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_aligned(V1.numpy(), V2.numpy()), V2.numpy(), rtol=1e-4,
                               atol=1e-4)
    assert np.array_equal(after1, after2)


def test_lobpcg_batched_and_float32():
    A = _spd(9, (2,)).astype(np.float32)
    results = []
    for lib in (gt, torch):
        lib.manual_seed(5)
        v, V = lib.lobpcg(lib.tensor(A), k=2)
        results.append((v.numpy(), V.numpy(), str(v.dtype), lib.rand(1).numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-3)
    assert results[0][2] == results[1][2] and results[0][1].shape == results[1][1].shape
    assert np.array_equal(results[0][3], results[1][3])


def test_lobpcg_gradients():
    A = _spd(10)
    grads = []
    for lib in (gt, torch):
        lib.manual_seed(0)
        a = lib.tensor(A, requires_grad=True)
        v, V = lib.lobpcg(a, k=2)
        assert type(v.grad_fn).__name__ == "LOBPCGAutogradFunctionBackward"
        (grad,) = lib.autograd.grad(v.sum() + (V * V).sum() + V.abs().sum(), a)
        grads.append(grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-6)


def test_lobpcg_too_many_pairs():
    seen = []
    for lib in (gt, torch):
        with pytest.raises(ValueError) as info:
            lib.lobpcg(lib.eye(5), k=2)
        seen.append(str(info.value))
    assert seen[0] == seen[1]
