"""Shape and layout ops (issue 24, group 3): diagonal diag_embed diag trace tril triu roll
rot90 block_diag; the compositions PyTorch itself builds from other ops (fliplr flipud
movedim tile broadcast_to atleast_Nd dstack column_stack tensor_split hsplit vsplit
unflatten meshgrid cartesian_prod kron tensordot inner repeat_interleave), recorded
through those ops so their grad_fn names are PyTorch's; and the nan-aware and paired
reductions (nansum nanmean std_mean var_mean dist).
"""

from __future__ import annotations

import numpy as np

from .. import autocast_state as _autocast
from .. import dtypes
from ..node import keep_given
from ..tensor import Tensor, _wrap_dim, make
from .reductions import given_correction
from .registry import PUBLIC, defop, forward_of, public, run_op, run_unary


def _tensor(fname, value, arg="input", pos=1):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, "
                        f"not {type(value).__name__}")


def _diag_index(shape, offset, d1, d2):
    """Index arrays selecting the (offset) diagonal of dims d1, d2, which move to the end."""
    n1, n2 = shape[d1], shape[d2]
    if offset >= 0:
        length = max(0, min(n1, n2 - offset))
        i1, i2 = np.arange(length), np.arange(length) + offset
    else:
        length = max(0, min(n1 + offset, n2))
        i1, i2 = np.arange(length) - offset, np.arange(length)
    return i1, i2


def _diagonal_fwd(a, offset, d1, d2, in_shape):
    """A writable view of the diagonal (numpy's own is read-only), so writes through
    `x.diagonal()` reach x, as in PyTorch."""
    sub = np.moveaxis(a, (d1, d2), (-2, -1))
    sub = sub[..., :, offset:] if offset >= 0 else sub[..., -offset:, :]
    n = max(0, min(sub.shape[-2], sub.shape[-1]))
    return np.lib.stride_tricks.as_strided(
        sub, sub.shape[:-2] + (n,), sub.strides[:-2] + (sub.strides[-2] + sub.strides[-1],),
        writeable=a.flags.writeable)


def _diagonal_copy_fwd(a, offset, d1, d2, in_shape):
    return np.diagonal(a, offset, d1, d2).copy()


def _embed_diag(g, shape, offset, d1, d2):
    """zeros(shape) with its (offset, d1, d2) diagonal set to g (the last dim of g)."""
    out = np.zeros(shape, g.dtype)
    i1, i2 = _diag_index(shape, offset, d1, d2)
    moved = np.moveaxis(out, (d1, d2), (-2, -1))
    moved[..., i1, i2] = g
    return out


DIAGONAL = defop("diagonal", "DiagonalBackward0", _diagonal_fwd,
                 lambda c, g: (run_op(DIAGONAL_BACKWARD, (g,), c.meta),),
                 "d diagonal(a)/da: the gradient on the diagonal, zeros elsewhere",
                 torch_call="torch.diagonal(a.reshape(1, -1) * a.reshape(-1, 1))")
DIAGONAL_BACKWARD = defop(
    "diagonal_backward", "DiagonalBackwardBackward0",
    lambda g, offset, d1, d2, shape: _embed_diag(g, shape, offset, d1, d2),
    lambda c, gg: (run_op(DIAGONAL, (gg,), c.meta),),
    "d embed(g)/dg: take the diagonal back", out_size=lambda arrays, meta: _shape_count(
        arrays, meta),
    torch_call="torch.enable_grad()(lambda a: (lambda m: torch.autograd.grad("
               "torch.diagonal(m), m, torch.diagonal(m) * 1, create_graph=True)[0])("
               "a.reshape(-1, 1) * a.reshape(1, -1)))(a)")
DIAG_COPY = defop("diag_copy", "DiagonalBackward0_copy", _diagonal_copy_fwd,
                  lambda c, g: (run_op(DIAGONAL_BACKWARD, (g,), c.meta),),
                  "d diag(matrix)/da: the gradient on the diagonal",
                  torch_call="torch.diag(a.reshape(1, -1) * a.reshape(-1, 1))")


def _dims_pair(fname, nd, d1, d2):
    d1, d2 = _wrap_dim(d1, nd), _wrap_dim(d2, nd)
    if d1 == d2:
        raise RuntimeError(f"{fname}(): dimensions cannot be identical {d1}, {d2}")
    return d1, d2


@public("torch.diagonal", "Tensor.diagonal")
def diagonal(input, offset=0, dim1=0, dim2=1):
    _tensor("diagonal", input)
    d = input._data
    if d.ndim < 2:
        raise RuntimeError(f"diagonal dimensions requires ndim larger than 1, but got {d.ndim}")
    d1, d2 = _dims_pair("diagonal", d.ndim, dim1, dim2)
    from .views import view_op

    return keep_given(view_op(DIAGONAL, input, (int(offset), d1, d2, d.shape)), DIAGONAL, offset, dim1,
                      dim2)


def _diag_embed_fwd(a, offset, d1, d2, shape):
    return _embed_diag(a, shape, offset, d1, d2)


def _shape_count(arrays, meta) -> int:
    """Elements of a result whose shape is the op's last meta (for --max-elements)."""
    return int(np.prod(meta[-1], dtype=np.float64))


DIAG_EMBED = defop("diag_embed", "DiagEmbedBackward0", _diag_embed_fwd,
                   lambda c, g: (run_op(DIAGONAL, (g,), c.meta[:3] + (c.meta[3],)),),
                   "d diag_embed(a)/da: the gradient's diagonal", torch_call="torch.diag_embed(a)",
                   out_size=_shape_count)


def _embed_shape(shape, offset, d1, d2):
    n = shape[-1] + abs(offset)
    out = list(shape[:-1])
    for d in sorted((d1, d2)):
        out.insert(d, n)
    return tuple(out)


@public("torch.diag_embed", "Tensor.diag_embed")
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    _tensor("diag_embed", input)
    d = input._data
    nd = d.ndim + 1
    d1, d2 = _dims_pair("diag_embed", nd, dim1, dim2)
    if d.ndim == 0:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{dim1})")
    shape = _embed_shape(d.shape, int(offset), d1, d2)
    return keep_given(run_unary(DIAG_EMBED, input, (int(offset), d1, d2, shape)), DIAG_EMBED, offset, dim1,
                      dim2)


@public("torch.diag", "Tensor.diag")
def diag(input, diagonal=0):
    _tensor("diag", input)
    d = input._data
    if d.ndim == 1:
        # (PyTorch's diag of a vector is diag_embed(diagonal, -2, -1))
        return keep_given(run_unary(DIAG_EMBED, input, (int(diagonal), 0, 1,
                                                        _embed_shape(d.shape, int(diagonal), 0, 1))),
                          DIAG_EMBED, diagonal, -2, -1)
    if d.ndim != 2:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{d.ndim}D")
    return run_unary(DIAG_COPY, input, (int(diagonal), 0, 1, d.shape))


TRACE = defop("trace", "TraceBackward0", lambda a, shape: np.trace(a).astype(a.dtype),
              lambda c, g: (g * make(np.eye(*c.meta[0], dtype=g._data.dtype)),),
              "d trace(a)/da = identity", torch_call="torch.trace(a.reshape(1, -1) * a.reshape(-1, 1))")


@public("torch.trace", "Tensor.trace")
def trace(input):
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(trace, input)
    _tensor("trace", input)
    d = input._data
    if d.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(d.ndim))
    if d.dtype.kind not in "fV":
        return make(np.asarray(np.trace(d), np.int64))
    return run_unary(TRACE, input, (d.shape,))


TRIL = defop("tril", "TrilBackward0", lambda a, k: np.tril(a, k),
             lambda c, g: (g.tril(c.meta[0]),), "d tril(a)/da: the gradient's lower triangle",
             torch_call="torch.tril(a.reshape(1, -1) * a.reshape(-1, 1))")
TRIU = defop("triu", "TriuBackward0", lambda a, k: np.triu(a, k),
             lambda c, g: (g.triu(c.meta[0]),), "d triu(a)/da: the gradient's upper triangle",
             torch_call="torch.triu(a.reshape(1, -1) * a.reshape(-1, 1), 1)")


def _tri(op, fname, input, diagonal):
    _tensor(fname, input)
    if input._data.ndim < 2:
        raise RuntimeError(f"{fname}: input tensor must have at least 2 dimensions")
    return run_unary(op, input, (int(diagonal),))


@public("torch.tril", "Tensor.tril")
def tril(input, diagonal=0):
    return _tri(TRIL, "tril", input, diagonal)


@public("torch.triu", "Tensor.triu")
def triu(input, diagonal=0):
    return _tri(TRIU, "triu", input, diagonal)


@public("Tensor.tril_")
def tril_(input, diagonal=0):
    return input._apply_inplace(lambda old: tril(old, diagonal))


@public("Tensor.triu_")
def triu_(input, diagonal=0):
    return input._apply_inplace(lambda old: triu(old, diagonal))


def _roll_fwd(a, shifts, dims):
    if not dims:
        return np.roll(a.reshape(-1), shifts).reshape(a.shape) if a.ndim else a.copy()
    return np.roll(a, shifts, dims)


ROLL = defop("roll", "RollBackward0", _roll_fwd,
             lambda c, g: (g.roll(tuple(-s for s in c.meta[0]) if c.meta[1] else -c.meta[0][0],
                                  c.meta[1] or None),),
             "d roll(a)/da: roll the gradient back", torch_call="torch.roll(a, 1)")


def _int_tuple(v):
    return tuple(int(x) for x in v) if isinstance(v, (tuple, list)) else (int(v),)


@public("torch.roll", "Tensor.roll")
def roll(input, shifts, dims=None):
    _tensor("roll", input)
    shifts = _int_tuple(shifts)
    nd = input._data.ndim
    if dims is None or (isinstance(dims, (tuple, list)) and not dims):
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               "dims:0")
        return run_unary(ROLL, input, (shifts, ()))
    dims = tuple(_wrap_dim(d, max(nd, 1)) for d in _int_tuple(dims))
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    return run_unary(ROLL, input, (shifts, dims))


ROT90 = defop("rot90", "Rot90Backward0", lambda a, k, dims: np.rot90(a, k, dims).copy(),
              lambda c, g: (g.rot90(-c.meta[0], c.meta[1]),),
              "d rot90(a)/da: rotate the gradient back",
              torch_call="torch.rot90(a.reshape(1, -1) * a.reshape(-1, 1))")


@public("torch.rot90", "Tensor.rot90")
def rot90(input, k=1, dims=(0, 1)):
    _tensor("rot90", input)
    nd = input._data.ndim
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = _wrap_dim(dims[0], nd), _wrap_dim(dims[1], nd)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    return keep_given(run_unary(ROT90, input, (int(k) % 4, (d0, d1))), ROT90, k, dims)


def _block_diag_fwd(*arrays_and_meta):
    shapes = arrays_and_meta[-1]
    arrays = arrays_and_meta[:-1]
    rows = sum(s[0] for s in shapes)
    cols = sum(s[1] for s in shapes)
    dtype = np.result_type(*arrays) if arrays else np.float32
    out = np.zeros((rows, cols), dtype)
    r = c = 0
    for a, (n, m) in zip(arrays, shapes, strict=True):
        out[r:r + n, c:c + m] = a.reshape(n, m)
        r += n
        c += m
    return out


def _block_diag_grads(c, g):
    shapes, in_shapes = c.meta[0], c.meta[1]
    out = []
    r = col = 0
    for i, (n, m) in enumerate(shapes):
        if c.needs(i):
            out.append(g[r:r + n, col:col + m].reshape(in_shapes[i]))
        else:
            out.append(None)
        r += n
        col += m
    return tuple(out)


BLOCK_DIAG = defop("block_diag", "BlockDiagBackward0",
                   lambda *am: _block_diag_fwd(*am[:-2], am[-2]), _block_diag_grads,
                   "d block_diag(a, b)/da: the gradient's block for a",
                   torch_call="torch.block_diag(a, b)",
                   out_size=lambda arrays, meta: sum(s[0] for s in meta[0]) * sum(
                       s[1] for s in meta[0]))


@public("torch.block_diag")
def block_diag(*tensors):
    shapes, in_shapes = [], []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
        d = t._data
        if d.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {d.ndim} dimensions")
        shapes.append((1, 1) if d.ndim == 0 else (1, d.shape[0]) if d.ndim == 1 else d.shape)
        in_shapes.append(d.shape)
    result = dtypes.result_type(*tensors) if tensors else dtypes.get_default_dtype()
    arrays = tuple(t._data.astype(result.np, copy=False) for t in tensors)
    return run_op(BLOCK_DIAG, tuple(tensors), (tuple(shapes), tuple(in_shapes)), arrays=arrays)


# ------------------------------------------------------------------ compositions


@public("torch.fliplr", "Tensor.fliplr")
def fliplr(input):
    _tensor("fliplr", input)
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return input.flip(1)


@public("torch.flipud", "Tensor.flipud")
def flipud(input):
    _tensor("flipud", input)
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return input.flip(0)


@public("torch.movedim", "Tensor.movedim", "torch.moveaxis", "Tensor.moveaxis")
def movedim(input, source, destination):
    _tensor("movedim", input)
    nd = input._data.ndim
    src = tuple(_wrap_dim(d, max(nd, 1)) for d in _int_tuple(source))
    dst = tuple(_wrap_dim(d, max(nd, 1)) for d in _int_tuple(destination))
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    if nd == 0:
        from .views import alias

        return alias(input)
    order = [d for d in range(nd) if d not in src]
    perm = [None] * nd
    for s, t in zip(src, dst, strict=True):
        perm[t] = s
    rest = iter(order)
    perm = [p if p is not None else next(rest) for p in perm]
    return input.permute(perm)


@public("torch.swapdims", "Tensor.swapdims")
def swapdims(input, dim0, dim1):
    return input.transpose(dim0, dim1)


@public("torch.tile", "Tensor.tile")
def tile(input, dims, *more):
    dims = _int_tuple(dims) + tuple(int(d) for d in more)
    nd = input._data.ndim
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    return input.repeat(*dims)


@public("torch.broadcast_to", "Tensor.broadcast_to")
def broadcast_to(input, size):
    return input.expand(*tuple(size))


def _atleast(fname, nd, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_atleast(fname, nd, (t,)) for t in tensors[0])
    if len(tensors) > 1:
        return tuple(_atleast(fname, nd, (t,)) for t in tensors)
    t = tensors[0]
    _tensor(fname, t, "self")
    n = t._data.ndim
    if n == 0:
        return t.reshape((1,) * nd)
    if nd >= 2 and n == 1:
        t = t.unsqueeze(0)
        return t.unsqueeze(-1) if nd == 3 else t
    if nd == 3 and n == 2:
        return t.unsqueeze(-1)
    return t


@public("torch.atleast_1d")
def atleast_1d(*tensors):
    return _atleast("atleast_1d", 1, tensors)


@public("torch.atleast_2d")
def atleast_2d(*tensors):
    return _atleast("atleast_2d", 2, tensors)


@public("torch.atleast_3d")
def atleast_3d(*tensors):
    return _atleast("atleast_3d", 3, tensors)


@public("torch.dstack")
def dstack(tensors):
    from .shape import cat

    return cat([atleast_3d(t) for t in tensors], 2)


@public("torch.column_stack")
def column_stack(tensors):
    from .shape import hstack

    return hstack([t.reshape(t._data.size, 1) if t._data.ndim <= 1 else t for t in tensors])


@public("torch.tensor_split", "Tensor.tensor_split")
def tensor_split(input, indices_or_sections, dim=0):
    _tensor("tensor_split", input)
    d = input._data
    if d.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    dim = _wrap_dim(dim, d.ndim)
    size = d.shape[dim]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        spec = spec._data.tolist()
    if isinstance(spec, int):
        if spec <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
        base, extra = divmod(size, spec)
        bounds, start = [], 0
        for i in range(spec):
            stop = start + base + (1 if i < extra else 0)
            bounds.append((start, stop))
            start = stop
    else:
        cuts = [int(i) for i in spec]
        edges = [0] + cuts + [size]
        bounds = [(min(max(a, 0), size), min(max(b, 0), size)) for a, b in zip(edges, edges[1:],
                                                                                 strict=False)]
    from .views import slice_dim

    return tuple(slice_dim(input, dim, a, max(a, b), 1) for a, b in bounds)


def _named_split(fname, dim_for, input, sections):
    d = input._data
    dim = dim_for(d.ndim)
    if d.ndim < {"hsplit": 1, "vsplit": 2, "dsplit": 3}[fname]:
        need = {"hsplit": 1, "vsplit": 2, "dsplit": 3}[fname]
        raise RuntimeError(f"torch.{fname} requires a tensor with at least {need} dimension, but "
                           f"got a tensor with {d.ndim} dimensions!")
    if isinstance(sections, int):
        if sections == 0 or d.shape[dim] % sections:
            raise RuntimeError(f"torch.{fname} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {d.shape[dim]} is not divisible by the "
                               f"split_size {sections}!")
    return tensor_split(input, sections, dim)


@public("torch.hsplit", "Tensor.hsplit")
def hsplit(input, sections):
    return _named_split("hsplit", lambda n: 0 if n == 1 else 1, input, sections)


@public("torch.vsplit", "Tensor.vsplit")
def vsplit(input, sections):
    return _named_split("vsplit", lambda n: 0, input, sections)


@public("torch.dsplit", "Tensor.dsplit")
def dsplit(input, sections):
    return _named_split("dsplit", lambda n: 2, input, sections)


@public("torch.unflatten", "Tensor.unflatten")
def unflatten(input, dim, sizes):
    d = input._data
    dim = _wrap_dim(dim, max(d.ndim, 1))
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    given = list(sizes)  # (the message shows the sizes as given, -1 included)
    if -1 in sizes:
        known = int(np.prod([s for s in sizes if s != -1]))
        sizes = tuple(d.shape[dim] // known if s == -1 and known else s for s in sizes)
    if int(np.prod(sizes)) != d.shape[dim]:
        raise RuntimeError(f"unflatten: Provided sizes {given} don't multiply up to the "
                           f"size of dim {dim} ({d.shape[dim]}) in the input tensor")
    return input.view(*(d.shape[:dim] + sizes + d.shape[dim + 1:]))


@public("torch.meshgrid")
def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        from ..warn_site import warn_once

        warn_once("meshgrid_indexing", "torch.meshgrid: in an upcoming release, it will be "
                  "required to pass the indexing argument. (Triggered internally at /__w/pytorch/"
                  "pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)", inside=True)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError("torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t!r}")
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(tensors)
    if swap:
        order[0], order[1] = order[1], order[0]
    sizes = [t._data.size for t in order]
    outs = []
    for i, t in enumerate(order):
        shape = [1] * len(order)
        shape[i] = -1
        outs.append(t.view(*shape).expand(*sizes))
    if swap:
        outs[0], outs[1] = outs[1], outs[0]
    return tuple(outs)


@public("torch.cartesian_prod")
def cartesian_prod(*tensors):
    from .shape import stack

    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.flatten() for g in grids], 1)


@public("torch.kron", "Tensor.kron")
def kron(input, other):
    from .views import unsafe_view

    a, b = input, other
    na, nb = a._data.ndim, b._data.ndim
    n = max(na, nb)
    a = a.reshape((1,) * (n - na) + a._data.shape)
    b = b.reshape((1,) * (n - nb) + b._data.shape)
    sa, sb = a._data.shape, b._data.shape
    a_exp = a.reshape(tuple(x for s in sa for x in (s, 1)))
    b_exp = b.reshape(tuple(x for s in sb for x in (1, s)))
    prod = a_exp * b_exp
    return unsafe_view(prod, tuple(x * y for x, y in zip(sa, sb, strict=True)))


def _tensordot_dims(dims, na, nb):
    if isinstance(dims, Tensor):
        dims = dims._data.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        return list(range(na - dims, na)), list(range(dims))
    da, db = dims
    da = [_wrap_dim(d, max(na, 1)) for d in _int_tuple(da)]
    db = [_wrap_dim(d, max(nb, 1)) for d in _int_tuple(db)]
    return da, db


@public("torch.tensordot")
def tensordot(a, b, dims=2, out=None):
    da, db = _tensordot_dims(dims, a._data.ndim, b._data.ndim)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    sa, sb = a._data.shape, b._data.shape
    for x, y in zip(da, db, strict=True):
        if sa[x] != sb[y] and sa[x] == 1:  # a size-1 dim contracts with the other's sum
            b = b.sum(y, keepdim=True)
        elif sa[x] != sb[y] and sb[y] == 1:
            a = a.sum(x, keepdim=True)
        elif sa[x] != sb[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa[x]} "
                               f"in dim {x} and second has size {sb[y]} in dim {y}")
    sa, sb = a._data.shape, b._data.shape
    free_a = [d for d in range(len(sa)) if d not in da]
    free_b = [d for d in range(len(sb)) if d not in db]
    m = int(np.prod([sa[d] for d in free_a]))
    n = int(np.prod([sb[d] for d in free_b]))
    k = int(np.prod([sa[d] for d in da]))
    left = a.permute(free_a + da).reshape(m, k)
    right = b.permute(db + free_b).reshape(k, n)
    return left.mm(right).view(*([sa[d] for d in free_a] + [sb[d] for d in free_b]))


@public("torch.inner", "Tensor.inner")
def inner(input, other):
    if input._data.ndim == 0 or other._data.ndim == 0:
        return input * other
    if input._data.shape[-1] != other._data.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input._data.shape)} and {list(other._data.shape)}")
    return tensordot(input, other, ([-1], [-1]))


@public("torch.repeat_interleave", "Tensor.repeat_interleave")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    from .indexing import index_select

    if isinstance(repeats, Tensor) and repeats._data.ndim > 0 and repeats._data.size > 1:
        x = input.flatten() if dim is None else input
        axis = 0 if dim is None else _wrap_dim(dim, max(x._data.ndim, 1))
        idx = np.repeat(np.arange(x._data.shape[axis]), repeats._data)
        return index_select(x, axis, make(idx.astype(np.int64)))
    r = int(repeats._data.reshape(-1)[0]) if isinstance(repeats, Tensor) else int(repeats)
    if r < 0:
        raise RuntimeError("repeats can not be negative")
    x = input.flatten() if dim is None else input
    if x._data.ndim == 0:
        x = x.reshape(1)
    axis = 0 if dim is None else _wrap_dim(dim, x._data.ndim)
    shape = list(x._data.shape)
    expanded = list(shape)
    expanded.insert(axis + 1, r)
    grown = x.unsqueeze(axis + 1).expand(*expanded).contiguous()
    final = list(shape)
    final[axis] = shape[axis] * r
    return grown.view(*final)


# ------------------------------------------------------------------ reductions


def _reduce_dims(d, dim):
    if d.ndim == 0:
        if dim is not None:
            for x in _int_tuple(dim) if not isinstance(dim, (tuple, list)) or dim else ():
                _wrap_dim(x, 1)
        return ()
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        return tuple(range(d.ndim))
    return tuple(sorted({_wrap_dim(x, max(d.ndim, 1)) for x in _int_tuple(dim)}))


NANSUM = defop("nansum", "NansumBackward0",
               lambda a, dims, keepdim, shape: np.nansum(a, axis=dims or None, keepdims=keepdim)
               .astype(a.dtype),
               lambda c, g: (_expand_back(g, c.meta[0], c.meta[1], c.meta[2])
                             * make(~np.isnan(c.saved[0]._data)).to(g.dtype),),
               "d nansum(a)/da = 1 where a is not nan", save="inputs",
               torch_call="torch.nansum(a)")


def _expand_back(g, dims, keepdim, shape):
    if not keepdim and shape:
        for d in sorted(dims):
            g = g.unsqueeze(d)
    return g.expand(*shape) if shape else g


@public("torch.nansum", "Tensor.nansum")
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    d = input._data
    if dtype is not None:
        input = input.to(dtype)
        d = input._data
    if d.dtype.kind not in "fV":
        from .reductions import sum as total

        return total(input, dim, keepdim) if dim is not None else total(input)
    dims = _reduce_dims(d, dim)
    return keep_given(run_unary(NANSUM, input, (dims, bool(keepdim), d.shape)), NANSUM, dim)


@public("torch.nanmean", "Tensor.nanmean")
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    d = input._data
    if d.dtype.kind not in "fV":
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {input.dtype._legacy if hasattr(input.dtype, '_legacy') else input.dtype}")
    dims = _reduce_dims(d, dim)
    count = (~np.isnan(d)).sum(axis=dims or None, keepdims=bool(keepdim))
    return nansum(input, dim, keepdim) / make(np.asarray(count, d.dtype))


def _std_var_fwd(kind):
    def forward(a, dims, correction, keepdim, n):
        fn = np.std if kind == "std" else np.var
        return np.asarray(fn(a, axis=dims or None, ddof=correction, keepdims=keepdim), a.dtype)

    return forward


def _paired_grad(std: bool):
    """VarMeanBackward0 / StdMeanBackward0: one node for both outputs, as PyTorch's; the
    input's gradient is var's (or std's) part plus mean's part, for the outputs that got
    one. std is recomputed from the input with Tensor ops, so double backward sees it."""

    def backward(c, grads):
        grads = list(grads) + [None] * (2 - len(grads))
        g_first, g_mean = grads
        a = c.saved[0]
        dims, correction, keepdim, n = c.meta[:4]
        shape = a._data.shape
        total = None
        if g_first is not None:
            gx = _expand_back(g_first, dims, keepdim, shape)
            mean = a.mean(list(dims), keepdim=True) if dims else a.mean()
            centred = a - mean
            if std:
                square = centred * centred if centred._data.dtype.kind != "c" else \
                    centred.real * centred.real + centred.imag * centred.imag
                sq = square.sum(list(dims), keepdim=True) if dims else square.sum()
                res = (sq / float(n - correction)).sqrt().expand(shape)
                # (PyTorch's g / std is 0 where std is 0: a constant input's gradient is 0)
                total = (gx / res).masked_fill(res == 0, 0.0) * centred / float(n - correction)
            else:
                with np.errstate(divide="ignore"):
                    factor = float(np.divide(2.0, np.float64(n - correction)))
                total = gx * centred * factor
        if g_mean is not None:
            part = _expand_back(g_mean, dims, keepdim, shape) / n
            total = part if total is None else total + part
        return (total,)

    return backward


def _paired_fwd(kind):
    fn = np.std if kind == "std" else np.var

    def values(a, dims, correction, keepdim):
        mean = np.asarray(np.mean(a, axis=dims or None, keepdims=keepdim), a.dtype)
        if a.dtype.kind != "c" and np.isinf(a).any():
            mean = _welford_inf(a, dims, keepdim, mean)
        spread = fn(a, axis=dims or None, ddof=correction, keepdims=keepdim)  # (real for complex)
        return (np.asarray(spread, a.dtype if a.dtype.kind != "c" else a.real.dtype), mean)

    def forward(a, dims, correction, keepdim, n):
        if correction < n:
            return values(a, dims, correction, keepdim)
        import warnings

        # no degrees of freedom (or an empty slice): inf or nan, with PyTorch's warning
        # (given by _paired), not numpy's
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return values(a, dims, correction, keepdim)

    return forward


def _welford_inf(a, dims, keepdim, out):
    """std_mean/var_mean's mean where a slice holds an inf: PyTorch's Welford update
    (mean += (x - mean) / k) makes it nan once a value follows the inf (inf - inf), not
    inf; each such slice is run through that update in order."""
    axes = tuple(range(a.ndim)) if not dims else tuple(d % a.ndim for d in dims)
    rest = [d for d in range(a.ndim) if d not in axes]
    moved = np.transpose(a, rest + list(axes)).astype(np.float64)
    rows = moved.reshape(int(np.prod([a.shape[d] for d in rest])), -1)
    flat = np.array(out).reshape(-1)
    with np.errstate(all="ignore"):
        for r, row in enumerate(rows):
            if np.isinf(row).any():
                mean = 0.0
                for k, x in enumerate(row, 1):
                    mean += (x - mean) / k
                flat[r] = mean
    return flat.reshape(np.shape(out)).astype(a.dtype)


STD_MEAN = defop("std_mean", "StdMeanBackward0", _paired_fwd("std"), _paired_grad(True),
                 "d std/da = (a - mean)/(std (N - c)), d mean/da = 1/N", save="inputs",
                 multi=True, torch_call="torch.std_mean(a.reshape(-1) * 1.5)[0]")
VAR_MEAN = defop("var_mean", "VarMeanBackward0", _paired_fwd("var"), _paired_grad(False),
                 "d var/da = 2 (a - mean)/(N - c), d mean/da = 1/N", save="inputs",
                 multi=True, torch_call="torch.var_mean(a.reshape(-1) * 1.5)[1]")


def _paired(kind, input, dim, unbiased, keepdim, correction):
    from .linalg_ext import _run_multi

    d = input._data
    given = given_correction(dim, unbiased, keepdim, correction)
    if isinstance(dim, bool):  # std_mean(input, unbiased)
        unbiased, dim = dim, None
    if correction is None:
        correction = 1 if unbiased in (None, True) else 0
    dims = _reduce_dims(d, dim)
    n = int(np.prod([d.shape[x] for x in dims])) if d.ndim else 1
    meta = (dims, correction, bool(keepdim), n)
    if correction >= d.size / max(d.size // n if n else 1, 1):
        from ..warn_site import warn_at_caller

        warn_at_caller(
            f"{kind}_mean(): degrees of freedom is <= 0. Correction should be strictly less than "
            "the reduction factor (input numel divided by output numel). (Triggered internally "
            "at /__w/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1861.)")
    op = STD_MEAN if kind == "std" else VAR_MEAN
    with np.errstate(all="ignore"):
        arrays = forward_of(op, d)(d, *meta)
    out = tuple(_run_multi(op, (input,), meta, list(arrays), (True, True)))
    keep_given(out[0], op, *given)
    return out


@public("torch.std_mean")
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _paired("std", input, dim, unbiased, keepdim, correction)


@public("torch.var_mean")
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _paired("var", input, dim, unbiased, keepdim, correction)


def _dist_fwd(a, b, p):
    diff = np.abs(a - b)  # (complex operands: the distance of the magnitudes, real)
    rdt = diff.dtype
    if p == 0:
        return np.asarray(np.count_nonzero(diff), rdt)
    if p == np.inf:
        return np.asarray(diff.max() if diff.size else 0, rdt)
    if p == -np.inf:
        return np.asarray(diff.min() if diff.size else 0, rdt)
    return np.asarray(np.sum(diff ** p) ** (1.0 / p), rdt)


def _dist_grads(c, g):
    a, b = c.saved
    p = c.meta[0]
    diff = a - b
    res = c.result
    # (complex: PyTorch's norm_backward takes sgn(diff) = diff / |diff| where sign stands)
    sign = diff.sgn() if diff._data.dtype.kind == "c" else diff.sign()
    if p == 0:
        grad = diff * 0
    elif p in (np.inf, -np.inf):
        hit = (diff.abs() == res).to(g.dtype)
        grad = sign * ((g / hit.sum()) * hit)  # (PyTorch's order: a complex zero's signs)
    elif p == 1:
        grad = sign * g
    else:
        scale = (diff.abs() ** (p - 1)) * sign / res ** (p - 1)
        grad = (scale * g).masked_fill(res == 0, 0.0) if p < 1 else scale * g
        grad = grad.masked_fill(res == 0, 0.0)
    from .registry import sum_to

    return (sum_to(grad, a._data.shape) if c.needs(0) else None,
            sum_to(-grad, b._data.shape) if c.needs(1) else None)


DIST = defop("dist", "DistBackward0", _dist_fwd, _dist_grads,
             "d dist(a, b, p)/da = sign(a-b)|a-b|^(p-1)/dist^(p-1)", save="inputs,result",
             torch_call="torch.dist(a, b)")


@public("torch.dist", "Tensor.dist")
def dist(input, other, p=2):
    result = dtypes.result_type(input, other)
    x = input._data.astype(result.np, copy=False)
    y = other._data.astype(result.np, copy=False)
    return keep_given(run_op(DIST, (input, other), (float(p),), arrays=(x, y)), DIST, p)


# ------------------------------------------------------------------ unfold, renorm


def _unfold_view(a, dim, size, step, in_shape):
    """Tensor.unfold as a writable numpy view: windows of `size` every `step` along dim,
    the window as a new last dim."""
    if a.ndim == 0:
        return a.reshape(1)
    n = (a.shape[dim] - size) // step + 1
    shape = a.shape[:dim] + (n,) + a.shape[dim + 1:] + (size,)
    strides = a.strides[:dim] + (a.strides[dim] * step,) + a.strides[dim + 1:] + (a.strides[dim],)
    return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=a.flags.writeable)


def _unfold_backward_fwd(g, dim, size, step, in_shape):
    # each element is its windows' sum from the first term (a -0. read once stays -0.),
    # 0 where no window reads it
    out = np.zeros(in_shape, g.dtype)
    if not in_shape:
        return g.reshape(()).copy()
    n = g.shape[dim]
    moved = np.moveaxis(out, dim, -1)
    seen = np.zeros(moved.shape[-1], bool)
    gm = np.moveaxis(g, dim, -2)  # (..., n, size)
    for i in range(n):
        at = slice(i * step, i * step + size)
        moved[..., at] = np.where(seen[at], moved[..., at] + gm[..., i, :], gm[..., i, :])
        seen[at] = True
    return out


UNFOLD = defop("unfold", "UnfoldBackward0", _unfold_view,
               lambda c, g: (run_op(UNFOLD_BACKWARD, (g,), c.meta),),
               "d unfold(a)/da: each window's gradient added back",
               torch_call="a.reshape(-1).unfold(0, 1, 1)")
UNFOLD_BACKWARD = defop("unfold_backward", "UnfoldBackwardBackward0", _unfold_backward_fwd,
                        lambda c, gg: (run_op(UNFOLD, (gg,), c.meta),),
                        "d unfold_backward(g)/dg: unfold again",
                        torch_call="torch.enable_grad()(lambda a: (lambda w: torch.autograd.grad("
                                   "w, a, w * 1, create_graph=True)[0])(a.reshape(-1).unfold("
                                   "0, 1, 1)))(a)")


@public("Tensor.unfold")
def unfold(input, dimension, size, step):
    from .views import view_op

    d = input._data
    dim = _wrap_dim(dimension, max(d.ndim, 1))
    length = d.shape[dim] if d.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {length} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return view_op(UNFOLD, input, (dim, int(size), int(step), d.shape))


def _renorm_fwd(a, p, dim, maxnorm):
    dims = tuple(d for d in range(a.ndim) if d != dim)
    if p == np.inf:
        norm = np.max(np.abs(a), axis=dims, keepdims=True)
    else:
        norm = np.sum(np.abs(a) ** p, axis=dims, keepdims=True) ** (1.0 / p)
    scale = np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return (a * scale).astype(a.dtype)


def _renorm_grad(c, g):
    x = c.saved[0]
    p, dim, maxnorm = c.meta
    dims = [d for d in range(x.dim()) if d != dim]
    if p == np.inf:
        norm = x.abs().amax(dims, keepdim=True)
        hit = (x.abs() == norm).to(x.dtype)
        dnorm = x.sign() * hit / hit.sum(dims, keepdim=True)
    else:
        norm = (x.abs() ** p).sum(dims, keepdim=True) ** (1.0 / p)
        # (0 where the norm is 0, as PyTorch's norm_backward)
        dnorm = (x.abs() ** (p - 1) * x.sign() / norm ** (p - 1)).masked_fill(norm == 0, 0.0)
    over = norm > maxnorm
    scale = (maxnorm / (norm + 1e-7)).masked_fill(over.logical_not(), 1.0)
    dscale = (-maxnorm / ((norm + 1e-7) * (norm + 1e-7))).masked_fill(over.logical_not(), 0.0)
    inner = (g * x).sum(dims, keepdim=True)
    # a slice within maxnorm passes g as it is (PyTorch's where), nothing added to it
    return (PUBLIC["torch.where"](over, g * scale + inner * dscale * dnorm, g),)


RENORM = defop("renorm", "RenormBackward0", _renorm_fwd, _renorm_grad,
               "d renorm(a)/da: the scale's gradient through the slice's norm", save="inputs",
               torch_call="torch.renorm(a.reshape(1, -1) * a.reshape(-1, 1), 2, 0, 0.5)")


@public("torch.renorm", "Tensor.renorm")
def renorm(input, p, dim, maxnorm):
    d = input._data
    if d.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {d.ndim} dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    return keep_given(run_unary(RENORM, input, (float(p), _wrap_dim(dim, d.ndim), float(maxnorm))),
                      RENORM, p, dim, maxnorm)


@public("Tensor.renorm_")
def renorm_(input, p, dim, maxnorm):
    return input._apply_inplace(lambda old: renorm(old, p, dim, maxnorm))
