"""Tensor.to_sparse_coo, Tensor.sparse_mask (COO masks, coalesced or not, hybrid too) and
the *_copy forms of the sparse and complex views against PyTorch: reprs, grad_fn names,
gradients, and PyTorch's refusals (no SparseCPU kernel for values_copy & co of a COO
tensor; view_as_complex_copy records no graph)."""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402


def _env(lib):
    return {"torch": lib,
            "x": lib.tensor([[0.0, 2.0], [3.0, 0.0]], requires_grad=True),
            "y": lib.tensor([[5.0, -6.0], [7.0, 8.0]], requires_grad=True),
            "h": lib.arange(6.0).view(3, 2).requires_grad_(),
            "u": lib.sparse_coo_tensor([[0, 0, 1], [1, 1, 0]], [1.0, 2.0, 3.0], (2, 2)),
            "m": lib.tensor([[1.0, 0.0], [1.0, 1.0]]).to_sparse(),
            "csr": lib.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse_csr(),
            "z": lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)}


def _first_line(e) -> str:
    """(PyTorch's "Could not run" errors go on to list every backend: gradcli says the
    first sentence)"""
    return f"{type(e).__name__}: {str(e).splitlines()[0].split(' This could be')[0]}"


def _run(code, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's CSR beta warning)
        try:
            value = repr(eval(code, _env(lib)))  # noqa: S307 - the fixed strings below
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            value = _first_line(e)
    return value.replace("gradcli.torch", "torch")


CODES = [
    "x.to_sparse_coo()", "x.to_sparse().to_sparse_coo()", "torch.ones(3).to_sparse_coo()",
    "torch.zeros(2, 0).to_sparse_coo()",
    "y.sparse_mask(m)", "y.sparse_mask(u)", "y.sparse_mask(u).coalesce()",
    "y.sparse_mask(torch.zeros(2, 2).to_sparse())", "y.double().sparse_mask(m)",
    "torch.ones(2, 2, dtype=torch.int64).sparse_mask(m)",
    "h.sparse_mask(torch.tensor([[0.0, 1.0], [0.0, 0.0], [1.0, 1.0]]).to_sparse(1))",
    "torch.tensor([[float('inf'), -0.0], [1.0, 2.0]]).sparse_mask(m)",
    "torch.tensor([[float('inf'), -0.0], [1.0, 2.0]]).sparse_mask(m).to_dense()",
    "y.sparse_mask(torch.ones(2, 2))", "y.sparse_mask(torch.ones(2, 3).to_sparse())",
    "torch.view_as_real_copy(z)", "torch.view_as_real_copy(z.detach().conj())",
    "torch.view_as_real_copy(torch.ones(2))", "torch.view_as_complex_copy(torch.ones(3, 2))",
    "torch.view_as_complex_copy(torch.ones(2, 2, dtype=torch.float64))",
    "torch.view_as_complex_copy(torch.ones(2, 2, dtype=torch.int64))",
    "torch.view_as_complex_copy(torch.ones(2, 2, requires_grad=True))",
    "torch.view_as_complex_copy(torch.ones(2, 2)[:, :1])", "torch.view_as_complex_copy(torch.ones(3))",
    "torch.values_copy(x.to_sparse_csr())", "torch.values_copy(csr)",
    "torch.crow_indices_copy(csr)", "torch.col_indices_copy(csr)",
] + [f"torch.{name}_copy({arg})" for name in ("values", "indices", "crow_indices",
                                               "col_indices", "ccol_indices", "row_indices")
     for arg in ("torch.ones(2, 2)", "m", "csr")]


@pytest.mark.parametrize("code", CODES)
def test_as_pytorch(code):
    assert _run(code, gt) == _run(code, torch)


GRADS = {
    "mask_uncoalesced": ("y", "(y.sparse_mask(u).to_dense() * torch.tensor([[1., 2.], [3., 4.]]))"
                              ".sum()"),
    "mask_values": ("y", "y.sparse_mask(m).values().pow(2).sum()"),
    "mask_sparse_sum": ("y", "torch.sparse.sum(y.sparse_mask(m))"),
    "mask_hybrid": ("h", "h.sparse_mask(torch.tensor([[0., 1.], [0., 0.], [1., 1.]])"
                         ".to_sparse(1)).to_dense().pow(2).sum()"),
    "to_sparse_coo": ("x", "(x.to_sparse_coo().to_dense() * 3).sum()"),
    "values_copy": ("x", "torch.values_copy(x.to_sparse_csr()).pow(2).sum()"),
    "view_as_real_copy": ("z", "(torch.view_as_real_copy(z) * torch.tensor([[1., 2.], "
                               "[3., 4.]])).sum()"),
}


@pytest.mark.parametrize("which", sorted(GRADS))
def test_gradients_as_pytorch(which):
    leaf, code = GRADS[which]
    got = []
    for lib in (torch, gt):
        env = _env(lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = eval(code, env)  # noqa: S307 - the fixed strings above
            out.backward()
        got.append(repr(env[leaf].grad).replace("gradcli.torch", "torch"))
    assert got[1] == got[0]


def test_a_sparse_self_is_refused_as_not_supported():
    with pytest.raises(NotImplementedError, match="sparse_mask of a sparse tensor is not "
                                                  "supported by gradcli"):
        gt.ones(2, 2).to_sparse().sparse_mask(gt.ones(2, 2).to_sparse())


@pytest.mark.parametrize("code", [
    "torch.view_as_real_copy(z.detach(), out=torch.empty(0))",
    "torch.view_as_complex_copy(torch.ones(2, 2), out=torch.empty(0, dtype=torch.complex64))",
    "torch.values_copy(csr, out=torch.empty(5))",
    "torch.crow_indices_copy(csr, out=torch.empty(0, dtype=torch.int64))",
])
def test_out_as_pytorch(code):
    assert _run(code, gt) == _run(code, torch)
