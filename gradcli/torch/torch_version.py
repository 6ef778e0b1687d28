"""torch.__version__ as a string that compares as a version (PyTorch's TorchVersion):
`torch.__version__ >= "2.0"` and `>= (2, 0)` hold, as scripts expect."""

from __future__ import annotations

__all__ = ["TorchVersion"]


def _key(value) -> tuple:
    """(release numbers, pre-release rank, local part) under PEP 440's order, enough for
    the releases and comparisons scripts write ("2.0", "1.13.1", "2.1.0a0", (2, 0))."""
    if isinstance(value, (tuple, list)):
        return (tuple(int(v) for v in value), 1, "")
    text = str(value)
    public, _, local = text.partition("+")
    release, pre = [], 1
    for part in public.split("."):
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        if digits:
            release.append(int(digits))
        if digits != part:
            pre = 0  # a0, rc1, dev...: before the release
            break
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    return (tuple(release), pre, local)


class TorchVersion(str):
    """A str whose comparisons parse both sides as versions."""

    __module__ = "torch.torch_version"  # PyTorch's class name, for type(torch.__version__)

    def _cmp(self, other):
        if not isinstance(other, (str, tuple, list)):
            return NotImplemented
        a, b = _key(self), _key(other)
        return (a[0], a[1], a[2]), (b[0], b[1], b[2])

    def __lt__(self, other):
        pair = self._cmp(other)
        return pair if pair is NotImplemented else pair[0] < pair[1]

    def __le__(self, other):
        pair = self._cmp(other)
        return pair if pair is NotImplemented else pair[0] <= pair[1]

    def __gt__(self, other):
        pair = self._cmp(other)
        return pair if pair is NotImplemented else pair[0] > pair[1]

    def __ge__(self, other):
        pair = self._cmp(other)
        return pair if pair is NotImplemented else pair[0] >= pair[1]

    def __eq__(self, other):
        pair = self._cmp(other)
        return pair if pair is NotImplemented else pair[0] == pair[1]

    def __ne__(self, other):
        pair = self._cmp(other)
        return pair if pair is NotImplemented else pair[0] != pair[1]

    __hash__ = str.__hash__
