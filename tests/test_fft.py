"""torch.fft against PyTorch: the 18 transforms (dtypes, shapes, strides, conj bits, grad_fn
chains, values, gradients), their argument handling and error texts, fftfreq/rfftfreq,
fftshift/ifftshift, gradcheck/gradgradcheck/forward AD of real and complex inputs."""

import numpy as np
import pytest

import gradcli.torch as gt
from gradcli.torch.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

TRANSFORMS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
              "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]


def _chain(t):
    """The grad_fn names from the result down its first edges."""
    names, fn = [], t.grad_fn
    while fn is not None and len(names) < 8:
        names.append(type(fn).__name__)
        nxt = [f for f, _ in fn.next_functions if f is not None]
        fn = nxt[0] if nxt else None
    return names


def _pair(arr, requires_grad=True):
    return (torch.tensor(arr, requires_grad=requires_grad),
            gt.tensor(arr, requires_grad=requires_grad))


def _arrays(kind: str, precision: str):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 4, 6))
    if kind == "complex":
        a = a + 1j * rng.standard_normal((3, 4, 6))
        return a.astype(np.complex64 if precision == "single" else np.complex128)
    return a.astype(np.float32 if precision == "single" else np.float64)


def _values(t):
    return t.detach().resolve_conj().numpy()


def _tol(precision):
    return dict(rtol=1.3e-6, atol=1e-5) if precision == "single" else dict(rtol=1e-7, atol=1e-7)


def _outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        return None, (type(e).__name__, str(e))


def _real_view(mod, r):
    return mod.view_as_real(r.resolve_conj()) if r.is_complex() else r


@pytest.mark.parametrize("name", TRANSFORMS)
@pytest.mark.parametrize("kind", ["real", "complex"])
@pytest.mark.parametrize("precision", ["single", "double"])
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_transform_matches_pytorch(name, kind, precision, norm):
    arr = _arrays(kind, precision)
    a, b = _pair(arr)
    r, r_err = _outcome(getattr(torch.fft, name), a, norm=norm)
    q, q_err = _outcome(getattr(gt.fft, name), b, norm=norm)
    assert q_err == r_err
    if r_err:
        return
    assert str(q.dtype) == str(r.dtype)
    assert tuple(q.shape) == tuple(r.shape)
    assert q.stride() == r.stride()
    assert q.is_conj() == r.is_conj()
    assert _chain(q) == _chain(r)
    np.testing.assert_allclose(_values(q), _values(r), **_tol(precision))
    w = np.random.default_rng(1).standard_normal(tuple(_real_view(torch, r).shape))
    (_real_view(torch, r) * torch.tensor(w, dtype=_real_view(torch, r).dtype)).sum().backward()
    (_real_view(gt, q) * gt.tensor(w, dtype=_real_view(gt, q).dtype)).sum().backward()
    assert b.grad.is_conj() == a.grad.is_conj()
    tol = dict(rtol=1e-4, atol=1e-4) if precision == "single" else dict(rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(_values(b.grad), _values(a.grad), **tol)


CALLS = [
    "F.fft(x, n=9)", "F.fft(x, n=2, dim=1)", "F.ifft(z, n=5, dim=0)", "F.rfft(x, n=7)",
    "F.irfft(z, n=5)", "F.irfft(z, n=9, dim=1)", "F.hfft(z, n=3)", "F.ihfft(x, n=3, dim=0)",
    "F.fftn(x, s=(3, 5))", "F.fftn(z, s=(-1, 2), dim=(2, 0))", "F.rfftn(x, s=(2, 7))",
    "F.irfftn(z, s=(2, 7))", "F.irfftn(z, s=(4, -1))", "F.hfftn(z, s=(3, 3))",
    "F.ihfftn(x, s=(3, 3), dim=(0, 2))", "F.hfft2(z)", "F.ihfft2(x, norm='ortho')",
    "F.irfft2(z, dim=(0, 1))", "F.fftn(x, dim=1)", "F.hfftn(z, s=(4,), dim=(1,))",
    "F.fft(z.transpose(0, 2), dim=1)", "F.rfft(x.transpose(0, 2), dim=1)",
    "F.fftn(z, dim=(2, 0))", "F.rfftn(x, dim=(2, 0))", "F.irfftn(z, dim=(0, 2))",
    "F.fft(xi)", "F.rfft(xi)", "F.irfft(xi)", "F.hfft(xi)", "F.fftn(xi)", "F.ihfftn(xi)",
    "F.fftn(T.tensor(2.))", "F.ifftn(T.tensor(2.))", "F.fftn(x, dim=())", "F.fftn(x, s=())",
    "F.fft(x.double(), n=3)", "F.fft(T.tensor([True, False]))",
    # errors
    "F.fft(x.half())", "F.fft(x.bfloat16())", "F.ihfft2(x.half())", "F.rfft(z)", "F.ihfft(z)",
    "F.ihfftn(z)", "F.rfft2(z)", "F.irfft(x, n=0)", "F.fft(x, n=-1)", "F.irfft(T.ones(1))",
    "F.fftn(x, dim=(0, 0))", "F.fftn(x, dim=(0, -3))", "F.fft(x, norm='x')",
    "F.fft(x, norm=1)", "F.fft(x, dim=3)", "F.fft(x, n=2.5)", "F.fftn(x, s=(1, 2, 3, 4))",
    "F.fftn(x, s=(2,), dim=(0, 1))", "F.fftn(x, s=(0, 3))", "F.fft2(T.ones(3))",
    "F.fft(T.tensor(1.))", "F.rfftn(T.tensor(1.))", "F.irfftn(T.tensor(1.))",
    "F.irfftn(z, dim=())", "F.hfftn(z, dim=())", "F.ihfftn(x, dim=())", "F.rfftn(x, dim=())",
    "F.fft([1.0])", "F.fftn(x, norm=2)",
    # frequencies and shifts
    "F.fftshift(x)", "F.ifftshift(z, dim=1)", "F.fftshift(x, dim=(0, 2))", "F.ifftshift(x, dim=-1)",
    "F.fftfreq(5)", "F.fftfreq(6, 0.3)", "F.rfftfreq(7, d=0.25, dtype=T.float64)",
    "F.fftfreq(4, dtype=T.int64)", "F.fftfreq(-2)", "F.fftfreq(0)", "F.rfftfreq(1)",
    "F.fftfreq(3, dtype=T.complex64)", "F.fftfreq(7, d=0.1)", "F.rfftfreq(10, 3.0)",
    "F.fftfreq(4, requires_grad=True)", "F.rfftfreq(4, d=T.tensor(2.))",
    "F.fftfreq(4, device='cuda')", "F.rfftfreq(4, device='cpu', dtype=T.float64)",
    "F.fftfreq(4, dtype=T.float16)", "F.fftfreq(5, dtype=T.bfloat16)", "F.fftfreq(4.0)",
]


def _describe(T, src):
    x = T.tensor(np.arange(24.0).reshape(2, 3, 4) * 0.37 % 1.1, dtype=T.float64)
    z = T.complex(x, x.flip(-1))
    xi = T.arange(6)
    r, err = _outcome(eval, src, {"F": T.fft, "T": T, "x": x, "z": z, "xi": xi})  # noqa: S307
    if err:
        return err
    values = r.detach().resolve_conj()
    if str(r.dtype) == "torch.bfloat16":  # (numpy has no bfloat16: compared widened)
        values = values.float()
    return (str(r.dtype), tuple(r.shape), r.stride(), r.is_conj(), r.requires_grad,
            r.grad_fn is not None and type(r.grad_fn).__name__, values.numpy())


@pytest.mark.parametrize("src", CALLS)
def test_call_matches_pytorch(src):
    want, got = _describe(torch, src), _describe(gt, src)
    if isinstance(want[0], str) and len(want) == 2:
        assert got == want
        return
    assert got[:6] == want[:6]
    np.testing.assert_allclose(got[6], want[6], rtol=1e-6, atol=1e-6)


def test_shifts_record_roll():
    a, b = _pair(np.arange(12.0).reshape(3, 4))
    for f in ("fftshift", "ifftshift"):
        r, q = getattr(torch.fft, f)(a), getattr(gt.fft, f)(b)
        assert _chain(q) == _chain(r) == ["RollBackward0", "AccumulateGrad"]
        np.testing.assert_array_equal(q.detach().numpy(), r.detach().numpy())


@pytest.mark.parametrize("name", TRANSFORMS)
def test_gradcheck_and_gradgradcheck(name):
    gen = np.random.default_rng(3)
    x = gt.tensor(gen.standard_normal((3, 4)), requires_grad=True)
    z = gt.tensor(gen.standard_normal((3, 4)) + 1j * gen.standard_normal((3, 4)),
                  requires_grad=True)
    f = getattr(gt.fft, name)
    one_dim = not name.endswith(("n", "2"))
    sized = {"n": 5} if one_dim else {"s": (2, 5)}
    checked = 0
    for inp in (x, z):
        if inp.is_complex() and name in ("rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"):
            continue
        for kw in ({}, {"norm": "ortho"}, {"norm": "forward"}, sized):
            assert gradcheck(lambda a, kw=kw: f(a, **kw), (inp,))
            assert gradgradcheck(lambda a, kw=kw: f(a, **kw), (inp,))
            assert gradcheck(lambda a, kw=kw: f(a, **kw), (inp,), check_forward_ad=True,
                             check_backward_ad=False)
            checked += 1
    assert checked >= 4


def test_double_backward_matches_pytorch():
    arr = np.random.default_rng(5).standard_normal((4, 5))
    out = []
    for T in (torch, gt):
        x = T.tensor(arr, requires_grad=True)
        y = T.fft.rfft(x)
        loss = (T.view_as_real(y) ** 2).sum()
        (g,) = T.autograd.grad(loss, x, create_graph=True)
        (gg,) = T.autograd.grad((g * g).sum(), x)
        out.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-7, atol=1e-7)


def test_forward_ad_tangents_match_pytorch():
    gen = np.random.default_rng(9)
    z = gen.standard_normal((3, 4)) + 1j * gen.standard_normal((3, 4))
    t = gen.standard_normal((3, 4)) + 1j * gen.standard_normal((3, 4))
    for name in ("fft", "ifft2", "irfft", "hfftn"):
        got = []
        for T in (torch, gt):
            fw = T.autograd.forward_ad
            with fw.dual_level():
                d = fw.make_dual(T.tensor(z), T.tensor(t))
                got.append(_values(fw.unpack_dual(getattr(T.fft, name)(d)).tangent))
        np.testing.assert_allclose(got[1], got[0], rtol=1e-7, atol=1e-7)


def test_out_argument_is_written():
    x = np.random.default_rng(2).standard_normal(6)
    r = torch.fft.rfft(torch.tensor(x), out=torch.empty(4, dtype=torch.complex128))
    o = gt.empty(4, dtype=gt.complex128)
    q = gt.fft.rfft(gt.tensor(x), out=o)
    assert q is o
    np.testing.assert_allclose(o.numpy(), r.numpy(), rtol=1e-7, atol=1e-7)


def test_facade_and_import_forms():
    import gradcli.torch.fft as fft_module

    assert gt.fft is fft_module
    assert fft_module.rfft is gt.fft.rfft
    with pytest.raises(AttributeError, match="^torch.fft.nope is not supported by gradcli$"):
        fft_module.nope  # noqa: B018


def test_printed_results_match_pytorch():
    """The exact zeros of a real signal's spectrum print with PyTorch's signs (the full
    spectrum is the one-sided one mirrored, as PyTorch fills it)."""
    def printed(T):
        x = T.arange(4.0)
        z = T.complex(T.arange(4.0), T.ones(4))
        return [str(r) for r in (T.fft.ifft(x), T.fft.ihfft(x), T.fft.fft(x), T.fft.hfft(z),
                                 T.fft.ihfft2(x.reshape(2, 2)), T.fft.fft(z), T.fft.ifft(z),
                                 T.fft.fftn(x.reshape(2, 2)), T.fft.fft2(x.reshape(2, 2)),
                                 T.fft.rfft(x.requires_grad_()))]

    assert printed(gt) == printed(torch)


def test_unpack_dual_of_a_complex_result_with_grad():
    """A complex primal that requires grad unpacks (its Identity alias records for complex)."""
    got = []
    for T in (torch, gt):
        fw = T.autograd.forward_ad
        x = T.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, T.tensor(np.ones((2, 3))))
            primal, tangent = fw.unpack_dual(T.fft.fft2(d))
            got.append((primal.requires_grad, primal.detach().numpy(), _values(tangent)))
    assert got[1][0] == got[0][0]
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(got[1][2], got[0][2], rtol=1e-7, atol=1e-7)


def test_cpu_autocast_runs_the_transforms_in_float32():
    """PyTorch's CPU autocast float32 list holds the transforms (not the hfft2/n, ihfft2/n
    forms, which then refuse bfloat16) and stft/istft."""
    def run(T):
        x = T.randn(4, 8).bfloat16()
        seen = []
        with T.autocast("cpu", dtype=T.bfloat16):
            for name in TRANSFORMS:
                try:
                    seen.append(str(getattr(T.fft, name)(x).dtype))
                except RuntimeError as e:
                    seen.append(str(e))
            seen.append(str(T.stft(x[0], 4, window=T.ones(4), return_complex=True).dtype))
        return seen

    assert run(gt) == run(torch)
