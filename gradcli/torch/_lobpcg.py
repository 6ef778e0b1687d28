"""torch.lobpcg: the k largest (or smallest) eigenpairs of a symmetric matrix A, or of the
generalized problem A x = lambda B x.

PyTorch iterates LOBPCG from a random start (torch.randn(m, n)) until its residuals fall
under tol (sqrt of the dtype's epsilon). gradcli draws the same start, so the random state
afterwards is PyTorch's, and returns the exact eigenpairs the iteration converges to
(numpy's eigh; for B through its Cholesky factor): eigenvalues agree with PyTorch's within
PyTorch's own tolerance, eigenvectors up to their sign. With A requiring grad the result
comes from PyTorch's autograd function (LOBPCGAutogradFunctionBackward) on (A + A^T) / 2,
its gradient the eigendecomposition's; B != I has no backward, as in PyTorch.
"""

from __future__ import annotations

import numpy as np

import gradcli.torch as torch

_FUNCTION: list = []


def _check(A, B, X, k, n):
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    return m, k, n


def _pairs(a: np.ndarray, b, k: int, largest: bool):
    """The k extreme eigenpairs of one matrix (values in the order lobpcg gives them:
    descending for the largest, ascending for the smallest)."""
    if b is None:
        values, vectors = np.linalg.eigh(a)
    else:
        lower = np.linalg.cholesky(b)
        inv = np.linalg.inv(lower)
        values, vectors = np.linalg.eigh(inv @ a @ inv.T)
        vectors = inv.T @ vectors
    order = np.argsort(values)
    order = order[::-1][:k] if largest else order[:k]
    return values[order], vectors[:, order]


def _solve(A, B, k, largest, draw):
    a = A._data.astype(np.float64)
    b = None if B is None else B._data.astype(np.float64)
    m = a.shape[-1]
    batch = a.shape[:-2]
    flat_a = a.reshape((-1, m, m))
    flat_b = None if b is None else b.reshape((-1, m, m))
    values = np.empty((flat_a.shape[0], k))
    vectors = np.empty((flat_a.shape[0], m, k))
    for i in range(flat_a.shape[0]):
        draw()
        values[i], vectors[i] = _pairs(flat_a[i], None if flat_b is None else flat_b[i], k,
                                       largest)
    dtype = A._data.dtype
    return (torch.tensor(values.reshape(batch + (k,)).astype(dtype)),
            torch.tensor(vectors.reshape(batch + (m, k)).astype(dtype)))


def _autograd_function():
    if not _FUNCTION:
        class LOBPCGAutogradFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, A, k, B, largest, draw):
                values, vectors = _solve(A, B, k, largest, draw)
                ctx.save_for_backward(A, B)
                ctx.k, ctx.largest = k, largest
                return values, vectors

            @staticmethod
            def backward(ctx, grad_values, grad_vectors):
                A, B = ctx.saved_tensors
                if B is not None:
                    raise ValueError("lobpcg.backward does not support backward with B != I "
                                     "yet.")
                with torch.enable_grad():
                    leaf = A.detach()._requires_grad_()
                    values, vectors = torch.linalg.eigh(leaf)
                    index = torch.arange(values.shape[-1] - 1, values.shape[-1] - 1 - ctx.k, -1) \
                        if ctx.largest else torch.arange(ctx.k)
                    picked = [values.index_select(-1, index), vectors.index_select(-1, index)]
                    wanted = [g for g in (grad_values, grad_vectors)]
                    outputs = [p for p, g in zip(picked, wanted) if g is not None]
                    grads = [g for g in wanted if g is not None]
                    grad_a, = torch.autograd.grad(outputs, [leaf], grads, allow_unused=True)
                return grad_a, None, None, None, None

        LOBPCGAutogradFunction.__module__ = "torch._lobpcg"
        _FUNCTION.append(LOBPCGAutogradFunction)
    return _FUNCTION[0]


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """(eigenvalues, eigenvectors) of the k extreme eigenpairs of symmetric A (or of A, B)."""
    largest = True if largest is None else largest
    dtype = A.dtype
    differentiable = A.requires_grad or (B is not None and B.requires_grad)
    if differentiable:  # (symmetrized first, as PyTorch does, before its checks)
        A_sym = (A + A.mT) / 2
        B_sym = (B + B.mT) / 2 if B is not None else None
    m, k, n = _check(A, B, X, k, n)

    def draw():
        if X is None:  # (PyTorch's random start: the same draw keeps the random state)
            torch.randn((m, n), dtype=dtype)

    if differentiable:
        return _autograd_function().apply(A_sym, k, B_sym, largest, draw)
    return _solve(A, B, k, largest, draw)
