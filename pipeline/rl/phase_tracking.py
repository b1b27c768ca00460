"""MLflow logging of one RL phase; a rerun continues the phase's run (its id in the checkpoint or
``checkpoints/mlflow_run.json``)."""

from pathlib import Path

from ..params import RLParams, dotted
from ..tracking.bookkeeping import finish_run
from ..tracking.lifecycle import owner_tags
from ..tracking.lineage import INIT_RUN, SL_RUN, weights_run
from ..tracking.resume import continuable_run, remember_run, remembered_run
from ..tracking.store import setup_experiment
from .algorithms import algorithm_for
from .phase_state import RUN_RECORD, LoopCounters, PhaseConfig

EXPERIMENT = "rl"


def loss_units(p: RLParams, variant: str, phase: int = 1) -> dict[str, str]:
    """What ``loss/<decision>`` is measured in, per decision type, under these params and reward model."""
    scale = getattr(p.reward_scale, variant)
    reward = (f"round points x {scale:g}" if variant == "point"
              else f"(win probability after the round - {p.wp_baseline:g}) x {scale:g}")
    mse = f"mean squared error of the taken action's value against the round reward, in ({reward})^2"
    return algorithm_for(p, phase).loss_units(p, mse)


class PhaseTracker:
    """The phase's MLflow run, active from construction to ``finish``; ``placement``: the resolved devices' params
    (``hardware.placement_params``), logged with the params."""

    def __init__(self, cfg: PhaseConfig, state: LoopCounters, placement: dict | None = None) -> None:
        import mlflow

        self.mlflow = mlflow
        self.cfg = cfg
        exp = setup_experiment(EXPERIMENT)
        record = cfg.ckpt_dir / RUN_RECORD
        run_id = continuable_run(state.run_id or remembered_run(record, state.fingerprint), exp)
        client = mlflow.MlflowClient()
        self.init_run = weights_run(client, cfg.init_dir, ("rl",)) if cfg.init_dir is not None else None
        if run_id:
            mlflow.start_run(run_id=run_id, tags=owner_tags())
            state.run_id = run_id
            mlflow.set_tag("resumed_after_loop", state.loop)
            return
        units = loss_units(cfg.params, cfg.variant, cfg.phase)
        tags = {**owner_tags(), **{f"units.loss/{d}": u for d, u in units.items()},
                "mlflow.note.content": "\n".join(
                    [f"RL phase {cfg.phase}, reward model {cfg.variant}, "
                     f"algorithm {cfg.params.algorithm_of(cfg.phase)}.", "",
                     "`eval/win_rate`: greedy learner vs SL on `eval/games` duplicate-deal games, with its 95% "
                     "interval `eval/ci_low`..`eval/ci_high`; `eval/point_diff` in points per game.", ""]
                    + [f"- `loss/{d}`: {u}" for d, u in units.items()])}
        for key, run in ((SL_RUN, weights_run(client, cfg.sl_dir, ("sl", "rl"))), (INIT_RUN, self.init_run)):
            if run:
                tags[key] = run
        run = mlflow.start_run(experiment_id=exp, run_name=f"rl-phase{cfg.phase}-{cfg.variant}", tags=tags)
        state.run_id = run.info.run_id
        remember_run(record, state.run_id, state.fingerprint)
        flat = dotted(cfg.params.model_dump(), "rl")
        flat.update({"phase": cfg.phase, "variant": cfg.variant, "sl_dir": str(cfg.sl_dir), **(placement or {})})
        if cfg.variant == "wp":
            flat.update(dotted(cfg.winprob.model_dump(), "winprob"))
        mlflow.log_params(flat)

    def metrics(self, values: dict, step: int) -> None:
        values = {k: float(v) for k, v in values.items()}
        if "eval/win_rate" in values:  # the size of each evaluation: what its interval is worth
            values["eval/games"] = float(self.cfg.params.eval_games)
        self.mlflow.log_metrics(values, step=step)

    def finish(self, curve: Path, summary: dict, winprob: dict | None) -> None:
        mlflow = self.mlflow
        run_id = mlflow.active_run().info.run_id
        if winprob:
            mlflow.log_dict(winprob, "winprob.json")
        final = {f"final/{k}": float(v) for k, v in summary.items() if isinstance(v, int | float)}
        lo, hi = summary["ci95"]
        final.update({"final/ci95": (hi - lo) / 2, "final/ci95_low": lo, "final/ci95_high": hi})
        mlflow.set_tag("stop_reason", summary["stop_reason"])
        untrained = self.cfg.phase == 2 and summary["loops"] == 0  # the weights are phase 1's, trained there
        if untrained and self.init_run:
            mlflow.set_tag("weights_from_run", self.init_run)
        finish_run(mlflow.MlflowClient(), run_id, final, artifacts=[curve], model_dir=self.cfg.out_dir,
                   register=self.cfg.register and self.cfg.phase == 2,
                   weights_from=self.init_run if untrained else None)
        mlflow.end_run()
