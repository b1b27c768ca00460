"""MLflow logging of one RL phase: params once, metrics per loop, and at the end the books closed by
``bookkeeping.finish_run``. A rerun continues the phase's run (its id is in the checkpoint, or in
``checkpoints/mlflow_run.json`` when the kill came before the first checkpoint)."""

from __future__ import annotations

from pathlib import Path

from ..bookkeeping import continuable_run, finish_run
from ..model import KoiKoiNet
from ..params import dotted
from ..runstate import owner_tags, remember_run, remembered_run
from ..tracking import setup_experiment
from .phase_state import RUN_RECORD, PhaseConfig, RunState

EXPERIMENT = "rl"


class PhaseTracker:
    """The phase's MLflow run, active from construction to ``finish``; ``placement``: the resolved devices' params
    (``hardware.placement_params``), logged with the params."""

    def __init__(self, cfg: PhaseConfig, state: RunState, placement: dict | None = None) -> None:
        import mlflow

        self.mlflow = mlflow
        self.cfg = cfg
        exp = setup_experiment(EXPERIMENT)
        record = cfg.ckpt_dir / RUN_RECORD
        run_id = continuable_run(state.run_id or remembered_run(record, state.fingerprint), exp)
        if run_id:
            mlflow.start_run(run_id=run_id, tags=owner_tags())
            state.run_id = run_id
            mlflow.set_tag("resumed_after_loop", state.loop)
            return
        run = mlflow.start_run(experiment_id=exp, run_name=f"rl-phase{cfg.phase}-{cfg.variant}", tags=owner_tags())
        state.run_id = run.info.run_id
        remember_run(record, state.run_id, state.fingerprint)
        flat = dotted(cfg.params.model_dump(), "rl")
        flat.update({"phase": cfg.phase, "variant": cfg.variant, "sl_dir": str(cfg.sl_dir), **(placement or {})})
        if cfg.variant == "wp":
            flat.update(dotted(cfg.winprob.model_dump(), "winprob"))
        mlflow.log_params(flat)

    def metrics(self, values: dict, step: int) -> None:
        self.mlflow.log_metrics({k: float(v) for k, v in values.items()}, step=step)

    def finish(self, net: KoiKoiNet, curve: Path, summary: dict, winprob: dict | None) -> None:
        mlflow = self.mlflow
        run_id = mlflow.active_run().info.run_id
        if winprob:
            mlflow.log_dict(winprob, "winprob.json")
        final = {f"final/{k}": float(v) for k, v in summary.items() if isinstance(v, int | float)}
        lo, hi = summary["ci95"]
        final.update({"final/ci95": (hi - lo) / 2, "final/ci95_low": lo, "final/ci95_high": hi})
        mlflow.set_tag("stop_reason", summary["stop_reason"])
        finish_run(mlflow.MlflowClient(), run_id, final, artifacts=[curve], model_dir=self.cfg.out_dir,
                   register=self.cfg.register and self.cfg.phase == 2)
        mlflow.end_run()
