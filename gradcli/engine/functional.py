"""torch.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) and
torch.autograd.gradcheck, built on the engine's `grad`."""

from __future__ import annotations

import warnings

import numpy as np

from .autograd import grad
from .grad_mode import GRAD_ENABLED, enable_grad
from .tensor import Tensor, make


def _as_tuple(x):
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _prepare(inputs, create_graph: bool) -> tuple:
    """Inputs the function is differentiated at: fresh leaves (or views, to keep a graph)."""
    out = []
    for t in inputs:
        if create_graph and t._requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(True))
    return tuple(out)


def _finish(x, create_graph: bool):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return x if create_graph else x.detach()
    return tuple(_finish(v, create_graph) for v in x)


def _fill_none(grads, inputs):
    return tuple(make(np.zeros_like(i._data)) if g is None else g for g, i in zip(grads, inputs, strict=False))


def _outputs_of(func, inputs: tuple, strict: bool):
    """func(*inputs) as a tuple, and whether it returned one Tensor (call with grad on)."""
    outputs = func(*inputs)
    single_output = isinstance(outputs, Tensor)
    outputs = _as_tuple(outputs)
    if strict:
        _strict_outputs(outputs)
    return outputs, single_output


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    single_input = isinstance(inputs, Tensor)
    inputs = _prepare(_as_tuple(inputs), create_graph)
    with enable_grad():
        outputs, single_output = _outputs_of(func, inputs, strict)
        per_output = []
        for out in outputs:
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(flat._data.size):
                if flat._requires_grad:
                    gs = grad(flat[k], inputs, retain_graph=True, create_graph=create_graph, allow_unused=True)
                else:
                    gs = (None,) * len(inputs)
                gs = _fill_none(gs, inputs)
                for j, g in enumerate(gs):
                    rows[j].append(g)
            blocks = []
            for j, inp in enumerate(inputs):
                if rows[j]:
                    from .ops.shape import stack

                    block = stack(rows[j], 0).reshape(out._data.shape + inp._data.shape)
                else:
                    block = make(np.zeros(out._data.shape + inp._data.shape, dtype=inp._data.dtype))
                blocks.append(_finish(block, create_graph))
            per_output.append(blocks[0] if single_input else tuple(blocks))
    return per_output[0] if single_output else tuple(per_output)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    single_input = isinstance(inputs, Tensor)
    ins = _as_tuple(inputs)

    def scalar_check(*args):
        out = func(*args)
        if not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out._data.size != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze() if out._data.ndim else out

    def jac(*args):
        j = jacobian(scalar_check, args, create_graph=True)
        return j

    result = jacobian(jac, ins, create_graph=create_graph)
    if single_input:
        return result[0][0]
    return result


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    single_input = isinstance(inputs, Tensor)
    inputs = _prepare(_as_tuple(inputs), create_graph)
    with enable_grad():
        outs, single_output = _outputs_of(func, inputs, strict)
        if v is None:
            if len(outs) != 1 or outs[0]._data.size != 1:
                raise RuntimeError(
                    "The vector v can only be None if the user-provided function returns a single "
                    "Tensor with a single element.")
            vs = None
        else:
            vs = _as_tuple(v)
        diff = [o for o in outs if o._requires_grad]
        if diff:
            gs = grad(diff, inputs, None if vs is None else [vv for o, vv in zip(outs, vs, strict=False) if o._requires_grad],
                      create_graph=create_graph, allow_unused=True)
        else:
            gs = (None,) * len(inputs)
        gs = _fill_none(gs, inputs)
    out = _finish(outs[0] if single_output else outs, create_graph)
    res = _finish(gs[0] if single_input else gs, create_graph)
    return out, res


def _input_vector(inputs, v) -> tuple:
    """The v of jvp/hvp: given, or ones when the only input has one element (as torch)."""
    if v is not None:
        return _as_tuple(v)
    if len(inputs) != 1 or inputs[0]._data.size != 1:
        raise RuntimeError(
            "The vector v can only be None if the input to the user-provided function is a "
            "single Tensor with a single element.")
    return (make(np.ones_like(inputs[0]._data)),)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Forward-mode product through the double-backward trick, as torch's reference does."""
    single_input = isinstance(inputs, Tensor)
    inputs = _prepare(_as_tuple(inputs), create_graph)
    with enable_grad():
        outs, single_output = _outputs_of(func, inputs, strict)
        vs = _input_vector(inputs, v)
        dummies = tuple(make(np.zeros_like(o._data)).requires_grad_(True) for o in outs)
        results = []
        diff_outs = [(o, d) for o, d in zip(outs, dummies, strict=False) if o._requires_grad]
        if diff_outs:
            gs = grad([o for o, _ in diff_outs], inputs, [d for _, d in diff_outs],
                      create_graph=True, allow_unused=True)
            pairs = [(g, vv) for g, vv in zip(gs, vs, strict=False) if g is not None and g._requires_grad]
            if pairs:
                back = grad([g for g, _ in pairs], dummies, [vv for _, vv in pairs],
                            create_graph=create_graph, allow_unused=True)
            else:
                back = (None,) * len(dummies)
        else:
            back = (None,) * len(dummies)
        for b, o in zip(back, outs, strict=False):
            results.append(make(np.zeros_like(o._data)) if b is None else b)
    out = _finish(outs[0] if single_output else outs, create_graph)
    res = _finish(results[0] if single_output else tuple(results), create_graph)
    del single_input
    return out, res


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    single_input = isinstance(inputs, Tensor)
    inputs = _prepare(_as_tuple(inputs), create_graph)
    with enable_grad():
        out = func(*inputs)
        if not isinstance(out, Tensor) or out._data.size != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hvp should contain a single element")
        vs = _input_vector(inputs, v)
        jac = grad(out, inputs, create_graph=True, allow_unused=True)
        pairs = [(j, vv) for j, vv in zip(jac, vs, strict=False) if j is not None and j._requires_grad]
        if pairs:
            hv = grad([j for j, _ in pairs], inputs, [vv for _, vv in pairs],
                      create_graph=create_graph, allow_unused=True)
        else:
            hv = (None,) * len(inputs)
        hv = _fill_none(hv, inputs)
    return _finish(out, create_graph), _finish(hv[0] if single_input else hv, create_graph)


vhp = hvp


# ------------------------------------------------------------------ gradcheck

class GradcheckError(RuntimeError):
    """What gradcheck raises on a mismatch (a RuntimeError, as in PyTorch)."""


def _strict_outputs(outputs) -> None:
    for i, out in enumerate(outputs):
        if not out._requires_grad:
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The outputs "
                "must be computed in a differentiable manner from the input when running in strict "
                "mode.")


def _numerical_jacobian(func, inputs, eps):
    """Central differences, one column per input element, for every output."""
    from .grad_mode import no_grad

    columns = []
    with no_grad():
        for inp in inputs:
            if not (isinstance(inp, Tensor) and inp._requires_grad):
                columns.append(None)
                continue
            flat = inp._data.reshape(-1)
            cols = []
            for k in range(flat.size):
                orig = flat[k]
                flat[k] = orig + eps
                plus = [o._data.astype(np.float64).reshape(-1).copy() for o in _as_tuple(func(*inputs))]
                flat[k] = orig - eps
                minus = [o._data.astype(np.float64).reshape(-1).copy() for o in _as_tuple(func(*inputs))]
                flat[k] = orig
                cols.append([(p - m) / (2 * eps) for p, m in zip(plus, minus, strict=False)])
            columns.append(cols)
    return columns


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Compare analytical gradients with finite differences (PyTorch's message on mismatch)."""
    inputs = _as_tuple(inputs)
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t._requires_grad and t._data.dtype != np.float64:
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double precision "
                "floating point or complex. ", UserWarning, stacklevel=2)
    if not any(isinstance(t, Tensor) and t._requires_grad for t in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have requires_grad=True.")
    prev = GRAD_ENABLED[0]
    GRAD_ENABLED[0] = True
    try:
        outputs = _as_tuple(func(*inputs))
        numerical = _numerical_jacobian(func, inputs, eps)
        for oi, out in enumerate(outputs):
            n_out = out._data.size
            for ii, inp in enumerate(inputs):
                if numerical[ii] is None:
                    continue
                n_in = inp._data.size
                num = np.zeros((n_in, n_out))
                for k in range(n_in):
                    num[k] = numerical[ii][k][oi]
                ana = np.zeros((n_in, n_out))
                if out._requires_grad:
                    flat = out.reshape(-1)
                    for j in range(n_out):
                        g = grad(flat[j], (inp,), retain_graph=True, allow_unused=True)[0]
                        if g is not None:
                            ana[:, j] = g._data.astype(np.float64).reshape(-1)
                if not np.allclose(ana, num, rtol=rtol, atol=atol):
                    if not raise_exception:
                        return False
                    from .formatting import tensor_repr

                    raise GradcheckError(
                        f"Jacobian mismatch for output {oi} with respect to input {ii},\n"
                        f"numerical:{tensor_repr(num)}\nanalytical:{tensor_repr(ana)}\n")
    finally:
        GRAD_ENABLED[0] = prev
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True, **kwargs):
    """Second order: gradcheck the function that returns the first-order gradients."""
    inputs = _as_tuple(inputs)
    outputs = _as_tuple(func(*inputs))
    if grad_outputs is None:
        from .ops.creation import randn

        grad_outputs = tuple(randn(o._data.shape, dtype=o.dtype).requires_grad_(True) for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    diff_inputs = [i for i in inputs if isinstance(i, Tensor) and i._requires_grad]

    def first_order(*args):
        ins, gos = args[:len(inputs)], args[len(inputs):]
        with enable_grad():
            outs = _as_tuple(func(*ins))
            dins = [i for i in ins if isinstance(i, Tensor) and i._requires_grad]
            diff = [(o, g) for o, g in zip(outs, gos, strict=False) if o._requires_grad]
            if not diff:
                return tuple(make(np.zeros_like(d._data)) for d in dins)
            gs = grad([o for o, _ in diff], dins, [g for _, g in diff], create_graph=True,
                      allow_unused=True)
        return tuple(g if g is not None else make(np.zeros_like(d._data)) for g, d in zip(gs, dins, strict=False))

    del diff_inputs
    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
