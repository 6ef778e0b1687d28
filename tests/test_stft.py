"""torch.stft / torch.istft against PyTorch: shapes, strides, dtypes, grad_fn chains,
values and gradients, the argument errors (PyTorch's messages naming the call), the
return_complex refusal and the once-only warnings."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

SIGNAL = np.random.default_rng(0).standard_normal(30)


def _chain(t):
    names, fn = [], t.grad_fn
    while fn is not None and len(names) < 14:
        names.append(type(fn).__name__)
        nxt = [f for f, _ in fn.next_functions if f is not None]
        fn = nxt[0] if nxt else None
    return names


def _describe(T, src, leaf_name):
    """What `src` gives under module T (torch or gradcli.torch): its error, or its dtype,
    shape, strides, grad_fn chain, values and the gradient of a fixed weighted sum."""
    x = T.tensor(SIGNAL, requires_grad=True)
    w = T.hann_window(8, dtype=T.float64)
    S = T.stft(x.detach(), 8, window=w, return_complex=True).requires_grad_()
    scope = {"T": T, "x": x, "w": w, "S": S}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = eval(src, scope)  # noqa: S307 - the test's own expressions
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            return type(e).__name__, str(e)
    grad = None
    flat = T.view_as_real(r.resolve_conj()) if r.is_complex() else r
    if flat.requires_grad:
        weights = np.cos(np.arange(flat.numel())).reshape(tuple(flat.shape))
        (flat * T.tensor(weights, dtype=flat.dtype)).sum().backward()
        leaf = scope[leaf_name]
        grad = leaf.grad.resolve_conj().numpy() if leaf.grad is not None else None
    return (str(r.dtype), tuple(r.shape), r.stride(), _chain(r),
            r.detach().resolve_conj().numpy(), grad)


def _compare(src, leaf):
    want, got = _describe(torch, src, leaf), _describe(gt, src, leaf)
    if len(want) == 2:
        assert got == want
        return
    assert got[:4] == want[:4]
    np.testing.assert_allclose(got[4], want[4], rtol=1e-7, atol=1e-7)
    if want[5] is None:
        assert got[5] is None
    else:
        np.testing.assert_allclose(got[5], want[5], rtol=1e-7, atol=1e-7)


STFT = [
    "T.stft(x, 8, window=w, return_complex=True)",
    "T.stft(x, 8, window=w, return_complex=True, center=False)",
    "T.stft(x.reshape(2, 15), 4, window=T.hann_window(4, dtype=T.float64), return_complex=True,"
    " center=False, onesided=False)",
    "T.stft(x, 8, win_length=6, window=T.hann_window(6, dtype=T.float64), return_complex=False)",
    "T.stft(x, 8, hop_length=3, win_length=5, return_complex=True, normalized=True)",
    "T.stft(x, 8, window=w, return_complex=True, pad_mode='constant')",
    "T.stft(x, 8, window=w, return_complex=True, pad_mode='replicate')",
    "T.stft(x, 8, window=w, return_complex=True, center=False, align_to_window=True)",
    "T.stft(x.float(), 8, window=w, return_complex=True)",
    "T.stft(T.complex(x, x.flip(0)), 8, window=w, return_complex=True)",
    "T.stft(x, 8, window=w.to(T.complex128))",
    "x.stft(8, window=w, return_complex=True)",
    "T.stft(x, 24, hop_length=4, return_complex=True, center=False, onesided=False)",
    "T.stft(x, 8, window=w, center='a', return_complex=True)",  # (only Python's `if` reads it)
    # a str onesided: the parser's first declaration reads the 9 arguments torch.functional
    # hands on as (..., center, pad_mode, normalized, onesided)
    "T.stft(T.complex(x, x.flip(0)), 8, window=w, center=False, onesided='reflect',"
    " normalized=True, return_complex=True)",
    "T.stft(T.complex(x, x.flip(0)), 8, window=w, center=False, onesided='constant',"
    " normalized=True, return_complex=True, align_to_window=False)",
    "T.stft(T.complex(x, x.flip(0)), 8, window=w, center=False, onesided='reflect',"
    " return_complex=True)",
    "T.stft(T.complex(x, x.flip(0)), 8, window=w, center=False, onesided='bad',"
    " normalized=True, return_complex=False)",
    "T.stft(x, 8, window=w, center=False, onesided='reflect', normalized=True,"
    " return_complex=True)",
    # errors
    "T.stft(x, 8)", "T.stft(x, 8, window=w)",
    "T.stft(x, 40, window=w, return_complex=True)",
    "T.stft(x, 8, window=w, hop_length=0, return_complex=True)",
    "T.stft(x, 8, win_length=9, return_complex=True)",
    "T.stft(x, 8, window=T.ones(5), return_complex=True)",
    "T.stft(T.arange(20), 8, return_complex=True)",
    "T.stft(x.reshape(1, 2, 15), 4, return_complex=True)",
    "T.stft(T.complex(x, x), 8, window=w, onesided=True, return_complex=True)",
    "T.stft(x, 8, window=w, return_complex=True, pad_mode='bad')",
    "T.stft(x, 8, window=w, return_complex=True, align_to_window=True)",
    "T.stft(x, 50, return_complex=True, center=False)",
]


@pytest.mark.parametrize("src", STFT)
def test_stft_matches_pytorch(src):
    _compare(src, "x")


ISTFT = [
    "T.istft(S, 8, window=w)", "T.istft(S, 8)", "T.istft(S, 8, window=w, length=40)",
    "T.istft(S, 8, window=w, length=10)", "T.istft(S, 8, window=w, hop_length=1)",
    "T.istft(S, 8, window=w, normalized=True, hop_length=4)",
    "T.istft(S[None].expand(2, -1, -1), 8, window=w, length=20)",
    "T.istft(S, 8, window=T.hann_window(6, dtype=T.float64), win_length=6)",
    "S.istft(8, window=w, center=True, length=25)",
    "T.istft(T.stft(T.tensor(SIGNAL), 8, window=w, return_complex=True, onesided=False)"
    ", 8, window=w)",
    "T.istft(T.stft(T.tensor(SIGNAL).to(T.complex128), 8, window=w, return_complex=True), 8,"
    " window=w, return_complex=True)",
    "T.istft(T.stft(T.tensor(SIGNAL), 8, hop_length=3, window=w, return_complex=True,"
    " center=False), 8, hop_length=3, window=w, center=False)",
    # errors
    "T.istft(S.real, 8, window=w)", "T.istft(S[:0], 8, window=w)", "T.istft(S[0], 8, window=w)",
    "T.istft(S, 8, window=w, onesided=False)", "T.istft(S, 6, window=w)",
    "T.istft(S, 8, window=w, hop_length=9)", "T.istft(S, 8, window=w, win_length=9)",
    "T.istft(S, 8, window=T.ones(7))", "T.istft(S, 8, window=T.zeros(8, dtype=T.float64))",
    "T.istft(S, 8, window=w, return_complex=True)", "T.istft(S, 8, window=w.to(T.complex128))",
    "T.istft(S, 8, window=w, center=False)", "T.istft(S.unsqueeze(0).unsqueeze(0), 8, window=w)",
    "T.istft(S, 8, window=[1.0])", "T.istft(S, 8, window=w, length=2.5)",
]


@pytest.mark.parametrize("src", ISTFT)
def test_istft_matches_pytorch(src):
    _compare(src, "S")


# Bad arguments: torch.stft and Tensor.stft are Python in PyTorch (its own steps fail first:
# align_to_window, input.dim(), `n_fft // 2`, F.pad's mode, then its C++ stft's parser over
# the 9 arguments it hands on); torch.istft is C++, and Tensor.istft hands its arguments on
# by position (return_complex by keyword), so the parser's texts carry those positions.
ARG_ERRORS = [
    "T.stft(x, 'a', window=w, return_complex=True)",
    "T.stft(x, None, window=w, return_complex=True)",
    "T.stft(x, ['a'], window=w, return_complex=True)",
    "T.stft(x, 'a', window=w, return_complex=True, center=False)",
    "T.stft(x, 8.0, window=w, return_complex=True)",
    "T.stft(x, True, return_complex=True)",
    "T.stft(x, 8, 'a', window=w, return_complex=True)",
    "T.stft(x, 8, window='a', return_complex=True)",
    "T.stft(x, 8, 2, 8, 3, return_complex=True)",
    "T.stft(x, 8, window=w, pad_mode=3, return_complex=True)",
    "T.stft(x, 8, window=w, pad_mode=None, return_complex=True)",
    "T.stft(x, 8, window=w, normalized=None, return_complex=True)",
    "T.stft(x, 8, window=w, return_complex='a')",
    "T.stft(x, 8, window=w, center=False, align_to_window='a', return_complex=True)",
    "T.stft(x, 8, window=w, align_to_window='a', return_complex=True)",
    "T.stft('a', 8, return_complex=True)", "T.stft([1.0, 2.0], 8, return_complex=True)",
    "T.stft('a', 8, return_complex=True, center=False)",
    "T.stft(x, 8, return_complex=True, zz=1)", "T.stft(x, *(1,) * 11)",
    "x.stft('a')", "x.stft(None)", "x.stft(*(1,) * 9)", "x.stft(8, 'a', return_complex=True)",
    "x.stft(8, pad_mode=3, return_complex=True)", "x.stft(8, zz=3)",
    "T.istft(S, 'a')", "T.istft(S, 8, 'a')", "T.istft(S, 8, window=3)",
    "T.istft(S, 8, center=None)", "T.istft(S, 8, window=w, return_complex=None)",
    "T.istft(S, n_fft=8, window=w, length='a')", "T.istft(S, *(1,) * 9)",
    "S.istft('a')", "S.istft(None)", "S.istft(['a'])", "S.istft(*(1,) * 9)",
    "S.istft(8.0, window=w)", "S.istft(8, 'a')", "S.istft(8, window=w, center=None)",
    "S.istft(8, window=w, length='a')", "S.istft(8, window=w, return_complex=None)",
    "S.istft(8, zz=1)",
    "T.nn.functional.pad(x[None], [2, 2], 3)", "T.nn.functional.pad(x[None], [2, 2], mode=None)",
]


@pytest.mark.parametrize("src", ARG_ERRORS)
def test_argument_errors_are_pytorchs(src):
    want = _describe(torch, src, "x")
    assert len(want) == 2, "PyTorch accepts these arguments"
    assert _describe(gt, src, "x") == want


AUTOCAST = [
    "T.stft(x.bfloat16(), 8, window=w.bfloat16(), return_complex=True)",
    "T.stft(x.bfloat16(), 8, window=w.bfloat16(), return_complex=True, pad_mode='constant')",
    "T.stft(x.bfloat16(), 8, window=w.bfloat16(), return_complex=True, center=False)",
    "T.nn.functional.pad(x.bfloat16().view(1, 1, 30), [2, 2], 'reflect')",
    "T.nn.functional.pad(x.bfloat16().view(1, 1, 5, 6), [2, 2, 1, 1], 'replicate')",
    "T.nn.functional.pad(x.bfloat16().view(1, 1, 2, 3, 5), [1] * 6, 'reflect')",
    "T.nn.functional.pad(x.bfloat16().view(1, 1, 1, 5, 6), [1] * 6, 'replicate')",
    "T.nn.functional.pad(x.bfloat16().view(1, 1, 30), [2, 2], 'constant')",
]


@pytest.mark.parametrize("src", AUTOCAST)
def test_autocast_casts_where_pytorch_does(src):
    """CPU autocast's float32 list holds reflection_pad1d/2d and replication_pad1d/2d/3d
    (so stft's centring pad casts there, before the frames) and ATen's stft."""
    def described(T):
        with T.autocast("cpu"):
            r = eval(src, {"T": T, "x": T.tensor(SIGNAL, requires_grad=True),  # noqa: S307
                           "w": T.hann_window(8, dtype=T.float64)})
        return str(r.dtype), _chain(r)

    assert described(gt) == described(torch)


def test_round_trip_and_gradcheck():
    x = gt.tensor(SIGNAL[:16], requires_grad=True)
    w = gt.hann_window(8, dtype=gt.float64)
    back = gt.istft(gt.stft(x, 8, window=w, return_complex=True), 8, window=w, length=16)
    np.testing.assert_allclose(back.detach().numpy(), SIGNAL[:16], rtol=1e-7, atol=1e-12)
    assert gt.autograd.gradcheck(
        lambda a: gt.stft(a, 8, hop_length=3, window=w, return_complex=True), (x,))
    assert gt.autograd.gradgradcheck(
        lambda a: gt.stft(a, 8, hop_length=3, window=w, return_complex=True), (x,))
    S = gt.stft(x.detach(), 8, window=w, return_complex=True).requires_grad_()
    assert gt.autograd.gradcheck(lambda s: gt.istft(s, 8, window=w), (S,))


WARNING_CALLS = {
    "stft": "T.stft(T.ones(16), 8, return_complex=False); T.stft(T.ones(16), 8, return_complex=False)",
    "stft_complex": "T.stft(T.ones(16), 8, return_complex=True); T.stft(T.ones(16), 8, "
                    "return_complex=False)",
    "istft": "S = T.stft(T.ones(16), 8, return_complex=True); T.istft(S, 8); T.istft(S, 8)",
    "length": "w = T.hann_window(8); S = T.stft(T.ones(16), 8, window=w, return_complex=True); "
              "T.istft(S, 8, window=w, length=30); T.istft(S, 8, window=w, length=30)",
}


@pytest.mark.parametrize("case", sorted(WARNING_CALLS))
def test_warnings_are_pytorchs_and_once(case):
    """Each process warns once, with PyTorch's text (PyTorch in a fresh process too)."""
    def caught(module):
        code = ("import warnings\nwarnings.simplefilter('always')\n"
                f"import {module} as T\n"
                "with warnings.catch_warnings(record=True) as seen:\n"
                "    warnings.simplefilter('always')\n"
                f"    {WARNING_CALLS[case]}\n"
                "print(repr([str(s.message).split(' (Triggered internally')[0] for s in seen]))\n")
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True).stdout

    want = caught("torch")
    assert want.count("'") >= 2  # (a warning at least)
    assert caught("gradcli.torch") == want
