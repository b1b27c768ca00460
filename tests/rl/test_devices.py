"""Where RL, win-probability and duel play run (``rl.learner_device``, ``rl.selfplay.device``, ``winprob.device``,
``duels.device``): checked like every param, refused where no GPU is seen, resolved by the rule of ``rl/devices.py``
(a GPU is faked here, so this runs on any machine), printed and logged, and part of the fingerprint. The runs on a
real GPU are tests/rl/test_cuda.py."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from pipeline.net.inference import resolve_inference
from pipeline.params import ParamError, parse_params
from pipeline.rl import devices
from pipeline.rl.phase_state import PhaseConfig, phase_fingerprint
from pipeline.runtime import hardware
from pipeline.selfplay.batched import GameSpec, PlayJob
from pipeline.selfplay.executor import InlineExecutor
from pipeline.selfplay.policies import NetSpec
from pipeline.selfplay.rewards import RewardModel
from stages.rl_phase import PhasePaths, rl_stage

no_gpu = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machines without a GPU")


@pytest.fixture
def fake_gpu(monkeypatch):
    """torch sees one CUDA GPU with native bf16 (nothing runs on it here: only the choices are checked)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H100 80GB HBM3")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)


@pytest.mark.parametrize("path", [("rl", "learner_device"), ("rl", "selfplay", "device"), ("winprob", "device"),
                                  ("duels", "device")])
def test_device_params_are_checked(params, path):
    d = params
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = "gpu"
    with pytest.raises(ParamError, match=rf"{'.'.join(path)} must be one of auto, cpu, cuda; got 'gpu'"):
        parse_params(params)


@no_gpu
@pytest.mark.parametrize("key", ["learner_device", "selfplay.device"])
def test_cuda_without_a_gpu_is_one_clear_error(project, params, key):
    *parents, leaf = ["rl", *key.split(".")]
    d = params
    for k in parents:
        d = d[k]
    d[leaf] = "cuda"
    with pytest.raises(ValueError, match=rf"^rl\.{key} is cuda but torch sees no CUDA GPU .*; use auto or cpu$"):
        rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)


def test_auto_puts_the_learner_and_local_players_on_the_gpu_and_cluster_players_on_cpus(params, fake_gpu,
                                                                                      monkeypatch):
    params["rl"].update(learner_device="auto", train_precision="auto")
    params["rl"]["selfplay"].update(device="auto", inference="auto")
    d = devices.resolve_devices(parse_params(params).rl)
    assert (d.learner, d.train_precision, d.play, d.inference.setup, d.accelerator) == ("cuda", "bf16-mixed", "cuda",
                                                                                         "fp32", "gpu")
    params["rl"]["selfplay"].update(backend="ray", workers=4)
    assert devices.resolve_devices(parse_params(params).rl).play == "cuda"  # a private local Ray: this machine
    monkeypatch.setenv("RAY_ADDRESS", "head:6379")
    d = devices.resolve_devices(parse_params(params).rl)
    assert (d.learner, d.play, d.inference) == ("cuda", "cpu", resolve_inference("auto"))  # every node plays
    params["rl"]["selfplay"]["device"] = "cuda"
    assert devices.resolve_devices(parse_params(params).rl).play == "cuda"  # asked for: the cluster's GPUs
    params["rl"].update(learner_device="cpu", train_precision="auto")
    params["rl"]["selfplay"].update(device="cpu", backend="process")
    d = devices.resolve_devices(parse_params(params).rl)
    assert (d.learner, d.play, d.auto) == ("cpu", "cpu", (False, False))


def test_auto_keeps_players_that_search_with_a_rollout_policy_on_the_cpus(params, fake_gpu):
    """Many small forward passes of a small network: one shared GPU serves them slower than the workers' cores."""
    params["rl"].update(learner_device="auto", train_precision="auto")
    params["rl"]["selfplay"].update(device="auto", inference="auto")
    params["rl"]["phase2"]["algorithm"] = "expert_it"
    params["rl"]["expert"]["rollout"] = "models/rollout"
    rl = parse_params(params).rl
    assert (devices.resolve_devices(rl, 1).play, devices.resolve_devices(rl, 2).play) == ("cuda", "cpu")
    assert devices.resolve_devices(rl, 2).learner == "cuda"
    params["rl"]["expert"]["rollout"] = "self"  # the searched network's own playouts: the GPU's
    assert devices.resolve_devices(parse_params(params).rl, 2).play == "cuda"
    params["rl"]["expert"]["rollout"] = "models/rollout"
    params["rl"]["selfplay"]["device"] = "cuda"  # asked for
    assert devices.resolve_devices(parse_params(params).rl, 2).play == "cuda"


def _cfg(project, params) -> PhaseConfig:
    p = PhasePaths.layout(1, "point")
    return PhaseConfig(1, "point", parse_params(params).rl, parse_params(params).winprob, p.sl, p.out, p.results,
                       p.checkpoints)


def _fingerprint(project, params) -> str:
    cfg = _cfg(project, params)
    return phase_fingerprint(replace(cfg, execution=devices.execution_key(devices.resolve_devices(cfg.params),
                                                                          cfg.params)))


def test_the_fingerprint_holds_what_changes_the_games_on_a_device(project, params, fake_gpu):
    sp = params["rl"]["selfplay"]
    cpu = _fingerprint(project, params)
    sp.update(workers=3, concurrency=16)
    assert _fingerprint(project, params) == cpu  # on the CPU, batched play equals one-by-one play
    params["rl"]["learner_device"] = "cuda"
    on_gpu = _fingerprint(project, params)
    assert on_gpu != cpu  # other kernels, other weights
    sp["device"] = "cuda"
    play_gpu = _fingerprint(project, params)
    assert play_gpu != on_gpu
    sp["workers"] = 2
    assert _fingerprint(project, params) != play_gpu  # on CUDA the split changes the batches, so the games
    sp["inference"] = "bf16"
    assert _fingerprint(project, params) != play_gpu
    sp.update(workers=3, inference="fp32")
    assert _fingerprint(project, params) == play_gpu
    params["rl"]["learner_device"] = params["rl"]["selfplay"]["device"] = "auto"  # auto is the GPU here
    assert _fingerprint(project, params) == play_gpu


def test_a_runner_fingerprints_its_resolved_devices(project, params):
    from pipeline.rl.training import PhaseRunner

    runner = PhaseRunner(_cfg(project, params), executor=InlineExecutor())
    assert runner.cfg.execution == {"learner": ["cpu", "32-true"], "play": ["cpu", "fp32"]}
    assert phase_fingerprint(runner.cfg) == _fingerprint(project, params) != phase_fingerprint(_cfg(project, params))


def test_a_phase_prints_and_logs_where_it_runs(project, params, capsys):
    import mlflow

    params["rl"]["phase1"]["loops"] = 1
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=True, mlflow=True)
    err = capsys.readouterr().err
    cpu = hardware.device_name("cpu")
    assert f"rl_phase1[point]: learner on cpu ({cpu}) in 32-true; selfplay on cpu ({cpu}) in fp32\n" in err
    client = mlflow.MlflowClient()
    (run,) = client.search_runs([client.get_experiment_by_name("rl").experiment_id])
    logged = run.data.params
    assert {k: logged[k] for k in ("device.learner", "precision.learner", "device.selfplay", "precision.selfplay",
                                   "rl.learner_device", "rl.selfplay.device")} == {
        "device.learner": "cpu", "precision.learner": "32-true", "device.selfplay": "cpu",
        "precision.selfplay": "fp32", "rl.learner_device": "cpu", "rl.selfplay.device": "cpu"}
    assert logged["device.torch"] == torch.__version__ and logged["device.gpu"] in ("none", hardware.gpu_problem())


def failing_compile(monkeypatch) -> None:
    def compile(fn, **_):
        def call(*args):
            raise RuntimeError("no compiler here")
        return call

    monkeypatch.setattr(torch, "compile", compile)


def test_a_runner_fingerprints_the_setup_its_compile_check_leaves(project, params, monkeypatch):
    """A compile that fails on this machine: the players run fp32, and the checkpoint's fingerprint says so (a
    rerun where it compiles does not resume those games as compiled ones)."""
    from pipeline.rl.training import PhaseRunner

    failing_compile(monkeypatch)
    params["rl"]["selfplay"]["inference"] = "compile-fp32"
    runner = PhaseRunner(_cfg(project, params), executor=InlineExecutor())
    assert runner.inference.setup == "fp32"
    assert runner.cfg.execution == {"learner": ["cpu", "32-true"], "play": ["cpu", "fp32"]}


def test_winprob_records_the_setup_its_compile_check_leaves(project, params, capsys, monkeypatch):
    from stages.winprob import winprob_stage

    failing_compile(monkeypatch)
    params["winprob"].update(inference="compile-fp32", games=2)
    winprob_stage(parse_params(params).winprob, "models/winprob", "results/winprob", progress=True, mlflow=False)
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("winprob: play on")]
    assert line.endswith(" in fp32")


@no_gpu
def test_auto_beside_a_gpu_torch_cannot_use_says_what_to_run(project, params, capsys, monkeypatch):
    from stages.winprob import winprob_stage

    monkeypatch.setattr(hardware, "nvidia_driver", lambda: "550.54.14")
    monkeypatch.setattr(torch.version, "cuda", None)  # a CPU-only build, as this machine's
    params["winprob"]["device"] = "auto"
    winprob_stage(parse_params(params).winprob, "models/winprob", "results/winprob", progress=True, mlflow=False)
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("winprob: ")]
    assert len(lines) == 2 and lines[0].startswith("winprob: play on cpu (")
    assert lines[1] == (f"winprob: warning: this run uses the CPU: an NVIDIA GPU is present (driver 550.54.14) but "
                        f"torch {torch.__version__} is a CPU-only build: run `make setup TORCH=cuda` (or TORCH=cu126 "
                        "for a driver older than 580; docs/scaling.md)")


def test_job_device_is_the_executors(make_net):
    spec = NetSpec.from_net(make_net(0), "a", 0.2)
    job = PlayJob(players=(spec,), games=tuple(GameSpec(i, (0, 0), (True, True)) for i in range(3)),
                  reward=RewardModel("point"), num_rounds=2)
    parts = InlineExecutor("cuda").parts(replace(job, device="cpu"))
    assert [p.device for p in parts] == ["cuda"]
