"""A finished stage's metrics in its pipeline execution's run of experiment ``pipeline`` (``executions``)."""

import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..params import ParamError, dotted, read_doc
from ..runtime.results import is_number
from .executions import (
    DVC_EXP,
    DVC_STAGE,
    EXPERIMENT,
    GIT_COMMIT,
    PARAMS_HASH,
    PIPELINE_RUN,
    execution_runs,
    execution_tags,
    git_commit,
    run_link,
    summary_run,
)
from .store import setup_experiment


def _numbers(doc: Mapping[str, Any], prefix: str) -> dict[str, float]:
    """The numeric leaves of ``doc`` as ``prefix/a/b``; an interval (a key with ``ci``) as ``..._low``, ``..._high``."""
    out: dict[str, float] = {}
    for k, v in doc.items():
        key = f"{prefix}/{k}"
        if isinstance(v, Mapping):
            out.update(_numbers(v, key))
        elif is_number(v):
            out[key] = float(v)
        elif "ci" in str(k) and isinstance(v, list | tuple) and len(v) == 2 and all(map(is_number, v)):
            out[f"{key}_low"], out[f"{key}_high"] = float(v[0]), float(v[1])
    return out


def record_stage(stage: str, metrics: Mapping[str, Any], params_file: str | Path = "params.yaml") -> str | None:
    """Add a finished stage's metrics to its execution's run in experiment ``pipeline``; returns that run's id.
    An MLflow failure is one line on stderr: the stage's own outputs are written already."""
    import mlflow  # a slow import: the stages' scripts start without it
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.exceptions import MlflowException

    tags = execution_tags()
    try:
        exp = setup_experiment(EXPERIMENT)
        client = mlflow.MlflowClient()
        run = summary_run(client, tags[PIPELINE_RUN])
        if run is None:
            run_tags = {k: v for k, v in tags.items() if k != DVC_STAGE}
            if commit := git_commit():  # as MLflow tags the runs it starts itself (a DVC experiment: its base)
                run_tags[GIT_COMMIT] = commit
            run = client.create_run(exp, run_name=tags[PIPELINE_RUN], tags=run_tags)
            try:
                params = [Param(k, str(v)[:6000]) for k, v in dotted(read_doc(params_file)).items()]
            except ParamError:
                params = []
            client.log_batch(run.info.run_id, params=params)
        run_id = run.info.run_id
        now = int(time.time() * 1000)
        key = stage.replace("@", ".")  # '@' is not allowed in a metric name
        client.log_batch(run_id, metrics=[Metric(k, v, now, 0) for k, v in _numbers(metrics, key).items()],
                         tags=[RunTag(f"stage.{key}", "done")])
        runs = execution_runs(client, tags[PIPELINE_RUN])
        lines = [f"Execution `{tags[PIPELINE_RUN]}` (DVC experiment `{tags.get(DVC_EXP, '-')}`, params hash "
                 f"`{tags.get(PARAMS_HASH, '-')}`). Its runs (filter `tags.{PIPELINE_RUN} = '{tags[PIPELINE_RUN]}'` "
                 "in any experiment):", ""]
        lines += [f"- {run_link(r)} in `{client.get_experiment(r.info.experiment_id).name}`"
                  f"{' (' + r.data.tags[DVC_STAGE] + ')' if DVC_STAGE in r.data.tags else ''}" for r in runs]
        client.set_tag(run_id, "mlflow.note.content", "\n".join(lines))
        client.set_terminated(run_id, "FINISHED")
        return run_id
    except MlflowException as e:
        print(f"{stage}: warning: its metrics are not in MLflow experiment '{EXPERIMENT}': "
              f"{str(e).splitlines()[0]}", file=sys.stderr)
        return None
