"""What a finished RL phase leaves: model directory, curve, ``metrics.json``, ``run.json``, MLflow records."""

import torch

from ..runtime.curves import write_curve
from ..runtime.results import write_results
from .algorithms.base import Algorithm
from .phase_state import CURVE_COLUMNS, CURVE_FILE, LoopCounters, PhaseConfig
from .phase_tracking import PhaseTracker


def finish_phase(c: PhaseConfig, algorithm: Algorithm, net: torch.nn.Module, sl_net: torch.nn.Module,
                 state: LoopCounters, tracker: PhaseTracker | None) -> dict:
    """Write the phase's outputs from its final state (``state.final``: the end-of-phase evaluation); returns the
    summary."""
    final = state.final
    summary = {"phase": c.phase, "variant": c.variant, "algorithm": c.params.algorithm_of(c.phase), "loops": state.loop,
               "games": state.games, "global_loops": state.loop_offset + state.loop,
               "global_games": state.games_offset + state.games, "win_rate": final["win_rate"],
               "ci95": [final["ci_low"], final["ci_high"]], "point_diff": final["point_diff"],
               "eval_games": final["eval_games"], "stop_reason": state.stop_reason,
               "epsilon": state.epsilon, "train_seconds": round(state.seconds, 1)}
    # no wall-clock values in the model's meta: its config.json must hash the same on every run (a DVC dep)
    meta = {"kind": "rl", "variant": c.variant, "reward": c.variant,
            **{k: v for k, v in summary.items() if k != "train_seconds"}}
    if state.winprob:  # RL-WP: the table its loops were rewarded with (phase 2 reads it here)
        meta["winprob"] = {k: v for k, v in state.winprob.items() if k != "grid"}
    algorithm.save(net, sl_net, c.out_dir, meta, c.variant)
    write_curve(state.curve, c.results_dir / CURVE_FILE, CURVE_COLUMNS)
    write_results(c.results_dir, summary, info_keys=("phase", "loops", "global_loops", "games", "eval_games",
                                                     "epsilon"))
    if tracker:
        tracker.finish(c.results_dir / CURVE_FILE, summary, state.winprob)
    if c.progress:
        print(f"rl_phase{c.phase}[{c.variant}]: done ({state.stop_reason}): {state.loop} loops; final evaluation "
              f"{summary['win_rate']:.3f} [{final['ci_low']:.3f}, {final['ci_high']:.3f}] vs SL over "
              f"{final['eval_games']} games; model in {c.out_dir}", flush=True)
    return summary
