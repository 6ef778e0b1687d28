"""Sparse COO tensors against PyTorch: printing (indices / values / size / nnz / layout and
the dtype, requires_grad and grad_fn suffixes), grad_fn names, the sparse gradients
PyTorch gives sparse inputs (masked to their coalesced pattern), and PyTorch's errors."""

from __future__ import annotations

import contextlib
import io
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402
from gradcli.engine.tensor import Tensor  # noqa: E402

# each case: statements run with T = torch and T = gradcli.torch; what they print must agree
CASES = [
    "x = T.tensor([[0., 2., 0.], [3., 0., 4.]], requires_grad=True)\ns = x.to_sparse()\n"
    "print(s)\nprint(s.is_coalesced(), s._nnz(), s.layout, s.is_sparse, s.sparse_dim(), "
    "s.dense_dim())\nprint(s.indices())\nprint(s.values())\nprint(s.to_dense())",
    # gradients through to_dense, values, sparse.mm and sparse.sum into the dense source
    "x = T.tensor([[0., 2., 0.], [3., 0., 4.]], requires_grad=True)\n"
    "w = T.tensor([[1., 2., 3.], [4., 5., 6.]])\n(x.to_sparse().to_dense() * w).sum().backward()\n"
    "print(x.grad)",
    "x = T.tensor([[0., 2., 0.], [3., 0., 4.]], requires_grad=True)\n"
    "r = T.sparse.mm(x.to_sparse(), T.ones(3, 2))\nprint(r)\nr.sum().backward()\nprint(x.grad)",
    "x = T.tensor([[0., 2., 0.], [3., 0., 4.]], requires_grad=True)\n"
    "(x.to_sparse().values() * T.tensor([1., 2, 3])).sum().backward()\nprint(x.grad)",
    "x = T.tensor([[0., 2., 0.], [3., 0., 4.]], requires_grad=True)\n"
    "r = T.sparse.sum(x.to_sparse())\nprint(r)\nr.backward()\nprint(x.grad)\n"
    "print(T.sparse.sum(x.to_sparse(), 0))\nprint(T.sparse.sum(x.to_sparse(), dim=(0, 1)))",
    "x = T.tensor([[0., 2., 0.], [3., 0., 4.]], requires_grad=True)\nprint(x.to_sparse(1))",
    # an uncoalesced leaf: duplicates kept and counted, coalesce adds them; its .grad is
    # sparse with the coalesced pattern
    "i = T.tensor([[0, 1, 1, 0], [2, 0, 2, 2]])\nv = T.tensor([3., 4., 5., 1.])\n"
    "S = T.sparse_coo_tensor(i, v, (2, 3), requires_grad=True)\nprint(S)\n"
    "print(S.is_coalesced(), S._nnz(), S.is_leaf, S.grad_fn)\nC = S.coalesce()\nprint(C)\n"
    "print(C.indices(), C.values())\n"
    "out = T.sparse.mm(S, T.ones(3, 2, requires_grad=True))\nprint(out)\n"
    "out.sum().backward()\nprint(S.grad)",
    "i = T.tensor([[0, 1, 1, 0], [2, 0, 2, 2]])\nv = T.tensor([3., 4., 5., 1.])\n"
    "S = T.sparse_coo_tensor(i, v, (2, 3), requires_grad=True)\nT.sparse.sum(S).backward()\n"
    "print(S.grad)\nS.grad = None\nS.to_dense().sum().backward()\nprint(S.grad)\n"
    "S.grad = None\nT.sparse.sum(S, 1).to_dense().sum().backward()\nprint(S.grad)",
    "i = T.tensor([[0, 1, 1, 0], [2, 0, 2, 2]])\nv = T.tensor([3., 4., 5., 1.])\n"
    "S2 = T.sparse_coo_tensor(i, v, (2, 3))\n"
    "print(T.sparse.addmm(T.zeros(2, 2), S2, T.ones(3, 2), beta=0.5, alpha=2))\n"
    "print(T.sparse_coo_tensor(i, v))\nprint(T.sparse_coo_tensor(i, v).to_dense())\n"
    "y = T.sparse.sum(S2, 1)\nprint(y.grad_fn, y)",
    "v = T.tensor([3., 4.], requires_grad=True)\n"
    "s = T.sparse_coo_tensor([[0, 1], [2, 0]], v, (2, 3))\nprint(s)\n"
    "s.to_dense().sum().backward()\nprint(v.grad)",
    "m = T.ones(2, 2, requires_grad=True)\nc = T.ones(3, 2, requires_grad=True)\n"
    "r = T.sparse.addmm(m, T.tensor([[0., 1.], [2., 0.], [0., 0.]]).t().to_sparse(), c, "
    "beta=2.0, alpha=0.5)\nprint(r)\nr.sum().backward()\nprint(m.grad, c.grad)",
    # empty, integer, float64, 0-d, hybrid and summarised
    "print(T.sparse_coo_tensor(T.zeros(2, 0, dtype=T.long), T.zeros(0), (2, 3)))\n"
    "print(T.zeros(2, 3).to_sparse())\nprint(T.tensor([[1, 0], [0, 2]]).to_sparse())\n"
    "print(T.tensor([[1., 0], [0, 2]], dtype=T.float64).to_sparse())\n"
    "print(T.tensor(1.).to_sparse())",
    "print(T.arange(24.).reshape(2, 3, 4).to_sparse(2))",
    "big = T.zeros(40, 40)\nbig[3, 7] = 1.5\nbig[39, 0] = -2.25\nprint(big.to_sparse())",
    "print(T.arange(1., 1201.).to_sparse())",
    "print(T.sparse_coo_tensor([[0, 1]], [[1., 2.], [3., 4.]], (3, 2)))\n"
    "print(T.sparse_coo_tensor([[0, 1]], [1.5, 2.], (3,), dtype=T.float64, requires_grad=True))",
    "h = T.tensor([[0., 1.], [0., 0.], [2., 0.]], requires_grad=True)\nhs = h.to_sparse(1)\n"
    "print(hs)\nhs.values().pow(2).sum().backward()\nprint(h.grad)",
    # dense @ sparse and sparse @ dense through the ordinary mm
    "q = T.tensor([[1., 0.], [0., 3.]], requires_grad=True)\nprint(q.to_sparse() @ T.ones(2, 3))\n"
    "print(T.ones(3, 2) @ q.to_sparse())\n(T.ones(3, 2) @ q.to_sparse()).sum().backward()\n"
    "print(q.grad)\nq.grad = None\nq.to_sparse().mm(T.ones(2, 2)).sum().backward()\nprint(q.grad)",
    "s = T.ones(2, 2).to_sparse()\nprint(s.detach(), s.requires_grad_())\n"
    "print(s.sum(), T.ones(3, 2).to_sparse().sum(0))\nprint(s.shape, s.dtype, s.numel(), s.dim(), "
    "len(s), s.is_contiguous(), s.stride(), s.to_sparse() is s, s.data.layout)",
    "x = T.ones(2, 2)\nprint(x.to_dense() is x, x.sparse_dim(), x.dense_dim(), "
    "x.to_sparse().to_dense().layout)",
    # edges: -0.0 is no entry and reads +0.0 back (a stored -0.0 too), a 0-d zero stores
    # nothing, and an inf of the dense side meets only the stored entries of the sparse one
    "x = T.tensor([[-0., 2.], [-0., 0.]], requires_grad=True)\ns = x.to_sparse()\nprint(s)\n"
    "print(s.to_dense(), x.to_sparse(1).to_dense(), x.to_sparse(1).values())\n"
    "s.to_dense().sum().backward()\nprint(x.grad)",
    "for v in (0., -0., 3., float('nan')):\n    z = T.tensor(v, requires_grad=True)\n"
    "    s = z.to_sparse()\n    print(s, s.values(), s._nnz())\n"
    "    T.sparse.sum(s).backward()\n    print(z.grad)",
    "print(T.sparse_coo_tensor([[0, 1]], [-0., 1.], (3,)).to_dense())\n"
    "print(T.sparse_coo_tensor(T.zeros(0, 1, dtype=T.long), T.tensor([-0.]), ()).to_dense())\n"
    "print(T.sparse_coo_tensor([[0, 1]], [-0., 1.], (3,))._values())",
    "a = T.tensor([[1., 0.], [0., 2.]], requires_grad=True)\n"
    "b = T.tensor([[float('inf'), 1.], [-2., float('nan')]], requires_grad=True)\n"
    "r = T.sparse.mm(a.to_sparse(), b)\nprint(r)\nr.sum().backward()\nprint(a.grad, b.grad)\n"
    "a.grad = b.grad = None\nr = a.to_sparse() @ b\nprint(r)\nr.sum().backward()\n"
    "print(a.grad, b.grad)\nprint(b @ a.to_sparse())\n"
    "print(T.sparse.addmm(T.zeros(2, 2), a.to_sparse(), b))",
]

ERRORS = [
    "T.ones(2, 2).indices()",
    "T.ones(2, 2).values()",
    "T.ones(2, 2).coalesce()",
    "T.ones(2, 2).is_coalesced()",
    "T.ones(2, 2).to_sparse(3)",
    "T.ones(2, 2).to_sparse(0)",
    "T.ones(2, 2).to_sparse().to_sparse(1)",
    "T.ones(2, 2).to_sparse().to_dense(T.float64)",
    "T.sparse.mm(T.ones(2, 2).to_sparse(), T.ones(3, 2))",
    "T.sparse.mm(T.ones(2, 2).to_sparse(), T.ones(2, 2).double())",
    "T.sparse_coo_tensor([[0, 1]], [1., 2., 3.], (3,))",
    "T.sparse_coo_tensor([0, 1], [1., 2.], (3,))",
    "T.sparse_coo_tensor([[0, 1]], [1., 2.], (-2,))",
    "T.sparse_coo_tensor([[0, 1]], [1, 2], (3,), requires_grad=True)",
    "T.sparse.sum(T.ones(2, 2))",
    "T.sparse.sum(T.ones(2, 2).to_sparse(), 2)",
    "T.ones(2, 2).to_sparse().numpy()",
    "T.ones(2, 2).to_sparse().reshape(4)",
    "T.ones(2, 2).to_sparse().tolist()",
    "T.ones(2, 2).to_sparse().item()",
    "T.ones(2, 2).to_sparse() + 1",
    "T.ones(2, 2).to_sparse() + T.ones(2, 2)",
    "T.sparse_coo_tensor([[0, 1], [2, 2]], [1., 2.], (2, 3)).indices()",
    "T.sparse_coo_tensor([[0, 1], [2, 2]], [1., 2.], (2, 3)).values()",
    "T.ones(2, 2, requires_grad=True).to_sparse().sum(0).to_dense().sum().backward()",
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


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sparse_mm_gradients_match_pytorch(dtype):
    rng = np.random.default_rng(3)
    dense = rng.normal(size=(4, 5)) * (rng.random((4, 5)) < 0.4)
    right = rng.normal(size=(5, 3))
    cot = rng.normal(size=(4, 3))
    grads = []
    for module in (torch, gt):
        dt = getattr(module, dtype)
        x = module.tensor(dense, dtype=dt, requires_grad=True)
        d = module.tensor(right, dtype=dt, requires_grad=True)
        out = module.sparse.mm(x.to_sparse(), d)
        out.backward(module.tensor(cot, dtype=dt))
        grads.append((out.detach(), x.grad, d.grad, type(out.grad_fn).__name__))
    (tv, tx, td, tn), (gv, gx, gd, gn) = grads
    assert gn == tn == "SparseAddmmBackward0"
    for ours, theirs in ((gv, tv), (gx, tx), (gd, td)):
        assert str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_allclose(ours._data, theirs.numpy(), rtol=1.3e-6, atol=1e-5)
    assert not np.any(gx._data[dense == 0])  # masked to the sparse pattern


def test_sparse_leaf_grad_accumulates_and_stays_sparse():
    results = []
    for module in (torch, gt):
        s = module.sparse_coo_tensor([[0, 1, 1], [1, 0, 1]], [1.0, 2.0, 3.0], (2, 2),
                                     requires_grad=True)
        for _ in range(2):
            module.sparse.mm(s, module.ones(2, 3)).sum().backward()
        results.append(repr(s.grad))
    assert results[0] == results[1]


def test_to_sparse_opinfo_passes():
    pytest.importorskip("expecttest")
    from gradcli import coverage

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ops = [op for op in coverage.load_op_db() if op.name == "to_sparse"]
        assert ops
        assert coverage.check_op(ops[0])[0] == "pass"


def test_dense_tensors_are_untouched():
    x = gt.ones(2, 2)
    assert type(x) is Tensor and type(x * 2) is Tensor
    assert x.layout is gt.strided and not x.is_sparse
    assert "SparseCOO" not in repr(type(x.to_sparse()))  # (type(s) is torch.Tensor by name)
    assert type(x.to_sparse()).__name__ == "Tensor"


def test_refused_methods_say_so():
    s = gt.ones(2, 2).to_sparse()
    for call in (lambda: list(s), lambda: s[0:1], lambda: s.logcumsumexp(0),
                 lambda: gt.ones(2, 2, requires_grad=True).to_sparse().mul_(2)):
        with pytest.raises(NotImplementedError, match="of a sparse tensor .*is not supported|"
                                                      "indexing a sparse tensor"):
            call()
    # functions PyTorch has no sparse kernel for: its dispatcher's refusal
    for call in (lambda: s.exp(), lambda: gt.exp(s), lambda: s.exp_()):
        with pytest.raises(NotImplementedError, match="with arguments from the 'SparseCPU' "
                                                      "backend"):
            call()
    with pytest.raises(AttributeError):
        s.no_such_method  # noqa: B018
    with pytest.raises(NotImplementedError, match="_sparse_mm_reduce_impl' with arguments from "
                                                  "the 'SparseCPU' backend"):
        gt.sparse.mm(s, gt.ones(2, 2), "sum")


def test_gradcheck_through_sparse_ops():
    # (no zero in a: finite differences at a zero would change the pattern itself)
    a = gt.tensor([[0.5, 1.5], [2.0, -0.5], [0.75, -1.0]], dtype=gt.float64, requires_grad=True)
    b = gt.tensor([[0.5, 1.0, 2.0], [1.5, -1.0, 0.25]], dtype=gt.float64, requires_grad=True)

    def f(x, y):
        return gt.sparse.mm(x.to_sparse(), y) + gt.sparse.sum(x.to_sparse(), 1).to_dense()[:, None]

    assert gt.autograd.gradcheck(f, (a, b))
    assert gt.autograd.gradgradcheck(f, (a, b))


def test_invariants_warning_once_as_pytorch():
    import subprocess
    import sys

    src = ("import warnings\nwarnings.simplefilter('always')\nimport {m} as T\n"
           "T.sparse_coo_tensor([[0]], [1.], (2,))\nT.sparse_coo_tensor([[0]], [1.], (2,))\n"
           "T.sparse_coo_tensor([[0]], [1.], (2,), check_invariants=False)\n")
    texts = []
    for module in ("torch", "gradcli.torch"):
        proc = subprocess.run([sys.executable, "-c", src.format(m=module)], capture_output=True,
                              text=True, timeout=120, check=True)
        texts.append([line for line in proc.stderr.splitlines() if "UserWarning" in line])
    assert len(texts[1]) == 1
    assert texts[0] == texts[1]
