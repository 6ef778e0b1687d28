"""torch.grid_sampler, torch.grid_sampler_2d and torch.grid_sampler_3d: the ATen entry
points under F.grid_sample, which take the interpolation and padding modes as PyTorch's
enum numbers (0 bilinear, 1 nearest, 2 bicubic; 0 zeros, 1 border, 2 reflection).

They run the same GridSampler2DBackward0 / GridSampler3DBackward0 nodes as F.grid_sample
(conv_ext.GRID_SAMPLE), after the checks ATen makes in its order: the common ones (batch
size, the grid's last dimension, empty spatial dimensions), then the 2-d or 3-d kernel's
own (rank, bicubic only in 2-d), then the kernel's dtype dispatch (a non-float input is
"not implemented", a grid of another dtype is the kernel's "expected scalar type")."""

from __future__ import annotations

from ..tensor import Tensor, _type_word
from ..warn_site import warn_at_caller
from . import shape_checks
from .conv_ext import _grid_sample_fwd
from .functional_ext import AFFINE_GRID, _base_grid
from .registry import PUBLIC, defop, public, run_op

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
#: the kernel names PyTorch's dtype dispatch prints
_KERNEL = {2: "grid_sampler_2d_cpu_kernel_impl", 3: "grid_sampler3d_cpu"}


def _common_checks(input: Tensor, grid: Tensor) -> None:
    x, gd = input._data.shape, grid._data.shape
    if x[:1] != gd[:1]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(x)} and grid with sizes {list(gd)}")
    if gd[-1:] != (len(x) - 2,):
        raise RuntimeError(f"grid_sampler(): expected grid to have size {len(x) - 2} in last "
                           f"dimension, but got grid with sizes {list(gd)}")
    shape_checks.grid_sampler_input(x)


def _sample(nd: int, input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
            align_corners: bool) -> Tensor:
    x, gd = input._data, grid._data
    if x.ndim != nd + 2 or gd.ndim != nd + 2:
        raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(x.shape)} and grid "
                           f"with sizes {list(gd.shape)}")
    if nd == 3 and interpolation_mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not 0 <= interpolation_mode < 3 or not 0 <= padding_mode < 3:
        # (PyTorch's kernels leave the output unwritten for a number outside its enums:
        # there is nothing to reproduce, so the call is refused)
        raise RuntimeError(f"grid_sampler(): expected interpolation_mode in 0, 1, 2 and "
                           f"padding_mode in 0, 1, 2, but got {interpolation_mode} and "
                           f"{padding_mode}")
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{_KERNEL[nd]}\" not implemented for "
                                  f"'{_type_word(input.dtype)}'")
    if gd.dtype != x.dtype:
        raise RuntimeError(f"expected scalar type {_type_word(input.dtype)} but found "
                           f"{_type_word(grid.dtype)}")
    return run_op(GRID_SAMPLE[nd], (input, grid),
                  (_MODES[interpolation_mode], _PADDINGS[padding_mode], bool(align_corners)))


@public("torch.grid_sampler_2d")
def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    _common_checks(input, grid)
    return _sample(2, input, grid, interpolation_mode, padding_mode, align_corners)


@public("torch.grid_sampler_3d")
def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    _common_checks(input, grid)
    return _sample(3, input, grid, interpolation_mode, padding_mode, align_corners)


@public("torch.grid_sampler")
def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """The dispatcher F.grid_sample calls: 4-d input to the 2-d kernel, any other to 3-d."""
    _common_checks(input, grid)
    nd = 2 if input._data.ndim == 4 else 3
    return _sample(nd, input, grid, interpolation_mode, padding_mode, align_corners)


@public("torch.nn.functional.grid_sample")
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners=None) -> Tensor:
    """The modes by name, then torch.grid_sampler with their numbers (so its checks and
    errors are the dispatcher's, as in PyTorch)."""
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warn_at_caller("Default grid_sample and affine_grid behavior has changed to "
                       "align_corners=False since 1.3.0. Please specify align_corners=True if "
                       "the old behavior is desired. See the documentation of grid_sample for "
                       "details.")
        align_corners = False
    return grid_sampler(input, grid, _MODES.index(mode), _PADDINGS.index(padding_mode),
                        align_corners)


# ----------------------------------------------------------------- affine_grid

def _unit_size_warning():
    warn_at_caller("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                   "when align_corners=True. This is not an intended use case of affine_grid. "
                   "See the documentation of affine_grid for details.")


@public("torch.nn.functional.affine_grid")
def affine_grid(theta: Tensor, size, align_corners=None) -> Tensor:
    """F.affine_grid's checks in PyTorch's order (the size printed as it was given), then
    torch.affine_grid_generator. As in PyTorch, a unit-size grid with align_corners=True
    warns instead of checking the size for zeros."""
    if align_corners is None:
        warn_at_caller("Default grid_sample and affine_grid behavior has changed to "
                       "align_corners=False since 1.3.0. Please specify align_corners=True if "
                       "the old behavior is desired. See the documentation of grid_sample for "
                       "details.")
        align_corners = False
    t = theta._data
    if t.dtype.kind not in "fV":
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if t.ndim != 3 or t.shape[-2:] != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
    elif len(size) == 5:
        if t.ndim != 3 or t.shape[-2:] != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(size[2:]) == 1:
        _unit_size_warning()
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return affine_grid_generator(theta, size, align_corners)


@public("torch.affine_grid_generator")
def affine_grid_generator(theta: Tensor, size, align_corners: bool) -> Tensor:
    """The base grid of normalized coordinates times theta (ATen: one bmm, whose shape
    error is the one a theta of another batch or width gets)."""
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    nd = len(size) - 2
    t = theta._data
    if t.ndim == 3 and (t.shape[0] != size[0] or t.shape[2] != nd + 1):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {nd + 1}] but got: [{t.shape[0]}, {t.shape[2]}].")
    base = _base_grid(size, bool(align_corners), theta.dtype)
    out_shape = (size[0],) + size[2:] + (nd,)
    return run_op(AFFINE_GRID, (theta,), (base, out_shape))


# ----------------------------------------------------------------- the backward's own node


def _first_grads(g, inp, grid, mode, padding, align_corners, graph):
    """(d input, d grid) of the composition at cotangent g; recorded when `graph`."""
    from ..autograd import grad as _grad
    from ..grad_mode import enable_grad
    from .conv_ext import _grid_sample_tensors

    with enable_grad():
        out = _grid_sample_tensors(inp, grid, mode, padding, align_corners)
        gx, gg = _grad(out, (inp, grid), g, create_graph=graph, allow_unused=True)
    if gg is None:
        gg = PUBLIC["torch.zeros_like"](grid)
    return gx, gg


def _sampler_backward(c, g):
    """GridSampler2D/3DBackward0: both gradients from one GridSampler2D/3DBackwardBackward0
    node (grad_output, input, grid) when a graph is built, as PyTorch's node does."""
    from ..grad_mode import GRAD_MODE, no_grad
    from .linalg_ext import _run_multi

    inp, grid = c.saved
    mode, padding, align_corners = c.meta
    with no_grad():
        gx, gg = _first_grads(g, inp.detach()._requires_grad_(), grid.detach()._requires_grad_(),
                              mode, padding, align_corners, False)
    if GRAD_MODE.enabled:
        nd = inp._data.ndim - 2
        gx, gg = _run_multi(SAMPLER_BACKWARD[nd], (g, inp, grid), (mode, padding, align_corners),
                            [gx._data, gg._data], (True, True))
    return (gx if c.needs(0) else None, gg if c.needs(1) else None)


def _sampler_double(c, grads):
    """The gradients of <gx, ggx> + <gg, ggg> with respect to grad_output, input and grid,
    through the composition differentiated twice."""
    from ..autograd import grad as _grad
    from ..grad_mode import GRAD_MODE, enable_grad

    g, inp, grid = c.saved
    mode, padding, align_corners = c.meta[:3]
    ggx, ggg = (list(grads) + [None, None])[:2]
    graph = GRAD_MODE.enabled
    leaves = [t if graph and c.needs(i) else t.detach()._requires_grad_()
              for i, t in enumerate((g, inp, grid))]
    with enable_grad():
        gx, gg = _first_grads(leaves[0], leaves[1], leaves[2], mode, padding, align_corners,
                              True)
        total = None
        for first, second in ((gx, ggx), (gg, ggg)):
            if second is not None and first is not None and first.requires_grad:
                term = (first * second).sum()
                total = term if total is None else total + term
        if total is None:
            return (None, None, None)
        outs = _grad(total, leaves, create_graph=graph, allow_unused=True)
    # (an input gradient nothing reached stays undefined, as PyTorch's for nearest; the
    # others are zeros)
    zeros_like = PUBLIC["torch.zeros_like"]
    return tuple((o if o is not None or i == 1 else zeros_like(t)) if c.needs(i) else None
                 for i, (o, t) in enumerate(zip(outs, leaves, strict=True)))


SAMPLER_BACKWARD = {nd: defop(f"grid_sampler_{nd}d_backward",
                              f"GridSampler{nd}DBackwardBackward0", None, _sampler_double,
                              "grid_sample's gradients: differentiated through the composition "
                              "once more", save="inputs", multi=True)
                    for nd in (2, 3)}
GRID_SAMPLE = {nd: defop(f"grid_sampler_{nd}d", f"GridSampler{nd}DBackward0", _grid_sample_fwd,
                         _sampler_backward,
                         "sum of corner values times interpolation weights: gradients through "
                         "the gathers (input) and the weights (grid)", save="inputs",
                         torch_call=("torch.nn.functional.grid_sample(a.reshape(1, 1, 1, -1)"
                                     ".expand(1, 1, 2, -1) * 1, (a.reshape(1, 1, -1, 1) * 0.4)"
                                     ".expand(1, 2, -1, 2) * torch.tensor([1., -0.5], "
                                     "dtype=a.dtype), align_corners=False)") if nd == 2 else
                         ("torch.nn.functional.grid_sample(a.reshape(1, 1, 1, 1, -1)"
                          ".expand(1, 1, 2, 2, -1) * 1, (a.reshape(1, 1, 1, -1, 1) * 0.4)"
                          ".expand(1, 1, 2, -1, 3) * torch.tensor([1., -0.5, 0.3], "
                          "dtype=a.dtype), align_corners=True)"))
               for nd in (2, 3)}
