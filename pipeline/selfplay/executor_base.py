"""What an executor is (:class:`Executor`: ``run(job) -> PlayResult`` over a backend's ``map``), and the one that
plays in this process (:class:`InlineExecutor`). The backends (``executor``, ``ray_executor``) build on it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from .batched import PlayJob, PlayResult, play_job
from .reporting import Progress, progress_sink


class Executor(ABC):
    """Runs play jobs; ``workers`` is how many jobs it runs at once, ``device`` where their networks run."""

    workers: int = 1
    device: str = "cpu"

    @abstractmethod
    def map(self, fn: Callable[[Any], Any], jobs: Sequence[Any], progress: Progress | None = None) -> list[Any]:
        """``[fn(job) for job in jobs]``, possibly in parallel, in job order."""

    def run(self, job: PlayJob, progress: Progress | None = None) -> PlayResult:
        return PlayResult.merge(self.map(play_job, self.parts(job), progress))

    def parts(self, job: PlayJob) -> list[PlayJob]:
        """``job`` split for the workers, on this executor's device; four parts a worker where games' costs vary
        (playouts, searches), so no worker sits idle while another finishes."""
        per_worker = 4 if job.recorder.uneven and self.workers > 1 else 1
        return [replace(j, device=self.device) for j in job.split(self.workers * per_worker)]

    def close(self) -> None:
        """Release workers (a no-op for in-process execution)."""
        return None

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class InlineExecutor(Executor):
    """Runs jobs one after another in this process, with this process's torch threads."""

    workers = 1

    def __init__(self, device: str = "cpu") -> None:
        self.device = device

    def map(self, fn: Callable[[Any], Any], jobs: Sequence[Any], progress: Progress | None = None) -> list[Any]:
        with progress_sink(progress):
            return [fn(j) for j in jobs]
