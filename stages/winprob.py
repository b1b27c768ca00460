"""Stage winprob: the win-probability table P(win | round, points, dealer) from greedy self-play (Fig. 5).

Usage: python -m stages.winprob OUT_DIR RESULTS_DIR (dvc.yaml: models/winprob results/winprob);
the agent whose games are simulated is ``winprob.agent`` (models/sl).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from pipeline.net.inference import checked, resolve_inference
from pipeline.net.model_dir import need_model_dir
from pipeline.net.modelio import load_model
from pipeline.params import WinProbParams, dotted
from pipeline.runtime.hardware import Placement, announce, placement_params, play_device
from pipeline.runtime.progress import progress_bar
from pipeline.runtime.results import write_results
from pipeline.selfplay.executor import make_executor
from pipeline.selfplay.policies import NetSpec
from pipeline.tracking.lifecycle import tracked_run
from pipeline.tracking.store import setup_experiment
from pipeline.value.winprob import fit_table, log_loss, plot_table, simulate
from stages import run_stage, stage_parser

STAGE = "winprob"


def winprob_stage(wp: WinProbParams, out_dir: str | Path, results_dir: str | Path, progress: bool = True,
                  mlflow: bool = True) -> dict:
    """Simulate greedy self-play games of ``winprob.agent``, fit the table, write JSON + Fig. 5."""

    results_dir = Path(results_dir)
    need_model_dir(Path(wp.agent), "winprob.agent")
    device = play_device(wp.device, "winprob.device")
    net, _ = load_model(wp.agent)
    # a compiled setup that fails here is recorded, and played, uncompiled
    setup = checked(resolve_inference(wp.inference, device, "winprob.inference"), net, device)
    placements = [Placement("play", device, setup.setup, wp.device == "auto")]
    placement = announce(STAGE, placements) if progress else placement_params(placements)
    t0 = time.perf_counter()
    with make_executor(wp.workers, device=device) as ex, progress_bar(total=wp.games, desc="winprob games",
                                                                       unit="game", enabled=progress) as bar:
        outcomes = simulate(NetSpec.from_net(net, wp.agent), wp.games, wp.seed, ex, setup, wp.concurrency, bar.update)
    seconds = time.perf_counter() - t0
    table = fit_table(outcomes, 8, 30, wp.C, source=f"{wp.agent}, {wp.games} games")  # the paper's game
    path = table.save(out_dir)
    png = plot_table(table, results_dir / "winprob.png")
    metrics = {"games": wp.games, "round_samples": int(sum(table.samples)),
               "log_loss": round(log_loss(table, outcomes), 4), "games_per_s": round(wp.games / seconds, 2),
               "p_dealer_round8_at_30": round(table.prob(8, 30, True), 4),
               "p_round1_dealer": round(table.prob(1, 30, True), 4)}
    write_results(results_dir, metrics, info_keys=("games",))  # games: the param, echoed in run.json
    if mlflow:
        import mlflow as mlf

        with tracked_run(experiment_id=setup_experiment("rl"), run_name="winprob"):
            mlf.log_params({**dotted(wp.model_dump(), "winprob"), **placement})
            mlf.log_metrics({k: float(v) for k, v in metrics.items()})
            mlf.log_artifact(str(path))
            mlf.log_artifact(str(png))
    return metrics


def main(argv: Sequence[str] | None = None) -> None:
    args = stage_parser(STAGE, __doc__, out_dir="winprob.json goes here (models/winprob)",
                        results_dir="metrics.json, run.json and winprob.png (results/winprob)").parse_args(argv)
    run_stage(STAGE, lambda params: winprob_stage(params.winprob, args.out_dir, args.results_dir),
              ValueError, FileNotFoundError, results=args.results_dir)


if __name__ == "__main__":
    main()
