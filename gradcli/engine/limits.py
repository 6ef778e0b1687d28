"""Allocation guard: the largest tensor one op may create (docs/language.md: --max-elements).

The language runtime sets MAX_ELEMENTS[0]; plain Python users get no limit
unless they set it. Checked before numpy allocates.
"""

from __future__ import annotations

MAX_ELEMENTS = [None]


class AllocationLimitError(MemoryError):
    """A tensor larger than the configured element budget was requested."""


def check_elements(shape) -> None:
    """Refuse a tensor of `shape` before it is allocated, if it is over the budget."""
    if MAX_ELEMENTS[0] is None:
        return
    n = 1
    for s in shape:
        n *= int(s)
    check_count(n)


def check_count(n: int) -> None:
    """Refuse a result of `n` elements before it is allocated, if it is over the budget."""
    limit = MAX_ELEMENTS[0]
    if limit is not None and n > limit:
        raise AllocationLimitError(
            f"tensor of {n:,} elements exceeds the limit of {limit:,} elements")
