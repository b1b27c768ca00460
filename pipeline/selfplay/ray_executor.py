"""The Ray backend of ``Executor`` (``rl.selfplay.backend: ray``): each job part a Ray task in a reserved bundle.

``RAY_ADDRESS`` set: joins that cluster; else a private local Ray on loopback, shut down by ``close()``. A
reservation Ray cannot make within ``placement_timeout`` fails with one line instead of tasks waiting forever.
"""

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

if not os.environ.get("RAY_ADDRESS"):
    # Ray binds this machine's network address unless told it is no cluster node; it reads this switch
    # when first imported (its worker processes inherit it). A private local Ray needs loopback only.
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

import ray  # noqa: E402
from ray.util.placement_group import placement_group, remove_placement_group  # noqa: E402
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy  # noqa: E402

from ..runtime.hardware import pin_worker_threads
from ..runtime.memory import default_kernel_caches
from .batched import PlayJob, PlayResult, play_job
from .executor_base import Executor
from .reporting import Progress, progress_sink


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
    pin_worker_threads(1)  # one task per CPU, as the process backend's workers
    default_kernel_caches()  # a local Ray's workers inherit the learner's environment
    sink = None if counter is None else (lambda n: counter.add.remote(n))  # fire and forget
    with progress_sink(sink):
        return fn(job)


@ray.remote(num_cpus=1)
def _apply(fn: Callable[[Any], Any], job: Any, counter: Any) -> Any:
    return _call(fn, job, counter)


@ray.remote(num_cpus=1)
def _play_part(players: tuple, job: PlayJob, counter: Any) -> PlayResult:
    return _call(play_job, replace(job, players=players), counter)


PLACEMENT_TIMEOUT_S = 60.0  # how long Ray may take to reserve the workers' resources before the run fails


class PlacementError(RuntimeError):
    """Ray cannot place the self-play tasks (one line: what was asked, what the cluster has)."""


def _resources(r: dict) -> str:
    keep = {k: v for k, v in sorted(r.items())  # the CPUs, GPUs and custom resources, not Ray's bookkeeping
            if not k.startswith(("node:", "memory", "object_store", "bundle_group_")) and "_group_" not in k}
    return ", ".join(f"{v:g} {k}" for k, v in keep.items()) or "nothing"


class RayExecutor(Executor):
    """``workers`` Ray tasks per job, on a local Ray or the cluster that ``RAY_ADDRESS`` names."""

    def __init__(self, workers: int, device: str = "cpu", placement_timeout: float = PLACEMENT_TIMEOUT_S) -> None:
        if workers < 1:
            raise ValueError(f"RayExecutor: workers must be >= 1, got {workers}")
        self.workers, self.device = workers, device
        self.placement_timeout = placement_timeout
        self._started = False  # whether close() shuts Ray down
        self._counter: Any = None
        self._group: Any = None  # the placement group of the workers' bundles
        self._bundle: dict[str, float] = {}

    def _ensure(self) -> None:
        if not ray.is_initialized():
            if os.environ.get("RAY_ADDRESS"):
                ray.init()  # joins the cluster at RAY_ADDRESS
            else:  # "local": a new instance, even where `ray start` left a cluster on this machine
                ray.init(address="local", num_cpus=self.workers, num_gpus=self._local_gpus(), include_dashboard=False)
            self._started = True
        if self._group is None:
            self._reserve()
        if self._counter is None:
            self._counter = _GameCounter.remote()

    def _local_gpus(self) -> int:
        if self.device != "cuda":
            return 0
        import torch

        return torch.cuda.device_count()

    def _reserve(self) -> None:
        """One bundle per worker in a placement group, or a ``PlacementError`` (see the module doc)."""
        total = ray.cluster_resources()
        bundle = {"CPU": 1.0}
        if self.device == "cuda":
            gpus = total.get("GPU", 0.0)
            if gpus <= 0:
                raise PlacementError(f"self-play on cuda, but the Ray cluster has no GPU (it has {_resources(total)}): "
                                     "start Ray with its GPUs (`ray start --num-gpus N`) or set rl.selfplay.device "
                                     "to cpu")
            bundle["GPU"] = math.floor(min(1.0, gpus / self.workers) * 10_000) / 10_000  # Ray's resolution: 1e-4
        group = placement_group([bundle] * self.workers, strategy="SPREAD")
        if not group.wait(timeout_seconds=self.placement_timeout):
            free = _resources(ray.available_resources())
            remove_placement_group(group)
            raise PlacementError(f"Ray could not place {self.workers} self-play tasks of {_resources(bundle)} each "
                                 f"within {self.placement_timeout:g} s: the cluster has {_resources(total)} "
                                 f"(free: {free}); lower rl.selfplay.workers or add nodes")
        self._group, self._bundle = group, bundle

    def _options(self) -> dict:
        # each task runs in one of the reserved bundles, asking for all of it (a CPU, and a GPU share on CUDA)
        return {"num_cpus": self._bundle["CPU"], "num_gpus": self._bundle.get("GPU", 0),
                "scheduling_strategy": PlacementGroupSchedulingStrategy(self._group)}

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
        if self._group is not None and ray.is_initialized():
            remove_placement_group(self._group)
        self._group = None
        if self._started and ray.is_initialized():
            ray.shutdown()
        self._started = False
