"""Storages and memory sharing (engine/ops/storage.py) against PyTorch 2.13: storage() and
untyped_storage() (size, len, nbytes, data_ptr, printing, the deprecation warning),
data_ptr and storage_offset of views, resize_as_ (its version rule and errors, as
PyTorch's test_resize_version_bump), and unsafe_split_with_sizes / unsafe_split /
unsafe_chunk (grad_fn names, shared memory, in-place use as PyTorch's
test_inplace_on_view_multi_output_unsafe)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from expr_compare import assert_raises_as_pytorch
from process_helpers import assert_runs_as_python_does

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


STORAGE = {
    "len": lambda T: len(T.tensor([1.0, 2.0, 3.0]).storage()),
    "size": lambda T: T.tensor([1.0, 2.0, 3.0]).storage().size(),
    "nbytes": lambda T: T.tensor([1.0, 2.0, 3.0], dtype=T.float64).storage().nbytes(),
    "element_size": lambda T: T.tensor([1, 2]).storage().element_size(),
    "dtype": lambda T: str(T.tensor([1, 2]).storage().dtype),
    "untyped size": lambda T: T.tensor([1.0, 2.0, 3.0]).untyped_storage().size(),
    "untyped len": lambda T: len(T.tensor([1, 2], dtype=T.int32).untyped_storage()),
    "untyped nbytes": lambda T: T.tensor([1.0, 2.0]).untyped_storage().nbytes(),
    "view's storage": lambda T: len(T.arange(12.0).reshape(3, 4)[1:, 2:].storage()),
    "expanded storage": lambda T: len(T.tensor([1.0, 2.0]).expand(3, 2).storage()),
    "view offset": lambda T: T.arange(12.0).reshape(3, 4)[1:, 2:].storage_offset(),
    "select offset": lambda T: T.arange(12.0).reshape(3, 4)[2].storage_offset(),
    "plain offset": lambda T: T.ones(3).storage_offset(),
    "repr typed": lambda T: repr(T.tensor([1.0, 2.5, -3.0]).storage()),
    "repr typed int": lambda T: repr(T.tensor([1, 2]).storage()),
    "repr untyped": lambda T: repr(T.tensor([1, 258], dtype=T.int32).untyped_storage()),
    "repr empty": lambda T: repr(T.tensor([]).storage()),
    "tolist": lambda T: T.tensor([1.0, 2.0]).storage().tolist(),
    "item": lambda T: T.tensor([1.0, 2.0]).storage()[1],
    "device": lambda T: str(T.tensor([1.0]).untyped_storage().device),
}


@pytest.mark.parametrize("name", sorted(STORAGE))
def test_storage_as_pytorch(name):
    assert _quiet(STORAGE[name], gt) == _quiet(STORAGE[name], torch)


def test_shared_storages_and_pointers():
    """Views share their base's storage and data_ptr; a view's data_ptr is its first
    element's address (the offset times the element size past the storage's)."""
    for T in (gt, torch):
        x = T.arange(12.0).reshape(3, 4)
        v = x[1:, 2:]
        assert _quiet(lambda a, b: a.storage().data_ptr() == b.storage().data_ptr(), v, x)
        assert v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        assert v.data_ptr() - x.data_ptr() == v.storage_offset() * x.element_size() == 24
        assert x.detach().data_ptr() == x.data_ptr()
        assert x.clone().data_ptr() != x.data_ptr()


def test_storage_warns_as_pytorch_once():
    import gradcli.engine.ops.storage as storage_module

    storage_module._WARNED[0] = False
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        gt.ones(2).storage()
        gt.ones(2).storage()
    texts = [str(w.message) for w in seen]
    assert len(texts) == 1 and texts[0].startswith("TypedStorage is deprecated.")


def test_resize_version_bump():
    """PyTorch's test: resize_ and resize_as_ bump the version only when sizes change."""
    versions = []
    for T in (gt, torch):
        x, y = T.rand((1,)), T.randn((3,))
        got = []
        x.resize_((1, 2))
        got.append(x._version)
        x.resize_as_(y)
        got.append((x._version, tuple(x.shape)))
        x.resize_((3,))
        got.append(x._version)
        x.resize_as_(y)
        got.append(x._version)
        assert T.resize_as_(x, T.zeros(2, 2)) is x
        got.append((x._version, tuple(x.shape)))
        versions.append(got)
    assert versions[0] == versions[1]


ERRORS = {
    "requires grad": lambda T: T.randn(2, requires_grad=True).resize_as_(T.randn(3)),
    "requires grad same size": lambda T: T.randn(2, requires_grad=True).resize_as_(T.randn(2)),
    "not a tensor": lambda T: T.randn(2).resize_as_(3),
    "storage resize of a grad tensor": lambda T: T.randn(2, requires_grad=True).resize_(3),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_resize_errors(name):
    assert_raises_as_pytorch(ERRORS[name], gt, torch)


def test_resize_as_in_no_grad_still_refuses():
    for T in (gt, torch):
        a = T.randn(2, requires_grad=True)
        with T.no_grad(), pytest.raises(RuntimeError, match="cannot resize variables that"):
            a.resize_as_(T.randn(3))


@pytest.mark.parametrize("split", ["unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"])
def test_unsafe_splits_may_be_modified_in_place(split):
    """PyTorch's test_inplace_on_view_multi_output_unsafe, plus names and gradients."""
    calls = {"unsafe_split": lambda t: t.unsafe_split(1),
             "unsafe_split_with_sizes": lambda t: t.unsafe_split_with_sizes((1, 1, 1)),
             "unsafe_chunk": lambda t: t.unsafe_chunk(3)}
    arr = np.random.default_rng(3).standard_normal((3, 3))
    got = []
    for T in (gt, torch):
        a = T.tensor(arr, requires_grad=True)
        b = a + a
        s1, s2, s3 = calls[split](b)
        names = [s.grad_fn.name() for s in (s1, s2, s3)]
        s1.mul_(s2)
        s1.sum().backward()
        got.append((names, s1.grad_fn.name(), a.grad.numpy().copy(), s1._base is None))
    assert got[0][0] == got[1][0] and got[0][1] == got[1][1] and got[0][3] == got[1][3]
    np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-7, atol=1e-7)


def test_unsafe_split_with_sizes_shares_memory():
    got = []
    for T in (gt, torch):
        x = T.arange(6.0)
        first, rest = T.unsafe_split_with_sizes(x, [2, 4])
        first.mul_(10)  # shows in x: same memory, though neither is a view of the other
        got.append((x.tolist(), x._version, first._version, rest.shape,
                    first.data_ptr() == x.data_ptr(), repr(rest)))
        m = T.ones(2, 3, dtype=T.float64, requires_grad=True) * 2
        parts = m.unsafe_split_with_sizes([1, 2], dim=1)
        got.append(tuple((p.grad_fn.name(), tuple(p.shape), p.requires_grad) for p in parts))
        with T.no_grad():
            got.append(m.unsafe_split_with_sizes([2, 1], 1)[0].requires_grad)
    assert got[:3] == got[3:]


@pytest.mark.parametrize("split", ["unsafe_split", "unsafe_chunk"])
def test_unsafe_split_and_chunk_share_memory(split):
    got = []
    for T in (gt, torch):
        x = T.arange(6.0).reshape(2, 3)
        pieces = getattr(T, split)(x, 2 if split == "unsafe_split" else 2, 1)
        pieces[0].mul_(10)
        got.append((x.tolist(), x._version, pieces[0]._version, pieces[1].storage_offset(),
                    pieces[1].data_ptr() - x.data_ptr(), [p.stride() for p in pieces]))
    assert got[0] == got[1]


def test_unsafe_split_with_sizes_gradients():
    arr = np.random.default_rng(5).standard_normal((4, 3))
    w = np.random.default_rng(6).standard_normal((3, 3))
    grads = []
    for T in (gt, torch):
        a = T.tensor(arr, requires_grad=True)
        p, q = a.unsafe_split_with_sizes([1, 3])
        (q * T.tensor(w)).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-7, atol=1e-7)
    assert gt.autograd.gradcheck(lambda t: gt.unsafe_split_with_sizes(t, [2, 2], 0)[1],
                                 (gt.tensor(arr, requires_grad=True),))


def test_storage_through_the_cli(tmp_path):
    """Programs get storage_offset, resize_as_ and unsafe_split_with_sizes as Python does;
    storages and data_ptr stay outside the sandbox (addresses of the process's memory),
    refused with one line and no traceback."""
    program = ("import torch\n"
               "x = torch.arange(6.0).reshape(2, 3)\n"
               "v = x[1]\n"
               "print(v.storage_offset())\n"
               "a, b = x.unsafe_split_with_sizes([1, 1])\n"
               "b.mul_(2)\n"
               "print(x, b.grad_fn)\n"
               "y = torch.zeros(2)\n"
               "y.resize_as_(x)\n"
               "print(y.shape, y._version)\n")
    assert_runs_as_python_does(tmp_path, program)
    for attack in ("x.untyped_storage()", "x.storage()", "x.data_ptr()",
                   "getattr(x, 'data_ptr')()", "x[0].untyped_storage().data_ptr()"):
        (tmp_path / "q.grad").write_text(f"import torch\nx = torch.ones(2)\nprint({attack})\n")
        got = subprocess.run([sys.executable, "-m", "gradcli", "run", "q.grad"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
        assert got.returncode != 0 and got.stdout == ""
        assert "Traceback" not in got.stderr and "not supported by gradcli" in got.stderr, \
            got.stderr
