"""A team's MLflow tracking server: `mlflow server` on a loopback port, and a tiny SL training logging to it
through ``MLFLOW_TRACKING_URI=http://...`` (runs, metrics, artifacts and the registered model)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from pipeline.params import dotted, params_with
from pipeline.sl.train import EXPERIMENT, train_sl
from pipeline.tracking.registry import REGISTERED

ROOT = Path(__file__).resolve().parents[2]
TINY = {"width": 16, "ff": 32, "heads": 2, "layers": 1, "batch_size": 64, "max_epochs": 1, "patience": 1,
        "threads": 1, "card_logit": []}


def sl_params(**over):
    """The project's params.yaml sl_train section with TINY and ``over`` on top (checked: a ParamError if bad)."""
    return params_with(dotted({**TINY, **over}, "sl_train"), ROOT / "params.yaml").sl_train


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def tracking_server(tmp_path):
    """``mlflow server`` with a SQLite store and served artifacts in ``tmp_path``; yields its URL."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("mlflow")), "server", "--host", "127.0.0.1", "--port", str(port),
         "--workers", "1", "--backend-store-uri", f"sqlite:///{tmp_path}/server.db",
         "--artifacts-destination", str(tmp_path / "artifacts")],
        cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"mlflow server did not start: {(tmp_path / 'server.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.mark.slow
def test_sl_training_logs_to_a_tracking_server(tracking_server, synthetic_dataset, tmp_path, monkeypatch):
    import mlflow

    monkeypatch.setenv("MLFLOW_TRACKING_URI", tracking_server)
    result = train_sl(synthetic_dataset, tmp_path / "model", sl_params(), progress=False, register=True)

    client = mlflow.MlflowClient(tracking_server)
    run = client.get_run(result["run_id"])
    assert run.info.experiment_id == client.get_experiment_by_name(EXPERIMENT).experiment_id
    assert run.data.params["width"] == "16" and run.data.params["accelerator"] == "cpu"
    assert 0.0 <= run.data.metrics["final/val_acc"] <= 1.0
    assert "val/loss" in run.data.metrics  # the per-epoch curves, logged by Lightning's MLflow logger
    (version,) = client.search_model_versions(f"name='{REGISTERED['sl']}'")
    assert version.run_id == run.info.run_id
    assert any((tmp_path / "artifacts").rglob("model.pt"))  # the server stored the files, in its own folder


def test_artifacts_of_a_sqlite_store_go_beside_it(tmp_path, monkeypatch):
    from pipeline.tracking.store import artifact_location

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path}/team.db")
    assert artifact_location() == (tmp_path / "artifacts").as_uri()  # not ./mlruns of the working directory
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:5000")
    assert artifact_location() is None  # a server decides
