"""The distributions as PyTorch's CPU kernels draw them, on numpy arrays.

Every function takes a `random.Generator` and returns values in the order PyTorch's
serial kernels draw them: the elements of the target in memory order (`fill_in_order`
puts a flat run of values into a strided target that way). Double-precision transforms
of single draws (exponential, Cauchy, geometric, log-normal, the scalar normal path) use
Python's math module, i.e. the C library's log/sin/cos/tan/exp that PyTorch's kernels
call, so the bits agree; numpy's own SIMD versions of those may differ in the last bit.
"""

from __future__ import annotations

import math

import numpy as np

from .dtypes import finfo
from .kernels.boxmuller import fma32, normal_fill_f32

_M24 = np.uint64((1 << 24) - 1)
_M53 = np.uint64((1 << 53) - 1)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_F32_SCALE = np.float32(2.0 ** -24)
_TWO_PI = 2.0 * math.pi


# ---------------------------------------------------------------- layout
def memory_order(arr: np.ndarray):
    """(perm, shape in that order): the dims of `arr` from outermost to innermost in
    memory, as PyTorch's TensorIterator walks a single output (by stride; ties keep order)."""
    dims = sorted(range(arr.ndim), key=lambda d: -abs(arr.strides[d]))
    return dims, [arr.shape[d] for d in dims]


def fill_in_order(target: np.ndarray, values: np.ndarray) -> None:
    """Write the flat `values` into `target` element by element in memory order."""
    if target.flags.c_contiguous or target.ndim < 2:
        target[...] = values.reshape(target.shape)
        return
    dims, shape = memory_order(target)
    np.transpose(target, dims)[...] = values.reshape(shape)


def is_contiguous(arr: np.ndarray) -> bool:
    """PyTorch's is_contiguous(): C order, size-1 dims' strides ignored."""
    if arr.flags.c_contiguous:
        return True
    step = arr.itemsize
    for size, stride in zip(reversed(arr.shape), reversed(arr.strides)):
        if size != 1 and stride != step:
            return False
        step *= size
    return True


# ---------------------------------------------------------------- uniform
def uniform01_f32(gen, n: int) -> np.ndarray:
    """n float32 uniforms in [0, 1): 24 bits of one 32-bit draw each."""
    if 0 < n <= _AHEAD_MAX:
        start = _ahead_words(gen, n, False)
        if start >= 0:
            return gen._ahead[start:start + n].copy()  # (a tensor owns its memory)
    if n >= 4096:
        # converted in place: a second 4 MB array per million costs more (fresh pages)
        # than the conversion itself (numpy casts an array onto itself without a copy
        # when source and target start at the same address with the same strides)
        words = gen.random24_words(n).view(np.int32)
        out = words.view(np.float32)
        out[...] = words
        out *= _F32_SCALE
        return out
    out = (gen.random32(n) & _M24).astype(np.float32)
    out *= _F32_SCALE
    return out


def uniform01_f64(gen, n: int) -> np.ndarray:
    """n float64 uniforms in [0, 1): 53 bits of one 64-bit draw each."""
    raw = gen.random64(n)
    raw &= _M53
    out = raw.astype(np.float64)
    out *= 2.0 ** -53
    return out


def uniform(gen, n: int, npdt, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """uniform_(low, high): u * (high - low) + low in the tensor's type, with the
    multiply-add fused as PyTorch's compiled kernel has it."""
    if npdt == _F64:  # (a dtype compares with a dtype fast, with a type slowly)
        u = uniform01_f64(gen, n)
        if low == 0.0 and high == 1.0:
            return u
        return fma64(u, np.float64(high) - np.float64(low), np.float64(low))
    u = uniform01_f32(gen, n)
    if low == 0.0 and high == 1.0:
        return u if npdt == _F32 else _below_high(u.astype(npdt), 0.0, 1.0)
    lo32, hi32 = np.float32(low), np.float32(high)
    if npdt == _F32:
        return fma32(u, hi32 - lo32, lo32)
    return _below_high(fma32(u, hi32 - lo32, lo32).astype(npdt), low, high)


def _below_high(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """A float16/bfloat16 draw that rounded up to `high` is `low`, as PyTorch's kernel
    keeps the range [low, high)."""
    values[values == values.dtype.type(high)] = values.dtype.type(low)
    return values


def fma64(a: np.ndarray, b, c) -> np.ndarray:
    """a*b + c with one rounding, in float64 (Dekker's exact product, then an error-
    compensated sum): what a fused multiply-add gives."""
    a = np.asarray(a, np.float64)
    b = np.float64(b)
    c = np.float64(c)
    p = a * b
    split = 134217729.0  # 2**27 + 1
    ta = a * split
    ah = ta - (ta - a)
    al = a - ah
    tb = b * split
    bh = tb - (tb - b)
    bl = b - bh
    perr = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # a*b = p + perr exactly
    s = p + c
    bb = s - p
    serr = (p - (s - bb)) + (c - bb)  # p + c = s + serr exactly
    return s + (serr + perr)


# ---------------------------------------------------------------- normal
def normal_scalar(gen, n: int, mean: float, std: float) -> np.ndarray:
    """n draws of the scalar path, as float64 values (z * std + mean, fused).

    One value at a time PyTorch takes the cached second value of the last pair if there is
    one, else makes a pair (r cos, r sin) from two 64-bit uniforms and caches r sin. So a
    run of n values is: the cached one (if any), then the pairs' values in order, cos
    before sin, the last pair's sin cached when the count is odd. Made here whole arrays
    at a time; log1p/cos/sin are the C library's (math), as PyTorch's kernel calls them."""
    z = np.empty(n, dtype=np.float64)
    start = 0
    if n and gen._next_double is not None:
        z[0] = gen._next_double
        gen._next_double = None
        start = 1
    pairs = (n - start + 1) // 2
    if pairs:
        u = uniform01_f64(gen, 2 * pairs)
        radius = np.sqrt(-2.0 * _libm(math.log1p, -u[1::2]))
        theta = _TWO_PI * u[0::2]
        values = np.empty(2 * pairs, dtype=np.float64)
        values[0::2] = radius * _libm(math.cos, theta)
        values[1::2] = radius * _libm(math.sin, theta)
        z[start:] = values[:n - start]
        if (n - start) % 2:
            gen._next_double = float(values[-1])
    if std == 1.0 and mean == 0.0:
        return z
    return fma64(z, std, mean)


def normal(gen, n: int, npdt, contiguous: bool, mean: float, std: float) -> np.ndarray:
    """normal_(mean, std) of n elements (float32 or float64), flat, in draw order.

    16 or more elements of a contiguous target: all uniforms first, then Box-Muller over
    blocks of 16 (the last, partial block recomputed from 16 fresh uniforms). Otherwise one
    value at a time from the scalar path, in memory order."""
    if npdt is _F32 and contiguous and 16 <= n <= _AHEAD_MAX and not n & 15 and std == 1.0 and mean == 0.0:
        data = _normals_ahead_hit(gen, n)  # randn(16): the common small draw, checked first
        if data is not None:
            return data
    if not isinstance(npdt, np.dtype):
        npdt = np.dtype(npdt)
    if n >= 16 and contiguous:
        if npdt == _F32:
            if n <= _AHEAD_MAX and not n & 15:
                data = normals_ahead(gen, n)
                if data is not None:
                    if std == 1.0 and mean == 0.0:
                        return data
                    mean32, std32 = np.float32(mean), np.float32(std)
                    return data if std32 == 1 and mean32 == 0 else fma32(data, std32, mean32)
            data = uniform01_f32(gen, n)
            tail = uniform01_f32(gen, 16) if n % 16 else None
            normal_fill_f32(data, tail, mean, std)
            return data
        if npdt.itemsize == 2:
            # float16, bfloat16: PyTorch fills whole blocks of 16 in float32 (uniforms for a
            # multiple of 16), the last block ending the tensor, and casts
            whole = -(-n // 16) * 16
            data = normal(gen, whole, _F32, True, mean, std)
            if whole != n:
                data = np.concatenate((data[:n - 16], data[whole - 16:]))
            return data.astype(npdt)
        data = uniform01_f64(gen, n)
        tail = uniform01_f64(gen, 16) if n % 16 else None
        _normal_fill_f64(data, mean, std)
        if tail is not None:
            _normal_fill_f64(tail, mean, std)
            data[n - 16:] = tail
        return data.astype(npdt, copy=False)
    return normal_scalar(gen, n, mean, std).astype(npdt)


#: a float32 draw of at most this many elements (a normal one: a multiple of 16) is served
#: from words drawn ahead: first 128, twice as many each time draws used them all, up to 8192
#: (making the normals of 8192 words costs 180 us, of 128 already 60 us: numpy calls)
_AHEAD_MAX = 256
_AHEAD_FIRST = 128
_AHEAD_MOST = 8192
_MT_N = 624
_LAYOUT_OK: list = []  # [True/False] once numpy's twister state layout has been checked


def _normals_ahead_hit(gen, n: int):
    """`normals_ahead` where its normals are made and hold the n asked for (else None),
    with nothing but the bookkeeping: randn(16) in a loop is mostly this."""
    ahead, normals, i = gen._ahead, gen._ahead_normals, gen._ahead_i
    if ahead is None or normals is None or i & 15 or i + n > ahead.shape[0]:
        return normals_ahead(gen, n)
    position = gen._state_view[2]
    pos = position.value
    if pos + n <= _MT_N:
        position.value = pos + n
    else:
        gen._bg.random_raw(n)
    gen._ahead_i = i + n
    return normals[i:i + n].copy()


def normals_ahead(gen, n: int):
    """The standard normals of a float32 draw of n elements (a multiple of 16, contiguous),
    or None where this shortcut does not apply.

    Each block of 16 normals depends on its own 16 words alone, and a numpy call costs
    about as much for one block as for a hundred: randn(16) computed one block at a time
    is almost all call overhead. So the normals of all blocks ahead (`_ahead_words`) are
    computed at once, the first time a normal draw starts on their 16-word grid."""
    start = _ahead_words(gen, n, True)
    if start < 0:
        return None
    normals = gen._ahead_normals
    if normals is None:
        normals = gen._ahead.copy()
        normal_fill_f32(normals, None, 0.0, 1.0)
        gen._ahead_normals = normals
    return normals[start:start + n].copy()


def _ahead_words(gen, n: int, blocks: bool) -> int:
    """Where the uniforms of the next n words start in `gen._ahead` (the twister is moved
    past them), or -1 where this shortcut does not apply; `blocks`: the draw needs them
    on the 16-word grid of the words ahead (a normal draw).

    A numpy call costs about as much for 16 values as for 2000, so a small draw made alone
    is almost all call overhead. On a miss the uniforms of the next 128 words (up to 2048,
    doubling while draws keep using them all) are made at once, and the twister is put
    back as it was (its 624-word key and position copied out of numpy's MT19937 state and
    back); each draw served from them then moves the twister's position past its words (one
    word written, or a real draw when a twist is due). Any other draw, a reseed or
    set_state drops them (gen._ahead = None). The generator's state, hence get_state, is
    always PyTorch's."""
    ahead = gen._ahead
    if ahead is not None:
        i = gen._ahead_i
        if i + n <= ahead.shape[0] and not (blocks and i & 15):
            _advance(gen, n)
            gen._ahead_i = i + n
            return i
        count = min(_AHEAD_MOST, 2 * ahead.shape[0]) if i + n > ahead.shape[0] else ahead.shape[0]
    else:
        count = _AHEAD_FIRST
    count = max(count, (n + 15) & ~15)
    gen._ahead = None
    bg = gen._bg or gen._engine()
    state = _state_words(gen, bg)
    if state is None:
        return -1
    saved = state.copy()
    data = (bg.random_raw(count) & _M24).astype(np.float32)
    state[...] = saved
    data *= _F32_SCALE
    gen._ahead = data
    gen._ahead_normals = None
    gen._ahead_i = n
    _advance(gen, n)
    return 0


def _advance(gen, n: int) -> None:
    """Move gen's twister past n words: its position written, or drawn when a twist is due."""
    position = gen._state_view[2]
    pos = position.value
    if pos + n <= _MT_N:
        position.value = pos + n
    else:
        gen._bg.random_raw(n)


def _state_words(gen, bg):
    """numpy's MT19937 C state (key[624], then the int position) as 625 uint32 over its
    live memory, or None when the layout is not that one (checked once against the
    public `state`). Kept per generator with the engine it belongs to."""
    held = gen._state_view
    if held is not None and held[0] is bg:
        return held[1]
    import ctypes

    address = bg.ctypes.state_address
    words = np.ctypeslib.as_array((ctypes.c_uint32 * (_MT_N + 1)).from_address(address))
    if not _LAYOUT_OK:
        state = bg.state["state"]
        _LAYOUT_OK.append(int(words[_MT_N]) == int(state["pos"]) and np.array_equal(words[:_MT_N], state["key"]))
    if not _LAYOUT_OK[0]:
        return None
    # the position alone as well: read and written once per draw served ahead
    gen._state_view = (bg, words, ctypes.c_uint32.from_address(address + 4 * _MT_N))
    return words


def _libm(fn, arr: np.ndarray) -> np.ndarray:
    """fn (math.log, cos, sin: the C library's, as PyTorch's kernel calls them) over arr."""
    return np.fromiter(map(fn, arr.ravel().tolist()), dtype=np.float64, count=arr.size).reshape(arr.shape)


def _normal_fill_f64(data: np.ndarray, mean: float, std: float) -> None:
    """The float64 block Box-Muller: per block of 16, lanes j and j+8 from
    r = sqrt(-2 log(1 - u_j)), theta = 2*pi*u_{j+8}, r*cos and r*sin (libm's log/cos/sin;
    the IEEE operations in numpy, which rounds them as the C code does)."""
    full = data.size // 16 * 16
    blocks = data[:full].reshape(-1, 16)
    radius = np.sqrt(-2.0 * _libm(math.log, 1.0 - blocks[:, :8]))
    theta = _TWO_PI * blocks[:, 8:]
    c = radius * _libm(math.cos, theta)
    s = radius * _libm(math.sin, theta)
    if not (std == 1.0 and mean == 0.0):
        c = fma64(c, std, mean)
        s = fma64(s, std, mean)
    blocks[:, :8] = c
    blocks[:, 8:] = s


# ---------------------------------------------------------------- integers
def random_from_to(gen, n: int, span: int, base: int) -> np.ndarray:
    """random_(from, to) / randint: draw % span + from, with 64-bit draws when the span
    reaches 2**32 (as int64)."""
    raw = gen.random64(n) if span >= (1 << 32) else gen.random32(n)
    raw %= np.uint64(span)
    return (raw.astype(np.int64) + np.int64(base)) if base else raw.astype(np.int64)


def random_default(gen, n: int, npdt) -> np.ndarray:
    """random_() without bounds: [0, 2**mantissa] for floats, [0, max] for integers."""
    npdt = np.dtype(npdt)
    if npdt == np.bool_:
        return (gen.random32(n) & np.uint64(1)).astype(np.bool_)
    if npdt in (np.dtype(np.float64), np.dtype(np.int64)):
        raw = gen.random64(n)
    else:
        raw = gen.random32(n)
    if npdt.kind in "fV":
        mod = (1 << (finfo(npdt).nmant + 1)) + 1
    else:
        mod = int(np.iinfo(npdt).max) + 1
    return (raw % np.uint64(mod)).astype(npdt)


def randperm(gen, n: int) -> np.ndarray:
    """PyTorch's shuffle: for n below 2**32/20 swap position i with i + draw % (n - i);
    above it, the inside-out variant with 64-bit draws."""
    if n < (0xFFFFFFFF // 20):
        perm = list(range(n))
        if n > 1:
            draws = gen.random32(n - 1).tolist()
            for i, r in enumerate(draws):
                z = i + r % (n - i)
                perm[i], perm[z] = perm[z], perm[i]
        return np.array(perm, dtype=np.int64)
    perm = np.empty(n, dtype=np.int64)
    draws = gen.random64(n).tolist()
    for i, r in enumerate(draws):
        z = r % (i + 1)
        perm[i] = perm[z]
        perm[z] = i
    return perm


# ---------------------------------------------------------------- the rest
def bernoulli_scalar(gen, n: int, p: float) -> np.ndarray:
    """bernoulli_(p) for a float p: a float64 uniform below p."""
    return uniform01_f64(gen, n) < p


def bernoulli_tensor(gen, p: np.ndarray) -> np.ndarray:
    """bernoulli(p) for a tensor p (already broadcast, in draw order): float64 p compares a
    float64 uniform, float32 p a float32 one."""
    if p.dtype == np.float64:
        return uniform01_f64(gen, p.size) < p.ravel()
    return uniform01_f32(gen, p.size) < p.ravel().astype(np.float32)


def exponential(gen, n: int, lambd: float) -> np.ndarray:
    u = uniform01_f64(gen, n).tolist()
    log1p = math.log1p
    scale = -1.0 / lambd
    return np.array([scale * log1p(-x) for x in u], dtype=np.float64)


def geometric(gen, n: int, p: float) -> np.ndarray:
    u = uniform01_f64(gen, n).tolist()
    log, ceil = math.log, math.ceil
    denom = log(1.0 - p)
    return np.array([float(ceil(log(x) / denom)) if x > 0 else math.inf for x in u], dtype=np.float64)


def cauchy(gen, n: int, median: float, sigma: float) -> np.ndarray:
    u = uniform01_f64(gen, n).tolist()
    tan, pi = math.tan, math.pi
    return np.array([median + sigma * tan(pi * (x - 0.5)) for x in u], dtype=np.float64)


def log_normal(gen, n: int, mean: float, std: float) -> np.ndarray:
    return _libm(math.exp, normal_scalar(gen, n, mean, std))


# ---------------------------------------------------------------- complex
def complex_draw(gen, n: int, npdt, gaussian: bool) -> np.ndarray:
    """n complex values of numpy type `npdt` (complex64/complex128), as PyTorch draws a
    complex tensor: it fills view_as_real of it, 2n numbers of the real type in memory
    order (real, imag, real, ...): uniform_(0, 1) for rand, normal_(0, 1/sqrt(2)) for
    randn (so that E|z|^2 = 1)."""
    real = np.float32 if npdt == np.complex64 else np.float64
    real = np.dtype(real)
    if gaussian:
        parts = normal(gen, 2 * n, real, True, 0.0, 1.0 / math.sqrt(2.0))
    else:
        parts = uniform(gen, 2 * n, real)
    return np.ascontiguousarray(parts, dtype=real).view(npdt)
