"""Duplicate-deal duels: every deal is played twice with the seats swapped.

Deal seeds run ``s, s+1, ...``; every deal is played once with agent A as player 0 and
once with A as player 1. A seed fixes a game's deals and its first dealer, so both games
of a pair see the same cards and each agent is first dealer once. Games are streamed and
counted as they end: a duel's memory does not grow with its number of games.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

from ..agents.base import Agent
from ..arena import CONCURRENCY, stream_games
from ..engine import GameState
from .stats import wilson_interval


@dataclass
class DuelResult:
    """Outcome of a duel from A's side. ``win_rate`` counts a draw as half a win."""

    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    points: int = 0  # A's final points minus the initial points, summed over the games
    seconds: float = 0.0

    @property
    def point_diff(self) -> float:
        """A's mean final points minus the initial points."""
        return self.points / self.games if self.games else 0.0

    @property
    def win_rate(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0

    @property
    def draw_rate(self) -> float:
        return self.draws / self.games if self.games else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        return wilson_interval(self.wins + 0.5 * self.draws, self.games)

    def add(self, state: GameState, seat: int, init_points: int) -> None:
        """Count one finished game in which A sat in ``seat`` (running totals: no game is kept)."""
        self.games += 1
        if state.winner is None:
            self.draws += 1
        elif state.winner == seat:
            self.wins += 1
        else:
            self.losses += 1
        self.points += state.points[seat] - init_points

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


def duel_seeds(games: int, seed: int) -> range:
    """Seeds of the distinct deals (one per pair of games); ``games`` must be even."""
    if games < 2 or games % 2:
        raise ValueError(f"games must be an even number >= 2 (each deal is played twice), got {games}")
    return range(seed, seed + games // 2)


def duel_games(
    agent_a: Agent, agent_b: Agent, games: int, seed: int = 0, num_rounds: int = 8, init_points: int = 30,
    progress: str | None = None, concurrency: int = CONCURRENCY,
) -> Iterator[tuple[int, GameState]]:
    """The duel's games as they end, each with A's seat: every deal with A seated 0, then every deal with
    A seated 1; at most ``concurrency`` games in memory at once."""
    seeds = duel_seeds(games, seed)
    kw = dict(num_rounds=num_rounds, init_points=init_points, concurrency=concurrency, total=len(seeds))
    for seat, agents in ((0, (agent_a, agent_b)), (1, (agent_b, agent_a))):
        desc = progress and f"{progress} (A {'first' if seat == 0 else 'second'} seat)"
        for _, state in stream_games(agents, seeds, progress=desc, **kw):
            yield seat, state


def play_duel(
    agent_a: Agent, agent_b: Agent, games: int, seed: int = 0, num_rounds: int = 8, init_points: int = 30,
    progress: str | None = None, concurrency: int = CONCURRENCY,
) -> DuelResult:
    """Play ``games`` duplicate-deal games of A against B and score them from A's side, keeping running
    totals only: memory is bounded by ``concurrency``, not by ``games``."""
    t0 = time.perf_counter()
    result = DuelResult()
    for seat, state in duel_games(agent_a, agent_b, games, seed, num_rounds, init_points, progress, concurrency):
        result.add(state, seat, init_points)
    result.seconds = time.perf_counter() - t0
    return result
