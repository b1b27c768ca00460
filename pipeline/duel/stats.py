"""Win rates and their intervals, the one way every duel and evaluation counts games: ``DuelResult``
(running totals from A's side, draws half a win, and the pentanomial counts of its duplicate pairs), the interval
from the pairs (``sprt.pair_interval``) where every game has its pair and the Wilson score interval where games are
not paired (a person's games on the play page); the Student's t interval of a mean (``mean_ci``: paired block
differences)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .sprt import pair_category, pair_interval

if TYPE_CHECKING:
    from ..engine import GameState
    from ..selfplay.batched import GameOutcome


def wilson_interval(successes: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval of a proportion ``successes / n`` (95% for the default ``z``).

    ``successes`` may be fractional (a draw counted as half a win). ``n == 0`` gives (0, 1).
    """
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
    """Outcome of a duel from A's side. ``win_rate`` counts a draw as half a win. ``pairs``: how many deals A scored
    0, 0.5, 1, 1.5 and 2 over its two games (seats swapped), the pentanomial counts; a game whose deal's other game
    is not counted yet waits in ``_open`` (by its deal's seed)."""

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
        """Whether every game is in a duplicate pair (then the interval comes from the pairs)."""
        return self.games > 0 and 2 * sum(self.pairs) == self.games

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
        """The 95% interval of the win rate: from the pairs' variance when every game is paired, else Wilson's."""
        if self.paired:  # pairs all alike: Wilson's over the pairs as trials
            n = sum(self.pairs)
            return pair_interval(self.pairs) or wilson_interval(self.win_rate * n, n)
        return wilson_interval(self.wins + 0.5 * self.draws, self.games)

    def add(self, state: GameState, seat: int, init_points: int, deal: int | None = None) -> None:
        """Count one finished game in which A sat in ``seat`` (running totals: no game is kept)."""
        self.add_outcome(state.winner, seat, state.points[seat], init_points, deal)

    def add_outcome(self, winner: int | None, seat: int, points: int, init_points: int,
                    deal: int | None = None) -> None:
        """Count one game from its winner seat (None: a draw), A's seat and A's final points; ``deal``: its seed,
        which pairs it with the other game of that deal (None: a game without a pair)."""
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
        """Add another part of the same duel's totals (a journalled block)."""
        self.games += other.games
        self.wins += other.wins
        self.losses += other.losses
        self.draws += other.draws
        self.points += other.points
        self.pairs = [x + y for x, y in zip(self.pairs, other.pairs)]

    def add_outcomes(self, outcomes: Iterable[GameOutcome], init_points: int) -> None:
        """Count the games of a self-play job (``rl.selfplay.GameOutcome``) with A as the job's player 0, the two
        games of a seed as a pair."""
        for o in outcomes:
            seat = o.seats.index(0)  # seats[k] is the player index in seat k
            self.add_outcome(o.winner, seat, o.points[seat], init_points, deal=o.seed)

    def summary(self) -> dict:
        """The JSON fields of ``koikoi duel`` and of the duels metrics (``pairs``: the pentanomial counts, when
        every game is paired; ``sprt``: a sequential duel's test)."""
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
    """A search agent's counts (``SearchPlayer.stats``) per searched decision: time, deals, playouts, changes."""
    n = int(stats.get("searched", 0))
    return {"searched": n, "changed": int(stats.get("changed", 0)),
            "seconds_per_search": round(stats.get("search_seconds", 0.0) / n, 4) if n else None,
            "deals_per_search": round(stats.get("deals", 0) / n, 1) if n else None,
            "playouts_per_search": round(stats.get("playouts", 0) / n, 1) if n else None}


def mean_ci(x: Sequence[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% interval, Student's t with n - 1 degrees of freedom (nan where there
    are too few values): the standard deviation is estimated from the values too, which over 10 paired blocks
    widens the normal 1.96 to t(9) = 2.262."""
    from scipy.stats import t  # loaded only by a caller of this

    a = np.asarray(x, dtype=float)
    mean = float(a.mean()) if len(a) else float("nan")
    if len(a) < 2:
        return mean, float("nan")
    return mean, float(t.ppf(0.975, len(a) - 1) * a.std(ddof=1) / np.sqrt(len(a)))


def paired_difference(mine: Mapping[int, DuelResult], other: Mapping[int, DuelResult]) -> dict:
    """A's win rate minus another agent's against the same B on the same deals: the mean of the differences of
    the blocks both duels finished whole (first seed -> totals; the same number of games), with its 95% interval
    over blocks (``mean_ci``: Student's t). Each block's deals and seats are shared, so their luck cancels and the
    interval is far narrower than the two duels' Wilson intervals suggest."""
    blocks = sorted(b for b in set(mine) & set(other) if mine[b].games == other[b].games)
    diffs = [mine[b].win_rate - other[b].win_rate for b in blocks]
    out: dict = {"blocks": len(blocks), "games": sum(mine[b].games for b in blocks)}
    if len(diffs) < 2:
        return {**out, "minus": None, "ci95": None}
    mean, half = mean_ci(diffs)
    return {**out, "minus": round(mean, 4), "ci95": [round(mean - half, 4), round(mean + half, 4)]}
