"""More of issue #23's torch.* names: fix, detach / detach_copy, adjoint, torch.as_strided_,
empty_permuted, native_dropout, the sparse-only smm / native_norm (refused on strided
tensors as PyTorch's CPU backend refuses them), Tensor.resize_as, torch.cond and
torch.while_loop (eager semantics).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..tensor import Tensor, make
from ..warn_site import warn_at_caller
from .registry import PUBLIC, defop, no_derivative, public, run_op
from .tensor_extras import _resize_function


@public("torch.fix")
def fix(input: Tensor, *, out=None) -> Tensor:
    """Alias of torch.trunc (rounds toward zero; TruncBackward0)."""
    return PUBLIC["torch.trunc"](input, out=out) if out is not None else input.trunc()


@public("torch.detach")
def detach(input: Tensor) -> Tensor:
    """torch.detach: Tensor.detach as a function (a view that shares the data)."""
    return input.detach()


def _detach_copy_forward(x):
    return x.copy()




DETACH_COPY = defop("detach_copy", "NotImplemented", _detach_copy_forward,
                    no_derivative("detach_copy"),
                    "PyTorch declares no derivative for detach_copy (backward raises)")


@public("torch.detach_copy")
def detach_copy(input: Tensor, *, out=None) -> Tensor:
    """A copy of the data, the *_copy form of detach. PyTorch's autograd does not know it:
    from an input that requires grad its result records a NotImplemented node."""
    if not isinstance(input, Tensor):
        raise TypeError(f"detach_copy(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    result = run_op(DETACH_COPY, (input,))
    if out is not None:
        out.resize_(result.shape).copy_(result.detach())
        return out
    return result


@public("torch.adjoint", "Tensor.adjoint")
def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (for real tensors, the transpose view)."""
    if input.dim() < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.dim()}-D tensor.")
    return input.transpose(-2, -1)


@public("torch.as_strided_")
def as_strided_(input: Tensor, size, stride, storage_offset=None) -> Tensor:
    """Tensor.as_strided_ as a function."""
    return input.as_strided_(size, stride, storage_offset)


@public("torch.empty_permuted")
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False) -> Tensor:
    """An uninitialized (here: zero) dense tensor of `size` whose dims lie in memory in the
    order `physical_layout` lists them, outermost first."""
    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    seen = set()
    for d in order:
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    dtype = dtype or dtypes.get_default_dtype()
    inverse = np.argsort(np.asarray(order, dtype=np.int64)) if order else ()
    base = PUBLIC["torch.zeros"]([size[d] for d in order], dtype=dtype)
    result = make(base._data.transpose(tuple(int(i) for i in inverse)))
    if requires_grad:
        result._requires_grad_(True)
    return result


# ------------------------------------------------------------------ native_dropout


def _native_dropout_forward(x, keep, scale, grad_scale):
    return (x * keep) * np.asarray(scale, x.dtype)


def _native_dropout_backward(ctx, grad):
    keep, _, grad_scale = ctx.meta
    return (PUBLIC["aten.native_dropout_backward"](grad, make(keep), grad_scale),)


NATIVE_DROPOUT = defop("native_dropout", "NativeDropoutBackward0", _native_dropout_forward,
                       _native_dropout_backward,
                       "d/dx = mask * scale (1 / (1 - p) when train=True, else 1)",
                       save="meta")


@public("torch.native_dropout")
def native_dropout(input: Tensor, p: float, train) -> tuple:
    """ATen's dropout: (output, the bool mask of kept elements). The mask is drawn as
    F.dropout draws its noise (bernoulli_(1 - p)), so both agree after manual_seed; outside
    training (train=False) the output is a copy and the mask all True."""
    if input.numel() == 0:
        return input, PUBLIC["torch.empty_like"](input)
    if train is None or train:
        keep_p = 1.0 - p
        scale = 0.0 if keep_p == 0 else 1.0 / keep_p
        noise = PUBLIC["torch.empty"](tuple(input.shape), dtype=dtypes.float32)
        noise.bernoulli_(keep_p)
        if not input.dtype.is_floating_point:
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{_word(input.dtype)}")
        keep = noise._data != 0
    else:
        scale = 1.0
        keep = np.ones(input._data.shape, dtype=bool)
    # (PyTorch's derivative scales by 1 unless train is literally True: train=None trains
    # forward but its gradient is unscaled)
    output = run_op(NATIVE_DROPOUT, (input,), (keep, scale, scale if train else 1.0))
    return output, make(keep)


def _word(dtype) -> str:
    from .aliases_and_config import _scalar_name

    return _scalar_name(dtype)


# ------------------------------------------------------------------ sparse-only names


@public("torch.smm", "Tensor.smm")
def smm(input: Tensor, mat: Tensor) -> Tensor:
    """sparse @ dense: gradcli's tensors are all strided, which PyTorch refuses."""
    raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")


@public("torch.native_norm")
def native_norm(input: Tensor, p=2, dim=None, keepdim=False, dtype=None) -> Tensor:
    """A norm kernel PyTorch registers for sparse tensors only: a strided tensor is refused
    with the dispatcher's error."""
    raise NotImplementedError(
        "Could not run 'aten::native_norm' with arguments from the 'CPU' backend. This could be "
        "because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build).")


@public("Tensor.resize_as")
def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """Deprecated: a copy of self with tensor's shape (same element count; ResizeBackward)."""
    warn_at_caller("non-inplace resize_as is deprecated")
    sizes = tuple(tensor.size())
    want = int(np.prod(sizes, dtype=np.int64)) if sizes else 1
    if want != self.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, sizes))} ({want} elements in total), but "
            f"the given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} "
            "elements). autograd's resize can only change the shape of a given tensor, while "
            "preserving the number of elements. ")
    return _resize_function().apply(self, sizes)


# ------------------------------------------------------------------ control flow


@public("torch.cond")
def cond(pred, true_fn, false_fn, operands=()):
    """torch.cond outside of compilation: evaluates pred (a bool or a one-element tensor)
    and calls the branch it picks on the operands."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        pred = bool(pred.item())
    elif not isinstance(pred, (bool, int)):
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                           f"{pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    return true_fn(*operands) if pred else false_fn(*operands)


@public("torch.while_loop")
def while_loop(cond_fn, body_fn, carried_inputs):
    """torch.while_loop outside of compilation: calls body_fn on the carried values while
    cond_fn says so (a bool or a one-element tensor) and returns the last values (a single
    carried value as itself, as PyTorch's returns it)."""
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError("carried_inputs must be a tuple or list, got "
                           f"{type(carried_inputs)}")
    values = tuple(carried_inputs)
    while True:
        go = cond_fn(*values)
        if isinstance(go, Tensor):
            if go.numel() != 1:
                raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean "
                                   f"but got {go}")
            go = bool(go.item())
        if not go:
            return values[0] if len(values) == 1 else values
        values = body_fn(*values)
        values = tuple(values) if isinstance(values, (tuple, list)) else (values,)
