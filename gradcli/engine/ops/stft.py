"""torch.stft / torch.istft (and the Tensor methods): the short-time Fourier transform and
its inverse, composed as PyTorch composes them (torch.functional's centre padding, then
ATen's frames as an as_strided view, the window product and one r2c/c2c transform; the
inverse by c2r/c2c, the window product and col2im's overlap-add), so grad_fn chains,
errors and warnings are PyTorch's and every step is differentiable."""

from __future__ import annotations

from .. import autocast_state as _autocast
from ..limits import check_count
from ..tensor import Tensor
from ..warn_site import warn_once
from . import complex as _complex
from . import fft as _fft
from .registry import PUBLIC, public

#: the declarations PyTorch's parser reads the calls of its C++ stft (the one
#: torch.functional.stft ends in, after its own centring) against
_STFT_FORMATS = (
    "stft(Tensor input, int64_t n_fft, int64_t? hop_length=None, int64_t? win_length=None, "
    "Tensor? window=None, bool center=True, c10::string_view pad_mode=\"reflect\", "
    "bool normalized=False, bool? onesided=None, bool? return_complex=None, "
    "bool? align_to_window=None)",
    "stft(Tensor input, int64_t n_fft, int64_t? hop_length=None, int64_t? win_length=None, "
    "Tensor? window=None, bool normalized=False, bool? onesided=None, "
    "bool? return_complex=None, bool? align_to_window=None)",
)
_PARSED: list = []


def _opt_int(value) -> bool:
    return value is None or type(value) is int


def _opt_bool(value) -> bool:
    return value is None or type(value) is bool


def _stft_parser_error(args: tuple) -> TypeError | None:
    """PyTorch's TypeError for this positional call of its C++ stft, or None when the
    arguments fit (asked only once the cheap test of the usual types failed)."""
    from .arg_checks import ArgError, Conversion, Signature, _diagnose

    if not _PARSED:
        _PARSED.append([Signature(f) for f in _STFT_FORMATS])
    try:
        return _diagnose(_PARSED[0], args, {})
    except ArgError as err:
        return TypeError(str(err))
    except Conversion as err:
        return err.error


def _type_text(t) -> str:
    """ATen's toString of a CPU tensor type: torch.DoubleTensor, torch.ComplexFloatTensor."""
    return f"torch.{_complex._scalar_type_name(t.dtype)}Tensor"


def _sizes(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _opt(value) -> str:
    return "None" if value is None else str(int(bool(value)))


@public("torch.stft", "Tensor.stft")
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """torch.functional.stft's steps in its order (PyTorch writes it in Python, and
    Tensor.stft hands every argument on to it): the align_to_window test, the centring
    (the input's dim(), `n_fft // 2`, F.pad with `pad_mode`: each fails as Python or
    F.pad fails on a bad argument), then its C++ stft, whose parser reads the rest."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        input = _centred(input, n_fft, pad_mode)
    if not (isinstance(input, Tensor) and type(n_fft) is int and _opt_int(hop_length)
            and _opt_int(win_length) and (window is None or isinstance(window, Tensor))
            and type(normalized) is bool and _opt_bool(onesided) and _opt_bool(return_complex)
            and _opt_bool(align_to_window)):
        error = _stft_parser_error((input, n_fft, hop_length, win_length, window, normalized,
                                    onesided, return_complex, align_to_window))
        if error is not None:
            raise error
        if isinstance(onesided, str) and normalized:
            # (only the parser's first declaration fits: it reads the 9 arguments as
            # (..., center, pad_mode, normalized, onesided), and ATen's stft of that form
            # centres a 1-d signal as one row, then squeezes the row out of the result)
            single = input.dim() == 1
            input = _centred(input.unsqueeze(0) if single else input, n_fft, onesided)
            out = stft(input, n_fft, hop_length, win_length, window, False,
                       normalized=return_complex, onesided=align_to_window)
            return out.squeeze_(0) if single else out
        if isinstance(onesided, str):  # (that declaration without centring)
            normalized, onesided, return_complex, align_to_window = (
                return_complex, align_to_window, None, None)
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list: ATen's stft)
        return _autocast.fp32(_stft_frames, input, n_fft, hop_length, win_length, window,
                              normalized, onesided, return_complex, align_to_window)
    return _stft_frames(input, n_fft, hop_length, win_length, window, normalized, onesided,
                        return_complex, align_to_window)


def _centred(input, n_fft, pad_mode):
    """The signal padded by `n_fft // 2` at each end of its last dim (viewed as 3-d for
    F.pad), as torch.functional.stft and ATen's centring stft pad it."""
    signal_dim = input.dim()
    extended = [1] * (3 - signal_dim) + list(input.size())
    pad = int(n_fft // 2)
    # (--max-elements: the padding is the one thing n_fft alone makes large)
    check_count(input.numel() // max(input.shape[-1], 1) * (input.shape[-1] + 2 * pad)
                if signal_dim else 1)
    padded = PUBLIC["torch.nn.functional.pad"](input.view(extended), [pad, pad], pad_mode)
    return padded.view(padded.shape[-signal_dim:])


def _stft_frames(self, n_fft, hop_length, win_length, window, normalized, onesided,
                 return_complex, align_to_window):
    """ATen's stft (without centring)."""
    if window is None:
        warn_once("stft_window", "A window was not provided. A rectangular window will be "
                   "applied,which is known to cause spectral leakage. Other windows such as "
                   "torch.hann_window or torch.hamming_window are recommended to reduce spectral "
                   "leakage.To suppress this warning and use a rectangular window, explicitly "
                   "set `window=torch.ones(n_fft, device=<device>)`. (Triggered internally at "
                   "/__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:835.)", inside=True)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    complex_window = window is not None and window.is_complex()
    wants_complex = return_complex if return_complex is not None else (
        self.is_complex() or complex_window)
    if not wants_complex:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
        warn_once("stft_real", "stft with return_complex=False is deprecated. In a future "
                   "pytorch release, stft will return complex tensors for all inputs, and "
                   "return_complex=False will raise an error.\nNote: you can still call "
                   "torch.view_as_real on the complex output to recover the old return format. "
                   "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                   "SpectralOps.cpp:874.)", inside=True)

    def fail(text):
        shown = "None" if window is None else f"{_type_text(window)}{{{_sizes(window.shape)}}}"
        raise RuntimeError(
            f"stft({_type_text(self)}{_sizes(self.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={shown}, normalized={int(bool(normalized))}, "
            f"onesided={_opt(onesided)}, return_complex={_opt(return_complex)}, "
            f"align_to_window={_opt(align_to_window)}) : {text}")

    if self._data.dtype.kind not in "fcV":
        fail("expected a tensor of floating point or complex values")
    if self.dim() not in (1, 2):
        fail("expected a 1D or 2D tensor")
    x = self.unsqueeze(0) if self.dim() == 1 else self
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window "
             f"with size {_sizes(window.shape)}")
    if align_to_window and win < n_fft:
        raise RuntimeError("stft with align_to_window=True and win_length < n_fft is not "
                           "supported by gradcli")
    if align_to_window:  # (frames aligned to the window: ATen pads by the window's offset)
        x = PUBLIC["torch.constant_pad_nd"](x, [0, 0])
    full_window = window
    if win < n_fft:  # (the window centred in n_fft zeros)
        left = (n_fft - win) // 2
        base = window if window is not None else None
        padded = PUBLIC["torch.zeros"](n_fft, dtype=(base if base is not None else self).dtype)
        if base is not None:
            padded.narrow(0, left, win).copy_(base)
        else:
            padded.narrow(0, left, win).fill_(1)
        full_window = padded
    frames = 1 + (length - n_fft) // hop
    stride = x.stride()
    x = x.as_strided((x.shape[0], frames, n_fft), (stride[0], hop * stride[1], stride[1]),
                     x.storage_offset())
    if full_window is not None:
        x = x.mul(full_window)
    complex_fft = x.is_complex()
    sided = (not complex_fft) if onesided is None else onesided
    norm = 1 if normalized else 0
    if complex_fft:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _fft.fft_c2c(x, (x.dim() - 1,), norm, True)
    else:
        out = _fft.fft_r2c(x, (x.dim() - 1,), norm, sided)
    out.transpose_(1, 2)
    if self.dim() == 1:
        out.squeeze_(0)
    return out if wants_complex else PUBLIC["torch.view_as_real"](out)


def _cpu_type(t) -> str:
    """ATen's toString of the input in istft's messages: CPUComplexDoubleType."""
    return f"CPU{_complex._scalar_type_name(t.dtype)}Type"


@public("Tensor.istft")
def tensor_istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
                 normalized=False, onesided=None, length=None, return_complex=False):
    """PyTorch's Tensor.istft is Python handing its arguments on to torch.istft (by
    position, return_complex by keyword), whose parser words the errors of that call."""
    return PUBLIC["torch.istft"](self, n_fft, hop_length, win_length, window, center,
                                 normalized, onesided, length, return_complex=return_complex)


@public("torch.istft")
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """ATen's istft: the frames' inverse transforms times the window, overlap-added
    (unfold_backward), divided by the overlap-added squared window."""
    if not (isinstance(input, Tensor) and type(n_fft) is int and _opt_int(hop_length)
            and _opt_int(win_length) and (window is None or isinstance(window, Tensor))
            and type(center) is bool and type(normalized) is bool and _opt_bool(onesided)
            and _opt_int(length) and type(return_complex) is bool):
        # (arguments PyTorch's parser may refuse; the public wrapper words the error from
        # the call as it was made, with the positions it used)
        from .arg_checks import diagnose

        error = diagnose("torch.istft", (input, n_fft, hop_length, win_length, window, center,
                                         normalized, onesided, length, return_complex), {})
        if error is not None:
            raise error
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(istft, input, n_fft, hop_length, win_length, window, center,
                              normalized, onesided, length, return_complex)
    if window is None:
        warn_once("istft_window", "A window was not provided. A rectangular window will be "
                   "applied.Please provide the same window used by stft to make the inversion "
                   "lossless.To suppress this warning and use a rectangular window, explicitly "
                   "set `window=torch.ones(n_fft, device=<device>)`. (Triggered internally at "
                   "/__w/pytorch/pytorch/aten/src/ATen/native/SpectralOps.cpp:1035.)")
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")

    def text(tail):
        shown = "None" if window is None else f"{_type_text(window)}{{{_sizes(window.shape)}}}"
        return (f"istft({_cpu_type(input)}{_sizes(input.shape)}, n_fft={n_fft}, "
                f"hop_length={hop}, win_length={win}, window={shown}, center={int(bool(center))}, "
                f"normalized={int(bool(normalized))}, onesided={_opt(onesided)}, "
                f"length={'None' if length is None else length}, "
                f"return_complex={int(bool(return_complex))}){tail}")

    x = PUBLIC["torch.view_as_real"](input.resolve_conj())
    nd = x.dim()
    frames = x.shape[_wrap(-2, nd)]
    fft_size = x.shape[_wrap(-3, nd)]
    signal_len = n_fft + hop * (frames - 1)
    if x.numel() == 0:
        raise RuntimeError(text(" : input tensor cannot be empty."))
    if nd not in (3, 4):
        raise RuntimeError(text(f" : expected a tensor with 3 or 4 dimensions, but got {nd}"))
    sided = (fft_size != n_fft) if onesided is None else onesided
    if sided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(text(" : expected the frequency dimension (3rd to the last) of the "
                                "input tensor to match n_fft / 2 + 1 when onesided=True, but "
                                f"got {fft_size}"))
    if not sided and n_fft != fft_size:
        raise RuntimeError(text(" : expected the frequency dimension (3rd to the last) of the "
                                "input tensor to match n_fft when onesided=False, but got "
                                f"{fft_size}"))
    if not 0 < hop <= win:
        raise RuntimeError(text(" : expected 0 < hop_length <= win_length"))
    if not 0 < win <= n_fft:
        raise RuntimeError(text(" : expected 0 < win_length <= n_fft"))
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(text(" : Invalid window shape. window has to be 1D and length of "
                                "`win_length`"))
    w = window if window is not None else PUBLIC["torch.ones"](win, dtype=x.dtype)
    if win != n_fft:
        left = (n_fft - win) // 2
        w = PUBLIC["torch.constant_pad_nd"](w, [left, n_fft - win - left], 0)
    if nd == 3:
        x = x.unsqueeze(0)
    z = PUBLIC["torch.view_as_complex"](x.transpose(1, 2))
    norm = 1 if normalized else 2
    if return_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        z = _fft.fft_c2c(z, (z.dim() - 1,), norm, False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not sided:
            z = z.narrow(-1, 0, n_fft // 2 + 1)
        z = _fft.fft_c2r(z, (z.dim() - 1,), norm, n_fft)
    y_frames = z * w.view(1, 1, n_fft)
    y = _overlap_add(y_frames, signal_len, n_fft, hop)
    envelope = _overlap_add(w.pow(2).expand(1, frames, n_fft), signal_len, n_fft, hop)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = -(n_fft // 2)
    else:
        end = signal_len
    y = _slice1(y, start, end)
    envelope = _slice1(envelope, start, end)
    lowest = envelope.abs().min().lt(1e-11)
    if lowest.item():
        raise RuntimeError(text(" window overlap add min: 1\n[ CPUBoolType{} ]"))
    y = y / envelope
    if nd == 3:
        y = y.squeeze(0)
    if end > signal_len:
        check_count(y.numel() // max(y.shape[-1], 1) * (y.shape[-1] + end - signal_len))
        warn_once("istft_length", "The length of signal is shorter than the length parameter. "
                   "Result is being padded with zeros in the tail. Please check your center and "
                   "hop_length settings. (Triggered internally at /__w/pytorch/pytorch/aten/src/"
                   "ATen/native/SpectralOps.cpp:1199.)")
        y = PUBLIC["torch.constant_pad_nd"](y, [0, end - signal_len], 0)
    return y


def _wrap(d: int, nd: int) -> int:
    if not -nd <= d < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], "
                         f"but got {d})")
    return d % nd


def _overlap_add(frames, signal_len: int, n_fft: int, hop: int):
    """unfold_backward along dim 1: each frame added at its offset (UnfoldBackwardBackward0)."""
    from .layout import UNFOLD_BACKWARD
    from .registry import run_unary

    return run_unary(UNFOLD_BACKWARD, frames,
                     (1, n_fft, hop, (frames.shape[0], signal_len)))


def _slice1(t, start: int, end: int):
    """t[:, start:end] (SliceBackward0), with ATen's clamping of the bounds."""
    return t[:, start:end]
