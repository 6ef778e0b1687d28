"""Bad inputs to the pools, fold/unfold and local_response_norm fail with PyTorch's exception
type and text: each kernel's own wording of a wrong rank, its argument checks in PyTorch's
order (the arguments' lengths and signs before the input's shape), and the Python layer's
checks that come before the kernel (F.lp_pool2d's unpacking, output_size with None)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402


def _outcome(lib, call):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = call(lib)
    except Exception as exc:  # the comparison is of the type and text
        return type(exc).__name__, str(exc)
    if isinstance(y, tuple):
        y = y[0]
    return "ok", tuple(y.shape), str(y.dtype)


def _same(call):
    ours, theirs = _outcome(G, call), _outcome(torch, call)
    assert ours == theirs


UNFOLD_SHAPES = [(2,), (2, 3), (0, 3), (3, 0), (2, 4, 4), (0, 4, 4), (2, 0, 4), (2, 4, 0),
                 (1, 4, 4, 4), (0, 4, 4, 4), (1, 0, 4, 4), (1, 4, 0, 4), (1, 4, 4, 0),
                 (2, 2, 3, 3, 3, 3)]
UNFOLD_ARGS = [(2,), ((2, 2),), ((2,),), ((2, 2, 2),), (2, 1, 0, 1), (2, (1, 2, 3)),
               (2, 1, (1, 2, 3)), (2, 1, 0, (1, 2, 3)), (0,), (2, 0), (2, 1, -1), (2, 1, 0, 0),
               (5,), (3, 1, 1, 2)]


@pytest.mark.parametrize("shape", UNFOLD_SHAPES, ids=str)
@pytest.mark.parametrize("args", UNFOLD_ARGS, ids=str)
def test_unfold_checks_as_pytorchs_im2col(shape, args):
    _same(lambda lib: lib.nn.functional.unfold(lib.ones(shape), *args))


FOLD_SHAPES = [(2,), (4, 9), (0, 9), (4, 0), (2, 4, 9), (0, 4, 9), (2, 0, 9), (2, 4, 0),
               (2, 2, 3, 3, 3, 3), (3, 9), (4, 8)]
FOLD_ARGS = [((4, 4), 2), (4, 2), ((4,), 2), ((4, 4, 4), 2), ((4, 4), (2, 2, 2)),
             ((4, 4), 2, (1, 2, 3)), ((4, 4), 2, 1, (1, 2, 3)), ((4, 4), 2, 1, 0, (1, 2, 3)),
             ((4, 4), 0), ((4, 4), 2, 0), ((4, 4), 2, 1, -1), ((4, 4), 2, 1, 0, 0), ((0, 4), 2),
             ((1, 1), 2), ((1, 1), 2, 1, 1), ((-1, 4), 2, 1, 2)]


@pytest.mark.parametrize("shape", FOLD_SHAPES, ids=str)
@pytest.mark.parametrize("args", FOLD_ARGS, ids=str)
def test_fold_checks_as_pytorchs_col2im(shape, args):
    _same(lambda lib: lib.nn.functional.fold(lib.ones(shape), *args))


def test_fold_and_unfold_values_still_agree():
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 4)).astype(np.float32)
    for args in ((2,), ((2, 3), 1, 1, 2), ((3, 2), 2, 0, 1)):
        ours = G.nn.functional.unfold(G.tensor(x), *args)
        theirs = torch.nn.functional.unfold(torch.tensor(x), *args)
        torch.testing.assert_close(torch.tensor(ours.tolist()), theirs)
        back = G.nn.functional.fold(ours, (5, 4), *args)
        torch.testing.assert_close(torch.tensor(back.tolist()),
                                   torch.nn.functional.fold(theirs, (5, 4), *args))


RANKS = [(2,), (2, 3), (2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4, 5), (2, 2, 3, 3, 3, 3)]
POOL_CALLS = {
    "adaptive_avg_pool1d": [(2,), ((2,),), ((2, 2),), (0,)],
    "adaptive_max_pool1d": [(2,), ((2,),), ((2, 2, 2, 2),), (2, True)],
    "adaptive_avg_pool2d": [(2,), ((2, None),), ((2, 2, 2, 2),)],
    "adaptive_max_pool2d": [(2,), ((2, None),), ((2, 2, 2),), (2, True)],
    "adaptive_avg_pool3d": [(2,), ((2, None, 1),), ((2, 2),), ((2, 2, 2, 2),)],
    "adaptive_max_pool3d": [(2,), ((2, None, 1),), ((2, 2),), (2, True)],
    "avg_pool2d": [(2,), (1,)],
    "max_pool2d": [(2,), (1,)],
    "avg_pool3d": [(2,), (1,), ((2, 2),), (2, (1, 1)), (2, 1, (1, 1)), (2, 1, 1)],
    "max_pool3d": [(2,), (1,), ((2, 2),), (2, (1, 1)), (2, 1, (1, 1)), (2, 1, 0, (1, 1)),
                   (2, 1, 1)],
    "lp_pool2d": [(2, 2), (2, 1), (2, (2, 2, 2)), (1.5, 2)],
    "lp_pool3d": [(2, 2), (2, 1)],
}


@pytest.mark.parametrize("name, args", [(n, a) for n, cases in POOL_CALLS.items()
                                        for a in cases], ids=str)
@pytest.mark.parametrize("shape", RANKS, ids=str)
def test_pools_refuse_or_take_each_rank_as_pytorch(name, args, shape):
    _same(lambda lib: getattr(lib.nn.functional, name)(lib.ones(shape), *args))


@pytest.mark.parametrize("shape", [(2,), (2, 3), (2, 3, 4), (2, 2, 3, 3, 3, 3)], ids=str)
def test_local_response_norm_rank_error_keeps_pytorchs_spacing(shape):
    _same(lambda lib: lib.nn.functional.local_response_norm(lib.ones(shape), 2))


GRID_SHAPES = [(2,), (2, 3), (0, 3), (2, 0), (2, 3, 4), (0, 3, 4), (2, 0, 4), (2, 3, 0),
               (1, 2, 3, 4), (0, 2, 3, 4), (1, 0, 3, 4), (1, 2, 0, 4), (1, 2, 3, 0),
               (1, 2, 3, 4, 5), (0, 2, 3, 4, 5), (1, 0, 3, 4, 5), (1, 2, 0, 4, 5),
               (2, 2, 3, 3, 3, 3)]
POOL3D_ARGS = {
    "avg_pool3d": [(2,), (1,), ((2, 2),), (2, (1, 1)), (2, 1, 1), (2, 1, 2), (2, 0), (0,), (5,),
                   (2, 2, 0, True), (2, 2, 0, False, True, 0), (2, 1, -1)],
    "max_pool3d": [(2,), (1,), ((2, 2),), (2, (1, 1)), (2, 1, 1), (2, 1, 2), (2, 0), (0,), (5,),
                   (2, 1, 0, 0), (2, 1, 0, (1, 1)), (2, 1, -1), (2, 1, 0, 1, True, True)],
    "lp_pool3d": [(2, 2), (2, 1), (2, (2, 2)), (2, 2, 0), (1.5, 2)],
}


@pytest.mark.parametrize("name, args", [(n, a) for n, cases in POOL3D_ARGS.items()
                                        for a in cases], ids=str)
@pytest.mark.parametrize("shape", GRID_SHAPES, ids=str)
def test_3d_pools_check_in_pytorchs_order(name, args, shape):
    _same(lambda lib: getattr(lib.nn.functional, name)(lib.ones(shape), *args))
