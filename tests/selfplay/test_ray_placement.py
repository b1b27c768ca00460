"""Ray and GPUs without a GPU: a local Ray declares a GPU it does not have, and the executor's tasks are placed on
it with their share; the Ray the executor starts itself gets the GPUs torch sees; a cluster with no GPU for CUDA
players, or too few CPUs for the workers, fails in one line instead of waiting forever. Nothing here touches CUDA:
the tasks only report what Ray gave them (tests/rl/test_cuda.py plays on a real GPU)."""

from __future__ import annotations

import pytest
import torch

from pipeline.selfplay import ray_executor
from pipeline.selfplay.ray_executor import PlacementError, RayExecutor

ray = ray_executor.ray


@pytest.fixture
def fresh_ray():
    """``fresh_ray(**resources)``: a local Ray declaring these resources, shut down after the test."""

    def start(**resources) -> None:
        ray.init(address="local", include_dashboard=False, **resources)

    yield start
    if ray.is_initialized():
        ray.shutdown()


# what Ray gave a task; a lambda travels by value (the workers cannot import this test module)
_given = lambda _: (ray.get_gpu_ids(), ray.get_runtime_context().get_assigned_resources())  # noqa: E731


def test_the_executors_own_ray_gets_torchs_gpus_and_tasks_share_them(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)  # what torch would see on a one-GPU machine
    with RayExecutor(2, "cuda") as ex:
        given = ex.map(_given, [0, 1, 2])
        assert ray.cluster_resources().get("GPU") == 1
    assert not ray.is_initialized()  # its own Ray is shut down
    assert [ids for ids, _ in given] == [[0]] * 3  # placed on the GPU Ray was told of
    assert all(r == {"CPU": 1.0, "GPU": 0.5} for _, r in given)  # two workers share it


def test_cuda_players_on_a_ray_without_a_gpu_fail_at_once(fresh_ray):
    fresh_ray(num_cpus=2, num_gpus=0)
    with pytest.raises(PlacementError, match=r"^self-play on cuda, but the Ray cluster has no GPU \(it has 2 CPU\): "
                                             r"start Ray with its GPUs .* or set rl.selfplay.device to cpu$"):
        with RayExecutor(2, "cuda") as ex:
            ex.map(_given, [0])
    with RayExecutor(2, "cpu") as ex:  # CPU players are placed there
        assert [r for _, r in ex.map(_given, [0, 1])] == [{"CPU": 1.0}] * 2


def test_workers_the_cluster_cannot_place_fail_within_the_timeout(fresh_ray):
    fresh_ray(num_cpus=2, num_gpus=1, resources={"spare": 1})
    with pytest.raises(PlacementError, match=r"^Ray could not place 3 self-play tasks of 1 CPU each within 2 s: the "
                                             r"cluster has 2 CPU, 1 GPU, 1 spare \(free: 2 CPU, 1 GPU, 1 spare\); "
                                             r"lower rl.selfplay.workers or add nodes$"):
        with RayExecutor(3, "cpu", placement_timeout=2) as ex:
            ex.map(_given, [0])
    with RayExecutor(4, "cuda", placement_timeout=2) as ex:  # 4 GPU shares of 0.25 fit, 4 CPUs do not
        with pytest.raises(PlacementError, match=r"4 self-play tasks of 1 CPU, 0.25 GPU each within 2 s"):
            ex.map(_given, [0])
    assert ray.available_resources().get("CPU") == 2  # nothing stays reserved
