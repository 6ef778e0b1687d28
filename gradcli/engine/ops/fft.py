"""torch.fft: the discrete Fourier transforms, their frequencies and shifts.

Every public transform is built as PyTorch's SpectralOps builds it, out of three recorded
primitives (so grad_fn chains print the same: FftR2CBackward0, FftC2CBackward0,
FftC2RBackward0, with ToCopyBackward0 for a promoted input, ConjBackward0 for the
conjugations, ConstantPadNdBackward0/SliceBackward0 for an `n`/`s` that pads or cuts):

- fft_c2c(z, dims, norm, forward): complex to complex, forward or inverse;
- fft_r2c(x, dims, norm, onesided): real to complex, always the forward sign;
- fft_c2r(z, dims, norm, last_dim_size): hermitian complex to real, the inverse sign.

`norm` is PyTorch's fft_norm_mode: 0 no scaling, 1 by 1/sqrt(n), 2 by 1/n (n the signal's
size). The values come from scipy.fft (pocketfft, the library PyTorch's CPU kernels use
too) at the input's precision; scipy is imported on first use. Each primitive's backward
is its adjoint, written with the primitives themselves so create_graph differentiates it
again (derivatives.yaml's fft_r2c_backward / fft_c2r_backward / _fft_c2c).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import autocast_state as _autocast
from .. import dtypes
from ..limits import check_count
from ..tensor import Tensor, _wrap_dim, make
from . import complex as _complex
from .registry import PUBLIC, defop, public, run_unary

_SCIPY_FFT = []


def _sp():
    """scipy.fft, imported on first use (start-up never pays for it)."""
    if not _SCIPY_FFT:
        import scipy.fft

        _SCIPY_FFT.append(scipy.fft)
    return _SCIPY_FFT[0]


# scipy's norm words for a forward / an inverse transform, by PyTorch's mode
_FORWARD_WORD = {0: "backward", 1: "ortho", 2: "forward"}
_INVERSE_WORD = {0: "forward", 1: "ortho", 2: "backward"}


def _in_torch_layout(out, dims, strides_of, last=None):
    """`out` laid out in memory as PyTorch's CPU kernels leave it: the dims not transformed
    outermost (in the input's memory order), then the transformed dims (ascending; the
    one-sided dim of r2c/c2r innermost)."""
    nd = out.ndim
    if nd < 2:
        return out
    rest = sorted((d for d in range(nd) if d not in dims),
                  key=lambda d: (-strides_of[d], d))
    inner = sorted(d for d in dims if d != last)
    if last is not None:
        inner.append(last)
    perm = rest + inner
    if perm == list(range(nd)):
        return np.ascontiguousarray(out)
    held = np.ascontiguousarray(out.transpose(perm))
    return held.transpose(np.argsort(perm))


def _c2c_fwd(a, dims, norm, forward):
    sp = _sp()
    if forward:
        out = sp.fftn(a, axes=dims, norm=_FORWARD_WORD[norm])
    else:
        out = sp.ifftn(a, axes=dims, norm=_INVERSE_WORD[norm])
    return _in_torch_layout(out.astype(a.dtype, copy=False), dims, a.strides)


def _r2c_fwd(a, dims, norm, onesided, full):
    sp = _sp()
    cdt = np.complex64 if a.dtype == np.float32 else np.complex128
    if onesided:
        out = sp.rfftn(a, axes=dims, norm=_FORWARD_WORD[norm])
        return _in_torch_layout(out.astype(cdt, copy=False), dims, a.strides, dims[-1])
    half = sp.rfftn(a, axes=dims, norm=_FORWARD_WORD[norm]).astype(cdt, copy=False)
    return _in_torch_layout(_mirrored(half, dims, a.shape[dims[-1]]), dims, a.strides)


def _mirrored(half, dims, n):
    """The full spectrum of a real signal from its one-sided half, as PyTorch fills it
    (conjugate symmetry: X[k] = conj(X[-k]), the indices negated along every transformed
    dim), so its exact zeros keep the one-sided transform's signs."""
    last = dims[-1]
    kept = half.shape[last]
    shape = list(half.shape)
    shape[last] = n
    full = np.empty(shape, half.dtype)
    index = [slice(None)] * half.ndim
    index[last] = slice(0, kept)
    full[tuple(index)] = half
    if n > kept:
        mirror = np.conj(half)
        for d in dims[:-1]:  # (-i mod size along the other transformed dims)
            mirror = np.roll(np.flip(mirror, d), 1, d)
        index[last] = slice(kept, n)  # (X[k] = conj(X[n - k]) for k = kept .. n - 1)
        full[tuple(index)] = np.take(mirror, np.arange(n - kept, 0, -1), axis=last)
    return full


def _c2r_fwd(a, dims, norm, last_dim_size):
    sp = _sp()
    shape = [a.shape[d] for d in dims]
    shape[-1] = last_dim_size
    rdt = np.float32 if a.dtype == np.complex64 else np.float64
    out = sp.irfftn(a, s=shape, axes=dims, norm=_INVERSE_WORD[norm])
    return _in_torch_layout(out.astype(rdt, copy=False), dims, a.strides, dims[-1])


def _c2c_bwd(c, g):
    dims, norm, forward = c.meta
    return (fft_c2c(g, dims, norm, not forward),)


def _r2c_bwd(c, g):
    """The adjoint of r2c: the gradient of the kept half, zero-padded to the full signal,
    transformed back (inverse c2c) and its real part."""
    dims, norm, onesided, full = c.meta
    if onesided:
        missing = full - g.shape[dims[-1]]
        if missing > 0:
            pad = [0] * (2 * g.dim())
            pad[2 * (g.dim() - 1 - dims[-1]) + 1] = missing
            g = PUBLIC["torch.constant_pad_nd"](g, pad)
    return (fft_c2c(g, dims, norm, False).real,)


def _c2r_bwd(c, g):
    """The adjoint of c2r: r2c of the gradient, the entries the hermitian half stands for
    twice counted (doubled)."""
    dims, norm, _ = c.meta
    gi = fft_r2c(g, dims, norm, True)
    last = dims[-1]
    double = g.shape[last] - gi.shape[last]
    if double > 0:
        scale = np.ones(gi.shape[last], g._data.dtype)
        scale[1:1 + double] = 2
        shape = [1] * gi.dim()
        shape[last] = -1
        gi = gi * make(scale.reshape(shape))
    return (gi,)


FFT_C2C = defop("fft_c2c", "FftC2CBackward0", _c2c_fwd, _c2c_bwd,
                "d fft(z): the transform of the other direction applied to the gradient")
FFT_R2C = defop("fft_r2c", "FftR2CBackward0", _r2c_fwd, _r2c_bwd,
                "d rfft(x): Re(ifft(grad zero-padded to the full signal)), unnormalised as "
                "the forward")
FFT_C2R = defop("fft_c2r", "FftC2RBackward0", _c2r_fwd, _c2r_bwd,
                "d irfft(z): rfft(grad), the mirrored entries doubled")
_complex.OWN_FORMULAS.update(("fft_c2c", "fft_r2c"))


def fft_c2c(z, dims, norm, forward):
    return run_unary(FFT_C2C, z, (tuple(dims), norm, forward))


def fft_r2c(x, dims, norm, onesided):
    dims = tuple(dims)
    return run_unary(FFT_R2C, x, (dims, norm, onesided, x._data.shape[dims[-1]]))


def fft_c2r(z, dims, norm, last_dim_size):
    check_count(math.prod(z.shape) // max(z.shape[dims[-1]], 1) * last_dim_size)
    return run_unary(FFT_C2R, z, (tuple(dims), norm, last_dim_size))


# -------------------------------------------------------------------- argument handling

def _check_input(fname: str, input) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"fft_{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def _int_arg(fname: str, name: str, value, position=None):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        try:
            return operator.index(value)
        except TypeError:
            where = f" (position {position})" if position else ""
            raise TypeError(f"fft_{fname}(): argument '{name}'{where} must be int, not "
                            f"{type(value).__name__}") from None
    return int(value)


def _ints_arg(fname: str, name: str, value):
    if value is None:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, Tensor) or not isinstance(value, (tuple, list)):
        raise TypeError(f"fft_{fname}(): argument '{name}' must be tuple of ints, not "
                        f"{type(value).__name__}")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"fft_{fname}(): argument '{name}' must be tuple of ints, but found "
                            f"element of type {type(v).__name__} at pos {i}")
        out.append(int(v))
    return tuple(out)


def _check_norm(fname: str, norm) -> None:
    if norm is not None and not isinstance(norm, str):
        raise TypeError(f"fft_{fname}(): argument 'norm' must be str, not {type(norm).__name__}")


def _norm_mode(norm, forward: bool) -> int:
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "forward":
        return 2 if forward else 0
    if norm == "ortho":
        return 1
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x, require_complex: bool = False):
    """PyTorch's promote_tensor_fft: integers and bool to the default float, float16 and
    bfloat16 refused (CPU), complex twins when required (a recorded to())."""
    d = x._data.dtype
    if d.kind == "c":
        return x
    dt = x.dtype
    if not dt.is_floating_point:
        dt = dtypes.get_default_dtype()
    if dt.name not in ("float32", "float64"):
        raise RuntimeError(f"Unsupported dtype {_complex._scalar_type_name(dt)}")
    if require_complex:
        dt = dt.to_complex()
    return x if dt is x.dtype else x.to(dt)


def _resize(x, dims, sizes):
    """PyTorch's resize_fft_input: cut each transformed dim to its size (a slice view) or
    zero-pad it (one constant_pad_nd for all)."""
    grown = list(x.shape)
    for d, n in zip(dims, sizes):
        grown[d] = max(grown[d], n)
    check_count(math.prod(grown))  # (before the padding allocates: --max-elements)
    pad = [0] * (2 * x.dim())
    must_pad = False
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        have = x.shape[d]
        if have < n:
            must_pad = True
            pad[len(pad) - 2 * d - 1] = n - have
        if have > n:
            x = _slice(x, d, n)
    return PUBLIC["torch.constant_pad_nd"](x, pad) if must_pad else x


def _slice(x, d, n):
    index = [slice(None)] * x.dim()
    index[d] = slice(0, n)
    return x[tuple(index)]


def _wrap(d: int, nd: int) -> int:
    return _wrap_dim(d, nd)


# ------------------------------------------------------------------------- 1-d transforms

def _one_dim(fname, input, n, dim, norm):
    _check_input(fname, input)
    _check_norm(fname, norm)
    if n is not None:
        n = _int_arg(fname, "n", n)
    dim = _int_arg(fname, "dim", dim)
    if input.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return n, _wrap(dim, input.dim())


def _c2c(fname, input, n, dim, norm, forward):
    n = input.shape[dim] if n is None else n
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    mode = _norm_mode(norm, forward)
    return fft_c2c(_resize(input, (dim,), (n,)), (dim,), mode, forward)


def _r2c(fname, input, n, dim, norm, forward, onesided, given):
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"{fname} expects a real input tensor, but got "
                           f"{_complex._scalar_type_name(input.dtype)}")
    input = _promote(input)
    n = input.shape[dim] if n is None else n
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    if given:
        input = _resize(input, (dim,), (n,))
    mode = _norm_mode(norm, forward)
    res = fft_r2c(input, (dim,), mode, onesided)
    return res if forward else _complex.conj(res)


def _c2r(fname, input, n, dim, norm, forward):
    input = _promote(input, True)
    given = n is not None
    n = 2 * (input.shape[dim] - 1) if n is None else n
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    if given:
        input = _resize(input, (dim,), (n // 2 + 1,))
    mode = _norm_mode(norm, forward)
    if forward:
        input = _complex.conj(input)
    return fft_c2r(input, (dim,), mode, n)


@public("torch.fft.fft")
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(fft, input, n, dim, norm, out=out)
    n, dim = _one_dim("fft", input, n, dim, norm)
    if input._data.dtype.kind == "c":
        return _c2c("fft", input, n, dim, norm, True)
    return _r2c("fft", input, n, dim, norm, True, False, n is not None)


@public("torch.fft.ifft")
def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(ifft, input, n, dim, norm, out=out)
    n, dim = _one_dim("ifft", input, n, dim, norm)
    if input._data.dtype.kind == "c":
        return _c2c("ifft", input, n, dim, norm, False)
    return _r2c("ifft", input, n, dim, norm, False, False, n is not None)


@public("torch.fft.rfft")
def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(rfft, input, n, dim, norm, out=out)
    n, dim = _one_dim("rfft", input, n, dim, norm)
    return _r2c("rfft", input, n, dim, norm, True, True, n is not None)


@public("torch.fft.ihfft")
def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(ihfft, input, n, dim, norm, out=out)
    n, dim = _one_dim("ihfft", input, n, dim, norm)
    return _r2c("ihfft", input, n, dim, norm, False, True, n is not None)


@public("torch.fft.irfft")
def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(irfft, input, n, dim, norm, out=out)
    n, dim = _one_dim("irfft", input, n, dim, norm)
    return _c2r("irfft", input, n, dim, norm, False)


@public("torch.fft.hfft")
def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(hfft, input, n, dim, norm, out=out)
    n, dim = _one_dim("hfft", input, n, dim, norm)
    return _c2r("hfft", input, n, dim, norm, True)


# ------------------------------------------------------------------------- n-d transforms

def _shape_and_dims(fname, input, s, dim, norm=None):
    """PyTorch's canonicalize_fft_shape_and_dim_args: (sizes, dims) of the transform."""
    _check_input(fname, input)
    _check_norm(fname, norm)
    s = _ints_arg(fname, "s", s)
    dim = _ints_arg(fname, "dim", dim)
    nd = input.dim()
    sizes = input.shape
    dims = None
    if dim is not None:
        dims = [_wrap(d, nd) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {nd} "
                               "dimensions.")
        if dims is None:
            dims = list(range(nd - len(s), nd))
        shape = [sizes[d] if n == -1 else n for d, n in zip(dims, s)]
    elif dims is None:
        dims = list(range(nd))
        shape = list(sizes)
    else:
        shape = [sizes[d] for d in dims]
    for n in shape:
        if n <= 0:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return shape, dims


def _c2r_shape_and_dims(fname, input, s, dim, norm, kind):
    shape, dims = _shape_and_dims(fname, input, s, dim, norm)
    if not shape:
        raise RuntimeError(f"{kind} must transform at least one axis")
    given = _ints_arg(fname, "s", s)
    if given is None or given[-1] == -1:
        last = 2 * (input.shape[dims[-1]] - 1)
    else:
        last = shape[-1]
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _fftn(fname, input, s, dim, norm, forward):
    shape, dims = _shape_and_dims(fname, input, s, dim, norm)
    x = _promote(input, True)
    x = _resize(x, dims, shape)
    mode = _norm_mode(norm, forward)
    return fft_c2c(x, dims, mode, forward)


def _rfftn(fname, input, s, dim, norm):
    _check_input(fname, input)
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got "
                           f"{_complex._scalar_type_name(input.dtype)}")
    shape, dims = _shape_and_dims(fname, input, s, dim, norm)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    return fft_r2c(x, dims, _norm_mode(norm, True), True)


def _irfftn(fname, input, s, dim, norm):
    shape, dims, last = _c2r_shape_and_dims(fname, input, s, dim, norm, "irfftn")
    x = _resize(_promote(input, True), dims, shape)
    return fft_c2r(x, dims, _norm_mode(norm, False), last)


def _hfftn(fname, input, s, dim, norm):
    shape, dims, last = _c2r_shape_and_dims(fname, input, s, dim, norm, "hfftn")
    x = _resize(_promote(input, True), dims, shape)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = fft_c2c(x, dims[:-1], mode, True)
    return fft_c2r(_complex.conj(x), dims[-1:], mode, last)


def _ihfftn(fname, input, s, dim, norm):
    _check_input(fname, input)
    shape, dims = _shape_and_dims(fname, input, s, dim, norm)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    if input._data.dtype.kind == "c":
        raise RuntimeError("Only supports floating-point dtypes, but found: "
                           f"{_complex._scalar_type_name(input.dtype)}")
    x = _resize(_promote(input), dims, shape)
    mode = _norm_mode(norm, False)
    res = fft_r2c(x, dims[-1:], mode, True)
    if len(dims) == 1:
        return _complex.conj(res)
    return fft_c2c(_complex.conj_physical(res), dims[:-1], mode, False)


def _declare_nd():
    """fftn & co and their 2-d forms (the same function with dim=(-2, -1))."""
    table = {"fftn": lambda f, i, s, d, n: _fftn(f, i, s, d, n, True),
             "ifftn": lambda f, i, s, d, n: _fftn(f, i, s, d, n, False),
             "rfftn": _rfftn, "irfftn": _irfftn, "hfftn": _hfftn, "ihfftn": _ihfftn}
    for name, run in table.items():
        short = name[:-1] + "2"
        public(f"torch.fft.{name}")(_n_dim(name, run, None))
        public(f"torch.fft.{short}")(_n_dim(short, run, (-2, -1)))


def _n_dim(name: str, run, default_dim):
    """The public function `name` over `run` (its dims default to `default_dim`: all for
    the n-d forms, the last two for the 2-d ones)."""
    def transform(input, s=None, dim=default_dim, norm=None, *, out=None):
        if _autocast.ENABLED and not name.startswith(("hfft", "ihfft")) and _autocast.wanted():
            return _autocast.fp32(transform, input, s, dim, norm, out=out)  # (its float32 list)
        return run(name, input, s, dim, norm)

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = f"torch.fft.{name}: the transform over `dim` " + (
        "(all dims by default)." if default_dim is None else "(the last two by default).")
    return transform


_declare_nd()


# ------------------------------------------------------------- frequencies and shifts

def _freq_dtype(fname, dtype, device=None):
    if device is not None:  # (the creation functions' device check: cpu only)
        PUBLIC["torch.empty"](0, device=device)
    dt = dtype if dtype is not None else dtypes.get_default_dtype()
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    if dt.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for "
                                  f"'{_complex._scalar_type_name(dt)}'")
    return dt


def _freq_tensor(values, dt, requires_grad):
    arr = values.astype(dt.np) if dt.name != "bfloat16" else values
    t = make(np.ascontiguousarray(arr)) if dt.name != "bfloat16" else \
        PUBLIC["torch.tensor"](values.tolist(), dtype=dt)
    if requires_grad:
        t._requires_grad_(True)
    return t


def _count(fname, n):
    n = _int_arg(fname, "n", n, 1)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    check_count(n)
    return n


def _spacing(d):
    if isinstance(d, Tensor):
        return float(d.item())
    return float(d)


@public("torch.fft.fftfreq")
def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
            requires_grad=False):
    """[0, 1, ..., -(n//2), ..., -1] / (n d), computed as PyTorch's: integers in the dtype,
    then one multiplication by 1 / (n d)."""
    n = _count("fftfreq", n)
    dt = _freq_dtype("fftfreq", dtype, device)
    k = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)]).astype(np.float64)
    scale = 1.0 / (n * _spacing(d)) if n else math.inf
    return _freq_tensor(_times(k, scale, dt), dt, requires_grad)


@public("torch.fft.rfftfreq")
def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
             requires_grad=False):
    n = _count("rfftfreq", n)
    dt = _freq_dtype("rfftfreq", dtype, device)
    k = np.arange(n // 2 + 1, dtype=np.float64)
    scale = 1.0 / (n * _spacing(d)) if n else math.inf
    return _freq_tensor(_times(k, scale, dt), dt, requires_grad)


def _times(k, scale, dt):
    """k * scale in the result's precision (the scalar rounded to it first, as the kernel)."""
    if dt.name == "float64":
        return k * scale
    with np.errstate(over="ignore"):
        if dt.name == "float32":
            return k.astype(np.float32) * np.float32(scale)
    return k * scale  # (float16/bfloat16: the value, rounded once by the cast)


def _shift(input, dim, half):
    if not isinstance(input, Tensor):
        raise TypeError(f"fft_fftshift(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if dim is None:
        dims = tuple(range(input.dim()))
    elif isinstance(dim, (tuple, list)):
        dims = tuple(dim)
    else:
        dims = (dim,)
    shifts = tuple(half(input.shape[_wrap(d, input.dim())]) for d in dims)
    return PUBLIC["torch.roll"](input, shifts, dims)


@public("torch.fft.fftshift")
def fftshift(input, dim=None):
    """roll by n // 2 along each dim (RollBackward0)."""
    return _shift(input, dim, lambda n: n // 2)


@public("torch.fft.ifftshift")
def ifftshift(input, dim=None):
    """roll by (n + 1) // 2 along each dim (RollBackward0)."""
    return _shift(input, dim, lambda n: (n + 1) // 2)
