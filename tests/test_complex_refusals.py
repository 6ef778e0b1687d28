"""Complex input where PyTorch refuses it (clamp and relu, sorting, cumulative extremes,
searching, the nn.functional activations...), with PyTorch's exception and text; and
anomaly mode's nan check of complex gradients."""

import warnings

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

CALLS = [
    "T.relu(z)", "z.relu()", "z.relu_()", "T.nn.functional.relu(z)", "T.clamp(z, 0, 1)",
    "z.clamp(min=0)", "z.clamp_(0, 1)", "T.clamp_min(z, 0)", "T.clamp_max(z, 1)",
    "T.clip(z, 0, 1)", "T.clamp(z, z, z)", "T.max(z)", "T.min(z)", "T.max(z, 0)",
    "T.min(z, dim=0)", "T.sort(z)", "T.argsort(z)", "T.msort(z)", "T.topk(z, 1)", "T.amax(z)",
    "T.amin(z)", "T.aminmax(z)", "T.argmax(z)", "T.argmin(z)", "T.cummax(z, 0)",
    "T.cummin(z, 0)", "T.maximum(z, z)", "T.minimum(z, z)", "T.fmax(z, z)", "T.fmin(z, z)",
    "T.median(z)", "T.nanmedian(z)", "T.kthvalue(z, 1)", "T.mode(z)", "T.unique(z)",
    "T.searchsorted(z, z)", "T.bucketize(z, z.real)", "T.histc(z)", "T.isin(z, z)",
    "T.erfinv(z)", "T.copysign(z, z)", "T.nextafter(z, z)", "T.xlogy(z, z)", "T.signbit(z)",
    "T.isposinf(z)", "T.isneginf(z)", "T.floor(z)", "T.sign(z)",
    "T.nn.functional.leaky_relu(z)", "T.nn.functional.elu(z)", "T.nn.functional.hardtanh(z)",
    "T.nn.functional.relu6(z)", "T.nn.functional.softplus(z)",
    "T.nn.functional.threshold(z, 0.1, 0.)",
    # what still works on complex input
    "T.sigmoid(z)", "T.cumsum(z, 0)", "T.isin(z.real, z.real)", "T.clamp(z.real, 0, 1)",
]


def _outcome(T, src):
    z = T.tensor([1 + 2j, -3 + 0.5j, 2 - 1j], dtype=T.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", str(eval(src, {"T": T, "z": z}))  # noqa: S307 - the test's own calls
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            return type(e).__name__, str(e)


@pytest.mark.parametrize("src", CALLS)
def test_complex_input_as_pytorch(src):
    assert _outcome(gt, src) == _outcome(torch, src)


def test_anomaly_mode_checks_complex_gradients():
    def run(T):
        z = T.tensor([0j, 1 + 1j], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with T.autograd.detect_anomaly():
                try:
                    (z.sqrt() / z.sqrt()).abs().sum().backward()
                except RuntimeError as e:
                    return str(e)
        return None

    want = run(torch)
    assert want is not None and "nan" in want
    assert run(gt) == want


def test_logsumexp_of_complex_input():
    """log(sum(exp(z))) of complex z (it read the real parts only), LogsumexpBackward0 with
    PyTorch's complex gradient."""
    import numpy as np

    got = []
    for T in (torch, gt):
        z = T.tensor([[1 + 2j, -3 + 0.5j, 2 - 1j], [0.5j, 1, -1j]], requires_grad=True)
        r = T.logsumexp(z, 1)
        T.view_as_real(r).sum().backward()
        got.append((str(r.dtype), type(r.grad_fn).__name__, r.detach().numpy(),
                    z.grad.resolve_conj().numpy()))
    assert got[1][:2] == got[0][:2]
    np.testing.assert_allclose(got[1][2], got[0][2], rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(got[1][3], got[0][3], rtol=1e-7, atol=1e-7)
    z = gt.tensor([[1 + 2j, -3 + 0.5j], [0.5j, 1]], dtype=gt.complex128, requires_grad=True)
    assert gt.autograd.gradcheck(lambda a: gt.logsumexp(a, 0), (z,))
    assert gt.autograd.gradgradcheck(lambda a: gt.logsumexp(a, 1), (z,))
