"""Resuming a run, in one place: whether a killed stage or tuning session continues where it stopped, and in
which MLflow run."""

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from ..net.modelio import read_weights
from ..runtime.atomic import write_text


def resume_point(path: str | Path, fp: str, who: str, fingerprint_of: Callable[[dict], str | None],
                 load: Callable[[Path, str], dict | None], usable: Callable[[dict], bool] | None = None,
                 keep_stale: bool = True) -> dict | None:
    """The checkpoint at ``path`` if made with fingerprint ``fp``, else None (a stale one set aside)."""
    path = Path(path)
    if not path.is_file() or (ck := load(path, who)) is None:
        return None
    theirs = fingerprint_of(ck)
    if theirs == fp and (usable is None or usable(ck)):
        return ck
    if keep_stale:
        stale = path.with_name(f"stale-{theirs or 'unknown'}{path.suffix}")
        os.replace(path, stale)
        where = f"moved to {stale.name}"
    else:
        path.unlink()
        where = "removed"
    print(f"{who}: {path} was made with other params, data or a larger budget; {where}, starting afresh",
          file=sys.stderr, flush=True)
    return None


def continuable_run(run_id: str | None, experiment_id: str | None = None) -> str | None:
    """``run_id`` if the current MLflow store holds it as a live run (of ``experiment_id`` when given)."""
    import mlflow
    from mlflow.exceptions import MlflowException

    if not run_id:
        return None
    try:
        run = mlflow.MlflowClient().get_run(run_id)
    except MlflowException:
        return None
    if run.info.lifecycle_stage != "active" or (experiment_id is not None and run.info.experiment_id != experiment_id):
        return None
    return run_id


def read_training_state(path: str | Path, who: str, set_aside: bool = True) -> dict | None:
    """A training state file loaded safely; None after one line on stderr when it is cut short or corrupt."""
    path = Path(path)
    aside = path.with_name(f"corrupt-{path.name}")
    try:
        return read_weights(path, f"moved to {aside.name}, starting afresh" if set_aside else "not used")
    except ValueError as e:
        if set_aside:
            os.replace(path, aside)
        print(f"{who}: {e}", file=sys.stderr, flush=True)
        return None


def remember_run(path: str | Path, run_id: str, fingerprint: str) -> None:
    """Keep ``run_id`` beside a checkpoint as the run starts, so a kill before the first checkpoint opens no second."""
    write_text(path, json.dumps({"run_id": run_id, "fingerprint": fingerprint}) + "\n")


def remembered_run(path: str | Path, fingerprint: str) -> str | None:
    """The run kept by ``remember_run`` for the same ``fingerprint`` (params), unless it finished."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("fingerprint") != fingerprint or not doc.get("run_id"):
        return None
    import mlflow
    from mlflow.exceptions import MlflowException

    try:
        status = mlflow.MlflowClient().get_run(doc["run_id"]).info.status
    except MlflowException:  # another store
        return None
    return None if status == "FINISHED" else str(doc["run_id"])
