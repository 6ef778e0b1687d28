"""torch.Size and torch.device: small value types with PyTorch's reprs."""

from __future__ import annotations


class Size(tuple):
    """A tuple of ints that prints as torch.Size([2, 3])."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(int(s)) for s in self)}])"

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= int(s)
        return n

    def __getitem__(self, item):
        result = tuple.__getitem__(self, item)
        return Size(result) if isinstance(item, slice) else result

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple(self) * n)

    __rmul__ = __mul__


class device:  # noqa: N801 - torch's name
    __slots__ = ("type",)

    def __init__(self, type: str = "cpu"):  # noqa: A002
        self.type = str(type).split(":")[0]

    def __repr__(self) -> str:
        return f"device(type='{self.type}')"

    def __str__(self) -> str:
        return self.type

    def __eq__(self, other) -> bool:
        return str(other) == self.type

    def __hash__(self) -> int:
        return hash(self.type)


CPU = device("cpu")
