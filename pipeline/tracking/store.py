"""Where MLflow runs go: one store for the repository (``mlruns/``, artifacts beside it), whoever starts the run,
``dvc exp run``'s temp copies included; ``MLFLOW_TRACKING_URI`` overrides it."""

import os
from pathlib import Path

from ..runtime.paths import repo_root
from .lifecycle import close_dead_runs
from .store_lock import sqlite_lock, sqlite_path
from .store_move import STORE_TAG, relocate

SQLITE = "sqlite:///"


def store_dir() -> Path:
    d = repo_root() / "mlruns"
    (d / "artifacts").mkdir(parents=True, exist_ok=True)
    return d


def tracking_uri() -> str:
    """``MLFLOW_TRACKING_URI`` if set, else the repository's SQLite store."""
    env = os.environ.get("MLFLOW_TRACKING_URI")
    if env:
        return env
    return f"{SQLITE}{store_dir() / 'mlflow.db'}"


def relocate_store(uri: str | None = None) -> list[Path]:
    db = sqlite_path(uri or tracking_uri())
    return relocate(db) if db is not None else []


def artifact_location() -> str | None:
    """Artifact root for new experiments: beside a SQLite store; None for a server or another database."""
    env = os.environ.get("MLFLOW_TRACKING_URI")
    if not env:
        return (store_dir() / "artifacts").as_uri()
    db = sqlite_path(env)
    return (db.parent / "artifacts").as_uri() if db is not None else None


def setup_experiment(name: str) -> str:
    """Point MLflow at the store and return the id of experiment ``name`` (created if missing), safely when
    several processes start at once; runs left RUNNING by a process that is gone are closed as KILLED."""
    import mlflow
    from mlflow.exceptions import MlflowException

    uri = tracking_uri()
    mlflow.set_tracking_uri(uri)
    with sqlite_lock(uri):
        relocate_store(uri)
        client = mlflow.MlflowClient(uri)  # the first client of a store creates and migrates its tables
        exp = client.get_experiment_by_name(name)
        if exp is not None:
            exp_id = exp.experiment_id
        else:
            try:
                db = sqlite_path(uri)
                exp_id = client.create_experiment(name, artifact_location=artifact_location(),
                                                  tags={STORE_TAG: str(db.parent)} if db else None)
            except MlflowException as e:  # a server store (no file lock): another process was first
                if e.error_code != "RESOURCE_ALREADY_EXISTS":
                    raise
                exp_id = client.get_experiment_by_name(name).experiment_id
    close_dead_runs(client, exp_id)
    return exp_id


if __name__ == "__main__":  # `python -m pipeline.tracking.store`: a moved store relocated, its URI printed (`make ui`)
    relocate_store()
    print(tracking_uri())
