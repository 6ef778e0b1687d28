"""Keep freed tensor buffers in the process instead of handing them back to the kernel.

numpy allocates each array with malloc. glibc's default policy returns a freed block of
a few megabytes to the kernel (munmap, or trimming the heap's top once more than twice
the largest freed block sits free there), so the next array of that size faults its
pages in afresh: the kernel zeroes every 4 KB page on first touch. An autograd step
allocates and frees arrays of the same sizes over and over, and those faults cost as
much as the arithmetic: `tanh(A @ B).sum().backward()` on 512x512 float64 took ~4,000
faults per step, ~3 ms of its ~20 (PyTorch's steps take none here).

So the `gradcli` command (its own process: gradcli.OWNS_PROCESS, engine/__init__.py) asks
glibc, once, when it imports the engine, to serve blocks up to MMAP_THRESHOLD from the
heap and to keep up to TRIM_THRESHOLD of free memory at its top. The free memory is
reused by the next arrays; nothing else changes (glibc's own default moves its mmap
threshold the same way as blocks are freed, up to the same 32 MB; it only trims sooner).

A program that imports gradcli.torch keeps malloc as it set it; it may call
`tune_malloc()` itself (bench/run.py's gradcli peers do, as the command does).
Only on glibc, and never over a choice the user made: any MALLOC_*_ variable or a
glibc.malloc tunable in the environment leaves malloc as it is.
"""

from __future__ import annotations

import os

MMAP_THRESHOLD = 32 << 20  # glibc's own ceiling for its moving threshold (64-bit)
TRIM_THRESHOLD = 64 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)
_USER_SETTINGS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_",
                  "MALLOC_MMAP_MAX_")

tuned = False  # whether tune_malloc changed the policy in this process


def user_chose_malloc_policy(environ=os.environ) -> bool:
    return (any(name in environ for name in _USER_SETTINGS)
            or "glibc.malloc" in environ.get("GLIBC_TUNABLES", ""))


def tune_malloc() -> bool:
    """Set the policy above if this is glibc and the user set none; True if it did."""
    global tuned
    if tuned or user_chose_malloc_policy():
        return tuned
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - raises AttributeError off glibc
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    tuned = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return tuned
