"""Evaluation of the learner: greedy learner vs greedy baseline on duplicate deals, counted by ``DuelResult``."""

from __future__ import annotations

from ..duel.stats import DuelResult
from ..net.inference import Inference
from ..runtime.progress import progress_bar
from ..selfplay.batched import GameSpec, PlayJob
from ..selfplay.executor import Executor
from ..selfplay.policies import NetSpec


def evaluate(executor: Executor, learner: NetSpec, baseline: NetSpec, games: int, seed: int, inference: Inference,
             concurrency: int, progress: bool, desc: str = "eval") -> DuelResult:
    """Greedy learner (A) vs greedy baseline on ``games // 2`` deals (seeds from ``seed``), each from both seats."""
    specs = []
    for i in range(games // 2):
        specs += [GameSpec(seed + i, (0, 1)), GameSpec(seed + i, (1, 0))]
    job = PlayJob(players=(learner.with_epsilon(0.0), baseline.with_epsilon(0.0)), games=tuple(specs),
                  inference=inference, concurrency=concurrency)
    result = DuelResult()
    with progress_bar(total=len(specs), desc=desc, unit="game", leave=False, enabled=progress) as bar:
        result.add_outcomes(executor.run(job, progress=bar.update).outcomes, job.init_points)
    return result


def curve_row(result: DuelResult) -> dict:
    """An evaluation's columns of the RL curve (``phase_state.CURVE_COLUMNS``)."""
    lo, hi = result.ci95
    return {"win_rate": round(result.win_rate, 4), "point_diff": round(result.point_diff, 3),
            "eval_games": result.games, "ci_low": round(lo, 4), "ci_high": round(hi, 4)}
