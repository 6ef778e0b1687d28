"""Layers' functional forms: bilinear, layer_norm, embedding, batch_norm, conv1d/conv2d,
max/avg pooling (and Tensor.unflatten, which nn.Unflatten rests on)."""

from __future__ import annotations

from ..tensor import Tensor
from .registry import defop, public, run_op


@public("torch.unflatten", "Tensor.unflatten")
def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    from ..tensor import _wrap_dim

    shape = list(input.shape)
    ax = _wrap_dim(dim, len(shape))
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if -1 in sizes:
        known = 1
        for s in sizes:
            if s != -1:
                known *= s
        sizes[sizes.index(-1)] = shape[ax] // known if known else 0
    total = 1
    for s in sizes:
        total *= s
    if total != shape[ax]:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
            f"{dim} ({shape[ax]}) in the input tensor")
    return input.view(shape[:ax] + sizes + shape[ax + 1:])


# ------------------------------------------------------------- module backward hooks
# nn.Module.register_full_backward_hook passes a module's tensor inputs and outputs through
# an identity node, as PyTorch's BackwardHookFunction does, so the gradients flowing
# through them can be seen (and the inputs' replaced) by the hooks.
BACKWARD_HOOK = defop("backward_hook_function", "BackwardHookFunctionBackward", lambda a: a,
                      lambda c, g: (g,), "identity (module backward hooks watch it)",
                      torch_call="(lambda m, x: (m.register_full_backward_hook(lambda *h: None), "
                                 "m(x * 1))[1])(torch.nn.Identity(), a)")


def backward_hook_identity(t: Tensor) -> Tensor:
    return run_op(BACKWARD_HOOK, (t,))
