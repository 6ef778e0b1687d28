"""torch.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) and
torch.autograd.gradcheck, built on the engine's `grad`."""

from __future__ import annotations

import numpy as np

from .autograd import grad
from .grad_mode import GRAD_MODE, enable_grad, set_grad_enabled
from .tensor import Tensor, make


def _construct_standard_basis_for(tensors, tensor_numels) -> tuple:
    """The identity matrix of size sum(tensor_numels), cut column-wise into one block per
    tensor and cast to that tensor's dtype: the grad_outputs a batched jacobian feeds to
    every output at once (torch exposes it under this private name; its tests call it)."""
    total = sum(tensor_numels)
    eye = np.eye(total)
    blocks, start = [], 0
    for t, n in zip(tensors, tensor_numels):
        blocks.append(make(np.ascontiguousarray(eye[:, start:start + n]).astype(t._data.dtype)))
        start += n
    return tuple(blocks)


def _as_tuple(x):
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _tensors(value, what: str, fn: str):
    """(was it a tuple, the tuple of Tensors), with torch's TypeError for anything else."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {what}"
            raise TypeError(
                f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but the "
                f"{where} has type {type(el)}.")
    return is_tuple, items


def _prepare(inputs, create_graph: bool, need_graph: bool = True) -> tuple:
    """Fresh tensors the function is differentiated at: a view keeps the caller's graph
    (create_graph), else a detached leaf. Always a new object, so a tensor the function
    captures by closure is not mistaken for its argument."""
    out = []
    for t in inputs:
        if create_graph and t._requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(x, create_graph: bool):
    """Results without history unless the caller asked for a graph (create_graph)."""
    if x is None:
        return None
    if isinstance(x, Tensor):
        return x if create_graph else x.detach()
    return tuple(_finish(v, create_graph) for v in x)


def _unpack(res, is_tuple):
    return res if is_tuple else res[0]


def _check_v(v, other, other_is_tuple: bool) -> None:
    if len(other) != len(v):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other, strict=True)):
        if a._data.shape != b._data.shape:
            from .size import Size

            pre = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(
                f"{pre}v has invalid size: should be {Size(b._data.shape)} but got {Size(a._data.shape)}.")


def _strict_check(items, kind: str, strict: bool) -> None:
    """strict=True: every output / gradient must depend on the inputs (torch's texts)."""
    if not strict:
        return
    for i, t in enumerate(items):
        if t is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This is "
                "not allowed in strict mode.")
        if t._requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is thrice differentiable and that the hessian depends on the "
                "inputs.")
        if kind == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided function "
                f"with respect to input {i} is independent of the input. This is not allowed in "
                "strict mode. You should ensure that your function is twice differentiable and that "
                "the jacobian depends on the inputs (this would be violated by a linear function for "
                "example).")
        if kind == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The outputs "
            "must be computed in a differentiable manner from the input when running in strict "
            "mode.")


def _grad_of(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad only (None for every input when
    none does), unused inputs giving None."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    outs, gos = [], []
    for o, g in zip(outputs, grad_outputs, strict=True):
        if o is not None and o._requires_grad:
            outs.append(o)
            gos.append(g)
    if not outs:
        return (None,) * len(inputs)
    return grad(outs, inputs, gos, retain_graph=retain_graph, create_graph=create_graph,
                allow_unused=True)


_STAGE_NONE = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This "
                   "is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in "
                         "the grad_jacobian. This is not allowed in strict mode as it prevents from "
                         "using the double backward trick to replace forward mode AD.",
}


def _zeros_for_none(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STAGE_NONE[stage].format(i=i))
            g = make(np.zeros_like(refs[i]._data))
        elif strict and create_graph and not g._requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This is "
                "not allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _second_mode(create_graph: bool) -> bool:
    """Grad mode of the final backward: on for create_graph, else the caller's."""
    return True if create_graph else GRAD_MODE.enabled


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        ins_tuple, inputs = _tensors(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph)
        outs_tuple, outputs = _tensors(func(*inputs), "outputs of the user-provided function", "vjp")
        _strict_check(outputs, "outputs", strict)
        if v is not None:
            v = _prepare(_tensors(v, "v", "vjp")[1], create_graph, need_graph=False)
            _check_v(v, outputs, outs_tuple)
        elif len(outputs) != 1 or outputs[0]._data.size != 1:
            raise RuntimeError(
                "The vector v can only be None if the user-provided function returns a single "
                "Tensor with a single element.")
    with set_grad_enabled(_second_mode(create_graph)):
        res = _grad_of(outputs, inputs, v, create_graph=create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), outs_tuple),
            _unpack(_finish(res, create_graph), ins_tuple))


def _v_or_ones(v, inputs, ins_tuple, create_graph, fn):
    if v is not None:
        v = _prepare(_tensors(v, "v", fn)[1], create_graph, need_graph=False)
        _check_v(v, inputs, ins_tuple)
        return v
    if len(inputs) != 1 or inputs[0]._data.size != 1:
        raise RuntimeError(
            "The vector v can only be None if the input to the user-provided function is a "
            "single Tensor with a single element.")
    return None


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Forward-mode product through the double-backward trick, as torch's reference does."""
    with enable_grad():
        ins_tuple, inputs = _tensors(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph)
        v = _v_or_ones(v, inputs, ins_tuple, create_graph, "jvp")
        outs_tuple, outputs = _tensors(func(*inputs), "outputs of the user-provided function", "jvp")
        _strict_check(outputs, "outputs", strict)
        # backward is linear in grad_outputs: their value never reaches the result
        dummies = tuple(make(np.zeros_like(o._data)).requires_grad_(True) for o in outputs)
        grad_inputs = _grad_of(outputs, inputs, dummies, create_graph=True)
        _strict_check(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(_second_mode(create_graph)):
        res = _grad_of(grad_inputs, dummies, v, create_graph=create_graph)
        res = _zeros_for_none(res, outputs, strict, create_graph, "back_trick")
    return (_unpack(_finish(outputs, create_graph), outs_tuple),
            _unpack(_finish(res, create_graph), outs_tuple))


def _jacobian_forward_mode(func, inputs):
    """jacobian(strategy="forward-mode"): a column per input element, each one forward-AD
    pass with a one-hot tangent (zeros for the other inputs), as PyTorch's vmapped jvp
    computes it (the zeros' signs are forward AD's, not the backward's: 0 where reverse
    mode gives -0). The inputs are not detached, as PyTorch's are not: where a tangent
    formula reads a primal that requires grad, the Jacobian has a graph (ending in the
    reshape of the split, permuted columns: ReshapeAliasBackward0 for a vector input). PyTorch assembles the result in lists: a tuple of inputs gets a list
    per output back, a list of lists when the outputs are a tuple too."""
    from .forward_ad import dual_level, make_dual, unpack_dual
    from .ops.shape import stack

    ins_tuple, inputs = _tensors(inputs, "inputs", "jacobian")
    numels = [t._data.size for t in inputs]
    columns, outs_tuple, primals = [], False, ()
    for k in range(sum(numels)):
        tangents, start = [], 0
        for t, n in zip(inputs, numels, strict=True):
            basis = np.zeros(n, dtype=t._data.dtype)
            if start <= k < start + n:
                basis[k - start] = 1
            start += n
            tangents.append(make(basis.reshape(t._data.shape)))
        with dual_level():
            duals = tuple(make_dual(t, v) for t, v in zip(inputs, tangents, strict=True))
            outs_tuple, outputs = _tensors(func(*duals), "outputs of the user-provided function",
                                           "jacobian")
            unpacked = [unpack_dual(o) for o in outputs]
        primals = tuple(u.primal for u in unpacked)
        columns.append([u.tangent if u.tangent is not None else make(np.zeros_like(u.primal._data))
                        for u in unpacked])
    result = []
    for i, out in enumerate(primals):
        # (all columns of output i: PyTorch's vmapped result, split per input)
        parts = stack([col[i] for col in columns], 0).split(numels, 0)
        result.append([part.permute(*range(1, part.dim()), 0).reshape(
            out._data.shape + t._data.shape) for part, t in zip(parts, inputs, strict=True)])
    if not ins_tuple:
        result = tuple(blocks[0] for blocks in result)
    return result if outs_tuple else result[0]


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`strict=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian "
                "isonly implemented for `vectorize=True`.")
        return _jacobian_forward_mode(func, inputs)
    with enable_grad():
        ins_tuple, inputs = _tensors(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph)
        outs_tuple, outputs = _tensors(func(*inputs), "outputs of the user-provided function",
                                       "jacobian")
        _strict_check(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                "supported together. Please either set `strict=False` or `vectorize=False`.")
        from .ops.shape import stack

        per_output = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(out._data.size):
                gs = _grad_of((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, inp) in enumerate(zip(gs, inputs, strict=True)):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {j}. This is not allowed in strict mode.")
                        g = make(np.zeros_like(inp._data))
                    elif strict and create_graph and not g._requires_grad:
                        raise RuntimeError(
                            "The jacobian of the user-provided function is independent of "
                            f"input {i}. This is not allowed in strict mode when create_graph=True.")
                    rows[j].append(g)
            blocks = []
            for j, inp in enumerate(inputs):
                shape = out._data.shape + inp._data.shape
                if rows[j]:
                    blocks.append(stack(rows[j], 0).view(shape))
                else:
                    blocks.append(make(np.zeros(shape, dtype=inp._data.dtype)))
            per_output.append(_unpack(_finish(tuple(blocks), create_graph), ins_tuple))
    return _unpack(tuple(per_output), outs_tuple)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    ins_tuple, inputs = _tensors(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*args):
        out = func(*args)
        out_tuple, outs = _tensors(out, "outputs of the user-provided function", "hessian")
        _strict_check(outs, "outputs", strict)
        if out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out._data.size != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac(*args):
        if outer_jacobian_strategy == "forward-mode":
            args = tuple(t.requires_grad_(True) for t in args)
        j = jacobian(single_output, args, create_graph=True)
        _strict_check(j, "jacobian", strict)
        return j

    res = jacobian(jac, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return res if ins_tuple else res[0][0]


def _hessian_products(func, inputs, v, create_graph, strict, fn):
    """The common part of vhp and hvp: inputs, v, outputs and the first gradients."""
    ins_tuple, inputs = _tensors(inputs, "inputs", fn)
    inputs = _prepare(inputs, create_graph)
    v = _v_or_ones(v, inputs, ins_tuple, create_graph, fn)
    outs_tuple, outputs = _tensors(func(*inputs), "outputs of the user-provided function", fn)
    _strict_check(outputs, "outputs", strict)
    if outs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outputs[0]._data.size != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn} should contain a single element")
    jac = _grad_of(outputs, inputs, create_graph=True)
    _strict_check(jac, "jacobian", strict)
    return ins_tuple, inputs, v, outs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        ins_tuple, inputs, v, outs_tuple, outputs, jac = _hessian_products(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(_second_mode(create_graph)):
        res = _grad_of(jac, inputs, v, create_graph=create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "double_back")
    return (_unpack(_finish(outputs, create_graph), outs_tuple),
            _unpack(_finish(res, create_graph), ins_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """H v by the double-backward trick (v^T H, then backward through it again)."""
    with enable_grad():
        ins_tuple, inputs, v, outs_tuple, outputs, jac = _hessian_products(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(make(np.zeros_like(t._data)).requires_grad_(True) for t in inputs)
        double_back = _grad_of(jac, inputs, grad_jac, create_graph=True)
        _strict_check(jac, "hessian", strict)
    with set_grad_enabled(_second_mode(create_graph)):
        res = _grad_of(double_back, grad_jac, v, create_graph=create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "double_back_trick")
    return (_unpack(_finish(outputs, create_graph), outs_tuple),
            _unpack(_finish(res, create_graph), ins_tuple))


# gradcheck lives in its own module; imported here for the old import path
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402, F401
