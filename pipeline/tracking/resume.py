"""Resuming a run, in one place: whether a killed stage (SL, an RL phase) or a tuning session continues where it
stopped, and in which MLflow run.

- ``resume_point``: the checkpoint to continue from when it was made with the same params fingerprint
  (``runtime.fingerprints``), or ``None`` after setting a stale one aside;
- ``read_training_state``: a training state file read safely, ``None`` (and set aside) when a kill cut it short;
- ``remember_run`` / ``remembered_run``: a run's id kept beside a checkpoint from the moment the run starts;
- ``continuable_run``: whether a kept run id can be continued in the current store.
"""

from __future__ import annotations

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
    """The checkpoint at ``path`` if it was made with fingerprint ``fp`` (and ``usable``), else ``None``.

    ``load(path, who)`` reads it (``None`` when unreadable, after its own line). A checkpoint made with other
    params is moved to ``stale-<its fingerprint><suffix>`` beside it (deleted unless ``keep_stale``), with one
    line on stderr, so the run starts afresh."""
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
    """``run_id`` if the current MLflow store holds it as a live run (of ``experiment_id`` when given); ``None``
    when it is gone, deleted, or another store's (the caller then starts a new run)."""
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
    """A training state file (``torch.save`` of plain containers and tensors), loaded safely; ``None``
    when it is empty, cut short or corrupt (a kill while it was written by an older version, a full
    disk), after one line on stderr naming it. ``set_aside`` moves such a file to ``corrupt-<name>`` so
    that training restarts afresh and the file stays for a look."""
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
    """Keep ``run_id`` beside a checkpoint (atomically) as soon as the run starts, so that a kill before
    the first checkpoint does not make the rerun open a second run."""
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
