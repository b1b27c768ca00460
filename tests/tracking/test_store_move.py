"""A copied or moved MLflow store works where it now is: the project's entry points rewrite its artifact paths
(with one line saying so), and nothing is read from, or written to, the original place."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys

import mlflow
import numpy as np
import pytest
import torch
from mlflow.exceptions import MlflowException
from tiny import TINY

from pipeline.net.model import KoiKoiNet
from pipeline.net.modelio import save_model
from pipeline.tracking.registry import log_model
from pipeline.tracking.store import setup_experiment
from pipeline.tracking.store_move import PATH_COLUMNS, relocate


def test_a_moved_store_reads_and_writes_where_it_now_is(tmp_path, monkeypatch, new_store):
    old = tmp_path / "old" / "mlruns"
    new_store(old / "mlflow.db")
    torch.manual_seed(0)
    model = save_model(KoiKoiNet(TINY).eval(), tmp_path / "m", {"kind": "sl"})
    with mlflow.start_run(experiment_id=setup_experiment("sl")) as run:
        log_model(model, register=True)
        mlflow.log_text("kept", "note.txt")
    run_id = run.info.run_id

    new = tmp_path / "new" / "mlruns"
    shutil.move(tmp_path / "old", tmp_path / "new")  # the project directory moved: the original is gone
    uri = f"sqlite:///{new}/mlflow.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    client = mlflow.MlflowClient(uri)
    assert client.get_run(run_id).info.artifact_uri.startswith(old.as_uri())  # what MLflow alone would use
    with pytest.raises((OSError, MlflowException)):
        mlflow.artifacts.load_text(f"runs:/{run_id}/note.txt")

    # `make ui` (python -m pipeline.tracking.store), like every stage (setup_experiment), puts it right, in one line
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri}
    out = subprocess.run([sys.executable, "-m", "pipeline.tracking.store"], capture_output=True, text=True, env=env,
                         check=True, timeout=120)
    assert out.stdout.strip() == uri
    assert out.stderr.strip() == f"mlflow store {new} was made in {old}: its artifact paths now point here"
    again = subprocess.run([sys.executable, "-m", "pipeline.tracking.store"], capture_output=True, text=True, env=env,
                           check=True, timeout=120)
    assert again.stderr == ""

    assert client.get_run(run_id).info.artifact_uri.startswith((new / "artifacts").as_uri())
    assert mlflow.artifacts.load_text(f"runs:/{run_id}/note.txt") == "kept"
    with sqlite3.connect(new / "mlflow.db") as con:  # no path of the old place is left in the database
        for table, column in PATH_COLUMNS:
            values = [v for (v,) in con.execute(f"SELECT {column} FROM {table}") if v]
            assert not [v for v in values if str(old) in v], (table, column)
            if table != "experiments":  # the Default experiment's root is MLflow's, wherever the test ran
                assert all(str(new) in v or v.startswith("models:/") for v in values), (table, column, values)
    loaded = mlflow.pyfunc.load_model("models:/koikoi-sl/1")
    x = np.zeros((1, 270, 50), dtype=np.float32)
    assert loaded.predict({"x": x, "decision": np.zeros(1, dtype=np.int64)}).shape == (1, 50)
    with mlflow.start_run(experiment_id=setup_experiment("sl")) as later:
        mlflow.log_text("new", "note.txt")
    assert (new / "artifacts" / later.info.run_id / "artifacts" / "note.txt").is_file()
    assert not (tmp_path / "old").exists()


def test_a_store_whose_artifacts_live_elsewhere_by_design_is_left_alone(tmp_path, new_store):
    db = tmp_path / "db" / "mlflow.db"
    client = mlflow.MlflowClient(new_store(db))
    client.create_experiment("x", artifact_location=(tmp_path / "shared" / "artifacts").as_uri())
    assert relocate(db) == []
    assert client.get_experiment_by_name("x").artifact_location == (tmp_path / "shared" / "artifacts").as_uri()
