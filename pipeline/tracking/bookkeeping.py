"""Bookkeeping of a resumable, tracked run, the same for SL, RL and tuning.

- ``fingerprint``: what a checkpoint must match to be resumed (params and data, less the budgets);
  ``file_fingerprint`` for the files a run starts from.
- ``resume_point``: the checkpoint to continue from, or ``None`` after setting a stale one aside.
- ``continuable_run``: whether an MLflow run id kept in a checkpoint (or a study) can be continued in
  the current store; ``lifecycle.remember_run`` keeps the id from the moment the run starts.
- ``finish_run``: the model (``registry.log_model``, registered where the stage asks for it), final
  metrics (once, linked to the model) and artifacts into the run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .lifecycle import log_metrics_once
from .registry import log_model


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


def finish_run(client: Any, run_id: str, final: Mapping[str, float], *, step: int = 0,
               artifacts: Sequence[str | Path] = (), model_dir: str | Path | None = None,
               register: bool = False, weights_from: str | None = None, dataset: Any = None) -> None:
    """Close the books of run ``run_id``: ``model_dir`` as a pyfunc model (registered when ``register``;
    ``weights_from``: see ``registry.log_model``), the ``final`` metrics it does not hold yet (a rerun repeats
    none; linked to the run's model, and to ``dataset``, an MLflow dataset, when given) and the ``artifacts``
    files."""
    model_id = None
    if model_dir is not None:
        import mlflow

        active = mlflow.active_run()
        if active is not None and active.info.run_id == run_id:
            ref = log_model(model_dir, register, weights_from)
        else:
            with mlflow.start_run(run_id=run_id):
                ref = log_model(model_dir, register, weights_from)
        model_id = ref.model_id if ref.run_id == run_id else None  # another run's model keeps that run's metrics
    log_metrics_once(client, run_id, final, step=step, model_id=model_id, dataset=dataset)
    for path in artifacts:
        if Path(path).is_file():
            client.log_artifact(run_id, str(path))
