"""The Ray backend of :class:`~pipeline.rl.executor.Executor` (``rl.selfplay.backend: ray``).

Each job is split as the process backend splits it, and each part runs as a Ray task (one CPU, one
torch thread; with ``device="cuda"`` a share of a GPU). The networks of a job are put into Ray's
object store once per ``run`` (once per loop, not once per game or part); every task reads them
from there. Games are seeded one by one and ``PlayResult.merge`` orders them, so both backends give
the same games, samples and, after training, weights.

Where it runs: with ``RAY_ADDRESS`` set (e.g. ``HEAD:6379`` after ``ray start --head`` there),
``ray.init()`` joins that cluster; otherwise it starts a private local Ray with ``workers`` CPUs and
no dashboard, listening on loopback only, shut down again by ``close()``. A Ray already initialised
by the caller is used as it is and left running.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

if not os.environ.get("RAY_ADDRESS"):
    # Ray binds this machine's network address unless told it is no cluster node; it reads this switch
    # when first imported (its worker processes inherit it). A private local Ray needs loopback only.
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

import ray  # noqa: E402

from ..memory import default_kernel_caches
from .executor import Executor, Progress, progress_sink
from .selfplay import PlayJob, PlayResult, play_job


@ray.remote(num_cpus=0)
class _GameCounter:
    """Finished games reported by the tasks, taken by the driver for its progress bar."""

    def __init__(self) -> None:
        self.n = 0

    def add(self, n: int) -> None:
        self.n += n

    def take(self) -> int:
        n, self.n = self.n, 0
        return n


def _call(fn: Callable[[Any], Any], job: Any, counter: Any) -> Any:
    import torch

    torch.set_num_threads(1)  # one task per CPU, as the process backend's workers
    default_kernel_caches()  # a local Ray's workers inherit the learner's environment
    sink = None if counter is None else (lambda n: counter.add.remote(n))  # fire and forget
    with progress_sink(sink):
        return fn(job)


@ray.remote(num_cpus=1)
def _apply(fn: Callable[[Any], Any], job: Any, counter: Any) -> Any:
    return _call(fn, job, counter)


@ray.remote(num_cpus=1)
def _play_part(players: tuple, job: PlayJob, counter: Any) -> PlayResult:
    # ``players`` arrives from the object store (the driver passed its ObjectRef)
    return _call(play_job, replace(job, players=players), counter)


class RayExecutor(Executor):
    """``workers`` Ray tasks per job, on a local Ray or the cluster that ``RAY_ADDRESS`` names."""

    def __init__(self, workers: int, device: str = "cpu") -> None:
        if workers < 1:
            raise ValueError(f"RayExecutor: workers must be >= 1, got {workers}")
        self.workers, self.device = workers, device
        self._started = False  # whether close() shuts Ray down
        self._counter: Any = None

    def _ensure(self) -> None:
        if not ray.is_initialized():
            if os.environ.get("RAY_ADDRESS"):
                ray.init()  # joins the cluster at RAY_ADDRESS
            else:  # "local": a new instance, even where `ray start` left a cluster on this machine
                ray.init(address="local", num_cpus=self.workers, include_dashboard=False)
            self._started = True
        if self._counter is None:
            self._counter = _GameCounter.remote()

    def _options(self) -> dict:
        # GPU workers share the GPUs: Ray packs fractional requests onto one GPU before the next
        return {"num_gpus": 1 / self.workers} if self.device == "cuda" else {}

    def _gather(self, refs: list, progress: Progress | None) -> list[Any]:
        pending = list(refs)
        while pending:
            _, pending = ray.wait(pending, num_returns=len(pending), timeout=0.2)
            self._drain(progress)
        self._drain(progress)
        return ray.get(refs)

    def _drain(self, progress: Progress | None) -> None:
        if progress is not None:
            n = ray.get(self._counter.take.remote())
            if n:
                progress(n)

    def map(self, fn: Callable[[Any], Any], jobs: Sequence[Any], progress: Progress | None = None) -> list[Any]:
        self._ensure()
        counter = self._counter if progress is not None else None
        task = _apply.options(**self._options())
        return self._gather([task.remote(fn, j, counter) for j in jobs], progress)

    def run(self, job: PlayJob, progress: Progress | None = None) -> PlayResult:
        self._ensure()
        players = ray.put(job.players)  # the weights: once per job, read by every part
        counter = self._counter if progress is not None else None
        task = _play_part.options(**self._options())
        refs = [task.remote(players, replace(part, players=()), counter) for part in self.parts(job)]
        return PlayResult.merge(self._gather(refs, progress))

    def close(self) -> None:
        if self._counter is not None and ray.is_initialized():
            ray.kill(self._counter)
        self._counter = None
        if self._started and ray.is_initialized():
            ray.shutdown()
        self._started = False
