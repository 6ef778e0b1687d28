"""binary_cross_entropy_with_logits against PyTorch 2.13: the loss's float32 bits (PyTorch's
(1 - t) x - log_weight * log_sigmoid(x), SLEEF's exp and log1p), both gradients, the
create_graph graph, the errors, and the tutorial's program run by `gradcli run`."""

from __future__ import annotations

import subprocess
import sys
import warnings
import zlib

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

DTYPES = [np.float32, np.float64]
REDUCTIONS = ["none", "mean", "sum"]
EXTREMES = [100.0, -100.0, 1e4, -1e4, 0.0, 90.0, -90.0, 20.0, -20.0]


def _run(mod, x, t, reduction, weight=None, pos_weight=None):
    X = mod.tensor(x, requires_grad=True)
    T = mod.tensor(t, requires_grad=True)
    kw = {}
    if weight is not None:
        kw["weight"] = mod.tensor(weight)
    if pos_weight is not None:
        kw["pos_weight"] = mod.tensor(pos_weight)
    loss = mod.nn.functional.binary_cross_entropy_with_logits(X, T, reduction=reduction, **kw)
    loss.backward(mod.ones_like(loss) if reduction == "none" else None)
    return loss, X.grad, T.grad


def _data(t):
    return t._data if isinstance(t, gt.Tensor) else t.detach().numpy()


def _same_bits(a, b):
    a, b = np.asarray(_data(a)), np.asarray(_data(b))
    assert a.dtype == b.dtype and a.shape == b.shape
    same = (a.view(f"i{a.itemsize}") == b.view(f"i{b.itemsize}")) | (np.isnan(a) & np.isnan(b))
    assert same.all(), (a[~same], b[~same])


def _case(rng, shape, dtype, extremes=False):
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if extremes:
        flat = x.reshape(-1)
        flat[: len(EXTREMES)] = EXTREMES[: flat.size]
    t = rng.random(shape).astype(dtype)
    return x, t


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("extra", ["plain", "weight", "pos_weight", "both"])
def test_matches_pytorch_printed(dtype, reduction, extra):
    rng = np.random.default_rng(zlib.crc32(f"{dtype} {reduction} {extra}".encode()))
    for shape, extremes in (((2, 3), False), ((3, 12), True), ((3,), False)):
        x, t = _case(rng, shape, dtype, extremes)
        w = rng.uniform(0, 2, shape[-1:]).astype(dtype) if extra in ("weight", "both") else None
        pw = rng.uniform(0, 4, shape[-1:]).astype(dtype) if extra in ("pos_weight", "both") else None
        ours = _run(gt, x, t, reduction, w, pw)
        theirs = _run(torch, x, t, reduction, w, pw)
        for o, th in zip(ours, theirs):
            assert str(o) == str(th)
            tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(_data(o), _data(th), **tol)
        if dtype == np.float32:  # the loss and the target's gradient: PyTorch's bits
            _same_bits(ours[0], theirs[0])
            _same_bits(ours[2], theirs[2])


def test_float32_loss_bits_over_many_values():
    rng = np.random.default_rng(7)
    x = np.concatenate([(rng.standard_normal(20000) * rng.choice([0.1, 1, 10, 40], 20000)),
                        rng.uniform(-110, 110, 2000), EXTREMES]).astype(np.float32)
    t = rng.random(x.size).astype(np.float32)
    pw = rng.uniform(0, 4, x.size).astype(np.float32)
    for kw in ({}, {"pos_weight": pw}):
        ours = gt.nn.functional.binary_cross_entropy_with_logits(
            gt.tensor(x), gt.tensor(t), reduction="none", **{k: gt.tensor(v) for k, v in kw.items()})
        theirs = torch.nn.functional.binary_cross_entropy_with_logits(
            torch.tensor(x), torch.tensor(t), reduction="none",
            **{k: torch.tensor(v) for k, v in kw.items()})
        _same_bits(ours, theirs)
    for red in ("mean", "sum"):
        _same_bits(gt.nn.functional.binary_cross_entropy_with_logits(gt.tensor(x), gt.tensor(t), reduction=red),
                   torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor(x), torch.tensor(t),
                                                                        reduction=red))


def test_extreme_logits_print_as_pytorch():
    x = np.array([100.0, -100.0, 1e4, -1e4, 0.0, -0.0, 88.0, 95.0, 103.0], np.float32)
    for t in (np.ones_like(x), np.zeros_like(x), np.full_like(x, 0.5)):
        for red in REDUCTIONS:
            for o, th in zip(_run(gt, x, t, red), _run(torch, x, t, red)):
                assert str(o) == str(th)


def _graph(fn, depth=0, out=None):
    out = [] if out is None else out
    if fn is None:
        return out
    out.append("  " * depth + fn.name())
    for f, _ in fn.next_functions:
        _graph(f, depth + 1, out)
    return out


@pytest.mark.parametrize("extra", [{}, {"weight": [2.0, 0.5, 1.0]}, {"pos_weight": [3.0, 0.5, 2.0]},
                                   {"weight": [2.0, 0.5, 1.0], "pos_weight": [3.0, 0.5, 2.0]}])
def test_double_backward_matches_pytorch(extra):
    x = [[0.5, -1.0, 2.0], [1.0, 0.3, -0.7]]
    t = [[0.0, 1.0, 0.5], [1.0, 0.2, 0.0]]
    results = []
    for mod in (torch, gt):
        X = mod.tensor(x, dtype=mod.float64, requires_grad=True)
        T = mod.tensor(t, dtype=mod.float64, requires_grad=True)
        kw = {k: mod.tensor(v, dtype=mod.float64) for k, v in extra.items()}
        loss = mod.nn.functional.binary_cross_entropy_with_logits(X, T, **kw)
        gx, gtt = mod.autograd.grad(loss, (X, T), create_graph=True)
        names = (_graph(gx.grad_fn), _graph(gtt.grad_fn))
        second = mod.autograd.grad((gx * gx).sum() + (gtt * X).sum(), (X, T))
        results.append((names, [str(g) for g in second], str(gx), str(gtt)))
    assert results[0] == results[1]


def test_gradgradcheck():
    x = gt.tensor([[0.5, -1.0, 2.0], [1.0, 0.3, -0.7]], dtype=gt.float64, requires_grad=True)
    t = gt.tensor([[0.1, 0.9, 0.5], [0.7, 0.2, 0.4]], dtype=gt.float64, requires_grad=True)
    w = gt.tensor([2.0, 0.5, 1.0], dtype=gt.float64)
    pw = gt.tensor([3.0, 0.5, 2.0], dtype=gt.float64)

    def f(a, b):
        return gt.nn.functional.binary_cross_entropy_with_logits(a, b, weight=w, pos_weight=pw)

    assert gt.autograd.gradcheck(f, (x, t))
    assert gt.autograd.gradgradcheck(f, (x, t))


def _outcome(mod, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", str(fn(mod))
        except Exception as err:  # noqa: BLE001 - compared with PyTorch's
            return type(err).__name__, str(err)


ERROR_CASES = [
    lambda m: m.nn.functional.binary_cross_entropy_with_logits(m.zeros(3), m.zeros(2)),
    lambda m: m.nn.functional.binary_cross_entropy_with_logits(m.zeros(2, 3), m.zeros(3)),
    lambda m: m.nn.functional.binary_cross_entropy_with_logits(m.zeros(3), m.zeros(3), reduction="avg"),
    lambda m: m.nn.functional.binary_cross_entropy_with_logits(m.zeros(2, 3), m.zeros(2, 3), weight=m.ones(2)),
    lambda m: m.nn.functional.binary_cross_entropy_with_logits(m.zeros(2, 3), m.zeros(2, 3),
                                                               weight=m.ones(4, 2, 3)),
    lambda m: m.nn.functional.binary_cross_entropy_with_logits(m.zeros(2, 3), m.zeros(2, 3),
                                                               pos_weight=m.ones(2)),
    lambda m: m.nn.functional.binary_cross_entropy_with_logits(m.zeros(2, 3), m.zeros(2, 3),
                                                               pos_weight=m.ones(4, 2, 3)),
    lambda m: m.nn.functional.binary_cross_entropy_with_logits(m.zeros(3), m.zeros(3).long()),
    lambda m: m.nn.functional.binary_cross_entropy_with_logits(m.zeros(3).long(), m.zeros(3).long()),
    lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        m.zeros(3, requires_grad=True), m.zeros(3), weight=m.ones(3, requires_grad=True)),
    lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        m.zeros(3, requires_grad=True), m.zeros(3), pos_weight=m.ones(3, requires_grad=True)),
    lambda m: m.nn.functional.binary_cross_entropy_with_logits(m.zeros(0), m.zeros(0)),
    lambda m: m.nn.functional.binary_cross_entropy_with_logits(m.tensor(1.5), m.tensor(1.0)),
    lambda m: m.nn.functional.binary_cross_entropy_with_logits(m.zeros(3), m.zeros(3), size_average=False),
    lambda m: m.binary_cross_entropy_with_logits(m.ones(2, 3), m.ones(2, 3), None, None, 0),
    lambda m: m.binary_cross_entropy_with_logits(m.ones(2, 3), m.ones(2, 3), reduction=2),
    lambda m: m.binary_cross_entropy_with_logits(m.ones(2, 3), m.ones(2, 3), reduction="mean"),
    lambda m: m.binary_cross_entropy_with_logits(m.ones(2, 3), m.ones(3)),
    lambda m: m.binary_cross_entropy_with_logits(m.ones(2, 3), m.ones(2, 3), m.ones(3), m.ones(3) * 2),
]


@pytest.mark.parametrize("i", range(len(ERROR_CASES)))
def test_errors_and_edge_cases_match_pytorch(i):
    assert _outcome(gt, ERROR_CASES[i]) == _outcome(torch, ERROR_CASES[i])


def test_top_level_signature_exists_as_in_torch():
    assert hasattr(torch, "binary_cross_entropy_with_logits")
    assert hasattr(gt, "binary_cross_entropy_with_logits")


TUTORIAL = """\
import torch
x = torch.ones(5)
y = torch.zeros(3)
w = torch.tensor([[0.5, -1.0, 0.25], [1.5, 0.3, -0.7], [0.1, 0.2, 0.3], [-0.4, 0.8, 1.1], [0.9, -0.6, 0.05]], requires_grad=True)
b = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
z = torch.matmul(x, w)+b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(f"Gradient function for z = {z.grad_fn.name()}")
print(f"Gradient function for loss = {loss.grad_fn.name()}")
loss.backward()
print(w.grad)
print(b.grad)
print(loss)
"""


def test_tutorial_program_prints_what_pytorch_prints(tmp_path):
    prog = tmp_path / "tutorial.grad"
    prog.write_text(TUTORIAL)
    ours = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)], capture_output=True,
                          text=True, timeout=120)
    theirs = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True, timeout=120)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs.stdout
    assert "BinaryCrossEntropyWithLogitsBackward0" in ours.stdout


def test_top_level_default_reduction_is_pytorchs():
    # PyTorch 2.13's torch.binary_cross_entropy_with_logits without `reduction` does not reduce
    for mod in (gt, torch):
        out = mod.binary_cross_entropy_with_logits(mod.ones(2, 3), mod.zeros(2, 3))
        assert tuple(out.shape) == (2, 3)
