"""The Ray backend on a real local Ray: the process backend's games, samples and final weights, the
networks sent once per job through the object store, tasks in other processes, the params."""

from __future__ import annotations

import os
import shutil

import pytest
import torch

from pipeline.params import ParamError, parse_params
from pipeline.rl import training
from pipeline.selfplay import ray_executor
from pipeline.selfplay.batched import GameSpec, PlayJob, play_job
from pipeline.selfplay.executor import make_executor
from pipeline.selfplay.policies import NetSpec
from pipeline.selfplay.rewards import RewardModel
from stages.rl_phase import PhasePaths, rl_stage

ray = ray_executor.ray  # imported through the executor, which keeps a local Ray on loopback


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module (starting one takes seconds); executors find it and leave it running."""
    ray.init(address="local", num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()


def _job(make_net) -> PlayJob:
    players = (NetSpec.from_net(make_net(0), "a", 0.2), NetSpec.from_net(make_net(1), "b"))
    games = tuple(GameSpec(300 + i, (0, 1) if i % 2 else (1, 0), (True, False)) for i in range(5))
    return PlayJob(players=players, games=games, concurrency=8, reward=RewardModel("point"), num_rounds=2)


def _key(result) -> list:
    return [(o.seed, o.seats, o.points, o.winner, o.rounds, o.decisions) for o in result.outcomes] + \
        [(s.obs.decision, s.action, s.reward) for s in result.samples]


class _SpyTask:
    """Stands in for the remote play function and records what each task is given."""

    def __init__(self, real) -> None:
        self.real, self.calls = real, []

    def options(self, **kwargs):
        spy, real = self, self.real.options(**kwargs)

        class _Remote:
            def remote(self, players, job, counter):
                spy.calls.append((players, job))
                return real.remote(players, job, counter)

        return _Remote()


def test_tasks_play_the_same_games_with_the_weights_put_once(make_net, monkeypatch):
    # first in the module, before the shared Ray: the executor starts a private one and stops it
    job = _job(make_net)
    puts, spy = [], _SpyTask(ray_executor._play_part)
    real_put = ray.put
    monkeypatch.setattr(ray, "put", lambda value: puts.append(value) or real_put(value))
    monkeypatch.setattr(ray_executor, "_play_part", spy)
    ticks = []
    with make_executor(2, backend="ray") as ex:
        result = ex.run(job, progress=ticks.append)
        pids = ex.map(lambda _: os.getpid(), [0, 1])  # a lambda travels by value
        assert ex.map(lambda _: ray.util.get_node_ip_address(), [0]) == ["127.0.0.1"]  # loopback only
    assert _key(result) == _key(play_job(job))
    assert puts == [job.players]  # the networks went into the object store once for the whole job
    assert len(spy.calls) == 2 and all(isinstance(p, ray.ObjectRef) and j.players == () for p, j in spy.calls)
    assert sorted(g.seed for _, j in spy.calls for g in j.games) == [g.seed for g in job.games]
    assert 0 < sum(ticks) <= len(job.games)
    assert os.getpid() not in pids  # the games ran in Ray's worker processes
    assert not ray.is_initialized()  # the executor's own Ray is shut down


_PLAY = training.PhaseRunner.play


def _phase(project, params, backend: str, monkeypatch) -> tuple:
    """Phase 1 on ``backend``: each loop's games and samples, the final weights, the curve."""
    params["rl"]["selfplay"].update(workers=2, backend=backend)
    plays, original = [], _PLAY

    def recording(self, job, desc):
        result, seconds = original(self, job, desc)
        plays.append(_key(result))
        return result, seconds

    monkeypatch.setattr(training.PhaseRunner, "play", recording)
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    weights = torch.load(project / "models/rl_phase1/point/model.pt")
    rows = (project / "results/rl_phase1/point/curve.csv").read_text().splitlines()
    seconds = rows[0].split(",").index("seconds")  # measured CPU time: the one column that differs run to run
    curve = "\n".join(",".join(c for i, c in enumerate(r.split(",")) if i != seconds) for r in rows) + "\n"
    for d in ("models/rl_phase1", "checkpoints/rl_phase1", "results/rl_phase1"):  # the next run starts afresh
        shutil.rmtree(project / d)
    return plays, weights, curve


@pytest.mark.slow
def test_same_seed_same_games_samples_and_weights_on_both_backends(project, params, monkeypatch, local_ray):
    params["rl"]["phase1"]["loops"] = 1
    plays_p, weights_p, curve_p = _phase(project, params, "process", monkeypatch)
    plays_r, weights_r, curve_r = _phase(project, params, "ray", monkeypatch)
    assert len(plays_p) == 1 and len(plays_p[0]) > params["rl"]["games_per_loop"]  # outcomes and samples
    assert plays_r == plays_p
    assert weights_r.keys() == weights_p.keys()
    assert all(torch.equal(weights_r[k], weights_p[k]) for k in weights_p)
    assert curve_r == curve_p and curve_p.count("\n") == 3  # header, start, loop 1
    assert ray.is_initialized()  # the caller's Ray is left running


def test_ray_backend_params(params):
    params["rl"]["selfplay"]["backend"] = "dask"
    with pytest.raises(ParamError, match=r"rl\.selfplay\.backend must be one of process, ray; got 'dask'"):
        parse_params(params)
    params["rl"]["selfplay"].update(backend="ray", workers=0)
    with pytest.raises(ParamError, match=r"rl\.selfplay\.workers must be >= 1 with backend ray"):
        parse_params(params)
    with pytest.raises(ValueError, match="backend must be process or ray"):
        make_executor(1, backend="dask")
