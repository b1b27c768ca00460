"""Several `koikoi tune` processes, one study: Optuna's RDB storage on a real PostgreSQL server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import mlflow
import optuna
import pytest
import yaml
from optuna.trial import TrialState

from pipeline.cli import main
from pipeline.params import read_doc, with_overrides
from pipeline.tune import runs

# A trial is one epoch of a width-16, one-layer network on three games: a second or two.
PARAMS = with_overrides(read_doc(Path(__file__).resolve().parents[2] / "params.yaml"), {
    "sl_train.max_epochs": 1, "sl_train.patience": 1, "sl_train.seed": 0, "sl_train.threads": 1,
    "tune.target": "sl", "tune.max_epochs": 1, "tune.startup_trials": 1, "tune.warmup_epochs": 0,
    "tune.space": {"sl": {"heads": [2], "head_dim": [8], "layers": 1, "ff": [32], "batch_size": [64]}}})


@pytest.mark.slow
def test_two_processes_share_one_postgresql_study(synthetic_dataset, make_database, tmp_path, monkeypatch):
    storage, tracking = make_database("optuna"), make_database("mlflow")
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(PARAMS))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", tracking)
    mlflow.set_tracking_uri(tracking)
    mlflow.create_experiment(runs.EXPERIMENT, artifact_location=(tmp_path / "artifacts").as_uri())
    common = ["tune", "--params", str(params), "--dataset", str(synthetic_dataset), "--storage", storage,
              "--study", "shared"]

    # Created once (one study, one MLflow parent run), then each machine adds trials with its own seed.
    assert main([*common, "--trials", "0", "--out", str(tmp_path / "out0")]) == 0
    procs = [subprocess.Popen([sys.executable, "-m", "pipeline.cli", *common, "--trials", "2", "--seed", str(seed),
                               "--out", str(tmp_path / f"out{seed}")],
                              cwd=tmp_path, env={**os.environ, "MLFLOW_TRACKING_URI": tracking},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for seed in (1, 2)]
    outputs = [p.communicate(timeout=400) for p in procs]
    for p, (_, err) in zip(procs, outputs):
        assert p.returncode == 0, err[-2000:]
    summaries = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert [s["trials_this_session"] for s in summaries] == [2, 2]
    numbers = [set(s["session_trial_numbers"]) for s in summaries]
    assert not numbers[0] & numbers[1] and numbers[0] | numbers[1] == {0, 1, 2, 3}  # the trials of each process
    assert "postgres@127.0.0.1" in summaries[0]["storage"]

    study = optuna.load_study(study_name="shared", storage=storage)
    trials = study.get_trials()
    assert sorted(t.number for t in trials) == [0, 1, 2, 3]  # both processes' trials, no number twice
    assert len({t._trial_id for t in trials}) == 4
    assert all(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in trials)
    assert len({tuple(sorted(t.params.items())) for t in trials}) == 4  # no point drawn twice

    parent = study.user_attrs[runs.PARENT_ATTR]
    client = mlflow.MlflowClient(tracking)
    for t in trials:  # each trial its own MLflow run, nested under the study's one parent run
        run = client.get_run(t.user_attrs[runs.RUN_ATTR])
        assert run.data.tags["mlflow.parentRunId"] == parent
        assert run.data.tags[runs.STATE_TAG] == t.state.name
