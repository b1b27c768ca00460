"""Closing a tracked run's books (``tracking.bookkeeping.finish_run``): final metrics once, the artifacts."""

from __future__ import annotations

from pipeline.runtime.curves import write_curve
from pipeline.tracking.bookkeeping import finish_run


def test_finish_run_logs_final_metrics_once_and_the_artifacts(store, tmp_path):
    import mlflow

    client = mlflow.MlflowClient()
    run = client.create_run(store).info.run_id
    curve = write_curve([{"loop": 0}], tmp_path / "curve.csv", ("loop",))
    finish_run(client, run, {"final/win_rate": 0.5}, step=3, artifacts=[curve, tmp_path / "missing.csv"])
    finish_run(client, run, {"final/win_rate": 0.5}, step=3)  # a rerun finishing again repeats nothing
    assert [m.value for m in client.get_metric_history(run, "final/win_rate")] == [0.5]
    assert [a.path for a in client.list_artifacts(run)] == ["curve.csv"]
