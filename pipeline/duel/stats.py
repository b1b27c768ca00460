"""Win rates and their intervals, the one way every duel and evaluation counts games."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .sprt import pair_category, pair_interval, t975

if TYPE_CHECKING:
    from ..engine import GameState
    from ..selfplay.batched import GameOutcome


def wilson_interval(successes: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval of a proportion ``successes / n`` (may be fractional); (0, 1) for ``n == 0``."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, n], got {successes} of {n}")
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class DuelResult:
    """Outcome of a duel from A's side, a draw half a win; ``pairs``: the pentanomial counts of its deals."""

    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    points: int = 0  # A's final points minus the initial points, summed over the games
    seconds: float = 0.0
    search: dict[str, dict] = field(default_factory=dict)  # "a"/"b": a search agent's counts (search_summary)
    pairs: list[int] = field(default_factory=lambda: [0] * 5)
    sprt: dict | None = None  # a sequential duel's test at its end (sprt.Sprt.decide)
    _open: dict[int, float] = field(default_factory=dict, repr=False, compare=False)

    @property
    def paired(self) -> bool:
        return self.games > 0 and 2 * sum(self.pairs) == self.games

    @property
    def point_diff(self) -> float:
        return self.points / self.games if self.games else 0.0

    @property
    def win_rate(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0

    @property
    def draw_rate(self) -> float:
        return self.draws / self.games if self.games else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        if self.paired:  # pairs all alike: Wilson's over the pairs as trials
            n = sum(self.pairs)
            return pair_interval(self.pairs) or wilson_interval(self.win_rate * n, n)
        return wilson_interval(self.wins + 0.5 * self.draws, self.games)

    def add(self, state: GameState, seat: int, init_points: int, deal: int | None = None) -> None:
        self.add_outcome(state.winner, seat, state.points[seat], init_points, deal)

    def add_outcome(self, winner: int | None, seat: int, points: int, init_points: int,
                    deal: int | None = None) -> None:
        """Count one game (``winner`` None: a draw); ``deal``: its seed, pairing it with the deal's other game."""
        self.games += 1
        if winner is None:
            self.draws += 1
        elif winner == seat:
            self.wins += 1
        else:
            self.losses += 1
        self.points += points - init_points
        if deal is not None:
            score = 0.5 if winner is None else float(winner == seat)
            first = self._open.pop(deal, None)
            if first is None:
                self._open[deal] = score
            else:
                self.pairs[pair_category(first, score)] += 1

    def merge(self, other: DuelResult) -> None:
        self.games += other.games
        self.wins += other.wins
        self.losses += other.losses
        self.draws += other.draws
        self.points += other.points
        self.pairs = [x + y for x, y in zip(self.pairs, other.pairs)]

    def add_outcomes(self, outcomes: Iterable[GameOutcome], init_points: int) -> None:
        """Count a self-play job's games, A as its player 0, the two games of a seed as a pair."""
        for o in outcomes:
            seat = o.seats.index(0)  # seats[k] is the player index in seat k
            self.add_outcome(o.winner, seat, o.points[seat], init_points, deal=o.seed)

    def summary(self) -> dict:
        """The JSON fields of ``koikoi duel`` and of the duels metrics."""
        lo, hi = self.ci95
        out = {
            "games": self.games, "win_rate": round(self.win_rate, 4), "draw_rate": round(self.draw_rate, 4),
            "point_diff": round(self.point_diff, 3), "ci95": [round(lo, 4), round(hi, 4)],
            "wins": self.wins, "losses": self.losses, "draws": self.draws,
        }
        if self.paired:
            out["pairs"] = list(self.pairs)
        if self.sprt is not None:
            out["sprt"] = self.sprt
        return out


def search_summary(stats: dict[str, float]) -> dict:
    """A search agent's counts (``SearchPlayer.stats``) per searched decision."""
    n = int(stats.get("searched", 0))
    return {"searched": n, "changed": int(stats.get("changed", 0)),
            "seconds_per_search": round(stats.get("search_seconds", 0.0) / n, 4) if n else None,
            "deals_per_search": round(stats.get("deals", 0) / n, 1) if n else None,
            "playouts_per_search": round(stats.get("playouts", 0) / n, 1) if n else None}


def mean_ci(x: Sequence[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% interval, Student's t (nan where there are too few values)."""
    a = np.asarray(x, dtype=float)
    mean = float(a.mean()) if len(a) else float("nan")
    if len(a) < 2:
        return mean, float("nan")
    return mean, float(t975(len(a) - 1) * a.std(ddof=1) / np.sqrt(len(a)))


def paired_difference(mine: Mapping[int, DuelResult], other: Mapping[int, DuelResult]) -> dict:
    """A's win rate minus another's against the same B over the blocks both finished, with its 95% interval."""
    blocks = sorted(b for b in set(mine) & set(other) if mine[b].games == other[b].games)
    diffs = [mine[b].win_rate - other[b].win_rate for b in blocks]
    out: dict = {"blocks": len(blocks), "games": sum(mine[b].games for b in blocks)}
    if len(diffs) < 2:
        return {**out, "minus": None, "ci95": None}
    mean, half = mean_ci(diffs)
    return {**out, "minus": round(mean, 4), "ci95": [round(mean - half, 4), round(mean + half, 4)]}
