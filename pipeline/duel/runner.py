"""Duplicate-deal duels: every deal is played twice with the seats swapped.

Game seeds run ``s, s, s+1, s+1, ...``; agent A is player 0 in the first game of each
pair and player 1 in the second. A seed fixes a game's deals and its first dealer, so
both games of a pair see the same cards and each agent is first dealer once.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..agents.base import Agent
from ..arena import play_games
from ..engine import GameState
from .stats import wilson_interval


@dataclass
class DuelResult:
    """Outcome of a duel from A's side. ``win_rate`` counts a draw as half a win."""

    games: int
    wins: int
    losses: int
    draws: int
    point_diff: float  # A's mean final points minus the initial points
    seconds: float
    # Per game (pair order: A seated 0, then A seated 1): A's outcome 1 / 0.5 / 0 and point change.
    scores: list[float] = field(default_factory=list, repr=False)
    diffs: list[int] = field(default_factory=list, repr=False)

    @property
    def win_rate(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0

    @property
    def draw_rate(self) -> float:
        return self.draws / self.games if self.games else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        return wilson_interval(self.wins + 0.5 * self.draws, self.games)

    def summary(self) -> dict:
        """The JSON fields of ``koikoi duel`` and of the duels metrics."""
        lo, hi = self.ci95
        return {
            "games": self.games, "win_rate": round(self.win_rate, 4), "draw_rate": round(self.draw_rate, 4),
            "point_diff": round(self.point_diff, 3), "ci95": [round(lo, 4), round(hi, 4)],
            "wins": self.wins, "losses": self.losses, "draws": self.draws,
        }


def set_torch_threads(n: int) -> None:
    """Limit torch's intra-op threads when torch is in use (model agents); a no-op otherwise."""
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


def duel_seeds(games: int, seed: int) -> list[int]:
    """Seeds of the distinct deals (one per pair of games); ``games`` must be even."""
    if games < 2 or games % 2:
        raise ValueError(f"games must be an even number >= 2 (each deal is played twice), got {games}")
    return [seed + k for k in range(games // 2)]


def play_duel_states(
    agent_a: Agent, agent_b: Agent, games: int, seed: int = 0, num_rounds: int = 8, init_points: int = 30,
    progress: str | None = None,
) -> tuple[list[GameState], list[GameState]]:
    """The finished games: (A seated 0, A seated 1), one of each per deal seed, batched per seating."""
    seeds = duel_seeds(games, seed)
    kw = dict(num_rounds=num_rounds, init_points=init_points)
    first = play_games((agent_a, agent_b), seeds, progress=progress and f"{progress} (A first seat)", **kw)
    second = play_games((agent_b, agent_a), seeds, progress=progress and f"{progress} (A second seat)", **kw)
    return first, second


def play_duel(
    agent_a: Agent, agent_b: Agent, games: int, seed: int = 0, num_rounds: int = 8, init_points: int = 30,
    progress: str | None = None,
) -> DuelResult:
    """Play ``games`` duplicate-deal games of A against B and score them from A's side."""
    t0 = time.perf_counter()
    first, second = play_duel_states(agent_a, agent_b, games, seed, num_rounds, init_points, progress)
    return score_duel(first, second, init_points, time.perf_counter() - t0)


def score_duel(first: list[GameState], second: list[GameState], init_points: int, seconds: float) -> DuelResult:
    """Score paired games where A sat in seat 0 in ``first`` and seat 1 in ``second``."""
    games = [(state.winner, seat, state.points[seat]) for g0, g1 in zip(first, second, strict=True)
             for state, seat in ((g0, 0), (g1, 1))]
    return tally(games, init_points, seconds)


def tally(games: Sequence[tuple[int | None, int, int]], init_points: int, seconds: float) -> DuelResult:
    """A's result from ``(winner seat or None, A's seat, A's final points)`` per game, in pair order."""
    scores = [0.5 if w is None else float(w == seat) for w, seat, _ in games]
    diffs = [points - init_points for _, _, points in games]
    n = len(scores)
    return DuelResult(games=n, wins=scores.count(1.0), losses=scores.count(0.0), draws=scores.count(0.5),
                      point_diff=sum(diffs) / n if n else 0.0, seconds=seconds, scores=scores, diffs=diffs)


def play_model_duel(net_a: object, net_b: object, games: int, seed: int = 0, num_rounds: int = 8,
                    init_points: int = 30, workers: int = 2, progress: str | None = None,
                    bf16: bool | str = "auto") -> DuelResult:
    """``play_duel`` for two networks, on the RL self-play engine: worker processes, batched forward passes,
    bf16 autocast where the CPU has it natively. The same deals and seatings as ``play_duel``."""
    from ..hardware import resolve_bf16
    from ..progress import progress_bar
    from ..rl.executor import make_executor
    from ..rl.policies import NetSpec
    from ..rl.selfplay import GameSpec, PlayJob

    seeds = duel_seeds(games, seed)
    specs = tuple(GameSpec(s, seats) for seats in ((0, 1), (1, 0)) for s in seeds)
    job = PlayJob(players=(NetSpec.from_net(net_a, "A"), NetSpec.from_net(net_b, "B")), games=specs,
                  bf16=resolve_bf16(bf16), num_rounds=num_rounds, init_points=init_points)
    t0 = time.perf_counter()
    with make_executor(workers) as ex, progress_bar(total=len(specs), desc=progress, unit="game", leave=False,
                                                     enabled=progress is not None) as bar:
        outcomes = {(o.seed, o.seats): o for o in ex.run(job, progress=bar.update).outcomes}
    games = [(o.winner, a_seat, o.points[a_seat]) for s in seeds  # pair order: A seated 0, then A seated 1
             for o, a_seat in ((outcomes[(s, (0, 1))], 0), (outcomes[(s, (1, 0))], 1))]
    return tally(games, init_points, time.perf_counter() - t0)


def duel_agents(agent_a: Agent, agent_b: Agent, games: int, seed: int = 0, num_rounds: int = 8,
                init_points: int = 30, workers: int = 2, progress: str | None = None) -> DuelResult:
    """Two model agents play on the self-play engine (``workers`` processes); any other pairing in this process."""
    from ..agents.model_agent import ModelAgent

    if workers > 0 and isinstance(agent_a, ModelAgent) and isinstance(agent_b, ModelAgent):
        return play_model_duel(agent_a.net, agent_b.net, games, seed, num_rounds, init_points, workers, progress)
    return play_duel(agent_a, agent_b, games, seed, num_rounds, init_points, progress)
