"""Where play jobs run: ``InlineExecutor`` (this process), ``ProcessExecutor`` (a persistent pool of local worker
processes, one torch thread each), ``RayExecutor`` (``ray_executor``). Results never depend on the backend or the
split: games are seeded one by one and ``PlayResult.merge`` orders them.
"""

import multiprocessing as mp
import os
import queue as queue_mod
import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from ..runtime.hardware import pin_worker_threads
from ..runtime.memory import default_kernel_caches
from .executor_base import Executor, InlineExecutor
from .reporting import Progress, install_sink


def watch_parent(parent_pid: int, every_s: float = 0.5) -> None:
    """End this process soon after its parent is gone: a kill -9 of the parent leaves no orphan worker
    (a parent-death signal would fire when the thread that started the worker ends, not the process)."""
    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(every_s)
        os._exit(1)

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


def _init_worker(progress_queue: Any, threads: int, parent_pid: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it stops the pool (map)
    default_kernel_caches()  # the learner's bounds would make varying self-play batches rebuild kernels
    watch_parent(parent_pid)

    pin_worker_threads(threads)  # one process per core beats intra-op threads for small batches
    install_sink(progress_queue.put)


class ProcessExecutor(Executor):
    """A pool of ``workers`` local processes (started once, reused across loops)."""

    def __init__(self, workers: int, threads_per_worker: int = 1, start_method: str = "spawn",
                 device: str = "cpu") -> None:
        if workers < 1:
            raise ValueError(f"ProcessExecutor: workers must be >= 1, got {workers}")
        if device == "cuda" and start_method == "fork":
            raise ValueError("start_method fork cannot use CUDA in the workers; use spawn or forkserver")
        self.workers, self.device = workers, device
        self.threads = threads_per_worker
        self.start_method = start_method
        self._pool: ProcessPoolExecutor | None = None
        self._queue: Any = None

    def _get_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            ctx = mp.get_context(self.start_method)
            self._queue = ctx.Queue()
            self._pool = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_init_worker,
                                             initargs=(self._queue, self.threads, os.getpid()))
        return self._pool

    def _drain(self, progress: Progress | None, timeout: float) -> None:
        try:
            n = self._queue.get(timeout=timeout)
        except queue_mod.Empty:
            return
        while True:
            if progress is not None:
                progress(n)
            try:
                n = self._queue.get_nowait()
            except queue_mod.Empty:
                return

    def map(self, fn: Callable[[Any], Any], jobs: Sequence[Any], progress: Progress | None = None) -> list[Any]:
        pool = self._get_pool()
        try:
            futures = [pool.submit(fn, j) for j in jobs]
            pending = set(futures)
            while pending:
                _, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                self._drain(progress, timeout=0.01)
            self._drain(progress, timeout=0.05)
            return [f.result() for f in futures]
        except BaseException:  # Ctrl-C or a failed job: stop the workers now rather than after their jobs
            self._terminate()
            raise

    def _terminate(self) -> None:
        if self._pool is not None:
            for p in list((self._pool._processes or {}).values()):  # no public way before Python 3.14
                p.terminate()
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._queue is not None:
            self._queue.close()
            self._queue = None


def make_executor(workers: int, start_method: str = "spawn", backend: str = "process",
                  device: str = "cpu") -> Executor:
    """Backend ``process``: ``workers`` 0 plays in this process, n >= 1 in a pool of n single-thread
    processes. Backend ``ray``: n Ray tasks per job (n >= 1). Forward passes run on ``device``."""
    if workers < 0:
        raise ValueError(f"workers must be >= 0, got {workers}")
    if backend == "ray":
        from .ray_executor import RayExecutor  # ray: a slow import, only for its backend

        return RayExecutor(workers, device)
    if backend != "process":
        raise ValueError(f"backend must be process or ray, got {backend!r}")
    return InlineExecutor(device) if workers == 0 else ProcessExecutor(workers, 1, start_method, device)
