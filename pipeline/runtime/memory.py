"""Give the memory a process no longer uses back to the system (docs/faults.md, "RL main-process memory").

Each RL loop's Trainer sits in reference cycles and glibc keeps freed heaps; with bf16 on a CPU, oneDNN's and
ideep's kernel caches keep every batch shape's kernels (pytorch/pytorch#98688), so a learner bounds them.
"""

import ctypes
import ctypes.util
import functools
import gc
import os

KERNEL_CACHES = ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY")  # read once, at a process's first use
LEARNER_CACHE_ENTRIES = 64  # holds the full-batch shape's kernels (~20 entries a shape) among a loop's odd ones
_BOUNDED_HERE = "KOIKOI_BOUNDED_KERNEL_CACHES"  # which of them bound_kernel_caches set (child processes undo them)


@functools.cache
def _malloc_trim() -> ctypes._CFuncPtr | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None


def release_free_memory() -> bool:
    """Collect cyclic garbage and return the free heap to the system; False where the C library cannot trim."""
    gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def bound_kernel_caches(entries: int = LEARNER_CACHE_ENTRIES) -> None:
    """Bound oneDNN's and ideep's kernel caches (before the first oneDNN op; the environment's own setting wins)."""
    set_here = [name for name in KERNEL_CACHES if name not in os.environ]
    for name in set_here:
        os.environ[name] = str(entries)
    if set_here:
        os.environ[_BOUNDED_HERE] = ",".join(set_here)


def default_kernel_caches() -> None:
    """In a worker process started by a bounded learner: back to the default caches (before any oneDNN op)."""
    for name in os.environ.pop(_BOUNDED_HERE, "").split(","):
        if name:
            os.environ.pop(name, None)
