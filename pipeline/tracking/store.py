"""Where MLflow runs go: one store for the repository, whoever starts the run.

The default store is a SQLite database in the top-level ``mlruns/`` with artifacts
beside it in ``mlruns/artifacts/``. ``MLFLOW_TRACKING_URI`` overrides it: another SQLite
file keeps its artifacts beside it in the same way, a server decides for itself. (Left
to itself, MLflow would put the artifacts of a SQLite store under ``./mlruns`` of whatever
directory a run starts in.) ``dvc exp run`` executes queued experiments in a copy under
``.dvc/tmp/exps/``; those runs still land in the main repository's ``mlruns/``. A store that was
copied or moved is pointed at its new place before use (``store_move``).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..runtime.paths import repo_root
from .lifecycle import close_dead_runs
from .store_lock import sqlite_lock
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


def sqlite_file(uri: str) -> Path | None:
    """The database file of a SQLite tracking URI; None for a server, another database or an in-memory one."""
    if not uri.startswith("sqlite:"):
        return None
    from sqlalchemy.engine import make_url

    db = make_url(uri).database
    return Path(db) if db and db != ":memory:" else None


def relocate_store(uri: str | None = None) -> list[Path]:
    """Point a copied or moved SQLite store's artifact paths at where it now is (``store_move.relocate``)."""
    db = sqlite_file(uri or tracking_uri())
    return relocate(db) if db is not None else []


def artifact_location() -> str | None:
    """Artifact root for new experiments: beside a SQLite store, the repository's or another one named
    by ``MLFLOW_TRACKING_URI`` (MLflow's own default is ./mlruns of whatever directory the run starts
    in); ``None`` for a server or another database (the server, or MLflow, decides)."""
    env = os.environ.get("MLFLOW_TRACKING_URI")
    if not env:
        return (store_dir() / "artifacts").as_uri()
    db = sqlite_file(env)
    return (db.resolve().parent / "artifacts").as_uri() if db is not None else None


def setup_experiment(name: str) -> str:
    """Point MLflow at the store and return the id of experiment ``name`` (created if missing).

    Safe when several processes start at once on a fresh store: a SQLite store is created and migrated
    by the first of them under a file lock, and an experiment another process has just created is
    found, not created twice. Runs of the experiment left RUNNING by a process that is gone are closed
    as KILLED (``lifecycle.close_dead_runs``)."""
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
                db = sqlite_file(uri)
                exp_id = client.create_experiment(name, artifact_location=artifact_location(),
                                                  tags={STORE_TAG: str(db.resolve().parent)} if db else None)
            except MlflowException as e:  # a server store (no file lock): another process was first
                if e.error_code != "RESOURCE_ALREADY_EXISTS":
                    raise
                exp_id = client.get_experiment_by_name(name).experiment_id
    close_dead_runs(client, exp_id)
    return exp_id


if __name__ == "__main__":  # `python -m pipeline.tracking.store`: a moved store relocated, its URI printed (`make ui`)
    relocate_store()
    print(tracking_uri())
