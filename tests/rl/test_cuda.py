"""The default paths on a real CUDA GPU: spawned CUDA workers, batched against one-by-one play, rollout_pi with bf16
play, Ray with a GPU, the learner's pass in every precision, a phase with its devices on auto, a NaN stop, and
`bench selfplay`. Each test skips where torch sees no CUDA GPU (CI and the development machines have none); the choices
themselves are tested everywhere with a faked GPU (tests/rl/test_devices.py, tests/runtime/test_hardware.py). The
resumed phase on CUDA is tests/rl/test_training.py's resume test, parametrized by device."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from pipeline.agents.model_agent import NetPlayer
from pipeline.net.inference import FP32, Inference
from pipeline.params import parse_params
from pipeline.rl.algorithms.rollout_pi import BranchRecorder, RolloutPolicyIteration
from pipeline.rl.learner import PolicyLearner, SampleBuffer, fit_pass
from pipeline.runtime.hardware import resolve_precision
from pipeline.selfplay.batched import GameSpec, PlayJob, PlayResult, play_job, play_one_by_one
from pipeline.selfplay.executor import ProcessExecutor
from pipeline.selfplay.policies import NetSpec
from pipeline.selfplay.rewards import RewardModel
from stages.rl_phase import PhasePaths, rl_stage

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="no CUDA GPU (torch.cuda.is_available() is false)")


def _job(make_net, device: str = "cuda", epsilon: float = 0.2, **kw) -> PlayJob:
    players = (NetSpec.from_net(make_net(0), "a", epsilon), NetSpec.from_net(make_net(1), "b"))
    games = tuple(GameSpec(300 + i, (0, 1) if i % 2 else (1, 0), (True, False)) for i in range(6))
    return PlayJob(players=players, games=games, concurrency=4, reward=RewardModel("point"), num_rounds=2,
                   device=device, **kw)


def _key(result: PlayResult) -> list:
    return [(o.seed, o.seats, o.points, o.winner, o.rounds, o.decisions) for o in result.outcomes] + \
        [(s.obs.decision, s.action, s.reward) for s in result.samples]


def test_gpu_forward_passes_match_the_cpu(make_net):
    from pipeline.engine import GameState

    states = [GameState(seed=s) for s in range(8)]
    obs = [s.observation(s.player) for s in states]
    on_cpu = NetPlayer(make_net(0)).values(obs)
    on_gpu = NetPlayer(make_net(0), device="cuda").values(obs)
    legal = np.isfinite(on_cpu)
    assert (np.isfinite(on_gpu) == legal).all()
    np.testing.assert_allclose(on_gpu[legal], on_cpu[legal], atol=1e-4)


@pytest.mark.parametrize("epsilon", [0.0, 0.2])
def test_batched_play_on_the_gpu_equals_one_game_at_a_time(make_net, epsilon):
    job = _job(make_net, epsilon=epsilon)
    assert _key(play_job(job)) == _key(play_one_by_one(job))


def test_spawned_cuda_workers_play_their_parts_as_this_process_does(make_net):
    job = _job(make_net)
    with ProcessExecutor(2, start_method="spawn", device="cuda") as ex:
        parts = ex.parts(job)
        result = ex.run(job)
    assert len(parts) == 2 and all(p.device == "cuda" for p in parts)
    assert _key(result) == _key(PlayResult.merge([play_job(p) for p in parts]))


def test_rollout_pi_with_bf16_play_on_the_gpu(make_net):
    job = _job(make_net, epsilon=0.0, inference=Inference("bf16"), recorder=BranchRecorder(1.0, 1.0, loss="logit_mse"))
    first, again = play_job(job), play_job(job)
    assert first.samples and _key(first) == _key(again)  # bf16 on the GPU, and still repeatable
    for s in first.samples:
        branched = ~np.isnan(s.target)
        assert branched.sum() >= 2 and np.isfinite(s.target[branched]).all()
    fp32 = play_job(replace(job, inference=FP32))
    assert len(fp32.outcomes) == len(first.outcomes)


def test_ray_with_a_gpu_plays_the_process_backends_games(make_net):
    from pipeline.selfplay import ray_executor

    ray = ray_executor.ray
    job = _job(make_net)
    with ray_executor.RayExecutor(2, "cuda") as ex:  # a private local Ray, started with torch's GPUs
        gpus = ex.map(lambda _: ray.get_gpu_ids(), [0, 1])
        result = ex.run(job)
        assert ray.cluster_resources().get("GPU", 0) == torch.cuda.device_count()
    assert all(ids for ids in gpus)
    with ProcessExecutor(2, start_method="spawn", device="cuda") as ex:
        assert _key(result) == _key(ex.run(job))  # the same split, the same batches, the same games


@pytest.mark.parametrize("precision", ["auto", "32-true", "16-mixed", "bf16-mixed"])
def test_a_gpu_pass_trains_and_leaves_the_weights_on_the_cpu(make_net, precision):
    if precision == "bf16-mixed" and not torch.cuda.is_bf16_supported(including_emulation=False):
        pytest.skip("this GPU has no native bf16")
    buffer = SampleBuffer(play_job(_job(make_net, "cpu")).samples)
    learner = PolicyLearner(make_net(0), lr=1e-3, algorithm=RolloutPolicyIteration("cross_entropy"), augment=False)
    before = {k: v.clone() for k, v in learner.net.state_dict().items()}
    losses = fit_pass(learner, buffer, 64, seed=0, precision=resolve_precision(precision, "gpu"), accelerator="gpu")
    assert losses and all(np.isfinite(v) for v in losses.values())
    assert all(p.device.type == "cpu" for p in learner.net.parameters())  # players and checkpoints read these
    assert any(not torch.equal(before[k], v) for k, v in learner.net.state_dict().items())
    state = learner.configure_optimizers().state_dict()["state"]
    assert all(t.device.type == "cpu" for s in state.values() for t in s.values() if torch.is_tensor(t))


def test_a_phase_with_its_devices_on_auto_runs_on_the_gpu(project, params, capsys):
    params["rl"].update(learner_device="auto", train_precision="auto", algorithm="rollout_pi")
    params["rl"]["selfplay"].update(device="auto", inference="auto", workers=2, start_method="spawn")
    params["rl"]["phase1"]["loops"] = 1
    summary = rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=True, mlflow=False)
    assert summary["loops"] == 1 and 0.0 <= summary["win_rate"] <= 1.0
    line = next(x for x in capsys.readouterr().err.splitlines() if x.startswith("rl_phase1[point]: learner on"))
    assert line.count("on cuda (") == 2


def test_a_non_finite_loss_on_the_gpu_stops_before_anything_is_saved(project, params):
    params["rl"].update(learner_device="cuda", lr=1e30)
    with pytest.raises(ValueError, match=r"^training loss is nan or inf by epoch 1, .*lower rl.lr$"):
        rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    assert not (project / "models/rl_phase1/point/model.pt").exists()


def test_bench_selfplay_on_the_gpu_prints_its_rates(capsys):
    from pipeline.cli import main

    assert main(["bench", "selfplay", "--games", "64", "--threads", "2", "--seconds", "0.5", "--device", "cuda"]) == 0
    r = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert r["device"] == "cuda" and r["setups"]
    assert all(row[k] > 0 for row in r["setups"].values() for k in ("games_per_s", "decisions_per_s"))
