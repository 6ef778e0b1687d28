"""Sparse CSR matrices against PyTorch: printing, crow/col indices, torch.sparse.mm with a
reduction (sum, mean, amax, amin: values, SparseMmReduceImplBackward0 and the sparse
gradient of the CSR input), sampled_addmm, sparse_csr_tensor, and PyTorch's errors; and
the two CSR OpInfos through the coverage harness."""

from __future__ import annotations

import contextlib
import io
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402

CASES = [
    "a = T.tensor([[0., 2., 0.], [3., 0., 4.], [0., 0., 0.]], dtype=T.float64)\n"
    "c = a.to_sparse_csr().requires_grad_()\nprint(c)\n"
    "d = T.tensor([[1., 2.], [3., -1.], [0.5, 4.]], dtype=T.float64, requires_grad=True)\n"
    "for r in ['sum', 'mean', 'amax', 'amin', 'max', 'min']:\n"
    "    c.grad = None\n    d.grad = None\n    o = T.sparse.mm(c, d, r)\n"
    "    print(r, o, o.grad_fn.name())\n"
    "    o.backward(T.tensor([[1., 2.], [3., 4.], [5., 6.]], dtype=T.float64))\n"
    "    print(c.grad, d.grad)",
    "x = T.tensor([[0., 2.], [3., 0.]], requires_grad=True)\ncx = x.to_sparse_csr()\n"
    "print(cx, cx.to_dense(), cx.crow_indices(), cx.col_indices(), cx.values(), cx._nnz())\n"
    "print(cx.is_sparse, cx.is_sparse_csr, cx.layout, cx.sparse_dim(), cx.dense_dim())\n"
    "m1 = T.ones(2, 3, requires_grad=True)\n"
    "o = T.sparse.sampled_addmm(cx, m1, T.ones(3, 2), beta=0.5, alpha=2.0)\nprint(o)\n"
    "o.to_dense().sum().backward()\nprint(x.grad, m1.grad)",
    "v = T.tensor([1., 2.], requires_grad=True)\n"
    "t = T.sparse_csr_tensor([0, 1, 2], [1, 0], v, (2, 2))\nprint(t)\n"
    "t.to_dense().sum().backward()\nprint(v.grad)\n"
    "print(T.sparse_csr_tensor([0, 1, 2], [1, 0], [1., 2.]))\n"
    "print(T.zeros(2, 3).to_sparse_csr(), T.tensor([[1, 0], [0, 2]]).to_sparse_csr())",
]

ERRORS = [
    "T.sparse.mm(T.ones(2, 2).to_sparse_csr(), T.ones(3, 2), 'sum')",
    "T.ones(2, 2).col_indices()",
    "T.ones(2, 2).crow_indices()",
    "T.ones(2, 2).to_sparse_csr().indices()",
    "T.ones(2, 2).to_sparse_csr().coalesce()",
    "T.sparse.sum(T.ones(2, 2).to_sparse_csr())",
]


def _printed(module, src: str) -> str:
    out = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out):
        warnings.simplefilter("ignore")
        exec(src, {"T": module})  # noqa: S102 - this file's own cases
    return re.sub(r" object at 0x[0-9a-f]+", "", out.getvalue())


@pytest.mark.parametrize("src", CASES)
def test_prints_as_pytorch(src):
    assert _printed(gt, src) == _printed(torch, src)


def _error(module, src: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(src, {"T": module})  # noqa: S102
        except Exception as err:  # noqa: BLE001 - compared with PyTorch's
            return type(err).__name__, str(err).splitlines()[0]
    return None


@pytest.mark.parametrize("src", ERRORS)
def test_errors_as_pytorch(src):
    theirs = _error(torch, src)
    assert theirs is not None
    assert _error(gt, src) == theirs


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
def test_mm_reduce_random_against_pytorch(reduce):
    rng = np.random.default_rng(7)
    dense = rng.normal(size=(6, 5)) * (rng.random((6, 5)) < 0.5)
    right = rng.normal(size=(5, 4))
    cot = rng.normal(size=(6, 4))
    got = []
    for module in (torch, gt):
        c = module.tensor(dense, dtype=module.float64).to_sparse_csr().requires_grad_()
        d = module.tensor(right, dtype=module.float64, requires_grad=True)
        out = module.sparse.mm(c, d, reduce)
        gc, gd = module.autograd.grad(out, (c, d), module.tensor(cot, dtype=module.float64))
        gc = gc.to_dense() if module is torch else gc
        got.append([out.detach().numpy() if module is torch else out._data,
                    gc.detach().numpy() if module is torch else gc._data,
                    gd.numpy() if module is torch else gd._data])
    for ours, theirs in zip(got[1], got[0], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-7)


def test_csr_opinfos_pass():
    pytest.importorskip("expecttest")
    from gradcli import coverage

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ops = [op for op in coverage.load_op_db()
               if op.name in ("sparse.mm", "sparse.sampled_addmm")]
        assert len(ops) == 2
        for op in ops:
            assert coverage.check_op(op)[0] == "pass", coverage.op_id(op)


def test_refusals_say_so():
    with pytest.raises(NotImplementedError, match="'aten::sparse_sampled_addmm' with arguments "
                                                  "from the 'CPU' backend"):
        gt.sparse.sampled_addmm(gt.ones(2, 2), gt.ones(2, 2), gt.ones(2, 2))
    with pytest.raises(NotImplementedError, match="not supported by gradcli"):
        gt.sparse.mm(gt.ones(2, 2).to_sparse_csr(), gt.ones(2, 2), "prod")
    with pytest.raises(NotImplementedError, match="of a sparse tensor is not supported"):
        gt.ones(2, 2).to_sparse_csr().exp()
