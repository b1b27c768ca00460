"""What the DVC stages ``winprob``, ``rl_phase1@<reward>`` and ``rl_phase2@<reward>`` do (stages/ stay thin).

The params come checked (``pipeline.params``); inputs are checked before any work starts and raise
``FileNotFoundError``/``ValueError`` with a one-line message that the stage script prints.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import atomic
from ..modelio import is_model_dir
from ..params import Params, WinProbParams, check_variant

SL_DIR = Path("models/sl")
WINPROB_DIR = Path("models/winprob")


def _need_model(path: Path, what: str) -> None:
    if not is_model_dir(path):
        raise FileNotFoundError(f"{what} {path} is not a model directory (model.pt + config.json); run its stage first")


def winprob_stage(wp: WinProbParams, out_dir: Path = WINPROB_DIR, results_dir: Path = Path("results/winprob"),
                  progress: bool = True, mlflow: bool = True) -> dict:
    """Simulate greedy self-play games of ``winprob.agent``, fit the table, write JSON + Fig. 5."""
    import time

    from ..hardware import resolve_bf16
    from ..modelio import load_model
    from ..progress import progress_bar
    from .executor import make_executor
    from .policies import NetSpec
    from .winprob import fit_table, log_loss, plot_table, simulate

    _need_model(Path(wp.agent), "winprob.agent")
    net, _ = load_model(wp.agent)
    t0 = time.perf_counter()
    with make_executor(wp.workers) as ex, progress_bar(total=wp.games, desc="winprob games", unit="game",
                                                        enabled=progress) as bar:
        outcomes = simulate(NetSpec.from_net(net, wp.agent), wp.games, wp.seed, ex, resolve_bf16(wp.bf16),
                            wp.concurrency, bar.update)
    seconds = time.perf_counter() - t0
    table = fit_table(outcomes, 8, 30, wp.C, source=f"{wp.agent}, {wp.games} games")  # the paper's game
    path = table.save(out_dir)
    png = plot_table(table, results_dir / "winprob.png")
    metrics = {"games": wp.games, "round_samples": int(sum(table.samples)),
               "log_loss": round(log_loss(table, outcomes), 4), "games_per_s": round(wp.games / seconds, 2),
               "p_dealer_round8_at_30": round(table.prob(8, 30, True), 4),
               "p_round1_dealer": round(table.prob(1, 30, True), 4)}
    atomic.write_text(results_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    if mlflow:
        import mlflow as mlf

        from ..params import dotted
        from ..tracking import setup_experiment

        exp = setup_experiment("rl")
        from ..runstate import tracked_run

        with tracked_run(experiment_id=exp, run_name="winprob"):
            mlf.log_params(dotted(wp.model_dump(), "winprob"))
            mlf.log_metrics({k: float(v) for k, v in metrics.items()})
            mlf.log_artifact(str(path))
            mlf.log_artifact(str(png))
    return metrics


def rl_stage(phase: int, variant: str, params: Params, progress: bool = True, mlflow: bool = True,
             root: Path = Path("."), register: bool = False) -> dict:
    """Phase 1 (``models/rl_phase1/<variant>``) or phase 2 (``models/rl/<variant>``) of one reward model;
    ``register``: phase 2 registers its model as ``koikoi-rl-<variant>`` (the DVC stage asks for it)."""
    from ..runstate import ending_runs
    from .training import PhaseConfig, PhaseRunner

    check_variant(variant)
    sl_dir = root / SL_DIR
    _need_model(sl_dir, "the SL model")
    init_dir = winprob_path = None
    if phase == 1:
        out_dir, results_dir = root / "models/rl_phase1" / variant, root / "results/rl_phase1" / variant
        if variant == "wp":
            winprob_path = root / WINPROB_DIR / "winprob.json"
            if not winprob_path.is_file():
                raise FileNotFoundError(f"no win-probability table {winprob_path}; run the winprob stage first")
    elif phase == 2:
        out_dir, results_dir = root / "models/rl" / variant, root / "results/rl" / variant
        init_dir = root / "models/rl_phase1" / variant
        _need_model(init_dir, "the phase-1 model")
    else:
        raise ValueError(f"phase must be 1 or 2, got {phase}")
    cfg = PhaseConfig(phase=phase, variant=variant, params=params.rl, winprob=params.winprob, sl_dir=sl_dir,
                      out_dir=out_dir, results_dir=results_dir, init_dir=init_dir, winprob_path=winprob_path,
                      progress=progress, mlflow=mlflow, register=register)
    with ending_runs():  # Ctrl-C: the MLflow run ends KILLED, an error: FAILED (never FINISHED)
        return PhaseRunner(cfg).run()
