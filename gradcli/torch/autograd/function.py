"""torch.autograd.function: custom autograd functions (see gradcli.engine.custom_function)."""

from gradcli.engine.custom_function import (  # noqa: F401
    BackwardCFunction,
    Function,
    FunctionCtx,
    InplaceFunction,
    once_differentiable,
)
