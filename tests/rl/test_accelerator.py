"""``rl.accelerator``: checked like every param, refused where no GPU is seen; on a GPU the learner's
pass and the players' forward passes run there (those tests skip without CUDA)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from pipeline.agents.model_agent import NetPlayer
from pipeline.hardware import resolve_precision
from pipeline.params import ParamError, parse_params
from pipeline.rl.learner import QLearner, SampleBuffer, fit_pass
from pipeline.rl.policies import NetSpec
from pipeline.rl.rewards import RewardModel
from pipeline.rl.selfplay import GameSpec, PlayJob, play_job
from pipeline.stages.rl_phase import PhasePaths, rl_stage

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU (torch.cuda.is_available() is false)")


def _job(make_net, device: str = "cpu") -> PlayJob:
    spec = NetSpec.from_net(make_net(0), "a", 0.2)
    return PlayJob(players=(spec,), games=tuple(GameSpec(i, (0, 0), (True, True)) for i in range(3)),
                   reward=RewardModel("point"), num_rounds=2, device=device)


def test_accelerator_param_is_checked(params):
    params["rl"]["accelerator"] = "tpu"
    with pytest.raises(ParamError, match=r"rl\.accelerator must be one of auto, cpu, gpu; got 'tpu'"):
        parse_params(params)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machines without a GPU")
def test_gpu_without_a_gpu_is_one_clear_error(project, params):
    params["rl"]["accelerator"] = "gpu"
    with pytest.raises(ValueError, match=r"^rl\.accelerator is gpu but torch sees no CUDA GPU"):
        rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)


@cuda
def test_gpu_forward_passes_match_the_cpu(make_net):
    from pipeline.engine import GameState

    states = [GameState(seed=s) for s in range(8)]
    obs = [s.observation(s.player) for s in states]
    net = make_net(0)
    on_cpu = NetPlayer(net).values(obs)
    on_gpu = NetPlayer(make_net(0), device="cuda").values(obs)
    legal = np.isfinite(on_cpu)
    assert (np.isfinite(on_gpu) == legal).all()
    np.testing.assert_allclose(on_gpu[legal], on_cpu[legal], atol=1e-4)
    result = play_job(_job(make_net, "cuda"))
    assert len(result.outcomes) == 3 and result.samples


@cuda
def test_a_gpu_pass_trains_and_leaves_the_weights_on_the_cpu(make_net):
    buffer = SampleBuffer(play_job(_job(make_net)).samples)
    learner = QLearner(make_net(0), lr=1e-3)
    before = {k: v.clone() for k, v in learner.net.state_dict().items()}
    losses = fit_pass(learner, buffer, 64, seed=0, precision=resolve_precision("auto", "gpu"), accelerator="gpu")
    assert losses and all(np.isfinite(v) for v in losses.values())
    assert all(p.device.type == "cpu" for p in learner.net.parameters())  # players and checkpoints read these
    assert any(not torch.equal(before[k], v) for k, v in learner.net.state_dict().items())
    state = learner.configure_optimizers().state_dict()["state"]
    assert all(t.device.type == "cpu" for s in state.values() for t in s.values() if torch.is_tensor(t))


@cuda
def test_a_phase_runs_on_the_gpu(project, params):
    params["rl"].update(accelerator="gpu", train_precision="auto")
    params["rl"]["phase1"]["loops"] = 1
    summary = rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    assert summary["loops"] == 1 and 0.0 <= summary["win_rate"] <= 1.0


def test_job_device_is_the_executors(make_net):
    from pipeline.rl.executor import InlineExecutor

    job = _job(make_net)
    parts = InlineExecutor("cuda").parts(replace(job, device="cpu"))
    assert [p.device for p in parts] == ["cuda"]
