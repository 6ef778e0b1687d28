"""Every functional pool (max, avg, lp, adaptive avg and max; 1-d, 2-d, 3-d) over a grid
of inputs with empty batch, channel or spatial dims and of windows wider than the input
(zero or negative output sizes), ceil_mode on and off, against PyTorch: the same output
shape and grad_fn name, or the same error type and text. PyTorch's kernels differ in what
they check and in which order (the adaptive averages' global-pool shortcut comes before
any check; adaptive_avg_pool2d checks only the spatial sizes, the 3-d one every
non-batch size before the rank), so each cell is compared, not a rule."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402

LEADS = [(), (0,), (2,), (0, 2), (2, 0), (1, 2)]


def _outcome(lib, fn, shape, args, kwargs):
    try:
        x = lib.zeros(shape, dtype=lib.float64).requires_grad_()
        out = getattr(lib.nn.functional, fn)(x, *args, **kwargs)
        if isinstance(out, tuple):
            out = out[0]
        return ("ok", tuple(out.shape), out.grad_fn.name() if out.grad_fn is not None else None)
    except Exception as err:  # the comparison is of the type and first line of the text
        return (type(err).__name__, str(err).split("\n")[0])


def _cases(nd):
    spatial = [(0,) * nd, (1,) * nd, (2,) * nd, (4,) * nd, (3,) + (0,) * (nd - 1)]
    for lead in LEADS:
        for sp in spatial:
            shape = lead + sp
            for k in (1, 3, 5):
                for fn in (f"max_pool{nd}d", f"avg_pool{nd}d"):
                    for ceil in (False, True):
                        yield fn, shape, (k,), {"ceil_mode": ceil}
                    yield fn, shape, (k, 2, k // 2), {}
                yield f"lp_pool{nd}d", shape, (2.0, k), {}
            for size in (0, 1, 3):
                yield f"adaptive_avg_pool{nd}d", shape, (size,), {}
                yield f"adaptive_max_pool{nd}d", shape, (size,), {}


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("family", ["max_pool", "avg_pool", "lp_pool", "adaptive_avg_pool",
                                    "adaptive_max_pool"])
def test_pool_grid_as_pytorch(nd, family):
    differences = []
    count = 0
    for fn, shape, args, kwargs in _cases(nd):
        if not fn.startswith(family):
            continue
        count += 1
        ours, theirs = _outcome(G, fn, shape, args, kwargs), _outcome(torch, fn, shape, args,
                                                                       kwargs)
        if ours != theirs:
            differences.append(f"{fn}{shape} {args} {kwargs}: {ours} != {theirs}")
    assert count >= 30
    assert not differences, f"{len(differences)} of {count}:\n" + "\n".join(differences[:10])
