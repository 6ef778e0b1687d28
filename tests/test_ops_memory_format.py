"""Memory formats (engine/ops/memory_formats.py) against PyTorch 2.13: the four format
objects, contiguous/is_contiguous/to/clone/empty_like/zeros_like/ones_like/full_like with
memory_format=, PyTorch's channels_last strides (size-1 dims included), grad_fn names,
values and gradients of the relaid tensors, a first .grad laid out as its leaf
(AccumulateGrad's layout contract), torch.empty_strided, resize_(memory_format=), and
PyTorch's error texts."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys

import numpy as np
import pytest
from expr_compare import assert_raises_as_pytorch
from process_helpers import assert_runs_as_python_does

import gradcli.torch as gt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(18)
X4 = RNG.standard_normal((2, 3, 4, 5))
X5 = RNG.standard_normal((2, 3, 2, 4, 3))


def test_format_objects_print_and_compare():
    for name in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format"):
        ours, theirs = getattr(gt, name), getattr(torch, name)
        assert repr(ours) == repr(theirs) == str(ours) == f"torch.{name}"
        assert isinstance(ours, gt.memory_format)
        assert (ours == gt.contiguous_format) == (name == "contiguous_format")
        assert pickle.loads(pickle.dumps(ours)) is ours
        assert copy.deepcopy(ours) is ours
    assert repr(gt.memory_format) == "<class 'torch.memory_format'>" == repr(torch.memory_format)


def test_no_new_formats():
    for args in ((), ("channels_last",), ("x",)):
        for T in (gt, torch):
            with pytest.raises(TypeError, match="cannot create 'torch.memory_format' instances"):
                T.memory_format(*args)


@pytest.mark.parametrize("attack", [
    "torch.memory_format('x')",
    "type(torch.channels_last)('x')",
    "torch.channels_last._name",
    "torch.channels_last.__reduce__()",
    "torch.channels_last.__class__.__new__",
    "torch.empty_strided((2,), (10**12,))",
    "torch.empty_strided((10**6, 10**6), (1, 1))",
    "torch.zeros(1).resize_((10**5, 10**5), memory_format=torch.channels_last)",
    "torch.ones(2, 2).contiguous(memory_format=torch.channels_last)",
    "torch.ones(2, 3, 4, 5).to(memory_format=5)",
])
def test_memory_format_attacks_stay_in_the_sandbox(tmp_path, attack):
    """Refused with one message and no traceback: no new formats, no private state, no
    allocation past --max-elements through strides or a resize."""
    (tmp_path / "p.grad").write_text(f"import torch\nprint({attack})\n")
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", "p.grad"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode != 0 and got.stdout == ""
    assert "Traceback" not in got.stderr and got.stderr.strip()


def _leaf(T, arr):
    return T.tensor(arr, dtype=T.float64, requires_grad=True)


CASES = {
    "contiguous cl": lambda T, x: x.contiguous(memory_format=T.channels_last),
    "contiguous cl of cl": lambda T, x: x.contiguous(memory_format=T.channels_last).contiguous(
        memory_format=T.channels_last) * 1,
    "contiguous of cl": lambda T, x: x.contiguous(memory_format=T.channels_last).contiguous(),
    "to cl": lambda T, x: x.to(memory_format=T.channels_last),
    "to float32 cl": lambda T, x: x.to(T.float32, memory_format=T.channels_last),
    "to preserve": lambda T, x: x.to(memory_format=T.preserve_format) * 1,
    "clone cl": lambda T, x: x.clone(memory_format=T.channels_last),
    "torch.clone cl": lambda T, x: T.clone(x, memory_format=T.channels_last),
    "clone preserve of cl": lambda T, x: x.to(memory_format=T.channels_last).clone(),
    "clone contiguous of cl": lambda T, x: x.to(memory_format=T.channels_last).clone(
        memory_format=T.contiguous_format),
    "clone preserve keyword": lambda T, x: x.to(memory_format=T.channels_last).clone(
        memory_format=T.preserve_format),
    "mul keeps cl": lambda T, x: x.contiguous(memory_format=T.channels_last) * 2,
    "exp keeps cl": lambda T, x: x.contiguous(memory_format=T.channels_last).exp(),
    "sum of cl": lambda T, x: x.contiguous(memory_format=T.channels_last).sum(1),
    "to float64 of cl": lambda T, x: x.contiguous(memory_format=T.channels_last).to(T.float32),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_relaid_tensors_as_pytorch(name):
    xo, xt = _leaf(gt, X4), _leaf(torch, X4)
    ours, theirs = CASES[name](gt, xo), CASES[name](torch, xt)
    assert ours.stride() == theirs.stride()
    assert ours.is_contiguous() == theirs.is_contiguous()
    assert ours.is_contiguous(memory_format=gt.channels_last) == theirs.is_contiguous(
        memory_format=torch.channels_last)
    assert repr(ours) == repr(theirs)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    w = RNG.standard_normal(tuple(theirs.shape))
    (ours * gt.tensor(w, dtype=ours.dtype)).sum().backward()
    (theirs * torch.tensor(w, dtype=theirs.dtype)).sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-6)
    assert xo.grad.stride() == xt.grad.stride()


def test_channels_last_3d_and_size_one_dims():
    for shape, fmt in (((2, 3, 1, 1), "channels_last"), ((2, 8, 1, 2), "channels_last"),
                       ((1, 3, 4, 1), "channels_last"), ((2, 3, 2, 4, 3), "channels_last_3d"),
                       ((2, 1, 2, 1, 3), "channels_last_3d")):
        arr = RNG.standard_normal(shape)
        ours = gt.tensor(arr).contiguous(memory_format=getattr(gt, fmt))
        theirs = torch.tensor(arr).contiguous(memory_format=getattr(torch, fmt))
        assert ours.stride() == theirs.stride(), shape
        for name in ("channels_last", "channels_last_3d", "contiguous_format",
                     "preserve_format"):
            assert ours.is_contiguous(memory_format=getattr(gt, name)) == theirs.is_contiguous(
                memory_format=getattr(torch, name)), (shape, name)
        assert repr(ours) == repr(theirs)


def test_int_tensor_channels_last_indexes_as_pytorch():
    """PyTorch's test_advanced_indexing_backwards_memory_format: a channels_last index."""
    shape = (2, 8, 1, 2)
    idx = RNG.integers(0, 1, shape)
    res = []
    for T in (gt, torch):
        i = T.tensor(idx).contiguous(memory_format=T.channels_last)
        x = T.tensor(RNG.standard_normal(shape) if T is gt else res[0][1], requires_grad=True)
        x[i].sum().backward()
        res.append((i.stride(), x.detach().numpy(), x.grad.numpy()))
    assert res[0][0] == res[1][0]
    np.testing.assert_array_equal(res[0][2], res[1][2])


@pytest.mark.parametrize("factory", ["empty_like", "zeros_like", "ones_like", "full_like"])
def test_like_factories_take_a_memory_format(factory):
    for fmt in ("channels_last", "contiguous_format", "preserve_format", None):
        for src in ("plain", "cl"):
            outs = []
            for T in (gt, torch):
                x = T.tensor(X4)
                if src == "cl":
                    x = x.contiguous(memory_format=T.channels_last)
                args = (x, 2.5) if factory == "full_like" else (x,)
                kwargs = {} if fmt is None else {"memory_format": getattr(T, fmt)}
                out = getattr(T, factory)(*args, **kwargs)
                outs.append(out)
            assert outs[0].stride() == outs[1].stride(), (fmt, src)
            if factory != "empty_like":
                assert repr(outs[0]) == repr(outs[1])


def test_first_grad_follows_its_leafs_layout():
    """PyTorch's test_strided_leaf_grad_layout: dense leaves get grads with their strides
    (broadcast gradients and products), a non-dense leaf gets a C-order grad."""
    for fa in ("contiguous_format", "channels_last"):
        for fb in ("contiguous_format", "channels_last"):
            got = []
            for T in (gt, torch):
                a = T.tensor(X4).to(memory_format=getattr(T, fa)).requires_grad_()
                b = T.tensor(X4 * 2).to(memory_format=getattr(T, fb)).requires_grad_()
                a.sum().backward()
                b.sum().backward()
                first = (a.grad.stride(), b.grad.stride())
                a.grad = b.grad = None
                (a * b).sum().backward()
                got.append((first, a.grad.stride(), b.grad.stride(), a.grad.sum().item()))
            assert got[0][:3] == got[1][:3]
            assert got[0][3] == pytest.approx(got[1][3])
    strided = []
    for T in (gt, torch):
        c = T.empty_strided((2, 2), (4, 2)).copy_(T.tensor([[1.0, 2.0], [3.0, 4.0]]))
        c.requires_grad_()
        c.sum().backward()
        first = c.grad.stride()
        c.grad = None
        (c * T.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        strided.append((c.stride(), first, c.grad.stride(), c.grad.tolist()))
    assert strided[0] == strided[1]


def test_empty_strided():
    for size, stride in (((2, 2), (4, 2)), ((2, 3), (1, 2)), ((2, 2), (0, 1)), ((0, 3), (3, 1)),
                         ((3,), (2,))):
        ours, theirs = gt.empty_strided(size, stride), torch.empty_strided(size, stride)
        assert ours.stride() == theirs.stride()
        assert ours.shape == theirs.shape and str(ours.dtype) == str(theirs.dtype)
    ours = gt.empty_strided((2, 2), (1, 2), dtype=gt.float64, requires_grad=True)
    assert ours.requires_grad and ours.dtype == gt.float64 and ours.is_leaf


ERRORS = {
    "contiguous cl of 2-d": lambda T: T.ones(2, 3).contiguous(memory_format=T.channels_last),
    "contiguous cl of 5-d": lambda T: T.ones(2, 3, 1, 2, 2).contiguous(
        memory_format=T.channels_last),
    "contiguous cl3d of 4-d": lambda T: T.ones(2, 3, 2, 2).contiguous(
        memory_format=T.channels_last_3d),
    "to cl of 2-d": lambda T: T.ones(2, 3).to(memory_format=T.channels_last),
    "clone cl of 3-d": lambda T: T.ones(2, 3, 4).clone(memory_format=T.channels_last),
    "empty_like cl of 2-d": lambda T: T.empty_like(T.ones(2, 3), memory_format=T.channels_last),
    "contiguous preserve": lambda T: T.ones(2, 3, 4, 5).transpose(0, 1).contiguous(
        memory_format=T.preserve_format),
    "contiguous int format": lambda T: T.ones(2, 3, 4, 5).contiguous(memory_format=1),
    "is_contiguous positional": lambda T: T.ones(3).is_contiguous(T.channels_last),
    "resize_ cl of 3-d": lambda T: T.zeros(1).resize_((2, 3, 4), memory_format=T.channels_last),
    "empty_strided mismatch": lambda T: T.empty_strided((2, 2), (4,)),
    "empty_strided negative": lambda T: T.empty_strided((2, 2), (-1, 1)),
    "empty_strided negative size": lambda T: T.empty_strided((2, -2), (1, 2)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_pytorch(name):
    assert_raises_as_pytorch(ERRORS[name], gt, torch)


def test_is_contiguous_of_small_ranks_and_preserve():
    for shape in ((3,), (2, 3), (2, 3, 4), ()):
        ours, theirs = gt.ones(shape), torch.ones(shape)
        for name in ("channels_last", "channels_last_3d", "preserve_format", "contiguous_format"):
            assert ours.is_contiguous(memory_format=getattr(gt, name)) == theirs.is_contiguous(
                memory_format=getattr(torch, name))


def test_resize_with_a_memory_format():
    for start in ((1,), (2, 3, 4, 5)):
        ours, theirs = gt.zeros(start), torch.zeros(start)
        ours.resize_((2, 3, 4, 5), memory_format=gt.channels_last)
        theirs.resize_((2, 3, 4, 5), memory_format=torch.channels_last)
        assert ours.stride() == theirs.stride() and ours._version == theirs._version
        ours.resize_((2, 3, 4, 5))
        theirs.resize_((2, 3, 4, 5))
        assert ours._version == theirs._version and ours.stride() == theirs.stride()


def test_memory_formats_through_the_cli(tmp_path):
    program = ("import torch\n"
               "x = torch.arange(24.0).reshape(1, 2, 3, 4).requires_grad_()\n"
               "y = x.contiguous(memory_format=torch.channels_last)\n"
               "print(torch.channels_last, y.stride(), y.grad_fn.name())\n"
               "print(y.is_contiguous(), y.is_contiguous(memory_format=torch.channels_last))\n"
               "(y * y).sum().backward()\n"
               "print(x.grad[0, 1], x.grad.stride())\n"
               "z = torch.empty_like(y, memory_format=torch.contiguous_format)\n"
               "print(z.stride(), torch.zeros_like(y).stride())\n")
    assert_runs_as_python_does(tmp_path, program)
