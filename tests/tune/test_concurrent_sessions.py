"""Sessions that start at once: a fresh SQLite MLflow store and Optuna study survive them, they agree on
one parent run, and they draw distinct trials."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import mlflow
import pytest

from pipeline.params import load_params, overridden
from pipeline.tune import runs
from pipeline.tune.study import open_study

ROOT = Path(__file__).resolve().parents[2]

# Everything heavy is imported before the start line, so the processes reach the stores together.
AT_ONCE = """
import pathlib, sys, time
import alembic, mlflow, optuna, sqlalchemy
import mlflow.store.tracking.sqlalchemy_store
from pipeline.cli import main
from pipeline.tune import runs, study, tuning_session
ready, go = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
ready.touch()
while not go.exists():
    time.sleep(0.005)
sys.exit(main(sys.argv[3:]))
"""


@pytest.mark.slow
def test_sessions_started_at_once_on_fresh_stores_all_finish_with_one_parent_run(tmp_path):
    n = 2  # two at once race for the fresh stores (a third only adds its start-up: seconds of imports)
    uri = f"sqlite:///{tmp_path}/mlruns/mlflow.db"
    storage = f"sqlite:///{tmp_path}/mlruns/optuna.db"
    (tmp_path / "params.yaml").write_text((ROOT / "params.yaml").read_text())
    go = tmp_path / "go"
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri}
    procs = [subprocess.Popen([sys.executable, "-c", AT_ONCE, str(tmp_path / f"ready{i}"), str(go), "tune",
                               "--trials", "0", "--params", str(tmp_path / "params.yaml"), "--storage", storage,
                               "--out", str(tmp_path / f"out{i}")],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(n)]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not all((tmp_path / f"ready{i}").exists() for i in range(n)):
        assert all(p.poll() is None for p in procs), [p.communicate()[1][-2000:] for p in procs if p.poll()]
        time.sleep(0.05)
    go.touch()
    outputs = [p.communicate(timeout=300) for p in procs]
    for p, (_, err) in zip(procs, outputs):
        assert p.returncode == 0, err[-3000:]
    parents = {json.loads(out.strip().splitlines()[-1])["mlflow_parent_run_id"] for out, _ in outputs}
    assert len(parents) == 1  # one parent run per study, not one per session
    client = mlflow.MlflowClient(uri)
    exp = client.get_experiment_by_name(runs.EXPERIMENT)
    (parent,) = client.search_runs([exp.experiment_id])
    assert parent.info.run_id in parents and parent.info.status == "FINISHED"
    # the store still works for a lone run afterwards
    mlflow.set_tracking_uri(uri)
    with mlflow.start_run(experiment_id=exp.experiment_id) as run:
        mlflow.log_metric("x", 1.0)
    assert client.get_run(run.info.run_id).data.metrics == {"x": 1.0}


def test_setup_experiment_finds_an_experiment_created_meanwhile(tmp_path, monkeypatch, new_store):
    from mlflow.exceptions import MlflowException

    from pipeline.tracking.store import setup_experiment

    new_store(tmp_path / "mlflow.db")
    first = setup_experiment("race")
    real_get = mlflow.MlflowClient.get_experiment_by_name
    calls = []

    def not_yet(self, name):  # the other process creates it between this process's look and its create
        calls.append(name)
        return None if len(calls) == 1 else real_get(self, name)

    monkeypatch.setattr(mlflow.MlflowClient, "get_experiment_by_name", not_yet)
    assert setup_experiment("race") == first and len(calls) == 2
    with pytest.raises(MlflowException):  # any other failure still surfaces
        monkeypatch.setattr(mlflow.MlflowClient, "create_experiment",
                            lambda *a, **k: (_ for _ in ()).throw(MlflowException("disk full")))
        setup_experiment("another")


def test_sessions_with_the_same_seed_draw_their_own_trials(tmp_path):
    def session(storage: str) -> object:
        cfg = overridden(load_params(ROOT / "params.yaml").tune,
                         {"storage": f"sqlite:///{tmp_path}/{storage}", "seed": 0, "startup_trials": 5}, "tune")
        return open_study(cfg)

    a, b = session("shared.db"), session("shared.db")  # both opened before either asked for a trial
    ta, tb = a.ask(), b.ask()
    xa, xb = ta.suggest_float("x", 0.0, 1.0), tb.suggest_float("x", 0.0, 1.0)
    assert {ta.number, tb.number} == {0, 1} and xa != xb
    # reproducible: trial k of a study draws the same point whichever session runs it
    c = session("other.db")
    assert c.ask().suggest_float("x", 0.0, 1.0) == (xa if ta.number == 0 else xb)
