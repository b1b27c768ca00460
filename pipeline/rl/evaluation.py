"""The greedy learner against a greedy baseline on duplicate deals, with an interval over the deals."""

import math
from dataclasses import dataclass, field

from ..duel.stats import DuelResult, mean_ci
from ..net.inference import Inference
from ..runtime.progress import progress_bar
from ..selfplay.batched import GameOutcome, GameSpec, PlayJob
from ..selfplay.executor import Executor
from ..selfplay.policies import NetSpec


@dataclass
class Evaluation:
    """A duplicate-deal duel from A's side: the totals (``result``) and A's mean score per deal (``pairs``)."""

    result: DuelResult
    pairs: list[float] = field(default_factory=list)

    @property
    def win_rate(self) -> float:
        return self.result.win_rate

    @property
    def ci95(self) -> tuple[float, float]:
        """The 95% interval of the win rate over deals (Student's t over the per-deal means: the two games of a deal
        share its luck, so they are one draw, not two); Wilson's over games where the deals show no spread."""
        mean, half = mean_ci(self.pairs) if len(self.pairs) >= 2 else (0.0, float("nan"))
        if not half > 0.0 or math.isnan(half):
            return self.result.ci95
        return max(0.0, mean - half), min(1.0, mean + half)


def pair_scores(outcomes: list[GameOutcome]) -> list[float]:
    """A's (the job's player 0) mean score per deal (seed) over the deals both of whose games were played."""
    by_seed: dict[int, list[float]] = {}
    for o in outcomes:
        seat = o.seats.index(0)
        by_seed.setdefault(o.seed, []).append(0.5 if o.winner is None else float(o.winner == seat))
    return [sum(s) / 2 for _, s in sorted(by_seed.items()) if len(s) == 2]


def evaluate(executor: Executor, learner: NetSpec, baseline: NetSpec, games: int, seed: int,
             inference: Inference, concurrency: int, progress: bool, desc: str = "eval") -> Evaluation:
    """Greedy learner (A) vs greedy baseline on ``games // 2`` deals (seeds from ``seed``), each from both seats."""
    specs = []
    for i in range(games // 2):
        specs += [GameSpec(seed + i, (0, 1)), GameSpec(seed + i, (1, 0))]
    job = PlayJob(players=(learner.with_epsilon(0.0), baseline.with_epsilon(0.0)), games=tuple(specs),
                  inference=inference, concurrency=concurrency)
    result = DuelResult()
    with progress_bar(total=len(specs), desc=desc, unit="game", leave=False, enabled=progress) as bar:
        outcomes = executor.run(job, progress=bar.update).outcomes
    result.add_outcomes(outcomes, job.init_points)
    return Evaluation(result, pair_scores(outcomes))


def curve_row(ev: Evaluation) -> dict:
    """An evaluation's columns of the RL curve (``phase_state.CURVE_COLUMNS``); the interval over deals."""
    lo, hi = ev.ci95
    return {"win_rate": round(ev.win_rate, 4), "point_diff": round(ev.result.point_diff, 3),
            "eval_games": ev.result.games, "ci_low": round(lo, 4), "ci_high": round(hi, 4)}
