"""The books of a tracked run closed, the same for SL and RL."""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .lifecycle import log_metrics_once
from .registry import log_model


def finish_run(client: Any, run_id: str, final: Mapping[str, float], *, step: int = 0,
               artifacts: Sequence[str | Path] = (), model_dir: str | Path | None = None,
               register: bool = False, weights_from: str | None = None, dataset: Any = None) -> None:
    """Log the model, the ``final`` metrics the run does not hold yet and the ``artifacts`` into run ``run_id``."""
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
