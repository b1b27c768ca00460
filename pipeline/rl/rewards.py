"""Round rewards (paper IV-C 1): each round is an episode; all of a player's decisions in it share one reward.

- RL-Point (``point``): the points the player won or lost in the round, times ``scale``.
- RL-WP (``wp``): the player's probability of winning the game given the points and dealer after the
  round (from a :class:`~pipeline.rl.winprob.WinProbTable`), minus ``baseline``, times ``scale``; a
  round that ends the game gets the actual outcome instead (win 1, draw 0.5, loss 0). A constant
  baseline shifts every target of a round alike, so it leaves the best action unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..engine import RoundResult

if TYPE_CHECKING:
    from .winprob import WinProbTable

REWARD_MODELS = ("point", "wp")


def next_dealer(result: RoundResult) -> int:
    """Who deals the next round: the round's winner, or the dealer again on Dealer's Priority."""
    return result.dealer if result.winner is None else result.winner


def game_outcome(winner: int | None, player: int) -> float:
    """1 for a win, 0.5 for a draw, 0 for a loss."""
    return 0.5 if winner is None else float(winner == player)


@dataclass(frozen=True)
class RewardModel:
    """Turns a finished game's round results into one reward per (round, player)."""

    kind: str
    scale: float = 1.0
    table: WinProbTable | None = None
    baseline: float = 0.0  # wp: subtracted from the probability before scaling (0.5 centres the targets)

    def __post_init__(self) -> None:
        if self.kind not in REWARD_MODELS:
            raise ValueError(f"unknown reward model {self.kind!r}; use one of {', '.join(REWARD_MODELS)}")
        if self.kind == "wp" and self.table is None:
            raise ValueError("the wp reward model needs a win-probability table")

    def round_rewards(self, results: Sequence[RoundResult], winner: int | None) -> list[tuple[float, float]]:
        """``[(reward of player 0, reward of player 1)]`` per round of a finished game, in order."""
        out = []
        last = len(results) - 1
        for i, r in enumerate(results):
            if self.kind == "point":
                pair = (float(r.points[0]), float(r.points[1]))
            elif i == last:  # the game ended with this round: its real outcome
                pair = (game_outcome(winner, 0) - self.baseline, game_outcome(winner, 1) - self.baseline)
            else:
                dealer = next_dealer(r)
                pair = tuple(self.table.prob(r.round + 1, r.totals[p], dealer == p) - self.baseline for p in (0, 1))
            out.append((pair[0] * self.scale, pair[1] * self.scale))
        return out
