"""What PyTorch prints for a sparse COO tensor: `tensor(indices=tensor(...), values=
tensor(...), size=(...), nnz=N, layout=torch.sparse_coo)` and its dtype / requires_grad /
grad_fn suffixes.

A module of its own so that formatting.py's dense path stays as it is: the indices and
the values are each laid out as a dense tensor's body (formatting's block layout, each
with its own element widths), indented under their `indices=tensor(` / `values=tensor(`
prefixes, and the suffixes wrap at the line width as a dense tensor's do.
"""

from __future__ import annotations

import numpy as np

from .formatting import (
    _IMPLIED_DTYPES,
    _PREFIX,
    PRINT_OPTIONS,
    _append_suffixes,
    _ComplexFormatter,
    _default_float_key,
    _dtype_key,
    _ElementFormatter,
    _format_block,
    _shown_elements,
    dtype_name,
)


def _body(data: np.ndarray, indent: int) -> str:
    """A dense array's bracketed text, continuation lines indented by `indent`; an empty
    array reads `[]` followed by its size, as PyTorch writes the parts of a sparse tensor."""
    options = PRINT_OPTIONS
    if data.size == 0:
        return f"[], size={tuple(data.shape)}"
    key = _dtype_key(data.dtype)
    if key[0] == "V":  # bfloat16: printed widened, exactly
        data = data.astype(np.float32)
    summarize = data.size > options.threshold
    shown = _shown_elements(data, options.edgeitems) if summarize else data
    if key[0] == "c":
        formatter = _ComplexFormatter(shown, options)
    else:
        formatter = _ElementFormatter(shown.ravel().tolist(), key[0] in "fV", options)
    return _format_block(data, indent, summarize, formatter, options)


def sparse_repr(indices: np.ndarray, values: np.ndarray, shape: tuple, *,
                requires_grad: bool = False, grad_fn_name: str | None = None) -> str:
    """The text of a sparse COO tensor with these indices (sparse_dim x nnz, int64) and
    values (nnz x dense dims) of the given size."""
    indent = len(_PREFIX)
    indices_prefix, values_prefix = "indices=tensor(", "values=tensor("
    text = (_PREFIX + indices_prefix + _body(indices, indent + len(indices_prefix)) + "),\n"
            + " " * indent + values_prefix + _body(values, indent + len(values_prefix)) + ")")
    suffixes = [f"size={tuple(shape)}", f"nnz={indices.shape[1]}"]
    key = _dtype_key(values.dtype)
    if key not in _IMPLIED_DTYPES and key != _default_float_key():
        suffixes.append(f"dtype={dtype_name(values.dtype)}")
    suffixes.append("layout=torch.sparse_coo")
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _append_suffixes(text, suffixes, indent, PRINT_OPTIONS.linewidth, first_on_new=True)


def compressed_repr(crow: np.ndarray, col: np.ndarray, values: np.ndarray, shape: tuple, *,
                    requires_grad: bool = False, grad_fn_name: str | None = None) -> str:
    """The text of a sparse CSR matrix: its crow_indices, col_indices and values, then the
    suffixes, which (unlike a COO tensor's) continue the values' line while they fit."""
    indent = len(_PREFIX)
    parts = []
    for name, data in (("crow_indices", crow), ("col_indices", col), ("values", values)):
        prefix = f"{name}=tensor("
        parts.append(prefix + _body(data, indent + len(prefix)) + ")")
    text = _PREFIX + (",\n" + " " * indent).join(parts)
    suffixes = [f"size={tuple(shape)}", f"nnz={len(col)}"]
    key = _dtype_key(values.dtype)
    if key not in _IMPLIED_DTYPES and key != _default_float_key():
        suffixes.append(f"dtype={dtype_name(values.dtype)}")
    suffixes.append("layout=torch.sparse_csr")
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _append_suffixes(text, suffixes, indent, PRINT_OPTIONS.linewidth)
