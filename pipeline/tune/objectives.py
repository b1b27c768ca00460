"""What a trial trains and scores: ``sl`` (validation accuracy) and ``rl`` (win rate against SL after a short
budget), as ``objective(trial, run_id) -> float``."""

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import optuna
from lightning.pytorch.trainer.states import TrainerFn
from optuna_integration.pytorch_lightning import PyTorchLightningPruningCallback

from ..params import RLParams, SLTrainParams, WinProbParams, overridden
from ..params.base import deep_merge
from ..rl.devices import resolve_devices
from ..runtime.curves import read_curve
from ..runtime.hardware import Placement, announce, torch_device
from ..tracking.store import tracking_uri
from .space import derive, first_values, sample

Objective = Callable[[optuna.Trial, str], float]
PARAMS_ATTR = "params"  # trial user attr: the trial's values under params.yaml keys
SL_MONITOR = "val/acc"


class FitPruning(PyTorchLightningPruningCallback):
    """The pruning callback, reporting only the validation epochs of ``fit`` (not ``train_sl``'s final one)."""

    def on_validation_end(self, trainer, pl_module) -> None:
        if trainer.state.fn == TrainerFn.FITTING:
            super().on_validation_end(trainer, pl_module)


def trial_params(trial: optuna.Trial, space: Mapping[str, Any]) -> dict[str, Any]:
    """Sample ``space`` and store the result, under params.yaml keys, as the trial's ``params`` attr."""
    params = derive(sample(trial, space))
    trial.set_user_attr(PARAMS_ATTR, params)
    return params


def mlflow_logger(run_id: str):
    from lightning.pytorch.loggers import MLFlowLogger

    return MLFlowLogger(tracking_uri=tracking_uri(), run_id=run_id)


def _probe(space: Mapping[str, Any]) -> dict[str, Any]:
    """The space's first values as section keys: a bad space fails on them before any trial runs."""
    return derive(sample(optuna.trial.FixedTrial(first_values(space)), space))


def sl_objective(dataset_dir: str | Path, base: SLTrainParams, space: Mapping[str, Any],
                 max_epochs: int | None, source: str = "params.yaml") -> Objective:
    """Train ``sl_train`` params (``base`` with the trial's values on top); score: val/acc."""
    from ..sl.train import resolved, train_sl  # torch: loaded only when this runs

    overridden(base, _probe(space), "sl_train", f"tune.space.sl over {source}")
    p = resolved(base)
    placement = announce("tune", [Placement("train", torch_device(p["accelerator"]), p["precision"],
                                            base.accelerator == "auto")])

    def objective(trial: optuna.Trial, run_id: str) -> float:
        import mlflow

        mlflow.log_params(placement)  # into the trial's run (train_sl logs into it but owns no params there)
        params = overridden(base, trial_params(trial, space), "sl_train")
        with tempfile.TemporaryDirectory(prefix="koikoi-tune-") as out:
            metrics = train_sl(dataset_dir, out, params, callbacks=[FitPruning(trial, monitor=SL_MONITOR)],
                               logger=mlflow_logger(run_id), max_epochs=max_epochs, progress=False)
        return float(metrics[SL_MONITOR])

    return objective


def rl_objective(sl_dir: str | Path, base: RLParams, winprob: WinProbParams, space: Mapping[str, Any],
                 loops: int, eval_games: int, variant: str = "point",
                 winprob_path: str | Path | None = None, source: str = "params.yaml") -> Objective:
    """Phase 1 for ``loops`` loops with the trial's ``rl`` values; score: the final win rate against SL. The
    evaluations are the intermediate values; a phase cannot be paused, so RL trials are not pruned."""
    from ..rl.training import CURVE_FILE, PhaseConfig, PhaseRunner  # torch: loaded only when this runs

    budget = {"phase1": {"loops": loops, "target_win_rate": 1.0}, "eval_games": eval_games, "eval_every": 1,
              "final_eval_games": eval_games}
    # the budget over the trial's values (as the space may name budget keys too)
    overridden(base, deep_merge(_probe(space), budget), "rl", f"tune.space.rl and tune.rl over {source}")
    placement = announce("tune", resolve_devices(base).placements())

    def objective(trial: optuna.Trial, run_id: str) -> float:
        import mlflow

        mlflow.log_params(placement)  # into the trial's run (the phase runs without an MLflow run of its own)
        params = overridden(base, deep_merge(trial_params(trial, space), budget), "rl")
        with tempfile.TemporaryDirectory(prefix="koikoi-tune-") as tmp:
            cfg = PhaseConfig(phase=1, variant=variant, params=params, winprob=winprob, sl_dir=Path(sl_dir),
                              out_dir=Path(tmp) / "model", results_dir=Path(tmp) / "results",
                              ckpt_dir=Path(tmp) / "checkpoints",
                              winprob_path=Path(winprob_path) if winprob_path else None,
                              progress=False, mlflow=False)
            summary = PhaseRunner(cfg).run()
            curve = read_curve(Path(tmp) / "results" / CURVE_FILE)
        for row in curve:
            trial.report(row["win_rate"], step=row["loop"])
            mlflow.log_metrics({"eval/win_rate": row["win_rate"], "eval/point_diff": row["point_diff"]},
                               step=row["loop"])
        return float(summary["win_rate"])

    return objective
