"""Batch and instance norm share PyTorch's _NormBase options: `bias=False` with an affine
map, the buffers kept or not, the repr and the rank check, compared with PyTorch."""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

LAYERS = [
    ("BatchNorm1d", (3,), {"bias": False}),
    ("BatchNorm2d", (3,), {"affine": False, "track_running_stats": False}),
    ("InstanceNorm1d", (3,), {}),
    ("InstanceNorm2d", (3,), {"affine": True, "bias": False, "track_running_stats": True}),
]


def _describe(T, name, args, kwargs):
    T.manual_seed(0)
    m = getattr(T.nn, name)(*args, **kwargs)
    x = T.randn(2, 3, 4, 4) if name.endswith("2d") else T.randn(2, 3, 5)
    y = m(x)
    try:
        m(T.randn(3))
        rank_error = None
    except ValueError as err:
        rank_error = str(err)
    return (repr(m), [n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()],
            [round(v, 4) for v in y.flatten()[:6].tolist()], rank_error)


@pytest.mark.parametrize("name, args, kwargs", LAYERS, ids=[f"{n}{k}" for n, _, k in LAYERS])
def test_norm_layer_options_as_pytorch(name, args, kwargs):
    assert _describe(gt, name, args, kwargs) == _describe(torch, name, args, kwargs)
