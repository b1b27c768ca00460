"""Give the memory a process freed back to the system.

glibc's malloc keeps freed memory in its heaps for reuse, and after a large buffer is freed it raises
its mmap threshold, so later large buffers (a batch of encoded observations, a pickled network, a
loop's samples) come from the heaps too and fragment them. A long RL run then grows by ~30-50 MB a
loop with flat Python object counts (README, "RL memory"). ``release_free_memory`` (glibc's
``malloc_trim(0)``) hands the free pages back; elsewhere it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.cache
def _malloc_trim() -> ctypes._CFuncPtr | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None


def release_free_memory() -> bool:
    """Return the free heap memory of this process to the system; False where the C library cannot."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def rss_mb() -> float:
    """This process's resident set size now, in MiB."""
    import psutil

    return psutil.Process().memory_info().rss / 2**20
