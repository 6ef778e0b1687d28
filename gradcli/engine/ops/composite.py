"""The long tail of torch.* functions on real tensors: the *_copy variants of the view
ops (their own `...Backward0_copy` nodes), the *_scatter ops, and functions PyTorch
composes from others (diff, trapezoid, combinations, broadcast_tensors, ravel...), which
record through those others so their grad_fn names are PyTorch's.
"""

from __future__ import annotations

import itertools
import math as _m

import numpy as np

from .. import dtypes
from ..node import keep_given
from ..tensor import Tensor, _wrap_dim, make
from . import registry as _registry
from .registry import defop, public, run_op, run_unary, sum_to
from .sorting import _pair_type

FREXP_T = _pair_type("frexp", "mantissa", "exponent")

# ------------------------------------------------------------------ *_copy variants


def _copy_of(view_fn):
    return lambda a, *meta: np.array(view_fn(a, *meta), copy=True)


EXPAND_COPY = defop("expand_copy", "ExpandBackward0_copy",
                    _copy_of(lambda a, shape, in_shape: np.broadcast_to(a, shape)),
                    lambda c, g: (sum_to(g, c.meta[1]),), "d expand_copy(a)/da: summed back",
                    torch_call="torch.expand_copy(a, (2, *a.shape))")
PERMUTE_COPY = defop("permute_copy", "PermuteBackward0_copy",
                     _copy_of(lambda a, dims: np.transpose(a, dims)),
                     lambda c, g: (g.permute(tuple(np.argsort(c.meta[0]))),),
                     "d permute_copy(a)/da: permuted back",
                     torch_call="torch.permute_copy(a, tuple(reversed(range(a.dim()))))")
TRANSPOSE_COPY = defop("transpose_copy", "TransposeBackward0_copy",
                       _copy_of(lambda a, d0, d1: np.swapaxes(a, d0, d1) if a.ndim else a),
                       lambda c, g: (g.transpose(c.meta[0], c.meta[1]),),
                       "d transpose_copy(a)/da: transposed back",
                       torch_call="torch.transpose_copy(a, 0, -1)")
T_COPY = defop("t_copy", "TBackward0_copy", _copy_of(lambda a: a.T),
               lambda c, g: (g.t(),), "d t_copy(a)/da: transposed back",
               torch_call="torch.t_copy(a.reshape(-1))")
RESHAPE_COPY = {
    node: defop(name, node, _copy_of(lambda a, shape, in_shape: a.reshape(shape)),
                lambda c, g: (g.reshape(c.meta[1]),), f"d {name}(a)/da: reshaped back",
                torch_call=call)
    for name, node, call in (
        ("view_copy", "ViewBackward0_copy", "torch.view_copy(a, (-1,))"),
        ("unsqueeze_copy", "UnsqueezeBackward0_copy", "torch.unsqueeze_copy(a, 0)"),
        ("squeeze_copy", "SqueezeBackward0_copy", "torch.squeeze_copy(a.unsqueeze(0))"),
        ("squeeze_copy_dim", "SqueezeBackward1_copy", "torch.squeeze_copy(a.unsqueeze(0), 0)"),
        ("squeeze_copy_dims", "SqueezeBackward2_copy",
         "torch.squeeze_copy(a.unsqueeze(0), (0,))"),
        ("alias_copy", "AliasBackward0_copy", "torch.alias_copy(a)"))
}


def _reshaped_copy(node, input, shape):
    return run_unary(RESHAPE_COPY[node], input, (tuple(shape), input._data.shape))


@public("torch.expand_copy")
def expand_copy(input, size, *, implicit=False):
    shape = tuple(input.expand(*tuple(size))._data.shape)
    return run_unary(EXPAND_COPY, input, (shape, input._data.shape))


@public("torch.permute_copy")
def permute_copy(input, dims):
    nd = input._data.ndim
    given, dims = dims, tuple(_wrap_dim(d, max(nd, 1)) for d in dims) if nd else ()
    input.permute(dims)  # PyTorch's checks and messages
    return keep_given(run_unary(PERMUTE_COPY, input, (dims,)), PERMUTE_COPY, given)


@public("torch.transpose_copy")
def transpose_copy(input, dim0, dim1):
    nd = input._data.ndim
    d0, d1 = _wrap_dim(dim0, max(nd, 1)), _wrap_dim(dim1, max(nd, 1))
    return keep_given(run_unary(TRANSPOSE_COPY, input, (d0, d1)), TRANSPOSE_COPY, dim0, dim1)


@public("torch.t_copy")
def t_copy(input):
    input.t()  # PyTorch's check: at most 2-D
    return run_unary(T_COPY, input)


@public("torch.view_copy")
def view_copy(input, size, *more):
    if isinstance(size, (int, np.integer)):
        size = (size, *more)
    return _reshaped_copy("ViewBackward0_copy", input, input.view(*tuple(size))._data.shape)


@public("torch.unsqueeze_copy")
def unsqueeze_copy(input, dim):
    return keep_given(_reshaped_copy("UnsqueezeBackward0_copy", input, input.unsqueeze(dim)._data.shape),
                      RESHAPE_COPY["UnsqueezeBackward0_copy"], dim)


@public("torch.squeeze_copy")
def squeeze_copy(input, dim=None):
    node = ("SqueezeBackward0_copy" if dim is None else "SqueezeBackward2_copy"
            if isinstance(dim, (tuple, list)) else "SqueezeBackward1_copy")
    return _reshaped_copy(node, input, input.squeeze(dim)._data.shape
                          if dim is not None else input.squeeze()._data.shape)


@public("torch.alias_copy")
def alias_copy(input):
    return _reshaped_copy("AliasBackward0_copy", input, input._data.shape)


@public("torch.diagonal_copy")
def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    from .layout import DIAG_COPY

    d = input._data
    input.diagonal(offset, dim1, dim2)  # PyTorch's checks and messages
    d1, d2 = _wrap_dim(dim1, d.ndim), _wrap_dim(dim2, d.ndim)
    return run_unary(DIAG_COPY, input, (int(offset), d1, d2, d.shape))


NARROW_COPY = defop("narrow_copy", "NarrowCopyBackward0",
                    lambda a, dim, start, length, shape: np.take(
                        a, np.arange(start, start + length), axis=dim),
                    lambda c, g: (_embed_slice(g, c.meta[3], c.meta[0], c.meta[1],
                                               c.meta[1] + c.meta[2], 1),),
                    "d narrow_copy(a)/da: the gradient in the narrowed part",
                    torch_call="torch.narrow_copy(a.reshape(-1), 0, 0, 1)")


def _embed_slice(g, shape, dim, start, stop, step):
    """zeros of `shape` with g written at [start:stop:step] along dim (a differentiable
    slice_scatter)."""
    return slice_scatter(make(np.zeros(shape, g._data.dtype)), g, dim, start, stop, step)


@public("torch.narrow_copy", "Tensor.narrow_copy")
def narrow_copy(input, dim, start, length):
    view = input.narrow(dim, start, length)  # PyTorch's checks and messages
    given, dim = dim, _wrap_dim(dim, input._data.ndim)
    start = start + input._data.shape[dim] if start < 0 else start
    del view
    return keep_given(run_unary(NARROW_COPY, input, (dim, int(start), int(length), input._data.shape)),
                      NARROW_COPY, given)


UNFOLD_COPY = defop("unfold_copy", "UnfoldBackward0_copy",
                    lambda a, *meta: np.array(_unfold(a, *meta), copy=True),
                    lambda c, g: (_unfold_back(g, c.meta),),
                    "d unfold_copy(a)/da: each window's gradient added back",
                    torch_call="torch.unfold_copy(a.reshape(-1), 0, 1, 1)")


def _unfold(a, *meta):
    from .layout import _unfold_view

    return _unfold_view(a, *meta)


def _unfold_back(g, meta):
    from .layout import UNFOLD_BACKWARD

    return run_op(UNFOLD_BACKWARD, (g,), meta)


@public("torch.unfold_copy")
def unfold_copy(input, dimension, size, step):
    view = input.unfold(dimension, size, step)  # PyTorch's checks and messages
    del view
    d = input._data
    dim = _wrap_dim(dimension, max(d.ndim, 1))
    return run_unary(UNFOLD_COPY, input, (dim, int(size), int(step), d.shape))


# ------------------------------------------------------------------ *_scatter


def _region(shape, kind, args):
    """The numpy key of the region select/slice/diagonal_scatter write."""
    if kind == "select":
        dim, index = args
        key = [slice(None)] * len(shape)
        key[dim] = index
        return tuple(key)
    dim, start, stop, step = args
    key = [slice(None)] * len(shape)
    key[dim] = slice(start, stop, step)
    return tuple(key)


def _scatter_region_fwd(a, src, kind, args):
    out = a.copy()
    if kind == "diagonal":
        offset, d1, d2 = args
        from .layout import _diagonal_fwd

        _diagonal_fwd(out, offset, d1, d2, out.shape)[...] = src
        return out
    out[_region(a.shape, kind, args)] = src
    return out


def _scatter_region_grads(c, g):
    kind, args = c.meta
    zeros_src = None
    if kind == "diagonal":
        offset, d1, d2 = args
        part = g.diagonal(offset, d1, d2)
        zeros_src = make(np.zeros(part._data.shape, g._data.dtype))
        return (diagonal_scatter(g, zeros_src, offset, d1, d2) if c.needs(0) else None,
                part * 1 if c.needs(1) else None)
    if kind == "select":
        dim, index = args
        part = g.select(dim, index)
        zeros_src = make(np.zeros(part._data.shape, g._data.dtype))
        return (select_scatter(g, zeros_src, dim, index) if c.needs(0) else None,
                part * 1 if c.needs(1) else None)
    dim, start, stop, step = args
    part = g[_region(g._data.shape, kind, args)]
    zeros_src = make(np.zeros(part._data.shape, g._data.dtype))
    return (slice_scatter(g, zeros_src, dim, start, stop, step) if c.needs(0) else None,
            part * 1 if c.needs(1) else None)


SCATTERS = {
    kind: defop(f"{kind}_scatter", node, _scatter_region_fwd, _scatter_region_grads,
                f"d {kind}_scatter(a, s)/da: the gradient outside the region; d/ds: inside it",
                save="", torch_call=call)
    for kind, node, call in (
        ("select", "SelectScatterBackward0",
         "torch.select_scatter(a.reshape(1, -1), b.reshape(-1)[:1].expand(a.numel()), 0, 0)"),
        ("slice", "SliceScatterBackward0",
         "torch.slice_scatter(a.reshape(-1), b.reshape(-1)[:1] * 1, 0, 0, 1)"),
        ("diagonal", "DiagonalScatterBackward0",
         "torch.diagonal_scatter(a.reshape(1, -1), b.reshape(-1)[:1] * 1)"))
}


def _scatter_src(kind, input, src, region):
    if tuple(src._data.shape) != tuple(region._data.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src._data.shape)}, slice size = {list(region._data.shape)}")
    result = input.dtype
    return src._data.astype(result.np, copy=False)


@public("torch.select_scatter", "Tensor.select_scatter")
def select_scatter(input, src, dim, index):
    d = input._data
    given = (dim, index)
    dim = _wrap_dim(dim, max(d.ndim, 1))
    region = input.select(dim, index)
    index = index + d.shape[dim] if index < 0 else index
    arr = _scatter_src("select", input, src, region)
    return keep_given(run_op(SCATTERS["select"], (input, src), ("select", (dim, int(index))),
                             arrays=(d, arr)), SCATTERS["select"], *given)


@public("torch.slice_scatter", "Tensor.slice_scatter")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    d = input._data
    given = (dim, start, end, step)
    dim = _wrap_dim(dim, max(d.ndim, 1))
    size = d.shape[dim]
    lo, hi, st = slice(start, end, step).indices(size)
    region_shape = list(d.shape)
    region_shape[dim] = len(range(lo, hi, st))
    if tuple(src._data.shape) != tuple(region_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src._data.shape)}, slice size = {region_shape}")
    arr = src._data.astype(d.dtype, copy=False)
    return keep_given(run_op(SCATTERS["slice"], (input, src), ("slice", (dim, lo, hi, st)),
                             arrays=(d, arr)), SCATTERS["slice"], *given)


@public("torch.diagonal_scatter", "Tensor.diagonal_scatter")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    d = input._data
    region = input.diagonal(offset, dim1, dim2)
    d1, d2 = _wrap_dim(dim1, d.ndim), _wrap_dim(dim2, d.ndim)
    arr = _scatter_src("diagonal", input, src, region)
    return run_op(SCATTERS["diagonal"], (input, src), ("diagonal", (int(offset), d1, d2)),
                  arrays=(d, arr))


# ------------------------------------------------------------------ compositions


@public("torch.positive", "Tensor.positive")
def positive(input):
    if input._data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _same(input):
    return input


for _name in ("real", "conj", "conj_physical", "resolve_conj", "resolve_neg"):
    public(f"torch.{_name}", f"Tensor.{_name}")(_same)


def _sgn(a):
    """sign for real input, with PyTorch's sgn(nan) = 0 and sgn(-0.) = 0. (np.sign: nan, -0.)"""
    return (a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)


SGN = defop("sgn", "SgnBackward0", _sgn,
            lambda c, g: (make(np.zeros(g._data.shape, g._data.dtype)),), "d sgn(a)/da = 0",
            torch_call="torch.sgn(a) + a")


@public("torch.sgn", "Tensor.sgn")
def sgn(input):
    d = input._data
    if d.dtype == np.bool_:
        return make(d.copy())
    return run_unary(SGN, input)


@public("Tensor.sgn_")
def sgn_(input):
    return input._apply_inplace(lambda old: sgn(old))


def _angle_fwd(a):
    out = np.where(a < 0, np.pi, 0.0).astype(a.dtype)
    return np.where(np.isnan(a), a, out)


ANGLE = defop("angle", "AngleBackward0", _angle_fwd, lambda c, g: (g * 0,),
              "d angle(a)/da = 0 for real a", torch_call="torch.angle(a)")


@public("torch.angle", "Tensor.angle")
def angle(input):
    d = input._data
    array = d.astype(dtypes.get_default_dtype().np) if d.dtype.kind not in "fV" else None
    return run_unary(ANGLE, input, (), array)


@public("torch.ravel", "Tensor.ravel")
def ravel(input):
    return input.contiguous().view(-1)


@public("torch.broadcast_tensors")
def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    try:
        shape = np.broadcast_shapes(*[t._data.shape for t in tensors])
    except ValueError:
        from .registry import broadcast_error

        broadcast_error(tensors[0]._data.shape, tensors[1]._data.shape)
    # a tensor already of the broadcast shape comes back itself, as PyTorch's does (no
    # ExpandBackward0 node: Normal(p, 1.0).mean is p)
    return tuple(t if t._data.shape == shape else t.expand(*shape) for t in tensors)


@public("torch.diff", "Tensor.diff")
def diff(input, n=1, dim=-1, prepend=None, append=None):
    from .shape import cat

    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    dim = _wrap_dim(dim, input._data.ndim)
    x = input
    if n == 0 and prepend is None and append is None:
        out = make(np.empty_like(input._data))
        return out.copy_(input)
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = cat([p if p._data.ndim else p.expand(*(1 if i == dim else s for i, s in
                                                  enumerate(x._data.shape))) for p in parts], dim)
    for _ in range(n):
        length = x._data.shape[dim]
        if length <= 0:
            break
        hi, lo = x.narrow(dim, 1, length - 1), x.narrow(dim, 0, length - 1)
        x = hi.logical_xor(lo) if x._data.dtype == np.bool_ else hi - lo
    return x


@public("Tensor.sum_to_size")
def sum_to_size(input, *size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = input._data.shape
    size = tuple(int(s) for s in size)
    lead = len(shape) - len(size)
    ok = lead >= 0 and all(s == 1 or s == shape[lead + i] for i, s in enumerate(size))
    if not ok:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "
                           f"{{{list(shape)}}}.")
    if tuple(shape) == size:
        return input.sum() if not shape else input
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size)
                                if s == 1 and shape[lead + i] != 1]
    out = input.sum(dims, keepdim=True)
    return out.view(*size) if lead else out


FILL0 = defop("fill_scalar", "FillBackward0", lambda a, v: np.full_like(a, v),
              lambda c, g: (g * 0,), "d fill(a, v)/da = 0", torch_call="torch.fill(a, 2.5)")


@public("torch.fill")
def fill(input, value):
    if isinstance(value, Tensor):
        return input.clone().fill_(value)
    return run_unary(FILL0, input, (value,))


@public("torch.zero_")
def zero_(input):
    return input.zero_()


@public("torch.combinations")
def combinations(input, r=2, with_replacement=False):
    from .indexing import index_select
    from .shape import stack

    if input._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._data.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    n = input._data.shape[0]
    from ..limits import check_count

    count = _m.comb(n + r - 1, r) if with_replacement else _m.comb(n, r)
    check_count(count * max(r, 1))  # before enumerating them (--max-elements)
    pick = (itertools.combinations_with_replacement if with_replacement
            else itertools.combinations)
    rows = list(pick(range(n), r))
    if r == 0:
        return make(np.zeros(0, input._data.dtype))
    cols = np.asarray(rows, np.int64).reshape(len(rows), r)
    return stack([index_select(input, 0, make(cols[:, j])) for j in range(r)], 1)


def _trapezoid_sum(y, dx, dim):
    from .elementwise import MUL_SCALAR

    n = y._data.shape[dim]
    if n == 0:
        return y.sum(dim) * 0
    both = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    return run_unary(MUL_SCALAR, both.sum(dim), (dx / 2.0,))


def _float_samples(y, x, name: str):
    """Integer samples as the default float: PyTorch's trapezoid multiplies by dx/2 or
    divides by 2, promoting an integer sum to a float (an integer tensor has no grad).
    Bool samples or spacings are refused, with PyTorch's text."""
    if isinstance(x, Tensor):
        if x._data.dtype == np.bool_ or y._data.dtype == np.bool_:
            raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                               "supported")
    elif y._data.dtype == np.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if y._data.dtype.kind in "iu":
        return y.to(dtypes.get_default_dtype())
    return y


@public("torch.trapezoid", "torch.trapz")
def trapezoid(y, x=None, *, dx=None, dim=-1):
    if isinstance(x, (int, float)) and dx is None:
        x, dx = None, x
    y = _float_samples(y, x, "trapezoid")
    dim = _wrap_dim(dim, max(y._data.ndim, 1))
    if x is None:
        return _trapezoid_sum(y, 1.0 if dx is None else float(dx), dim)
    n = y._data.shape[dim]
    xs = x if x._data.ndim != 1 else x.view(*[-1 if i == dim else 1
                                             for i in range(y._data.ndim)])
    dxs = xs.narrow(dim if x._data.ndim != 1 else dim, 1, n - 1) - xs.narrow(
        dim if x._data.ndim != 1 else dim, 0, n - 1)
    both = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    return _half((dxs * both).sum(dim))


def _half(t):
    """t / 2 as PyTorch's C++ divides by a number (div.Scalar: DivBackward1)."""
    from .elementwise import DIV_SCALAR

    return run_unary(DIV_SCALAR, t, (2,))


@public("torch.cumulative_trapezoid")
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    from .elementwise import MUL_SCALAR

    if isinstance(x, (int, float)) and dx is None:
        x, dx = None, x
    y = _float_samples(y, x, "cumulative_trapezoid")
    dim = _wrap_dim(dim, max(y._data.ndim, 1))
    n = y._data.shape[dim]
    both = y.narrow(dim, 1, max(n - 1, 0)) + y.narrow(dim, 0, max(n - 1, 0))
    if x is None:
        return run_unary(MUL_SCALAR, both, ((1.0 if dx is None else float(dx)) / 2.0,)).cumsum(
            dim)
    xs = x if x._data.ndim != 1 else x.view(*[-1 if i == dim else 1
                                             for i in range(y._data.ndim)])
    dxs = xs.narrow(dim, 1, n - 1) - xs.narrow(dim, 0, n - 1)
    return _half((dxs * both).cumsum(dim))


@public("torch.diagflat")
def diagflat(input, offset=0):
    from .layout import diag

    return diag(input.contiguous().view(-1), offset)


def _ldexp_grads(c, g):
    a, e = c.saved
    scale = 2.0 ** e if not isinstance(e, Tensor) else e.to(g.dtype).exp2()
    return (g * scale if c.needs(0) else None,
            g * a * scale * _m.log(2.0) if c.needs(1) else None)


LDEXP = defop("ldexp", "LdexpBackward0", lambda a, e: (a * np.exp2(e)).astype(
    np.result_type(a.dtype, np.float32) if a.dtype.kind in "fV" else np.float32),
              _ldexp_grads, "d ldexp(a, e)/da = 2^e, d/de = a 2^e ln 2", save="inputs",
              broadcast=True, torch_call="torch.ldexp(a, torch.tensor(2))")


@public("torch.ldexp", "Tensor.ldexp")
def ldexp(input, other):
    result = dtypes.result_type(input, other)
    if result._category < 2:
        result = dtypes.get_default_dtype()
    x = input._data.astype(result.np, copy=False)
    e = other._data.astype(result.np, copy=False) if isinstance(other, Tensor) else other
    return run_op(LDEXP, (input, other), arrays=(x, e))


FREXP = defop("frexp", "FrexpBackward0", lambda a, e: np.frexp(a)[0],
              lambda c, g: (g / (2.0 ** make(c.meta[0]).to(g.dtype)),),
              "d frexp(a).mantissa/da = 2^-exponent", save="meta",
              torch_call="torch.frexp(a)[0]")


@public("torch.frexp", "Tensor.frexp")
def frexp(input):
    d = input._data
    if d.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    exponent = np.frexp(d)[1].astype(np.int32)
    mantissa = run_unary(FREXP, input, (exponent,))
    return FREXP_T((mantissa, make(exponent)))


# ------------------------------------------------------------------ pieces that are copies


def _pieces_backward(c, grads):
    from .shape import _pieces_backward as join

    return join(c, grads)


def _copy_pieces_op(name, node, call):
    return defop(name, node, None, _pieces_backward, f"d {name}(a)/da: join the pieces' gradients",
                 multi=True, torch_call=call)


UNSAFE_SPLIT = _copy_pieces_op(
    "unsafe_split", "UnsafeSplitBackward0",
    "torch.unsafe_split(a.reshape(-1), 1)[-1] * torch.unsafe_split(a.reshape(-1), 1)[0]")
SPLIT_WITH_SIZES_COPY = _copy_pieces_op(
    "split_with_sizes_copy", "SplitWithSizesBackward0_copy",
    "torch.split_with_sizes_copy(a.reshape(-1), [1, a.numel() - 1])[0]")
UNBIND_COPY = _copy_pieces_op("unbind_copy", "UnbindBackward0_copy",
                              "torch.unbind_copy(a.reshape(-1))[0]")


def _as_copies(op, pieces, x, share: bool = False):
    """Copies of the view pieces split/chunk/unbind made, as one node of `op` (with the
    views' own bookkeeping, so the backward joins the gradients the same way). `share`:
    the unsafe_ splits' pieces, which keep the input's memory but are not views of it."""
    from ..grad_mode import GRAD_MODE

    outs = [make(p._data if share else np.array(p._data, copy=True)) for p in pieces]
    fn = pieces[0]._grad_fn if pieces else None
    if fn is not None and GRAD_MODE.enabled:
        node = op.node_class()(op, fn.next_functions, None, None, None, fn.meta, None)
        for i, o in enumerate(outs):
            o._requires_grad = True
            o._grad_fn = node
            o._output_nr = i
    if _registry.FORWARD_AD_MULTI is not None:
        _registry.FORWARD_AD_MULTI.copies(pieces, outs, op)
    return tuple(outs)


@public("torch.unsafe_split", "Tensor.unsafe_split")
def unsafe_split(input, split_size, dim=0):
    return _as_copies(UNSAFE_SPLIT, input.split(split_size, dim), input, share=True)


@public("torch.unsafe_chunk", "Tensor.unsafe_chunk")
def unsafe_chunk(input, chunks, dim=0):
    return _as_copies(UNSAFE_SPLIT, input.chunk(chunks, dim), input, share=True)


@public("torch.split_with_sizes_copy")
def split_with_sizes_copy(input, split_sizes, dim=0):
    return _as_copies(SPLIT_WITH_SIZES_COPY, input.split_with_sizes(split_sizes, dim), input)


@public("torch.unbind_copy")
def unbind_copy(input, dim=0):
    return _as_copies(UNBIND_COPY, input.unbind(dim), input)
