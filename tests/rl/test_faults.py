"""Faults in the RL stages: NaN params and losses, Ctrl-C, kill -9, kills while logging, corrupt state files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import mlflow
import psutil
import pytest
import torch
import yaml

from pipeline.params import ParamError, parse_params
from pipeline.rl.training import STATE_FILE
from stages import rl_phase
from stages.rl_phase import PhasePaths, rl_stage


def _runs(name: str = "rl") -> list:
    # the project's store by name: an earlier test's in-process run left MLflow's global URI on its own store
    client = mlflow.MlflowClient(os.environ["MLFLOW_TRACKING_URI"])
    exp = client.get_experiment_by_name(name)
    return client.search_runs([exp.experiment_id]) if exp else []


@pytest.mark.parametrize("path", [("rl", "lr"), ("rl", "epsilon", "start"), ("rl", "reward_scale", "wp"),
                                  ("rl", "branch", "temperature", "wp"), ("winprob", "C")])
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_nan_and_inf_params_are_refused_by_name(project, params, path, value):
    d = params
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value
    with pytest.raises(ParamError, match=rf"{'.'.join(path)} must be a finite number"):
        rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)


def test_a_non_finite_loss_stops_training_and_keeps_the_previous_model(project, params):
    params["rl"]["phase1"]["loops"] = 1
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    model = project / "models/rl_phase1/point/model.pt"
    before = model.read_bytes()
    state = project / "checkpoints/rl_phase1/point" / STATE_FILE
    params["rl"]["lr"] = 1e30  # finite, so allowed; Adam's first step makes the weights overflow
    params["rl"]["phase1"]["loops"] = 3
    with pytest.raises(ValueError, match=r"^training loss is (nan|inf) at epoch 1, .*lower rl.lr$"):
        rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False)
    assert model.read_bytes() == before  # the earlier run's model is untouched
    assert torch.load(state, weights_only=True)["state"]["loop"] <= 1  # no loop with NaN weights was kept
    (run,) = [r for r in _runs() if r.info.run_name == "rl-phase1-point"]
    assert run.info.status == "FAILED"


def _write_project_params(project: Path, params: dict) -> None:
    (project / "params.yaml").write_text(yaml.safe_dump(params))


def test_ctrl_c_in_training_is_one_line_exit_130_and_a_killed_run_the_rerun_finishes(project, params,
                                                                                     monkeypatch, capfd):
    from pipeline.rl.learner import PolicyLearner

    _write_project_params(project, params)
    real_step = PolicyLearner.training_step

    def interrupted(self, batch, batch_idx):
        raise KeyboardInterrupt  # as Ctrl-C inside Lightning's fit

    monkeypatch.setattr(PolicyLearner, "training_step", interrupted)
    with pytest.raises(SystemExit) as e:
        rl_phase.main(["1", "point", *PhasePaths.layout(1, "point").argv()])
    assert e.value.code == 130
    err = capfd.readouterr().err.strip().splitlines()
    assert err[-1] == "rl_phase1: interrupted" and not any("Traceback" in line for line in err)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Lightning's SIG_IGN undone
    (run,) = _runs()
    assert run.info.status == "KILLED"

    monkeypatch.setattr(PolicyLearner, "training_step", real_step)
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False)
    (again,) = _runs()  # the rerun continued the same run and finished it
    assert again.info.run_id == run.info.run_id and again.info.status == "FINISHED"


def test_a_kill_while_the_model_is_logged_leaves_one_model_and_final_metrics_once(project, params, monkeypatch):
    params["rl"]["phase1"]["loops"] = 1
    real_log = mlflow.pyfunc.log_model

    def killed_while_logging(*args, **kwargs):  # what a kill -9 inside log_model leaves: a PENDING model
        run = mlflow.active_run()
        mlflow.MlflowClient().create_logged_model(run.info.experiment_id, name="model",
                                                  source_run_id=run.info.run_id)
        raise KeyboardInterrupt

    monkeypatch.setattr(mlflow.pyfunc, "log_model", killed_while_logging)
    with pytest.raises(KeyboardInterrupt):
        rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False)
    (run,) = _runs()
    assert run.info.status == "KILLED"

    monkeypatch.setattr(mlflow.pyfunc, "log_model", real_log)
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False)
    (run,) = _runs()
    assert run.info.status == "FINISHED"
    client = mlflow.MlflowClient()
    models = [m for m in client.search_logged_models([run.info.experiment_id]) if m.source_run_id == run.info.run_id]
    assert [m.status.name for m in models] == ["READY"]
    assert len(client.get_metric_history(run.info.run_id, "final/win_rate")) == 1
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"),
             progress=False)  # finished: a third run adds nothing either
    assert len(client.get_metric_history(run.info.run_id, "final/win_rate")) == 1
    assert len([m for m in client.search_logged_models([run.info.experiment_id])]) == 1


def test_a_corrupt_state_file_is_set_aside_with_one_line_and_training_restarts(project, params, capfd):
    params["rl"]["phase1"]["loops"] = 1
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    ckpt = project / "checkpoints/rl_phase1/point"
    state = ckpt / STATE_FILE
    state.write_bytes(state.read_bytes()[:100])  # cut short
    out = rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    assert out["loops"] == 1
    err = capfd.readouterr().err
    line = next(x for x in err.splitlines() if "state.pt" in x)
    assert line.startswith("rl_phase1: checkpoints/rl_phase1/point/state.pt is corrupt")
    assert line.endswith("moved to corrupt-state.pt, starting afresh")
    assert "weights_only" not in err and "Traceback" not in err
    assert (ckpt / f"corrupt-{STATE_FILE}").is_file() and state.is_file()


def test_the_model_meta_holds_no_wall_clock_value(project, params):
    params["rl"]["phase1"]["loops"] = 1
    first = rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    config = project / "models/rl_phase1/point/config.json"
    before = config.read_bytes()
    (project / "checkpoints/rl_phase1/point" / STATE_FILE).unlink()
    second = rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"),
                      progress=False, mlflow=False)  # the same run, from the start
    assert config.read_bytes() == before  # byte-identical: a DVC dependency that does not change by itself
    assert "train_seconds" not in json.loads(before)["meta"] and "train_seconds" in first
    assert json.loads((project / "results/rl_phase1/point/metrics.json").read_text())["train_seconds"] >= 0
    assert second["win_rate"] == first["win_rate"]


def _spawned_children(pid: int) -> list[psutil.Process]:
    try:
        return [c for c in psutil.Process(pid).children(recursive=True)
                if "spawn_main" in " ".join(c.cmdline()) or "resource_tracker" in " ".join(c.cmdline())]
    except psutil.Error:
        return []


def _alive(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.slow
def test_kill_9_of_a_stage_leaves_no_orphan_and_the_rerun_closes_and_continues_its_run(project, params):
    params["rl"]["selfplay"]["workers"] = 2
    # the kill comes while the workers start, before any game: 8 evaluation games and one loop leave the stage
    # running well past it, and the rerun (in full, on the same params) short
    params["rl"]["eval_games"] = 8
    params["rl"]["phase1"]["loops"] = 1
    _write_project_params(project, params)
    stage = subprocess.Popen([sys.executable, "-m", "stages.rl_phase", "1", "point",
                              *PhasePaths.layout(1, "point").argv()], cwd=project,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        workers: list[psutil.Process] = []
        while time.monotonic() < deadline and stage.poll() is None:
            workers = _spawned_children(stage.pid)
            if sum("spawn_main" in " ".join(w.cmdline()) for w in workers if _alive(w)) >= 2:
                break  # the run has started (before the pool): kill it while its workers start
            time.sleep(0.2)
        assert stage.poll() is None, stage.stderr.read()[-2000:]
        assert len(workers) >= 3  # two workers and the resource tracker
        os.kill(stage.pid, signal.SIGKILL)
        stage.wait(timeout=30)
    finally:
        stage.kill()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.2)
    assert not [w.pid for w in workers if _alive(w)], "orphaned workers outlived the killed stage"
    (run,) = _runs()
    assert run.info.status == "RUNNING"  # what the kill left

    params["rl"]["selfplay"]["workers"] = 0  # not part of the checkpoint's fingerprint: still the same run
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False)
    (run_after,) = _runs()  # no second run: the rerun closed the dead one (KILLED) and continued it
    assert run_after.info.run_id == run.info.run_id and run_after.info.status == "FINISHED"
    assert "koikoi.closed" in run_after.data.tags


def test_close_dead_runs_only_closes_runs_of_ended_processes(tmp_path, new_store):
    from pipeline.tracking.lifecycle import HOST_TAG, PID_TAG, STARTED_TAG, owner_tags
    from pipeline.tracking.store import setup_experiment

    new_store(tmp_path / "mlflow.db")
    exp = setup_experiment("rl")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    started = psutil.Process(gone.pid).create_time()
    gone.wait()
    client = mlflow.MlflowClient()
    dead = client.create_run(exp, tags={HOST_TAG: owner_tags()[HOST_TAG], PID_TAG: str(gone.pid),
                                        STARTED_TAG: f"{started:.3f}"}).info.run_id
    mine = client.create_run(exp, tags=owner_tags()).info.run_id
    elsewhere = client.create_run(exp, tags={HOST_TAG: "another-host", PID_TAG: "1", STARTED_TAG: "0"}).info.run_id
    setup_experiment("rl")
    status = {r: client.get_run(r).info.status for r in (dead, mine, elsewhere)}
    assert status == {dead: "KILLED", mine: "RUNNING", elsewhere: "RUNNING"}


def test_no_loop_outlives_its_checkpoint(project, params, monkeypatch):
    """After every loop's checkpoint (and the start evaluation's) the memory of the loops before is free: no
    Lightning ``Trainer`` of theirs lives on (the last loop's is still held), nor, through its data loader, their
    samples. They sat in reference cycles that Python's rare full collections freed late, so the learner's RSS grew
    by 20-40 MB a loop (docs/faults.md, "RL main-process memory"). Counted in the objects alive, not in calls: what
    the release must achieve."""
    import gc

    import lightning.pytorch as pl

    from pipeline.rl import training
    from pipeline.rl.learner import SampleBuffer

    alive, real = [], training.release_free_memory

    def checked() -> None:
        real()
        alive.append(sum(isinstance(o, pl.Trainer | SampleBuffer) for o in gc.get_objects()))

    monkeypatch.setattr(training, "release_free_memory", checked)
    rl_stage(1, "point", parse_params(params), PhasePaths.layout(1, "point"), progress=False, mlflow=False)
    loops = params["rl"]["phase1"]["loops"]
    # counted from the start evaluation's (objects an earlier test of this process left are no loop's): the last
    # loop's Trainer and its buffer, the same after every loop
    assert loops >= 2 and len(alive) >= 1 + loops and len(set(alive[1:])) == 1 and alive[1] - alive[0] <= 2, alive
