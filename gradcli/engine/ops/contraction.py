"""torch.einsum, contracted the way ATen's einsum does (Linear.cpp), so the graph holds
PyTorch's nodes: each operand is brought to one common dim order (diagonals taken for
repeated labels, missing labels unsqueezed, one permute), then operands are combined
left to right, two at a time, by a permute/reshape/bmm/view/permute ("sumproduct_pair";
a plain mul when nothing is summed), dims that only one side has summed first. The result
ends on ViewBackward0 when a multi-operand contraction summed dims out, on SumBackward1
for one operand summed, on PermuteBackward0 or MulBackward0 otherwise -- what PyTorch
prints. (Without opt_einsum PyTorch takes no contraction path; with `path=` neither.)"""

from __future__ import annotations

from ..tensor import Tensor
from .registry import public

_LETTERS = 26
_TOTAL = 2 * _LETTERS
_ELLIPSIS = _TOTAL


def _subscript(ch: str) -> int:
    return ord(ch) - ord("A") if ch.isupper() else ord(ch) - ord("a") + _LETTERS


def _label(s: int) -> str:
    return chr(s + ord("A")) if s < _LETTERS else chr(s - _LETTERS + ord("a"))


def _parse_operands(lhs: str, num_ops: int) -> list:
    labels = [[] for _ in range(num_ops)]
    cur = 0
    seen_ellipsis = False
    i = 0
    while i < len(lhs):
        ch = lhs[i]
        if ch == " ":
            pass
        elif ch == ".":
            if seen_ellipsis:
                raise RuntimeError(f"einsum(): found '.' for operand {cur} for which an "
                                   f"ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {cur} that is not part of "
                                   f"any ellipsis")
            i += 2
            labels[cur].append(_ELLIPSIS)
            seen_ellipsis = True
        elif ch == ",":
            cur += 1
            if cur >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in "
                                   "the equation")
            seen_ellipsis = False
        else:
            if not (ch.isascii() and ch.isalpha()):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   f"equation string, subscripts must be in [a-zA-Z]")
            labels[cur].append(_subscript(ch))
        i += 1
    if cur != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    return labels


def _pair(left: Tensor, right: Tensor, sum_dims: list) -> Tensor:
    """(left * right).sum(sum_dims, keepdim=True) through one bmm (both of the same rank,
    broadcastable)."""
    if not sum_dims:
        return left.mul(right)
    ndim = left.dim()
    summed = set(sum_dims)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in summed:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = left.sum(i, True)
            elif sr:
                right = right.sum(i, True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo]
                + [1] * len(sum_dims) + [right.shape[d] for d in ro])
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [0] * len(out_size)
    for pos, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = pos
    a = left.permute(*lperm).reshape(lro_size, lo_size, sum_size)
    b = right.permute(*rperm).reshape(lro_size, sum_size, ro_size)
    return a.bmm(b).view(*out_size).permute(*operm)


def _einsum(equation: str, operands: list, path=None) -> Tensor:
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    num_ops = len(operands)
    if path is not None:
        want = 1 if num_ops == 1 else (num_ops - 1) * 2
        if len(path) != want:
            raise RuntimeError(f"einsum(): expected contraction path given in path parameter "
                               f"to have size {want} but got {len(path)}")
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_operands(lhs, num_ops)
    label_count = [0] * _TOTAL
    ell_num_dim = 0
    for i, (op, labels) in enumerate(zip(operands, op_labels, strict=True)):
        ndims = op.dim()
        nlabels = len(labels)
        has_ellipsis = False
        for s in labels:
            if s == _ELLIPSIS:
                nlabels -= 1
                has_ellipsis = True
                ell_num_dim = max(ell_num_dim, ndims - nlabels)
            else:
                label_count[s] += 1
        if not (nlabels <= ndims if has_ellipsis else nlabels == ndims):
            how = ("is more than the number of dimensions" if has_ellipsis
                   else "does not match the number of dimensions")
            tail = "" if has_ellipsis else " and no ellipsis was given"
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nlabels}) "
                               f"{how} ({ndims}) for operand {i}{tail}")
    perm_of = [-1] * _TOTAL
    perm_index = 0
    ell_index = 0
    ell_in_output = False
    if arrow < 0:
        perm_index = ell_num_dim
        ell_in_output = True
        for s in range(_TOTAL):
            if label_count[s] == 1:
                perm_of[s] = perm_index
                perm_index += 1
    else:
        rhs = equation[arrow + 2:]
        i = 0
        while i < len(rhs):
            ch = rhs[i]
            if ch == " ":
                pass
            elif ch == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) "
                                       "was already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                       "ellipsis (...)")
                i += 2
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
            else:
                if not (ch.isascii() and ch.isalpha()):
                    raise RuntimeError(f"einsum(): invalid subscript given at index "
                                       f"{len(lhs) + 2 + i} in the equation string, subscripts "
                                       f"must be in [a-zA-Z]")
                s = _subscript(ch)
                if not (label_count[s] > 0 and perm_of[s] == -1):
                    why = ("appears more than once in the output" if perm_of[s] > -1
                           else "does not appear in the equation for any input operand")
                    raise RuntimeError(f"einsum(): output subscript {ch} {why}")
                perm_of[s] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for s in range(_TOTAL):
        if label_count[s] > 0 and perm_of[s] == -1:
            perm_of[s] = perm_index
            perm_index += 1

    label_size = [1] * _TOTAL
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops = []
    for i, operand in enumerate(operands):
        op = operand
        permutation = [-1] * perm_index
        dim = 0
        for s in op_labels[i]:
            if s == _ELLIPSIS:
                ndim = operand.dim() - (len(op_labels[i]) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    size = op.shape[dim]
                    if size != 1:
                        if ell_sizes[j] not in (1, size):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}"
                                f"has size {size} which does not broadcast with previously "
                                f"seen ellipsis with size {ell_sizes[j]} for the respective "
                                f"dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[perm_of[s]] == -1:
                size = op.shape[dim]
                if size != 1:
                    if label_size[s] not in (1, size):
                        raise RuntimeError(
                            f"einsum(): subscript {_label(s)} has size {size} for operand {i} "
                            f"which does not broadcast with previously seen size "
                            f"{label_size[s]}")
                    label_size[s] = size
                    dim_counts[perm_of[s]] += 1
                permutation[perm_of[s]] = dim
                dim += 1
            else:  # a repeated label: its diagonal
                prev = permutation[perm_of[s]]
                if op.shape[dim] != op.shape[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {_label(s)} is repeated for operand {i} but the "
                        f"sizes don't match, {op.shape[dim]} != {op.shape[prev]}")
                op = op.diagonal(0, prev, dim).movedim(-1, prev)
        for k, val in enumerate(permutation):
            if val == -1:
                op = op.unsqueeze(dim)
                permutation[k] = dim
                dim += 1
        ops.append(op.permute(*permutation))

    steps = list(path) if path is not None else []
    while len(ops) > 1:
        i, j = 0, 1
        if path is not None:
            i, j = steps.pop(0), steps.pop(0)
            if j < i:
                i, j = j, i
            if i == j or i < 0 or j >= len(ops):
                why = ("cannot contract an operand with itself" if i == j
                       else "operand index is out of bounds")
                raise RuntimeError(f"einsum(): invalid contraction ({i}, {j}) {why}")
        a, b = ops[i], ops[j]
        del ops[j]
        del ops[i]
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_num_dim, perm_index):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = a.sum(a_sum, True)
        if b_sum:
            b = b.sum(b_sum, True)
        pair = _pair(a, b, sum_dims)
        if path is not None:
            ops.append(pair)
        else:
            ops.insert(0, pair)

    result = ops[0]
    if perm_index - out_num_dim > 0:
        if num_ops > 1:
            sizes = list(result.shape)[:out_num_dim]
            return result.view(*sizes)
        return result.sum(list(range(out_num_dim, perm_index)))
    return result


def _from_sublists(args) -> tuple:
    """einsum(op1, sublist1, op2, sublist2, ..., [out_sublist]): the equation they spell."""
    def letters(sub) -> str:
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, int) and 0 <= s < _TOTAL:
                out.append(_label(s))
            else:
                raise ValueError(f"einsum(): subscript in subscript list is not within the "
                                 f"valid range [0, {_TOTAL})")
        return "".join(out)

    operands = list(args[0::2][: len(args) // 2])
    subs = [letters(s) for s in args[1::2][: len(args) // 2]]
    equation = ",".join(subs)
    if len(args) % 2:
        equation += "->" + letters(args[-1])
    return equation, operands


@public("torch.einsum")
def einsum(*args, path=None) -> Tensor:
    """torch.einsum(equation, *operands) / (equation, [operands]) / the sublist form."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation, operands = _from_sublists(args)
    else:
        equation = args[0]
        operands = args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = operands[0]
    operands = list(operands)
    for op in operands:
        if not isinstance(op, Tensor):
            raise TypeError(f"einsum(): argument 'tensors' (position 2) must be tuple of "
                            f"Tensors, not {type(op).__name__}")
    return _einsum(equation, operands, path)
