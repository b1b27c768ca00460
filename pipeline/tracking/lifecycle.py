"""MLflow runs whose state says what happened to their process: KILLED after Ctrl-C or a kill -9 (closed by a
later run), FAILED after an error (MLflow's exit hook would say FINISHED)."""

import socket
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ..params import ParamError
from .executions import execution_tags

HOST_TAG = "koikoi.host"
PID_TAG = "koikoi.pid"
STARTED_TAG = "koikoi.pid_started"
CLOSED_TAG = "koikoi.closed"
INTERRUPTED = 130  # the shell's code for a process ended by SIGINT


def owner_tags() -> dict[str, str]:
    """Tags naming this process, to tell later whether it is still alive, and its pipeline execution."""
    import psutil

    me = psutil.Process()
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(me.pid), STARTED_TAG: f"{me.create_time():.3f}",
            **execution_tags()}


def process_gone(tags: Mapping[str, str]) -> bool:
    """Whether the process named by ``owner_tags`` has ended (False when it cannot be told)."""
    import psutil

    if tags.get(HOST_TAG) != socket.gethostname():
        return False
    try:
        pid, started = int(tags[PID_TAG]), float(tags[STARTED_TAG])
    except (KeyError, ValueError):
        return False
    try:
        p = psutil.Process(pid)
        # the pid was reused by another process, or it is a zombie waiting for its parent to reap it
        return abs(p.create_time() - started) > 0.5 or p.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def fail_pending_models(client: Any, experiment_id: str, run_id: str) -> None:
    """Mark FAILED the logged models of ``run_id`` left PENDING (a kill while they were logged)."""
    from mlflow.entities import LoggedModelStatus

    for m in client.search_logged_models([experiment_id]):
        if m.source_run_id == run_id and m.status == LoggedModelStatus.PENDING:
            client.finalize_logged_model(m.model_id, LoggedModelStatus.FAILED)


def close_dead_runs(client: Any, experiment_id: str) -> list[str]:
    """Close as KILLED the RUNNING runs of ``experiment_id`` whose process (on this host) is gone; returns their ids."""
    closed = []
    for run in client.search_runs([experiment_id], filter_string="attributes.status = 'RUNNING'", max_results=1000):
        if process_gone(run.data.tags):
            run_id = run.info.run_id
            fail_pending_models(client, experiment_id, run_id)
            client.set_tag(run_id, CLOSED_TAG, "its process ended without closing it; closed by a later run")
            client.set_terminated(run_id, "KILLED")
            closed.append(run_id)
    return closed


def _active_run_id() -> str | None:
    mlflow = sys.modules.get("mlflow")
    run = mlflow.active_run() if mlflow is not None else None
    return run.info.run_id if run is not None else None


def end_runs_above(run_id: str | None, status: str) -> None:
    """End, with ``status``, the runs this process made active (MLflow's fluent stack) above ``run_id``."""
    mlflow = sys.modules.get("mlflow")
    while mlflow is not None and (top := _active_run_id()) is not None and top != run_id:
        mlflow.end_run(status)


@contextmanager
def ending_runs(client: Any = None, run_id: str | None = None) -> Iterator[None]:
    """An exception ends the runs started inside (and ``run_id``): KILLED after Ctrl-C, else FAILED."""
    outer = _active_run_id()
    try:
        yield
    except BaseException as e:
        status = "KILLED" if isinstance(e, KeyboardInterrupt) else "FAILED"
        end_runs_above(outer, status)
        if client is not None and run_id is not None:
            client.set_terminated(run_id, status)
        raise


@contextmanager
def tracked_run(**start_run: Any) -> Iterator[Any]:
    """``mlflow.start_run`` with ``owner_tags``; it ends FINISHED, KILLED after Ctrl-C or FAILED after an error."""
    import mlflow

    run = mlflow.start_run(**{**start_run, "tags": {**owner_tags(), **(start_run.get("tags") or {})}})
    try:
        yield run
    except BaseException as e:
        mlflow.end_run("KILLED" if isinstance(e, KeyboardInterrupt) else "FAILED")
        raise
    mlflow.end_run()


def log_metrics_once(client: Any, run_id: str, metrics: Mapping[str, float], step: int = 0,
                     model_id: str | None = None, dataset: Any = None) -> dict[str, float]:
    """Log the ``metrics`` that run ``run_id`` does not hold yet with the same value (a rerun repeats none)."""
    from mlflow.entities import Metric

    have = client.get_run(run_id).data.metrics
    new = {k: float(v) for k, v in metrics.items() if have.get(k) != float(v)}
    if new:
        import time

        now = int(time.time() * 1000)
        on = {"dataset_name": dataset.name, "dataset_digest": dataset.digest} if dataset is not None else {}
        client.log_batch(run_id, metrics=[Metric(k, v, now, step, model_id=model_id, **on) for k, v in new.items()])
    return new


@contextmanager
def stage_exit(stage: str) -> Iterator[None]:
    """Around a stage script's ``main()``: one line and exit 130 on Ctrl-C, exit 2 on a ``ParamError``."""
    try:
        yield
    except ParamError as e:
        print(f"{stage}: error: {e}", file=sys.stderr, flush=True)
        sys.exit(2)
    except KeyboardInterrupt:
        print(f"{stage}: interrupted", file=sys.stderr, flush=True)
        sys.exit(INTERRUPTED)
