"""Sampling with PyTorch's generator (loaded on first use: ops/sampling.py exposes it): the in-place fills (uniform_, normal_, random_,
bernoulli_, exponential_, geometric_, log_normal_, cauchy_), torch.normal, bernoulli,
multinomial.

A fill draws its values in the target's memory order (PyTorch's serial kernels walk the
tensor that way) and writes them through `_apply_inplace`, so a fill of a tensor in a
graph gets PyTorch's node (UniformBackward0, NormalBackward0 ...: a zero gradient).
"""

from __future__ import annotations

import numpy as np

from . import rng_sample as S
from .dtypes import finfo
from .grad_mode import GRAD_MODE
from .ops.registry import defop, run_op
from .random import generator_of
from .tensor import Tensor, make


def _random_node(name: str, node: str, call: str):
    """The op a random fill records in a graph: its value is the drawn one, its gradient
    zero. `call` reaches it with a deterministic result (a zero-width range)."""
    return defop(name, node, lambda a, values: values, lambda c, g: (g * 0,),
                 f"d {name}(a)/da = 0 (the values are drawn, not computed from a)",
                 torch_call=call)


_NODES = {
    "uniform_": _random_node("uniform_", "UniformBackward0", "a.clone().uniform_(0.5, 0.5)"),
    "normal_": _random_node("normal_", "NormalBackward0", "a.clone().normal_(0.5, 0.0)"),
    "bernoulli_": _random_node("bernoulli_", "BernoulliBackward2", "a.clone().bernoulli_(1.0)"),
}


def _draw_into(self: Tensor, name: str, values: np.ndarray) -> Tensor:
    """Write the flat `values` (draw order = self's memory order) into self in place."""
    arr = self._data
    buf = np.empty_like(arr)  # same order of dims as self: its memory order is self's
    S.fill_in_order(buf, values.astype(arr.dtype, copy=False))
    op = _NODES.get(name)
    if op is None or arr.dtype.kind not in "fV":
        return self._apply_inplace(lambda old: make(buf))
    return self._apply_inplace(lambda old: run_op(op, (old,), (buf,)))


def _float_only(self: Tensor, kernel: str) -> None:
    if self._data.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_name(self)}'")


def _scalar_name(t: Tensor) -> str:
    return {"int64": "Long", "int32": "Int", "bool": "Bool", "uint8": "Byte",
            "float32": "Float", "float64": "Double", "float16": "Half",
            "bfloat16": "BFloat16"}[t.dtype.name]


def _num(x) -> float:
    return float(x.item()) if isinstance(x, Tensor) else float(x)


def _fmt(x: float) -> str:
    """A double as PyTorch's messages print it (C++ ostream: 6 significant digits)."""
    return f"{x:g}"


def uniform_(self, *args, generator=None, **kwargs):
    a, b = (list(args) + [0.0, 1.0][len(args):])[:2] if len(args) <= 2 else args[:2]
    a, b = kwargs.pop("from", a), kwargs.pop("to", b)
    for name in kwargs:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{name}'")
    if self._data.dtype.kind == "c":
        return _complex_fill(self, "uniform_", generator, a=a, b=b)
    _float_only(self, "check_uniform_bounds")
    a, b = _num(a), _num(b)
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_fmt(a)} > to={_fmt(b)}")
    gen = generator_of(generator)
    return _draw_into(self, "uniform_", S.uniform(gen, self._data.size, self._data.dtype, a, b))


def _complex_fill(self: Tensor, name: str, generator, **args) -> Tensor:
    """A fill of a complex tensor: PyTorch fills view_as_real of it (the real and imaginary
    parts in memory order, each normal with std/sqrt(2) for normal_), then the values are
    written as complex numbers (the same node as a real fill)."""
    arr = self._data
    part = make(np.zeros((arr.size, 2), arr.real.dtype))  # (the draws, in memory order)
    if name == "normal_":
        normal_(part, args["mean"], _num(args["std"]) / np.sqrt(2.0), generator=generator)
    else:
        uniform_(part, args["a"], args["b"], generator=generator)
    return _draw_into(self, name, part._data.view(arr.dtype).reshape(-1))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    if self._data.dtype.kind == "c":
        if _num(std) < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(_num(std))}")
        return _complex_fill(self, "normal_", generator, mean=mean, std=std)
    _float_only(self, "normal_kernel_cpu")
    mean, std = _num(mean), _num(std)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
    gen = generator_of(generator)
    arr = self._data
    values = S.normal(gen, arr.size, arr.dtype, S.is_contiguous(arr), mean, std)
    return _draw_into(self, "normal_", values)


def random_(self, *args, generator=None, **kwargs):
    low = kwargs.pop("from", None)
    high = kwargs.pop("to", None)
    if len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    elif len(args) == 2:
        low, high = args
    gen = generator_of(generator)
    n = self._data.size
    if low is None and high is None:
        return _draw_into(self, "random_", S.random_default(gen, n, self._data.dtype))
    low = 0 if low is None else int(low)
    if high is None:
        high = _dtype_top(self._data.dtype) + 1
    high = int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return _draw_into(self, "random_", S.random_from_to(gen, n, high - low, low))


def _dtype_top(npdt) -> int:
    npdt = np.dtype(npdt)
    if npdt.kind in "fV":
        return 1 << (finfo(npdt).nmant + 1)
    if npdt.kind == "b":
        return 1
    return int(np.iinfo(npdt).max)


def bernoulli_(self, p=0.5, *, generator=None):
    gen = generator_of(generator)
    arr = self._data
    if isinstance(p, Tensor):
        probs = np.broadcast_to(p._data, arr.shape)
        buf = np.empty_like(arr)
        dims, shape = S.memory_order(buf)
        ordered = np.transpose(probs, dims).reshape(-1) if arr.ndim > 1 else probs.reshape(-1)
        return _draw_into(self, "bernoulli_", S.bernoulli_tensor(gen, ordered))
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
    return _draw_into(self, "bernoulli_", S.bernoulli_scalar(gen, arr.size, p))


_BERNOULLI_P = defop("bernoulli", "BernoulliBackward0", lambda a, values: values, lambda c, g: (g * 0,),
                     "d bernoulli(p)/dp = 0 (a draw)", torch_call="torch.bernoulli(a * 0 + 1)")


def bernoulli(input, p=None, *, generator=None, out=None):
    if p is not None:  # Tensor.bernoulli(p: float): drawn into a contiguous result, as PyTorch's
        return bernoulli_(make(np.empty(input._data.shape, input._data.dtype)), p,
                          generator=generator)
    arr = input._data
    if arr.dtype.kind in "fV" and arr.size and not ((arr >= 0) & (arr <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")
    gen = generator_of(generator)
    # the result is made contiguous (PyTorch's LEGACY_CONTIGUOUS_MEMORY_FORMAT) and drawn in
    # C order whatever the layout of p (transposed, or expanded as Bernoulli(p).sample(n))
    buf = np.empty(arr.shape, arr.dtype)
    S.fill_in_order(buf, S.bernoulli_tensor(gen, arr.reshape(-1)).astype(arr.dtype))
    return run_op(_BERNOULLI_P, (input,), (buf,))


def _simple_fill(name, check, draw):
    def fill(self, *args, generator=None, **kwargs):
        _float_only(self, name.rstrip("_") + "_cpu" if name != "geometric_" else "geometric_cpu")
        params = check(*args, **kwargs)
        values = draw(generator_of(generator), self._data.size, *params)
        return _draw_into(self, name, values)

    fill.__name__ = name
    return fill


def _check_exponential(lambd=1.0):
    lambd = float(lambd)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    return (lambd,)


def _check_geometric(p):
    p = float(p)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    return (p,)


def _check_log_normal(mean=1.0, std=2.0):
    mean, std = float(mean), float(std)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")
    return mean, std


def _check_cauchy(median=0.0, sigma=1.0):
    median, sigma = float(median), float(sigma)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    return median, sigma


exponential_ = _simple_fill("exponential_", _check_exponential, S.exponential)
geometric_ = _simple_fill("geometric_", _check_geometric, S.geometric)
log_normal_ = _simple_fill("log_normal_", _check_log_normal, S.log_normal)
cauchy_ = _simple_fill("cauchy_", _check_cauchy, S.cauchy)

def _normal_node(name: str, node: str, call: str, inputs: int):
    """torch.normal with tensor arguments: the drawn values, zero gradients (PyTorch treats
    the draw as not differentiable in mean and std)."""
    return defop(name, node, lambda *arrays: arrays[-1], lambda c, g: (g * 0,) * inputs,
                 f"d {name}/d(mean, std) = 0 (a draw)", broadcast=True, torch_call=call)


_NORMAL_MEAN = _normal_node("normal_mean", "NormalBackward1", "torch.normal(a * 0 + 1, 0.0)", 1)
_NORMAL_STD = _normal_node("normal_std", "NormalBackward2", "torch.normal(1.0, a * 0)", 1)
_NORMAL_BOTH = _normal_node("normal_mean_std", "NormalBackward3", "torch.normal(a * 0 + 1, b * 0)", 2)


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, **kwargs):
    """All of torch.normal's overloads: (float, float, size), (Tensor, float),
    (float, Tensor), (Tensor, Tensor). Tensor forms draw normal_(0, 1) into the output's
    shape, then scale and shift it (output = z * std + mean, two roundings), as PyTorch does."""
    from .ops.creation import _float_dtype, _size

    if out is not None:  # drawn as without out= (the number forms in out's dtype), then written
        from .ops.creation import _fill_out, _random_out

        if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
            dtype = _random_out("normal", out, dtype)
            return _fill_out(out, normal(mean, std, size, generator=generator, dtype=dtype,
                                         **kwargs))
        from .ops.out_variants import write_out

        if GRAD_MODE.enabled and (out.requires_grad or any(
                isinstance(t, Tensor) and t.requires_grad for t in (mean, std))):
            raise RuntimeError("normal(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires grad.")
        return write_out(out, normal(mean, std, size, generator=generator, dtype=dtype, **kwargs),
                         "normal")
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), "
                            "but expected one of: size is required")
        shape = _size((size,))
        target = make(np.empty(shape, _float_dtype(dtype)))
        normal_(target, mean, std, generator=generator)
        if kwargs.get("requires_grad"):
            target._requires_grad = True
        return target
    if isinstance(std, Tensor):
        if std._data.size and (std._data < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif float(std) < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(float(std))}")
    m = mean if isinstance(mean, Tensor) else None
    s = std if isinstance(std, Tensor) else None
    shape = np.broadcast_shapes(*(t._data.shape for t in (m, s) if t is not None))
    npdt = (m if m is not None else s)._data.dtype
    gen = generator_of(generator)
    n = int(np.prod(shape, dtype=np.int64))
    if s is None:
        # normal_(0, std) (the kernel scales the draw), then add_(mean)
        z = S.normal(gen, n, npdt, True, 0.0, float(std)).reshape(shape)
        values = z + m._data
    else:
        # normal_(0, 1), then mul_(std).add_(mean): two roundings
        z = S.normal(gen, n, npdt, True, 0.0, 1.0).reshape(shape)
        z = z * s._data
        values = z + (m._data if m is not None else npdt.type(mean))
    values = np.asarray(values, dtype=npdt)
    if m is not None and s is not None:
        return run_op(_NORMAL_BOTH, (m, s), (values,))
    if m is not None:
        return run_op(_NORMAL_MEAN, (m,), (values,))
    return run_op(_NORMAL_STD, (s,), (values,))


def multinomial(input, num_samples, replacement=False, *, generator=None):
    arr = input._data
    if arr.dtype.kind not in "fV":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_scalar_name(input)}")
    if arr.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    num_samples = int(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = arr.shape[-1]
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rows = arr.reshape(-1, n_cat)
    gen = generator_of(generator)
    out_shape = (num_samples,) if arr.ndim == 1 else (arr.shape[0], num_samples)
    if rows.shape[0] == 0:
        return make(np.zeros(out_shape, np.int64))
    if not replacement or num_samples == 1:
        if not (np.all(rows < np.inf) and np.all(rows >= 0)):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (rows.sum(axis=1) == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        # q ~ Exp(1) in input's dtype, then the largest p / q (PyTorch's no-replacement path)
        q = S.exponential(gen, rows.size, 1.0).astype(arr.dtype).reshape(rows.shape)
        ratio = rows / q
        # topk: largest first; equal keys keep the lower index first
        order = np.argsort(-ratio, axis=1, kind="stable")[:, :num_samples]
        return make(order.reshape(out_shape).astype(np.int64))
    result = np.empty((rows.shape[0], num_samples), np.int64)
    for i, row in enumerate(rows):
        if not np.all(np.isfinite(row)):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        if (row < 0).any():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        cum = np.cumsum(row.astype(arr.dtype), dtype=arr.dtype)
        total = cum[-1]
        if not total > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        cum = cum / total
        cum[-1] = 1
        u = S.uniform01_f64(gen, num_samples)
        # the first slot whose cumulative probability is not below the draw
        result[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
    return make(result.reshape(out_shape))
