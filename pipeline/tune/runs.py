"""MLflow bookkeeping of a study: one parent run per study (its id a study attribute, so a resumed study logs
under it), one nested run per trial; a pruned trial ends FINISHED (it did what it was asked)."""

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import optuna

from ..params import dotted
from ..tracking.lifecycle import owner_tags, tracked_run
from ..tracking.resume import continuable_run
from ..tracking.store import setup_experiment
from ..tracking.store_lock import named_lock

EXPERIMENT = "tune"
PARENT_ATTR = "mlflow_parent_run_id"
RUN_ATTR = "mlflow_run_id"
STATE_TAG = "optuna.state"


@contextmanager
def study_run(study: optuna.Study, tags: Mapping[str, Any], params: Mapping[str, Any],
              storage_url: str) -> Iterator[str]:
    """The study's one parent run, active inside: made by its first session (under a lock), then resumed."""
    import mlflow
    from mlflow.tracking.context.registry import resolve_tags

    exp = setup_experiment(EXPERIMENT)
    tags = {"optuna.study_name": study.study_name, **tags}
    with named_lock(storage_url, f"koikoi-tune-{study.study_name}"):
        run_id = study.user_attrs.get(PARENT_ATTR)
        new = continuable_run(run_id, exp) is None
        if new:
            run_id = mlflow.MlflowClient().create_run(exp, run_name=study.study_name,
                                                      tags=resolve_tags(tags)).info.run_id
            study.set_user_attr(PARENT_ATTR, run_id)
    with tracked_run(run_id=run_id, tags=tags) as run:
        if new:
            mlflow.log_params(params)  # params are write-once in MLflow: only when the run is new
        yield run.info.run_id


def tracked(objective: Callable[[optuna.Trial, str], float], parent_run_id: str) -> Callable[[optuna.Trial], float]:
    """``objective(trial, run_id)`` wrapped in a nested MLflow run (the parent run must be active)."""
    import mlflow

    experiment_id = mlflow.get_run(parent_run_id).info.experiment_id

    def run_trial(trial: optuna.Trial) -> float:
        run = mlflow.start_run(run_name=f"trial-{trial.number}", nested=True, parent_run_id=parent_run_id,
                               experiment_id=experiment_id,
                               tags={"optuna.study_name": trial.study.study_name,
                                     "optuna.trial_number": str(trial.number), **owner_tags()})
        trial.set_user_attr(RUN_ATTR, run.info.run_id)
        status = "FAILED"
        try:
            value = objective(trial, run.info.run_id)
            status = "FINISHED"
            return value
        except optuna.TrialPruned:
            status = "FINISHED"
            raise
        except BaseException as e:
            mlflow.set_tag(STATE_TAG, "FAIL")
            if isinstance(e, KeyboardInterrupt):
                status = "KILLED"
            raise
        finally:
            mlflow.end_run(status=status)

    return run_trial


def log_trial(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
    """Study callback: a finished trial's params, intermediate values, value and state to its run."""
    import mlflow
    from mlflow.entities import Metric, Param, RunTag

    run_id = trial.user_attrs.get(RUN_ATTR)
    if not run_id:
        return
    now = int(time.time() * 1000)
    client = mlflow.MlflowClient()
    logged = client.get_run(run_id).data.params  # training may have logged some (MLflow params are write-once)
    params = {k: v for k, v in {**trial.params, **dotted(trial.user_attrs.get("params", {}))}.items()
              if k not in logged}
    metrics = [Metric("optuna/intermediate_value", float(v), now, int(step))
               for step, v in sorted(trial.intermediate_values.items())]
    if trial.value is not None:
        metrics.append(Metric("optuna/value", float(trial.value), now, 0))
    if trial.duration is not None:
        metrics.append(Metric("optuna/duration_s", trial.duration.total_seconds(), now, 0))
    client.log_batch(run_id, metrics=metrics, params=[Param(k, str(v)) for k, v in params.items()],
                     tags=[RunTag(STATE_TAG, trial.state.name)])
