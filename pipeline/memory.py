"""Give the memory a process no longer uses back to the system.

Two things kept a long RL run's main process growing by 20-40 MB a loop (README, "RL memory"):

- each loop's Lightning ``Trainer`` (and through its data loader the loop's samples) sits in
  reference cycles, freed only by a full garbage collection, which Python runs rarely in a process
  holding ~400,000 long-lived objects;
- glibc's malloc keeps freed memory in its heaps, and once a large buffer is freed it raises its
  mmap threshold, so later large buffers (pickled networks, encoded batches) fragment the heaps too.

``release_free_memory`` runs a full collection, then glibc's ``malloc_trim(0)`` (elsewhere only the
collection).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc


@functools.cache
def _malloc_trim() -> ctypes._CFuncPtr | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None


def release_free_memory() -> bool:
    """Collect cyclic garbage and return the free heap memory to the system; False where the C library
    cannot trim (not glibc)."""
    gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def rss_mb() -> float:
    """This process's resident set size now, in MiB."""
    import psutil

    return psutil.Process().memory_info().rss / 2**20
