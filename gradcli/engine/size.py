"""torch.Size and torch.device: small value types with PyTorch's reprs."""

from __future__ import annotations


class Size(tuple):
    """A tuple of ints that prints as torch.Size([2, 3])."""

    __module__ = "torch"  # PyTorch's class name: <class 'torch.Size'>
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
    """torch.device('cpu'), device('cuda:1'), device('cpu', 0): a name and an optional
    index (only the CPU can hold tensors; see engine/devices.py)."""

    __module__ = "torch"  # PyTorch's class name: <class 'torch.device'>

    __slots__ = ("type", "index")

    def __init__(self, type: str = "cpu", index=None):  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index  # noqa: A001
        from .devices import parse

        kind, parsed = parse(type)
        if parsed is not None and index is not None:
            raise RuntimeError(
                "type (string) must not include an index because index was passed explicitly: "
                f"{type}")
        set_field = object.__setattr__
        set_field(self, "type", kind)
        set_field(self, "index", parsed if index is None else int(index))

    def __reduce__(self):
        return device, (self.type, self.index)

    def __setattr__(self, name, value):
        # (fixed once made, as PyTorch's: a program cannot turn a CPU device into another)
        if name in device.__slots__:
            raise AttributeError(f"attribute '{name}' of 'torch.device' objects is not writable")
        raise AttributeError(f"'torch.device' object has no attribute '{name}'")

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        return isinstance(other, device) and (other.type, other.index) == (self.type, self.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = device("cpu")
