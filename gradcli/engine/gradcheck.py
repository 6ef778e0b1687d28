"""torch.autograd.gradcheck / gradgradcheck: analytical gradients against finite differences.

The checks and their order are PyTorch's slow mode (fast_mode=True runs the same full
comparison): inputs, the numerical Jacobian (central differences, perturbing each
input element in place; an output whose shape or dtype changes is an error), the
analytical Jacobian computed twice (a difference beyond nondet_tol means backward is
not reentrant), the comparison, then backward multiplied by a zero grad_output and
backward with undefined output gradients. Failures raise GradcheckError (a
RuntimeError) with PyTorch's texts, or return False with raise_exception=False.
"""

from __future__ import annotations

import warnings

import numpy as np

from .grad_mode import GRAD_MODE
from .node import Node
from .tensor import Tensor, make


class GradcheckError(RuntimeError):
    """What gradcheck raises on a failed check (a RuntimeError, as PyTorch's)."""


GradcheckError.__module__ = "torch.autograd.gradcheck"


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable(outputs) -> tuple:
    return tuple(o for o in _as_tuple(outputs) if isinstance(o, Tensor) and o.requires_grad)


def _diff_inputs(inputs) -> list:
    return [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]


def _check_inputs(inputs) -> None:
    found = False
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t.requires_grad:
            if t._data.dtype != np.float64:
                warnings.warn(
                    f"Input #{i} requires gradient and is not a double precision floating point "
                    "or complex. This check will likely fail if all the inputs are not of double "
                    "precision floating point or complex. ", UserWarning,
                    stacklevel=1)  # (PyTorch's points at its own line too)
            if any(st == 0 and sz > 1 for st, sz in zip(t._data.strides, t._data.shape, strict=True)):
                raise RuntimeError(
                    f"The {i}th input has a dimension with stride 0. gradcheck only supports "
                    "inputs that are non-overlapping to be able to compute the numerical gradients "
                    "correctly. You should call .contiguous on the input before passing it to "
                    "gradcheck.")
            found = True
    if not found:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True.")


def _same_kind(a: Tensor, b: Tensor, eps: float, idx) -> None:
    from .size import Size

    if a._data.shape != b._data.shape:
        raise AssertionError(
            "Expected `func` to return outputs with the same shape when inputs are perturbed on "
            f"index {idx} by {eps}, but got: shapes {Size(a._data.shape)} and "
            f"{Size(b._data.shape)}.")
    if a._data.dtype != b._data.dtype:
        raise AssertionError(
            "Expected `func` to return outputs with the same dtype when inputs are perturbed on "
            f"index {idx} by {eps}, but got: dtypes {a.dtype} and {b.dtype}.")


def _snapshot(outputs) -> tuple:
    """Copies of the outputs (an output may share the perturbed input's storage)."""
    return tuple(make(o._data.copy()) if isinstance(o, Tensor) else o for o in _as_tuple(outputs))


def numerical_jacobians(func, inputs, outputs, eps, target=None) -> list:
    """[per input (or target) that requires grad][per float output] an (input numel,
    output numel) array of central differences, in the output's dtype."""
    result = []
    for inp in _diff_inputs(inputs if target is None else target):
        data = inp._data
        float_outs = [o for o in outputs if isinstance(o, Tensor) and o._data.dtype.kind in "fV"]
        jac = [np.zeros((data.size, o._data.size), dtype=o._data.dtype) for o in float_outs]
        for k, idx in enumerate(np.ndindex(data.shape)):
            orig = data[idx].copy()
            data[idx] = orig - eps
            before = _snapshot(func(*inputs))
            data[idx] = orig + eps
            after = _snapshot(func(*inputs))
            data[idx] = orig
            col = 0
            for a, b in zip(before, after, strict=False):
                if not isinstance(a, Tensor):
                    continue
                _same_kind(a, b, eps, idx)
                if a._data.dtype.kind not in "fV":
                    continue
                if col < len(jac):
                    diff = (b._data - a._data) / (2 * eps)
                    jac[col][k] = np.asarray(diff, dtype=jac[col].dtype).reshape(-1)
                col += 1
        result.append(jac)
    return result


def _analytical_rows(output: Tensor, diff_inputs: list) -> tuple:
    """The Jacobian of `output` by vector-Jacobian products (one per output element),
    per input an (input numel, output numel) array, and whether sizes and dtypes held."""
    from .autograd import grad

    n_out = output._data.size
    jacs = [np.zeros((t._data.size, n_out), dtype=t._data.dtype) for t in diff_inputs]
    sizes_ok = types_ok = True
    flat_dtype = output._data.dtype
    for j in range(n_out):
        go = np.zeros(n_out, dtype=flat_dtype)
        go[j] = 1
        grads = grad(output, diff_inputs, make(go.reshape(output._data.shape)), retain_graph=True,
                     allow_unused=True)
        for k, (g, t) in enumerate(zip(grads, diff_inputs, strict=True)):
            if g is None:
                continue
            if g._data.shape != t._data.shape:
                sizes_ok = False
                continue
            if g._data.dtype != t._data.dtype:
                types_ok = False
            jacs[k][:, j] = g._data.reshape(-1)
    return jacs, sizes_ok, types_ok


def _analytical(output: Tensor, diff_inputs: list, nondet_tol: float, check_grad_dtypes: bool):
    first, sizes_ok, types_ok = _analytical_rows(output, diff_inputs)
    second, _, _ = _analytical_rows(output, diff_inputs)
    reentrant = all(
        a.size == 0 or float(np.abs(a.astype(np.float64) - b).max()) <= nondet_tol
        for a, b in zip(first, second, strict=True))
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output "
            "multiple times gives different values, although analytical gradient matches "
            f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.\n\n"
            "NOTE: If your op relies on non-deterministic operations i.e., it is listed here:\n"
            "https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html\n"
            "this failure might be expected.\n\n"
            "If you are adding a new operator, please file an issue and then use one of the\n"
            "workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.\n"
            "If the test\n"
            "- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck\n"
            "  with `nondet_tol=<tol>` as a keyword argument.\n"
            "- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test\n"
            "  to have `gradcheck_nondet_tol=<tol>`.\n"
            "- is a Module test (e.g., in common_nn.py), then modify the corresponding\n"
            "  module_test entry to have `gradcheck_nondet_tol=<tol>`\n")
    return first


def _tensor_text(arr: np.ndarray) -> str:
    from .formatting import tensor_repr

    return tensor_repr(arr)


def _slow_check(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol):
    func_out = _as_tuple(func_out)
    if not outputs:
        for per_input in numerical_jacobians(func, inputs, func_out, eps):
            for jac in per_input:
                if np.count_nonzero(jac):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    numerical = numerical_jacobians(func, inputs, func_out, eps)
    float_outs = [o for o in func_out if isinstance(o, Tensor) and o._data.dtype.kind in "fV"]
    per_output = [[numerical[j][k] for j in range(len(numerical))]
                  for k, o in enumerate(float_outs) if o.requires_grad]
    diff_inputs = _diff_inputs(inputs)
    for i, o in enumerate(outputs):
        analytical = _analytical(o, diff_inputs, nondet_tol, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, per_output[i], strict=False)):
            if not np.allclose(a, n.astype(np.result_type(a, n)), rtol=rtol, atol=atol):
                raise GradcheckError(
                    f"Jacobian mismatch for output {i:d} with respect to input {j:d},\n"
                    f"numerical:{_tensor_text(n)}\nanalytical:{_tensor_text(a)}\n")
    return True


def _check_times_grad_output(outputs, inputs) -> None:
    from .autograd import grad

    diff_inputs = _diff_inputs(inputs)
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    zeros = [make(np.zeros_like(o._data)) for o in outputs]
    grads = grad(list(outputs), diff_inputs, zeros, allow_unused=True)
    for g, t in zip(grads, diff_inputs, strict=True):
        if g is None:
            continue
        if np.any(g._data != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if g._data.dtype != t._data.dtype:
            raise GradcheckError("grad is incorrect type")
        if g._data.shape != t._data.shape:
            raise GradcheckError("grad is incorrect size")


class _UndefinedGradOp:
    """The backward of UndefinedGrad: passes no gradient on (PyTorch's undefined grad)."""

    __slots__ = ()
    multi = True
    save_meta = False
    check_order = None
    rule = "sends an undefined gradient (gradcheck's undefined-gradient check)"

    def backward(self, node, grads):
        return [None]


class UndefinedGradBackward(Node):
    __slots__ = ()

    def name(self) -> str:
        return "UndefinedGradBackward"


def undefined_grad(t: Tensor) -> Tensor:
    """A tensor equal to t whose gradient reaches t undefined (None)."""
    from .ops.registry import edge_of

    node = UndefinedGradBackward(_UndefinedGradOp(), (edge_of(t),), None, None, None, None, None)
    return make(t._data, True, node)


def _bc_warning() -> None:
    warnings.warn(
        "Backwards compatibility: New undefined gradient support checking feature is enabled by "
        "default, but it may break existing callers of this function. If this is true for you, "
        'you can call this function with "check_undefined_grad=False" to disable the feature',
        UserWarning, stacklevel=5)


def _check_undefined_grads(func, outputs, inputs) -> None:
    from .autograd import grad

    diff_inputs = _diff_inputs(inputs)
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")

    def check(outs) -> None:
        zeros = [make(np.zeros_like(o._data)) for o in outs]
        try:
            grads = grad(outs, diff_inputs, zeros, allow_unused=True)
        except RuntimeError as err:
            _bc_warning()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
            ) from err
        for g in grads:
            if g is not None and np.any(g._data != 0):
                _bc_warning()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    'undefined or zero. Please look at "Notes about undefined output gradients" '
                    'in "tools/autograd/derivatives.yaml"')

    check([undefined_grad(o) for o in _differentiable(func(*inputs))])
    if len(outputs) > 1:
        for k in range(len(outputs)):
            outs = _differentiable(func(*inputs))
            check([undefined_grad(o) if i == k else o for i, o in enumerate(outs)])


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Check analytical gradients against finite differences (PyTorch's checks and texts)."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    func, inputs = _realified(func, inputs)
    try:
        return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                          check_grad_dtypes, check_backward_ad, check_forward_ad)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _realified(func, inputs):
    """Complex inputs and outputs as pairs of real numbers: z = x + iy checked as (x, y)
    (view_as_real), which is what PyTorch's convention makes z.grad (dL/dx + i dL/dy),
    so the real checks apply unchanged. Returns func and inputs as they are when nothing
    is complex."""
    inputs = _as_tuple(inputs)
    if not any(isinstance(x, Tensor) and x._data.dtype.kind == "c" for x in inputs):
        probe = None
    else:
        probe = True
    from .ops.registry import PUBLIC

    as_real, as_complex = PUBLIC["torch.view_as_real"], PUBLIC["torch.view_as_complex"]

    def real_of(out):
        if isinstance(out, Tensor) and out._data.dtype.kind == "c":
            return as_real(PUBLIC["torch.resolve_conj"](out))
        if isinstance(out, (tuple, list)):
            return type(out)(real_of(o) for o in out)
        return out

    if probe is None:  # real inputs: only outputs may be complex (polar, complex)
        def real_func(*args):
            return real_of(func(*args))
        return real_func, inputs
    flat = []
    for x in inputs:
        if isinstance(x, Tensor) and x._data.dtype.kind == "c":
            r = make(np.ascontiguousarray(as_real(x.detach())._data))
            r._requires_grad = x.requires_grad
            flat.append(("c", r))
        else:
            flat.append(("r", x))

    def complex_func(*args):
        back = [as_complex(a) if kind == "c" else a for (kind, _), a in zip(flat, args, strict=True)]
        return real_of(func(*back))

    return complex_func, tuple(x for _, x in flat)


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
               check_backward_ad, check_forward_ad=False):
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    prev = GRAD_MODE.enabled
    GRAD_MODE.enabled = True  # (as torch.autograd.grad needs; the caller's mode comes back)
    try:
        func_out = func(*inputs)
        outputs = _differentiable(func_out)
        if check_backward_ad:
            _slow_check(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                        nondet_tol)
        if check_forward_ad:
            check_forward_jacobian(func, func_out, inputs, outputs, eps, rtol, atol)
        if not check_backward_ad:
            return True
        _check_times_grad_output(outputs, inputs)
        if check_undefined_grad:
            _check_undefined_grads(func, outputs, inputs)
    finally:
        GRAD_MODE.enabled = prev
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the function that returns func's first-order gradients."""
    from .autograd import grad

    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        from . import dtypes
        from .ops.creation import rand

        outs = _differentiable(func(*inputs))
        grad_outputs = tuple(  # uniform in [-1, 1) from the program's generator
            make(np.asarray(rand(o._data.shape, dtype=o.dtype if o._data.dtype.kind in "fcV"
                                 else dtypes.float64)._data * 2 - 1)).requires_grad_(True)
            for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_in = {i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad}
    diff_go = {i for i, t in enumerate(grad_outputs) if t.requires_grad}

    def first_order(*args):
        ins = tuple(t.requires_grad_() if i in diff_in else t for i, t in enumerate(args[:-n_out]))
        outs = _differentiable(func(*ins))
        gos = tuple(t.requires_grad_() if i in diff_go else t for i, t in enumerate(args[-n_out:]))
        dins = tuple(t for i, t in enumerate(ins) if i in diff_in)
        grads = grad(outs, dins, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode)


def get_numerical_jacobian(fn, inputs, target=None, eps=1e-3, grad_out=1.0):
    """Deprecated PyTorch API: the numerical Jacobians of fn's first output, one per input."""
    warnings.warn(
        "`get_numerical_jacobian` was part of PyTorch's private API and not meant to be exposed. "
        "We are deprecating it and it will be removed in a future version of PyTorch. If you have "
        "a specific use for this or feature request for this to be a stable API, please file us "
        "an issue at https://github.com/pytorch/pytorch/issues/new", FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError(
            "Expected grad_out to be 1.0. get_numerical_jacobian no longer supports values of "
            "grad_out != 1.0.")
    inputs = _as_tuple(inputs)

    def packed(*args):
        return fn(args)

    outputs = _as_tuple(packed(*inputs))
    target = None if target is None else _as_tuple(target)
    return tuple(make(per_input[0])
                 for per_input in numerical_jacobians(packed, inputs, outputs, eps, target))


def get_analytical_jacobian(inputs, output, nondet_tol=0.0, grad_out=1.0):
    """Deprecated PyTorch API: (jacobians, reentrant, sizes_ok, types_ok)."""
    warnings.warn(
        "`get_analytical_jacobian` was part of PyTorch's private API and not meant to be exposed. "
        "We are deprecating it and it will be removed in a future version of PyTorch. If you have "
        "a specific use for this or feature request for this to be a stable API, please file us "
        "an issue at https://github.com/pytorch/pytorch/issues/new", FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError(
            "Expected grad_out to be 1.0. get_analytical_jacobian no longer supports values of "
            "grad_out != 1.0.")
    diff_inputs = _diff_inputs(_as_tuple(inputs))
    first, sizes_ok, types_ok = _analytical_rows(output, diff_inputs)
    second, _, _ = _analytical_rows(output, diff_inputs)
    reentrant = all(a.size == 0 or float(np.abs(a - b).max()) <= nondet_tol
                    for a, b in zip(first, second, strict=True))
    return tuple(make(j) for j in first), reentrant, sizes_ok, types_ok


def forward_jacobians(func, inputs, outputs) -> list:
    """[per input that requires grad][per float output] an (input numel, output numel)
    array: column k of the Jacobian is the tangent of the output when input element k's
    tangent is 1 and every other is 0."""
    from . import forward_ad  # (loaded when forward AD is first used, not with gradcheck)

    float_outs = [o for o in outputs if isinstance(o, Tensor) and o._data.dtype.kind in "fcV"]
    with forward_ad.dual_level():
        tangents, duals = [], []
        for inp in inputs:
            if isinstance(inp, Tensor) and inp.requires_grad:
                t = make(np.zeros_like(inp._data))
                inp = forward_ad.make_dual(inp.detach(), t)
                tangents.append(t)
            duals.append(inp)
        result = []
        for t in tangents:
            flat = t._data.reshape(-1)  # (a contiguous array of zeros: a view of it)
            jac = [np.zeros((flat.size, o._data.size), dtype=o._data.dtype) for o in float_outs]
            for k in range(flat.size):
                flat[k] = 1
                outs = [o for o in _as_tuple(func(*duals))
                        if isinstance(o, Tensor) and o._data.dtype.kind in "fcV"]
                for col, o in enumerate(outs[:len(jac)]):
                    tangent = forward_ad.tangent_of(o)
                    if tangent is not None:
                        jac[col][k] = np.asarray(tangent._data, dtype=jac[col].dtype).reshape(-1)
                flat[k] = 0
            result.append(jac)
    return result


def check_forward_jacobian(func, func_out, inputs, outputs, eps, rtol, atol) -> None:
    """gradcheck(..., check_forward_ad=True), PyTorch's slow mode: the Jacobian by
    forward-mode AD (one dual pass per input element) against the central differences;
    raise GradcheckError on a mismatch."""
    func_out = _as_tuple(func_out)
    if not outputs:
        _slow_check(func, func_out, inputs, outputs, eps, rtol, atol, False, 0.0)
        return
    numerical = numerical_jacobians(func, inputs, func_out, eps)
    float_outs = [o for o in func_out if isinstance(o, Tensor) and o._data.dtype.kind in "fV"]
    kept = [k for k, o in enumerate(float_outs) if o.requires_grad]
    analytical = forward_jacobians(func, inputs, func_out)
    for i, k in enumerate(kept):
        for j, per_output in enumerate(numerical):
            n = per_output[k]
            a = analytical[j][k]
            if not np.allclose(a, n.astype(np.result_type(a, n)), rtol=rtol, atol=atol):
                raise GradcheckError(
                    f"Jacobian computed with forward mode mismatch for output {i:d} with respect "
                    f"to input {j:d},\nnumerical:{_tensor_text(n)}\nanalytical:{_tensor_text(a)}\n")
