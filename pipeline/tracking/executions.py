"""One pipeline execution (a ``dvc repro``, a ``dvc exp run``) in MLflow: the tags that group its runs, and
one run that sums it up for comparing executions side by side (docs/mlflow.md)."""

import hashlib
import os
import socket
from pathlib import Path
from typing import Any

from ..params import ParamError, read_doc
from ..runtime.fingerprints import fingerprint

EXPERIMENT = "pipeline"
PIPELINE_RUN = "pipeline_run"
DVC_EXP = "dvc_exp"
DVC_STAGE = "dvc_stage"
PARAMS_HASH = "params_hash"
GIT_COMMIT = "mlflow.source.git.commit"
ENV_PIPELINE_RUN = "KOIKOI_PIPELINE_RUN"  # set it to group runs by hand (e.g. a CI job's id)
TRACKED_EXPERIMENTS = ("sl", "rl", "duels")  # where the stages' own runs are


def _is_dvc(proc: Any) -> bool:
    try:
        cmd = proc.cmdline()
    except Exception:  # gone, or not ours to read
        return False
    return any(Path(a).name == "dvc" for a in cmd[:2]) or cmd[1:3] == ["-m", "dvc"]


def pipeline_run_id() -> str:
    """This execution's id: ``$KOIKOI_PIPELINE_RUN``, else a hash of the DVC process, else of this one."""
    if env := os.environ.get(ENV_PIPELINE_RUN):
        return env
    import psutil

    owner = me = psutil.Process()
    under_dvc = "DVC_STAGE" in os.environ
    if under_dvc:
        owner = next((p for p in me.parents() if _is_dvc(p)), me)
    token = hashlib.sha256(f"{socket.gethostname()} {owner.pid} {owner.create_time():.3f}".encode()).hexdigest()[:8]
    kind = os.environ.get("DVC_EXP_NAME") or ("repro" if under_dvc else "run")
    return f"{kind}-{token}"


def params_hash(path: str | Path = "params.yaml") -> str | None:
    """A short hash of the params file as parsed (comments and layout aside); None without one."""
    try:
        return fingerprint({"params": read_doc(path)})
    except ParamError:
        return None


def execution_tags() -> dict[str, str]:
    tags = {PIPELINE_RUN: pipeline_run_id()}
    exp = os.environ.get("DVC_EXP_NAME") or ("workspace" if "DVC_STAGE" in os.environ else None)
    for key, value in ((DVC_EXP, exp), (DVC_STAGE, os.environ.get("DVC_STAGE")), (PARAMS_HASH, params_hash())):
        if value:
            tags[key] = value
    return tags


def git_commit(cwd: str | Path = ".") -> str | None:
    """The commit checked out in ``cwd`` (``git rev-parse HEAD``), None outside git or without it."""
    import subprocess  # only when a pipeline run is first recorded

    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def run_link(run: Any) -> str:
    """A markdown link to ``run`` that works inside the MLflow UI (its pages are hash routes)."""
    return f"[{run.info.run_name}](#/experiments/{run.info.experiment_id}/runs/{run.info.run_id})"


def execution_runs(client: Any, pipeline_run: str) -> list[Any]:
    """The stages' runs of one execution, oldest first."""
    ids = [e.experiment_id for n in TRACKED_EXPERIMENTS if (e := client.get_experiment_by_name(n)) is not None]
    if not ids:
        return []
    return client.search_runs(ids, f"tags.{PIPELINE_RUN} = '{pipeline_run}'", order_by=["attributes.start_time ASC"],
                              max_results=200)


def summary_run(client: Any, pipeline_run: str) -> Any | None:
    """The execution's run in experiment ``pipeline``, if a stage has recorded one."""
    exp = client.get_experiment_by_name(EXPERIMENT)
    if exp is None:
        return None
    runs = client.search_runs([exp.experiment_id], f"tags.{PIPELINE_RUN} = '{pipeline_run}'", max_results=1)
    return runs[0] if runs else None
