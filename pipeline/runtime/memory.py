"""Give the memory a process no longer uses back to the system.

Two things kept a long RL run's main process growing by 20-40 MB a loop (docs/faults.md, "RL main-process memory"):

- each loop's Lightning ``Trainer`` (and through its data loader the loop's samples) sits in
  reference cycles, freed only by a full garbage collection, which Python runs rarely in a process
  holding ~400,000 long-lived objects;
- glibc's malloc keeps freed memory in its heaps, and once a large buffer is freed it raises its
  mmap threshold, so later large buffers (pickled networks, encoded batches) fragment the heaps too.

``release_free_memory`` runs a full collection, then glibc's ``malloc_trim(0)`` (elsewhere only the
collection).

With bf16 autocast on a CPU, oneDNN's primitive cache and PyTorch's ideep LRU cache (1,024 entries
each by default) keep the kernels and reordered weights of every batch shape met, 5-10 MB a shape
at width 128: a loop's last mini-batch of each decision type is a new shape, so a learner grew by
~20 MB a loop until several hundred MB (pytorch/pytorch#98688). ``bound_kernel_caches`` bounds
both in the learner's process; self-play workers keep the defaults (their batches vary from 1 to
``concurrency`` and reuse those kernels every step).
"""

from __future__ import annotations

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


def bound_kernel_caches(entries: int = LEARNER_CACHE_ENTRIES) -> None:
    """Bound oneDNN's and ideep's kernel caches in this process to ``entries`` each. Takes effect only before
    the process's first oneDNN op; a capacity already set in the environment wins."""
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
