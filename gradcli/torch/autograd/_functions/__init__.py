"""torch.autograd._functions: the legacy autograd Functions PyTorch still ships (Resize)."""

from .tensor import Resize  # noqa: F401
