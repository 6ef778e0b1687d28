"""PyTorch's DelayedError node for gradient formulas with no double backward: the first
gradient is computed and returned as usual, but it stands on an `Error` node
(`torch::autograd::Error`), so differentiating it again raises the formula's message
(scatter_reduce's and index_reduce's prod when two zeros meet in one place)."""

from __future__ import annotations

from ..grad_mode import GRAD_MODE
from ..node import Node
from ..tensor import Tensor, make
from .registry import edge_of


class _Raise:
    """The node's op: its backward raises the message it was made with."""

    __slots__ = ("message",)
    multi = True
    save_meta = False
    check_order = None
    name = "delayed_error"
    rule = "raises: PyTorch has no second derivative here"

    def __init__(self, message: str):
        self.message = message

    def backward(self, node, grads):
        raise RuntimeError(self.message)


class Error(Node):
    """PyTorch's DelayedError node (its Python class is named Error)."""

    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::Error"


def delayed_error(t: Tensor, message: str) -> Tensor:
    """`t`, standing on an Error node when the gradient is being recorded."""
    if not GRAD_MODE.enabled or not t.requires_grad:
        return t
    node = Error(_Raise(message), (edge_of(t),), None, None, None, None, None)
    return make(t._data, True, node)
